//! `opsai widget` through the real binary.
