//! Backups of files the file tools changed: `$OPSAI_HOME/backups/<session>/<timestamp>/<path>`,
//! and the record `opsai undo` and `/undo` use to restore the last change of a session.
//!
//! Layout: the previous content of `/home/ana/test/a.sh`, changed in session `c12`, is kept at
//! `backups/c12/20260122T103015.123456Z/home/ana/test/a.sh` (for a file on an SSH host,
//! `backups/c12/<timestamp>/<host>/home/ana/test/a.sh`). Directories are `0700`, files `0600`.
//!
//! `backups/journal.jsonl` is append-only, one JSON object per line, each written with one
//! `write` on an `O_APPEND` descriptor and fsynced before the file itself is replaced:
//!
//! ```text
//! {"event":"change","id":"c12/20260122T103015.123456Z","session":"c12","host":null,"path":"/home/ana/test/a.sh","backup":"c12/20260122T103015.123456Z/home/ana/test/a.sh","existed":true,"written":"2242701514 7","created_at":"2026-01-22T10:30:15.123456Z"}
//! {"event":"undone","id":"c12/20260122T103015.123456Z","created_at":"2026-01-22T10:31:02.5Z"}
//! ```
//!
//! `backup` is relative to the backups directory and `null` when the file did not exist (undo then
//! removes it). `written` is the POSIX `cksum` (`CRC SIZE`) of the content the change wrote: undo
//! compares the file with it and refuses to overwrite later edits. The last change is the last `change` line with no `undone` line for its id, so undo
//! twice walks back two changes. Lines that do not parse (a torn last line after a crash) are skipped.

use std::collections::HashSet;
use std::fs::{DirBuilder, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The journal's file name inside the backups directory.
const JOURNAL: &str = "journal.jsonl";

/// The backup store under `$OPSAI_HOME/backups`.
#[derive(Debug, Clone)]
pub struct Backups {
    root: PathBuf,
}

/// One recorded change: what to restore and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupEntry {
    /// `<session>/<timestamp>`: unique, names the change in `undone` lines.
    pub id: String,
    pub session: String,
    /// The SSH host the file is on; `None` is this machine.
    pub host: Option<String>,
    /// The changed file's absolute path (on `host`).
    pub path: PathBuf,
    /// The previous content; `None` when the file did not exist before the change.
    pub backup: Option<PathBuf>,
    /// `cksum` of what the change wrote; `None` in lines from before it was recorded.
    pub written: Option<String>,
    pub created_at: Timestamp,
}

#[derive(Debug, Error)]
pub enum BackupError {
    #[error("cannot create the backup directory {path}: {error}; make it writable or free some disk space")]
    CreateDir { path: PathBuf, error: std::io::Error },
    #[error("cannot write the backup {path}: {error}; free some disk space or make the backups directory writable")]
    Write { path: PathBuf, error: std::io::Error },
    #[error("cannot append to the backup journal {path}: {error}; make it writable or free some disk space")]
    Journal { path: PathBuf, error: std::io::Error },
    #[error("cannot read {path}: {error}; check its permissions")]
    Read { path: PathBuf, error: std::io::Error },
    #[error("`{value}` cannot be used as a {what} name in the backups directory (it has a `/` or is empty)")]
    Name { what: &'static str, value: String },
    #[error("{0} is not an absolute path; only absolute paths are backed up")]
    Relative(PathBuf),
}

/// One journal line.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum Line {
    Change {
        id: String,
        session: String,
        host: Option<String>,
        path: PathBuf,
        backup: Option<PathBuf>,
        existed: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        written: Option<String>,
        /// RFC 3339, UTC.
        created_at: String,
    },
    Undone {
        id: String,
        created_at: String,
    },
}

impl Backups {
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn journal(&self) -> PathBuf {
        self.root.join(JOURNAL)
    }

    /// Keeps `previous` (the content before the change; `None`: the file does not exist yet) and
    /// records the change, with the `cksum` of `written`, the content about to be written. Call it
    /// before replacing the file: when it fails, do not write.
    pub fn save(
        &self,
        session: &str,
        host: Option<&str>,
        path: &Path,
        previous: Option<&[u8]>,
        written: &[u8],
    ) -> Result<BackupEntry, BackupError> {
        check_name("session", session)?;
        if let Some(host) = host {
            check_name("host", host)?;
        }
        let relative = path.strip_prefix("/").map_err(|_| BackupError::Relative(path.to_owned()))?;
        let session_dir = self.root.join(session);
        private_dirs().recursive(true).create(&session_dir).map_err(|error| create_dir(&session_dir, error))?;
        let created_at = Timestamp::now();
        let id = unique_change_dir(&session_dir, session, created_at)?;
        let backup = match previous {
            None => None,
            Some(content) => {
                let within = match host {
                    Some(host) => Path::new(&id).join(host).join(relative),
                    None => Path::new(&id).join(relative),
                };
                let file = self.root.join(&within);
                if let Some(parent) = file.parent() {
                    private_dirs().recursive(true).create(parent).map_err(|error| create_dir(parent, error))?;
                }
                write_private(&file, content).map_err(|error| BackupError::Write { path: file.clone(), error })?;
                Some(within)
            }
        };
        let line = Line::Change {
            id: id.clone(),
            session: session.to_owned(),
            host: host.map(str::to_owned),
            path: path.to_owned(),
            backup: backup.clone(),
            existed: previous.is_some(),
            written: Some(crate::exec::fs::cksum(written)),
            created_at: created_at.to_string(),
        };
        self.append(&line)?;
        Ok(BackupEntry {
            id,
            session: session.to_owned(),
            host: host.map(str::to_owned),
            path: path.to_owned(),
            backup: backup.map(|within| self.root.join(within)),
            written: Some(crate::exec::fs::cksum(written)),
            created_at,
        })
    }

    /// The last change not yet undone: of `session`, or of any session for `None`.
    pub fn last(&self, session: Option<&str>) -> Result<Option<BackupEntry>, BackupError> {
        let path = self.journal();
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(BackupError::Read { path, error }),
        };
        let mut changes = Vec::new();
        let mut undone = HashSet::new();
        for line in BufReader::new(file).lines() {
            let line = line.map_err(|error| BackupError::Read { path: path.clone(), error })?;
            match serde_json::from_str::<Line>(&line) {
                Ok(Line::Change { id, session, host, path, backup, written, created_at, .. }) => {
                    let Ok(created_at) = created_at.parse::<Timestamp>() else { continue };
                    let backup = backup.map(|within| self.root.join(within));
                    changes.push(BackupEntry { id, session, host, path, backup, written, created_at });
                }
                Ok(Line::Undone { id, .. }) => {
                    undone.insert(id);
                }
                // A torn line from a crash mid-append, or a line from a newer opsai.
                Err(_) => {}
            }
        }
        Ok(changes
            .into_iter()
            .rev()
            .filter(|entry| !undone.contains(&entry.id))
            .find(|entry| session.is_none_or(|wanted| entry.session == wanted)))
    }

    /// Records that `entry` was undone (or never happened: its write failed), so `last` skips it.
    pub(crate) fn mark_undone(&self, entry: &BackupEntry) -> Result<(), BackupError> {
        self.append(&Line::Undone { id: entry.id.clone(), created_at: Timestamp::now().to_string() })
    }

    fn append(&self, line: &Line) -> Result<(), BackupError> {
        let path = self.journal();
        let journal = |error| BackupError::Journal { path: path.clone(), error };
        let mut text = serde_json::to_string(line).map_err(|err| journal(std::io::Error::other(err)))?;
        text.push('\n');
        private_dirs().recursive(true).create(&self.root).map_err(|error| create_dir(&self.root, error))?;
        let mut file = OpenOptions::new().append(true).create(true).mode(0o600).open(&path).map_err(journal)?;
        // One write per line keeps concurrent appenders' lines whole; fsync before the file changes.
        file.write_all(text.as_bytes()).and_then(|()| file.sync_data()).map_err(journal)
    }
}

fn private_dirs() -> DirBuilder {
    let mut builder = DirBuilder::new();
    builder.mode(0o700);
    builder
}

fn create_dir(path: &Path, error: std::io::Error) -> BackupError {
    BackupError::CreateDir { path: path.to_owned(), error }
}

/// A session or host name is one path component of the backups directory.
fn check_name(what: &'static str, value: &str) -> Result<(), BackupError> {
    let bad = value.is_empty() || value == "." || value == ".." || value.contains(['/', '\0']);
    if bad { Err(BackupError::Name { what, value: value.to_owned() }) } else { Ok(()) }
}

/// `<session>/<timestamp>`, created fresh (`-1`, `-2`, … when two changes share a microsecond).
fn unique_change_dir(session_dir: &Path, session: &str, at: Timestamp) -> Result<String, BackupError> {
    let stamp = at.strftime("%Y%m%dT%H%M%S%.6fZ").to_string();
    let mut attempt = 0u32;
    loop {
        let name = if attempt == 0 { stamp.clone() } else { format!("{stamp}-{attempt}") };
        let dir = session_dir.join(&name);
        match private_dirs().create(&dir) {
            Ok(()) => return Ok(format!("{session}/{name}")),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => attempt += 1,
            Err(error) => return Err(create_dir(&dir, error)),
        }
    }
}

fn write_private(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(content)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn layout_is_session_timestamp_path_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let backups = Backups::new(dir.path().join("backups"));
        let entry = backups.save("c12", None, Path::new("/home/ana/test/a.sh"), Some(b"echo 1\n"), b"new").unwrap();
        let file = entry.backup.clone().unwrap();
        let within = file.strip_prefix(backups.root()).unwrap();
        let parts: Vec<_> = within.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        assert_eq!(parts[0], "c12");
        assert!(parts[1].ends_with('Z') && parts[1].contains('T'), "{parts:?}");
        assert_eq!(parts[2..], ["home", "ana", "test", "a.sh"]);
        assert_eq!(std::fs::read(&file).unwrap(), b"echo 1\n");
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().unwrap()), 0o700);
        assert_eq!(mode(&backups.root().join("c12")), 0o700);
        assert_eq!(mode(&backups.journal()), 0o600);
        let remote = backups.save("c12", Some("db-1"), Path::new("/etc/app.conf"), Some(b"x"), b"new").unwrap();
        assert!(remote.backup.unwrap().ends_with("db-1/etc/app.conf"));
        assert_ne!(remote.id, entry.id, "two changes never share a directory");
    }

    #[test]
    fn journal_lines_say_what_to_restore() {
        let dir = tempfile::tempdir().unwrap();
        let backups = Backups::new(dir.path().to_owned());
        backups.save("c1", None, Path::new("/tmp/new.txt"), None, b"new").unwrap();
        let journal = std::fs::read_to_string(backups.journal()).unwrap();
        let line: serde_json::Value = serde_json::from_str(journal.trim()).unwrap();
        assert_eq!(line["event"], "change");
        assert_eq!(line["session"], "c1");
        assert_eq!(line["path"], "/tmp/new.txt");
        assert_eq!(line["existed"], false);
        assert!(line["backup"].is_null());
        assert!(line["host"].is_null());
        assert_eq!(line["written"], crate::exec::fs::cksum(b"new"), "what the change wrote");
        assert!(line["created_at"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn last_walks_back_through_undone_changes_per_session() {
        let dir = tempfile::tempdir().unwrap();
        let backups = Backups::new(dir.path().to_owned());
        assert_eq!(backups.last(None).unwrap(), None);
        let first = backups.save("c1", None, Path::new("/a"), Some(b"1"), b"new").unwrap();
        let second = backups.save("c1", None, Path::new("/b"), Some(b"2"), b"new").unwrap();
        let other = backups.save("c2", None, Path::new("/c"), None, b"new").unwrap();
        assert_eq!(backups.last(None).unwrap().as_ref(), Some(&other));
        assert_eq!(backups.last(Some("c1")).unwrap().as_ref(), Some(&second));
        backups.mark_undone(&second).unwrap();
        assert_eq!(backups.last(Some("c1")).unwrap().as_ref(), Some(&first));
        backups.mark_undone(&first).unwrap();
        assert_eq!(backups.last(Some("c1")).unwrap(), None);
        assert_eq!(backups.last(Some("c3")).unwrap(), None);
        // A torn line (a crash mid-append) is skipped, not fatal.
        let mut journal = OpenOptions::new().append(true).open(backups.journal()).unwrap();
        journal.write_all(b"{\"event\":\"change\",\"id\":").unwrap();
        assert_eq!(backups.last(None).unwrap().as_ref(), Some(&other));
    }

    #[test]
    fn names_that_would_escape_the_directory_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let backups = Backups::new(dir.path().to_owned());
        for session in ["", "..", "a/b"] {
            assert!(matches!(
                backups.save(session, None, Path::new("/x"), None, b"new"),
                Err(BackupError::Name { .. })
            ));
        }
        assert!(matches!(
            backups.save("c1", Some("../h"), Path::new("/x"), None, b"new"),
            Err(BackupError::Name { .. })
        ));
        assert!(matches!(backups.save("c1", None, Path::new("x"), None, b"new"), Err(BackupError::Relative(_))));
    }
}
