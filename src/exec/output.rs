//! Output capture (being written).
