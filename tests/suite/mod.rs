//! Integration suites, one module per user-facing area.

mod policy_cli;
