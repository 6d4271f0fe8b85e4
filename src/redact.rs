//! Secret detection and redaction (being written).
