//! Stores: the audit log (being written).
