//! The `Agent >` REPL.
