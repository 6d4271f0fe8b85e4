//! Persistent stores under `$OPSAI_HOME` (DESIGN §8). Each store owns its file format and its
//! concurrency story (several opsai processes may run at once); none of them prints.
//!
//! - [`audit`]: the append-only audit log, one redacted line per action, rotated by size and pruned by age.
//! - [`database`]: `opsai serve --database postgres://…`: the URL, connections, per-part migrations.
//! - [`backups`]: the previous content of every file a file tool changed, for `opsai undo`.
//! - [`sessions`]: conversations and messages in SQLite, written as they happen, shared by processes.
//! - [`templates`]: the analyze-template cache (seed 001), atomic saves, a corrupt file moved aside.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod audit;
pub mod backups;
pub mod database;
pub mod sessions;
pub mod templates;

/// Unix milliseconds now, as every store keeps time (0 before 1970, which only a broken clock
/// reports).
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
}

/// Creates `path`'s directory, private to the user (`0700`), when it is missing. Stores hold
/// conversations and commands, so nothing under `$OPSAI_HOME` is readable by others.
pub(crate) fn create_private_parent(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir),
        _ => Ok(()),
    }
}
