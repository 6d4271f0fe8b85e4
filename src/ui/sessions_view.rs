//! `opsai sessions list|show` as text.
