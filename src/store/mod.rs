//! Persistent stores under `$OPSAI_HOME` (DESIGN §8). Each store owns its file format and its
//! concurrency story (several opsai processes may run at once); none of them prints.
//!
//! - [`audit`]: the append-only audit log, one redacted line per action, rotated by size and pruned by age.
//! - [`sessions`]: conversations and messages in SQLite, written as they happen, shared by processes.

pub mod audit;
pub mod sessions;
