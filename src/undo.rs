//! `opsai undo [--session ID]` and the REPL's `/undo`: restores the last change a file tool made,
//! from its backup (`store::backups`, always on this machine), atomically through the file seam
//! of the machine the change was made on (this one, or the SSH host the REPL is on). A file that
//! did not exist before the change is removed. Each undo is journaled, so undoing again walks
//! further back.

use std::fmt;
use std::io::Write;
use std::path::PathBuf;

use jiff::Timestamp;
use thiserror::Error;

use crate::app::Paths;
use crate::cli::UndoArgs;
use crate::exec::fs::{FileSystem, LocalFs};
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
    /// The last change was on this machine, but commands now run on an SSH host.
    Elsewhere { path: PathBuf, changed_at: Timestamp },
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
                    Some(backup) => {
                        write!(f, "`/host {host}` then `/undo` restores it from its backup {}", backup.display())
                    }
                    None => write!(f, "the file did not exist before, so `/host {host}` then `/undo` removes it"),
                }
            }
            Undone::Elsewhere { path, changed_at } => write!(
                f,
                "the last change ({}, at {}) was made on this machine; `/host local` then `/undo` restores it",
                path.display(),
                local(*changed_at)
            ),
            Undone::Nothing { session: Some(session) } => write!(f, "nothing to undo in session {session}"),
            Undone::Nothing { session: None } => write!(f, "nothing to undo"),
        }
    }
}

/// Undoes the last change of `session` (or of any session). `fs` is the machine `here` names
/// (`None`: this one); a change made elsewhere is left alone and reported.
pub async fn undo_last(
    backups: &Backups,
    session: Option<&str>,
    fs: &dyn FileSystem,
    here: Option<&str>,
) -> Result<Undone, UndoError> {
    let Some(entry) = backups.last(session)? else {
        return Ok(Undone::Nothing { session: session.map(str::to_owned) });
    };
    let BackupEntry { host, path, backup, created_at: changed_at, .. } = entry.clone();
    if host.as_deref() != here {
        return Ok(match host {
            Some(host) => Undone::OnHost { host, path, backup, changed_at },
            None => Undone::Elsewhere { path, changed_at },
        });
    }
    let done = match backup {
        Some(backup) => {
            let content = std::fs::read(&backup).map_err(|error| UndoError::ReadBackup {
                path: backup.clone(),
                target: path.clone(),
                error,
            })?;
            fs.replace(&path, &content).await.map_err(|error| UndoError::Restore {
                path: path.clone(),
                backup,
                error,
            })?;
            Undone::Restored { path, changed_at }
        }
        None => {
            if let Err(error) = fs.remove(&path).await {
                return Err(UndoError::Remove { path, error });
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
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    match runtime.block_on(undo_last(&backups, args.session.as_deref(), &LocalFs, None))? {
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

    fn block<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
    }

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
        let done = block(undo_last(&backups, Some("c1"), &LocalFs, None)).unwrap();
        assert!(matches!(&done, Undone::Removed { path, .. } if path == &created), "{done:?}");
        assert!(!created.exists());
        let done = block(undo_last(&backups, Some("c1"), &LocalFs, None)).unwrap();
        assert!(done.to_string().starts_with(&format!("restored {} (changed at ", file.display())), "{done}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "echo 1\n");
        assert_eq!(
            block(undo_last(&backups, Some("c1"), &LocalFs, None)).unwrap(),
            Undone::Nothing { session: Some("c1".into()) }
        );
        assert_eq!(block(undo_last(&backups, None, &LocalFs, None)).unwrap().to_string(), "nothing to undo");
    }

    #[test]
    fn a_change_on_a_host_is_not_undone_here() {
        let dir = tempfile::tempdir().unwrap();
        let backups = Backups::new(dir.path().join("backups"));
        backups.save("c1", Some("db-1"), Path::new("/srv/app.conf"), Some(b"x")).unwrap();
        let done = block(undo_last(&backups, None, &LocalFs, None)).unwrap();
        let text = done.to_string();
        assert!(matches!(done, Undone::OnHost { .. }));
        assert!(text.contains("was made on db-1") && text.contains("db-1/srv/app.conf"), "{text}");
        assert!(backups.last(None).unwrap().is_some(), "still the last change");
    }
}
