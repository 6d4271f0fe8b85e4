//! `opsai init` and `opsai completions` through the real binary and the real shells.
