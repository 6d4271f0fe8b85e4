//! `opsai undo [--session ID]` and the REPL's `/undo`: restores the last change a file tool made,
//! from its backup (`store::backups`), atomically through [`LocalFs`]. A file that did not exist
//! before the change is removed. Each undo is journaled, so undoing again walks further back.

use std::fmt;
use std::io::Write;
use std::path::PathBuf;

use jiff::Timestamp;
use thiserror::Error;

use crate::app::Paths;
use crate::cli::UndoArgs;
use crate::exec::fs::LocalFs;
use crate::store::backups::{BackupEntry, BackupError, Backups};

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undone {
    /// The previous content is back.
    Restored { path: PathBuf, changed_at: Timestamp },
    /// The change created the file; it is gone again.
    Removed { path: PathBuf, changed_at: Timestamp },
    /// The last change was on an SSH host: nothing was done here.
    OnHost { host: String, path: PathBuf, backup: Option<PathBuf>, changed_at: Timestamp },
    /// No change left to undo (in that session).
    Nothing { session: Option<String> },
}

#[derive(Debug, Error)]
pub enum UndoError {
    #[error(transparent)]
    Backups(#[from] BackupError),
    #[error("cannot read the backup {path}: {error}; it may have been deleted, so restore {target} by hand")]
    ReadBackup { path: PathBuf, target: PathBuf, error: std::io::Error },
    #[error("cannot restore {path}: {error}; its backup is {backup}")]
    Restore { path: PathBuf, backup: PathBuf, error: std::io::Error },
    #[error("cannot remove {path}, which the change created: {error}; remove it by hand")]
    Remove { path: PathBuf, error: std::io::Error },
}

impl fmt::Display for Undone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undone::Restored { path, changed_at } => {
                write!(f, "restored {} (changed at {})", path.display(), local(*changed_at))
            }
            Undone::Removed { path, changed_at } => {
                write!(f, "removed {} (it did not exist before the change at {})", path.display(), local(*changed_at))
            }
            Undone::OnHost { host, path, backup, changed_at } => {
                write!(f, "the last change ({}, at {}) was made on {host}; ", path.display(), local(*changed_at))?;
                match backup {
                    Some(backup) => write!(f, "restore it there from its backup {}", backup.display()),
                    None => write!(f, "the file did not exist before, so remove it there"),
                }
            }
            Undone::Nothing { session: Some(session) } => write!(f, "nothing to undo in session {session}"),
            Undone::Nothing { session: None } => write!(f, "nothing to undo"),
        }
    }
}

/// Undoes the last change of `session` (or of any session) on this machine.
pub fn undo_last(backups: &Backups, session: Option<&str>, _fs: &LocalFs) -> Result<Undone, UndoError> {
    let Some(entry) = backups.last(session)? else {
        return Ok(Undone::Nothing { session: session.map(str::to_owned) });
    };
    let BackupEntry { host, path, backup, created_at: changed_at, .. } = entry.clone();
    if let Some(host) = host {
        return Ok(Undone::OnHost { host, path, backup, changed_at });
    }
    let done = match backup {
        Some(backup) => {
            let content = std::fs::read(&backup).map_err(|error| UndoError::ReadBackup {
                path: backup.clone(),
                target: path.clone(),
                error,
            })?;
            LocalFs::replace_now(&path, &content).map_err(|error| UndoError::Restore {
                path: path.clone(),
                backup,
                error,
            })?;
            Undone::Restored { path, changed_at }
        }
        None => {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(UndoError::Remove { path, error }),
            }
            Undone::Removed { path, changed_at }
        }
    };
    backups.mark_undone(&entry)?;
    Ok(done)
}

/// `opsai undo`: the result on stdout; nothing to undo (or a change on a host) is exit 1.
pub fn run(paths: &Paths, args: &UndoArgs) -> anyhow::Result<u8> {
    let backups = Backups::new(paths.home.join("backups"));
    match undo_last(&backups, args.session.as_deref(), &LocalFs)? {
        done @ (Undone::Restored { .. } | Undone::Removed { .. }) => {
            writeln!(std::io::stdout(), "{done}")?;
            Ok(0)
        }
        other => {
            writeln!(std::io::stderr(), "opsai: {other}")?;
            Ok(1)
        }
    }
}

fn local(at: Timestamp) -> String {
    at.to_zoned(jiff::tz::TimeZone::system()).strftime("%Y-%m-%d %H:%M:%S").to_string()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn undo_restores_then_walks_back_and_removes_a_created_file() {
        let dir = tempfile::tempdir().unwrap();
        let backups = Backups::new(dir.path().join("backups"));
        let file = dir.path().join("a.sh");
        let created = dir.path().join("new.txt");
        std::fs::write(&file, "echo 1\n").unwrap();
        backups.save("c1", None, &file, Some(b"echo 1\n")).unwrap();
        std::fs::write(&file, "echo 2\n").unwrap();
        backups.save("c1", None, &created, None).unwrap();
        std::fs::write(&created, "fresh").unwrap();
        let done = undo_last(&backups, Some("c1"), &LocalFs).unwrap();
        assert!(matches!(&done, Undone::Removed { path, .. } if path == &created), "{done:?}");
        assert!(!created.exists());
        let done = undo_last(&backups, Some("c1"), &LocalFs).unwrap();
        assert!(done.to_string().starts_with(&format!("restored {} (changed at ", file.display())), "{done}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "echo 1\n");
        assert_eq!(undo_last(&backups, Some("c1"), &LocalFs).unwrap(), Undone::Nothing { session: Some("c1".into()) });
        assert_eq!(undo_last(&backups, None, &LocalFs).unwrap().to_string(), "nothing to undo");
    }

    #[test]
    fn a_change_on_a_host_is_not_undone_here() {
        let dir = tempfile::tempdir().unwrap();
        let backups = Backups::new(dir.path().join("backups"));
        backups.save("c1", Some("db-1"), Path::new("/srv/app.conf"), Some(b"x")).unwrap();
        let done = undo_last(&backups, None, &LocalFs).unwrap();
        let text = done.to_string();
        assert!(matches!(done, Undone::OnHost { .. }));
        assert!(text.contains("was made on db-1") && text.contains("db-1/srv/app.conf"), "{text}");
        assert!(backups.last(None).unwrap().is_some(), "still the last change");
    }
}
