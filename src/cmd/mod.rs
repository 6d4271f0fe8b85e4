//! The admin subcommands, one file each: they read or change opsai's own state (sessions, audit
//! log, configuration, template cache, backups) and never start an agent turn, except `config
//! set-llm`'s test request and `doctor`'s checks. Each returns its exit code; errors go up to `main`.

pub mod audit;
pub mod cache;
pub mod config;
pub mod doctor;
pub mod init;
pub mod man;
pub mod policy;
pub mod sandbox;
pub mod sessions;
pub mod undo;
