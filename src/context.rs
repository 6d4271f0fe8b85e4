//! EnvContext (being written).
