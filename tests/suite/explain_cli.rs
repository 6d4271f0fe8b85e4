//! `opsai explain` through the real binary.
