//! Undo for `opsai undo` (`cmd::undo`) and the REPL's `/undo`: restores the last change a file
//! tool made, from its backup (`store::backups`, always on this machine), atomically through the
//! file seam of the machine the change was made on: this one, or the SSH host the backup records
//! (reached with the configured ssh options; the REPL's open connection when it is on that host).
//! A file that did not exist before the change is removed.
//!
//! A file that changed since opsai wrote it (its `cksum` differs from the one the backup journal
//! recorded) is left alone unless `--force` is given: restoring would lose those later edits.
//! Each undo, done or refused, writes one audit line (`TOOL: file.undo`, with `HOST:` for a remote
//! file) and is journaled, so undoing again walks further back.

use std::fmt;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use thiserror::Error;

use crate::config::SshConfig;
use crate::exec::fs::{FileSystem, LocalFs, cksum};
use crate::exec::ssh::{SshError, SshFs, SshTransport};
use crate::protocol::Risk;
use crate::store::audit::{AuditError, AuditLog, AuditRecord, Confirmed};
use crate::store::backups::{BackupEntry, BackupError, Backups};
use crate::store::sessions::session_label;

/// What an undo did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Undone {
    /// The previous content is back (on `host`, or here for `None`).
    Restored { path: PathBuf, host: Option<String>, changed_at: Timestamp },
    /// The change created the file; it is gone again.
    Removed { path: PathBuf, host: Option<String>, changed_at: Timestamp },
    /// No change left to undo (in that session).
    Nothing { session: Option<String> },
}

#[derive(Debug, Error)]
pub(crate) enum UndoError {
    #[error(transparent)]
    Backups(#[from] BackupError),
    #[error("cannot read the backup {path}: {error}; it may have been deleted, so restore {target} by hand")]
    ReadBackup { path: PathBuf, target: PathBuf, error: std::io::Error },
    #[error("cannot restore {path}{}: {error}; its backup is {backup}", on(host.as_deref()))]
    Restore { path: PathBuf, host: Option<String>, backup: PathBuf, error: std::io::Error },
    #[error("cannot remove {path}{}, which the change created: {error}; remove it by hand", on(host.as_deref()))]
    Remove { path: PathBuf, host: Option<String>, error: std::io::Error },
    #[error("cannot check whether {path}{} changed since opsai wrote it: {error}; nothing was undone", on(host.as_deref()))]
    Check { path: PathBuf, host: Option<String>, error: std::io::Error },
    #[error(
        "{path}{} changed after opsai wrote it at {} ({what}); undoing now would lose those later changes, so \
         nothing was undone. Look at the file; to restore {} anyway, run `opsai undo --session {session} --force`",
        on(host.as_deref()), local(*changed_at), restored(backup.as_deref())
    )]
    ChangedSince {
        path: PathBuf,
        host: Option<String>,
        changed_at: Timestamp,
        session: String,
        backup: Option<PathBuf>,
        what: String,
    },
    #[error("cannot undo the change to {path} on {host}: {error}")]
    Connect { path: PathBuf, host: String, error: SshError },
    #[error("nothing was undone: {0}")]
    AuditUnavailable(AuditError),
    #[error("{done}, but its audit line was not written: {error}")]
    Audit { done: Undone, error: AuditError },
    /// The undo happened; the journal does not say so, so the next undo would take the same
    /// change again (and refuse it: the file no longer has what opsai wrote).
    #[error(
        "{done}, but the backup journal could not record that: {error}. Until it does, `opsai undo` takes this \
         change again and refuses it as changed since opsai wrote it; once the journal is writable, run \
         `opsai undo --session {session} --force` to record it (that undoes the same change again, so run it \
         before changing the file) and go further back"
    )]
    Journal { done: Undone, session: String, error: BackupError },
}

fn on(host: Option<&str>) -> String {
    host.map(|host| format!(" on {host}")).unwrap_or_default()
}

fn restored(backup: Option<&Path>) -> String {
    match backup {
        Some(backup) => format!("its previous content from {}", backup.display()),
        None => "the state before (the file did not exist)".to_owned(),
    }
}

impl fmt::Display for Undone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undone::Restored { path, host, changed_at } => {
                write!(f, "restored {}{} (changed at {})", path.display(), on(host.as_deref()), local(*changed_at))
            }
            Undone::Removed { path, host, changed_at } => write!(
                f,
                "removed {}{} (it did not exist before the change at {})",
                path.display(),
                on(host.as_deref()),
                local(*changed_at)
            ),
            Undone::Nothing { session: Some(session) } => write!(f, "nothing to undo in session {session}"),
            Undone::Nothing { session: None } => write!(f, "nothing to undo"),
        }
    }
}

/// What an undo needs besides the file seam: where the backups are, where its audit line goes,
/// how to reach a host, and what the user asked.
pub(crate) struct Undo<'a> {
    pub backups: &'a Backups,
    pub audit: &'a AuditLog,
    pub ssh: &'a SshConfig,
    /// `$OPSAI_HOME/ssh`, the master connections' directory.
    pub control_dir: PathBuf,
    /// Restore even when the file changed since opsai wrote it.
    pub force: bool,
    /// The audit line's INPUT: `opsai undo` or `/undo`.
    pub input: &'a str,
}

impl Undo<'_> {
    /// Undoes the last change of `session` (or of any session) where it was made. `current` is
    /// the file seam already open on `current_host` (`None`: this machine); another host is
    /// reached through ssh.
    pub async fn last(
        &self,
        session: Option<&str>,
        current: &dyn FileSystem,
        current_host: Option<&str>,
    ) -> Result<Undone, UndoError> {
        // `12` and `c12` name the same session; the audit log and the backups say `c12`.
        let session = session.map(session_label);
        let session = session.as_deref();
        let Some(entry) = self.backups.last(session)? else {
            return Ok(Undone::Nothing { session: session.map(str::to_owned) });
        };
        self.audit.check_writable().map_err(UndoError::AuditUnavailable)?;
        let remote;
        let fs: &dyn FileSystem = match entry.host.as_deref() {
            host if host == current_host => current,
            None => &LocalFs,
            Some(host) => {
                let connect =
                    SshTransport::open(host, &self.control_dir, self.ssh.control_persist_s, self.ssh.options.clone());
                let transport = connect.await.map_err(|error| {
                    let failed = UndoError::Connect { path: entry.path.clone(), host: host.to_owned(), error };
                    // The failure is what the user needs to hear, whether or not its line was written.
                    let _ = self.record(&entry, Err(&failed));
                    failed
                })?;
                remote = SshFs::new(transport, None);
                &remote
            }
        };
        let outcome = self.restore(&entry, fs).await;
        match (self.record(&entry, outcome.as_ref()), outcome) {
            (Ok(()), outcome) => outcome,
            (Err(error), Ok(done)) => Err(UndoError::Audit { done, error }),
            (Err(_), Err(failed)) => Err(failed),
        }
    }

    async fn restore(&self, entry: &BackupEntry, fs: &dyn FileSystem) -> Result<Undone, UndoError> {
        let BackupEntry { session, host, path, backup, created_at: changed_at, .. } = entry.clone();
        if !self.force
            && let Some(what) = changed_since(entry, fs).await?
        {
            return Err(UndoError::ChangedSince { path, host, changed_at, session, backup, what });
        }
        let done = match backup {
            Some(backup) => {
                let content = std::fs::read(&backup).map_err(|error| UndoError::ReadBackup {
                    path: backup.clone(),
                    target: path.clone(),
                    error,
                })?;
                if let Err(error) = fs.replace(&path, &content).await {
                    return Err(UndoError::Restore { path, host, backup, error });
                }
                Undone::Restored { path, host, changed_at }
            }
            None => {
                if let Err(error) = fs.remove(&path).await {
                    return Err(UndoError::Remove { path, host, error });
                }
                Undone::Removed { path, host, changed_at }
            }
        };
        match self.backups.mark_undone(entry) {
            Ok(()) => Ok(done),
            Err(error) => Err(UndoError::Journal { done, session, error }),
        }
    }

    /// The audit line of one undo, done or not.
    fn record(&self, entry: &BackupEntry, outcome: Result<&Undone, &UndoError>) -> Result<(), AuditError> {
        let (confirmed, exit, output) = match outcome {
            Ok(done) => (Confirmed::Yes, Some(0), done.to_string()),
            // Done: the file is restored; only the journal lags.
            Err(error @ UndoError::Journal { .. }) => (Confirmed::Yes, Some(0), error.to_string()),
            Err(error) => (Confirmed::No, None, error.to_string()),
        };
        self.audit.append(&AuditRecord {
            session: entry.session.clone(),
            input: self.input.to_owned(),
            tool: "file.undo".to_owned(),
            command: format!("undo {}{}", entry.path.display(), if self.force { " --force" } else { "" }),
            risk: Risk::Medium,
            confirmed,
            exit,
            output,
            host: entry.host.clone(),
            user: None,
            approver: None,
        })
    }
}

/// Why the file is no longer what the change wrote; `None` when it is (or nothing was recorded).
async fn changed_since(entry: &BackupEntry, fs: &dyn FileSystem) -> Result<Option<String>, UndoError> {
    let Some(written) = entry.written.as_deref() else { return Ok(None) };
    let size: u64 = written.rsplit(' ').next().and_then(|size| size.parse().ok()).unwrap_or(0);
    let check = |error| UndoError::Check { path: entry.path.clone(), host: entry.host.clone(), error };
    let what = match fs.metadata(&entry.path).await.map_err(check)? {
        None => "it has been deleted".to_owned(),
        Some(meta) if !meta.is_file => "it is no longer a regular file".to_owned(),
        Some(meta) if meta.size != size => format!("it is {} bytes now; opsai wrote {size}", meta.size),
        Some(_) => match fs.read(&entry.path, size).await {
            Ok(content) if cksum(&content) == written => return Ok(None),
            Ok(_) => "its content differs from what opsai wrote".to_owned(),
            Err(error) if error.kind() == std::io::ErrorKind::FileTooLarge => "it has grown".to_owned(),
            Err(error) => return Err(check(error)),
        },
    };
    Ok(Some(what))
}

fn local(at: Timestamp) -> String {
    at.to_zoned(jiff::tz::TimeZone::system()).strftime("%Y-%m-%d %H:%M:%S").to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures_util::future::BoxFuture;

    use super::*;

    fn block<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
    }

    struct Fixture {
        dir: tempfile::TempDir,
        backups: Backups,
        audit: AuditLog,
        ssh: SshConfig,
    }

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let backups = Backups::new(dir.path().join("backups"));
            let redactor = Arc::new(crate::redact::Redactor::from_process_env());
            let audit = AuditLog::new(dir.path().join("audit.log"), 10, 30, redactor);
            let ssh = SshConfig { control_persist_s: 5, options: Vec::new() };
            Self { dir, backups, audit, ssh }
        }

        fn undo(&self, force: bool) -> Undo<'_> {
            Undo {
                backups: &self.backups,
                audit: &self.audit,
                ssh: &self.ssh,
                control_dir: self.dir.path().join("ssh"),
                force,
                input: "opsai undo",
            }
        }

        fn audit_lines(&self) -> Vec<String> {
            let text = std::fs::read_to_string(self.audit.path()).unwrap_or_default();
            text.lines().map(str::to_owned).collect()
        }
    }

    #[test]
    fn undo_restores_then_walks_back_and_removes_a_created_file() {
        let f = Fixture::new();
        let file = f.dir.path().join("a.sh");
        let created = f.dir.path().join("new.txt");
        f.backups.save("c1", None, &file, Some(b"echo 1\n"), b"echo 2\n").unwrap();
        std::fs::write(&file, "echo 2\n").unwrap();
        f.backups.save("c1", None, &created, None, b"fresh").unwrap();
        std::fs::write(&created, "fresh").unwrap();
        let undo = f.undo(false);
        let done = block(undo.last(Some("c1"), &LocalFs, None)).unwrap();
        assert!(matches!(&done, Undone::Removed { path, .. } if path == &created), "{done:?}");
        assert!(!created.exists());
        // `1` names the same session as `c1`, the form the audit log and the backups use.
        let done = block(undo.last(Some("1"), &LocalFs, None)).unwrap();
        assert!(done.to_string().starts_with(&format!("restored {} (changed at ", file.display())), "{done}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "echo 1\n");
        assert_eq!(
            block(undo.last(Some("#1"), &LocalFs, None)).unwrap(),
            Undone::Nothing { session: Some("c1".into()) }
        );
        assert_eq!(block(undo.last(None, &LocalFs, None)).unwrap().to_string(), "nothing to undo");
        // One audit line per undo that did something; none for "nothing to undo".
        let lines = f.audit_lines();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains(&format!(
                "SESSION: c1 | INPUT: \"opsai undo\" | TOOL: file.undo | CMD: \"undo {}\"",
                created.display()
            )),
            "{}",
            lines[0]
        );
        assert!(lines[1].contains("| RISK: medium | CONFIRMED: yes | EXIT: 0 | OUTPUT: restored "), "{}", lines[1]);
        assert!(!lines[1].contains("HOST:"), "{}", lines[1]);
    }

    #[test]
    fn a_change_on_the_host_the_caller_is_on_goes_through_its_file_seam_and_is_audited_with_the_host() {
        let f = Fixture::new();
        let file = f.dir.path().join("app.conf");
        f.backups.save("c1", Some("db-1"), &file, Some(b"old\n"), b"new\n").unwrap();
        std::fs::write(&file, "new\n").unwrap();
        // LocalFs stands in for the REPL's open SshFs on db-1.
        let done = block(f.undo(false).last(None, &LocalFs, Some("db-1"))).unwrap();
        assert!(done.to_string().starts_with(&format!("restored {} on db-1 (changed at", file.display())), "{done}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "old\n");
        let lines = f.audit_lines();
        assert!(lines[0].contains("| TOOL: file.undo | HOST: db-1 | CMD: \"undo "), "{}", lines[0]);
    }

    #[test]
    fn a_file_changed_since_opsai_wrote_it_is_left_alone_unless_forced() {
        let f = Fixture::new();
        let file = f.dir.path().join("a.sh");
        f.backups.save("c9", None, &file, Some(b"echo 1\n"), b"echo 2\n").unwrap();
        for (later, what) in [("echo 3\n", "its content differs"), ("echo 22\n", "it is 8 bytes now; opsai wrote 7")] {
            std::fs::write(&file, later).unwrap();
            let err = block(f.undo(false).last(None, &LocalFs, None)).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, UndoError::ChangedSince { .. }), "{err:?}");
            assert!(text.starts_with(&format!("{} changed after opsai wrote it at ", file.display())), "{text}");
            assert!(text.contains(what) && text.contains("nothing was undone"), "{text}");
            assert!(text.contains("run `opsai undo --session c9 --force`"), "{text}");
            assert_eq!(std::fs::read_to_string(&file).unwrap(), later, "left alone");
        }
        std::fs::remove_file(&file).unwrap();
        let text = block(f.undo(false).last(None, &LocalFs, None)).unwrap_err().to_string();
        assert!(text.contains("(it has been deleted)"), "{text}");
        assert!(f.backups.last(None).unwrap().is_some(), "still the last change");
        let refused = f.audit_lines();
        assert_eq!(refused.len(), 3);
        assert!(refused.iter().all(|line| line.contains("| CONFIRMED: no | EXIT: - |")), "{refused:?}");
        std::fs::write(&file, "echo 3\n").unwrap();
        let done = block(f.undo(true).last(None, &LocalFs, None)).unwrap();
        assert!(matches!(done, Undone::Restored { .. }));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "echo 1\n");
        assert!(f.audit_lines()[3].contains(&format!("CMD: \"undo {} --force\"", file.display())));
    }

    /// This machine's files; once a file is replaced, the backup journal at `journal` becomes a
    /// directory, so recording the undo fails.
    struct JournalBreaksAfterReplace {
        journal: PathBuf,
    }

    impl FileSystem for JournalBreaksAfterReplace {
        fn canonicalize<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, std::io::Result<PathBuf>> {
            LocalFs.canonicalize(path)
        }
        fn metadata<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, std::io::Result<Option<crate::exec::fs::FileMeta>>> {
            LocalFs.metadata(path)
        }
        fn read<'a>(&'a self, path: &'a Path, limit: u64) -> BoxFuture<'a, std::io::Result<Vec<u8>>> {
            LocalFs.read(path, limit)
        }
        fn replace<'a>(&'a self, path: &'a Path, content: &'a [u8]) -> BoxFuture<'a, std::io::Result<()>> {
            Box::pin(async move {
                LocalFs::replace_now(path, content)?;
                std::fs::rename(&self.journal, self.journal.with_extension("saved"))?;
                std::fs::create_dir(&self.journal)
            })
        }
        fn remove<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, std::io::Result<()>> {
            LocalFs.remove(path)
        }
        fn home(&self) -> Option<PathBuf> {
            None
        }
    }

    #[test]
    fn a_restore_the_journal_cannot_record_is_reported_as_done_with_what_to_do() {
        let f = Fixture::new();
        let file = f.dir.path().join("a.sh");
        f.backups.save("c4", None, &file, Some(b"echo 1\n"), b"echo 2\n").unwrap();
        std::fs::write(&file, "echo 2\n").unwrap();
        let fs = JournalBreaksAfterReplace { journal: f.backups.journal() };
        let err = block(f.undo(false).last(None, &fs, None)).unwrap_err();
        assert!(matches!(err, UndoError::Journal { .. }), "{err:?}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "echo 1\n", "restored");
        let text = err.to_string();
        assert!(text.starts_with(&format!("restored {} (changed at ", file.display())), "{text}");
        assert!(
            text.contains("but the backup journal could not record that: cannot append to the backup journal"),
            "{text}"
        );
        assert!(text.contains("once the journal is writable, run `opsai undo --session c4 --force`"), "{text}");
        assert!(!text.contains("nothing was undone"), "{text}");
        let lines = f.audit_lines();
        assert_eq!(lines.len(), 1, "{lines:?}");
        // OUTPUT keeps the message's first 100 characters, however long the file's path (TMPDIR) is.
        let output: String = text.chars().take(100).collect();
        assert!(lines[0].contains(&format!("| CONFIRMED: yes | EXIT: 0 | OUTPUT: {output}")), "{}", lines[0]);
        // Once the journal is back, the forced undo the message names records it.
        std::fs::remove_dir(f.backups.journal()).unwrap();
        std::fs::rename(f.backups.journal().with_extension("saved"), f.backups.journal()).unwrap();
        assert!(matches!(block(f.undo(false).last(None, &LocalFs, None)), Err(UndoError::ChangedSince { .. })));
        assert!(matches!(block(f.undo(true).last(None, &LocalFs, None)), Ok(Undone::Restored { .. })));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "echo 1\n");
        assert_eq!(block(f.undo(false).last(None, &LocalFs, None)).unwrap(), Undone::Nothing { session: None });
    }

    #[test]
    fn an_unreachable_recorded_host_is_a_clear_error() {
        let mut f = Fixture::new();
        f.ssh.options = vec!["-o".into(), "ProxyCommand=false".into(), "-o".into(), "BatchMode=yes".into()];
        f.backups.save("c1", Some("db-1"), Path::new("/srv/app.conf"), Some(b"x"), b"y").unwrap();
        let err = block(f.undo(false).last(None, &LocalFs, None)).unwrap_err();
        assert!(
            err.to_string().starts_with("cannot undo the change to /srv/app.conf on db-1: cannot connect"),
            "{err}"
        );
        assert!(f.backups.last(None).unwrap().is_some(), "still the last change");
        assert!(f.audit_lines()[0].contains("| HOST: db-1 |"));
    }
}
