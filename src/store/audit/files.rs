//! The audit log's files: opening the live file for append, rotating it under a lock, finding and
//! pruning rotated files.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use jiff::civil::DateTime;
use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

use super::{AuditError, AuditLog};

/// Opens `path` for appending, creating its directory (`0700`) and the file (`0600`) when missing.
pub(super) fn open_append(path: &Path) -> Result<File, AuditError> {
    crate::store::create_private_parent(path)
        .map_err(|error| AuditError::CreateDir { path: path.parent().unwrap_or(path).to_owned(), error })?;
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .map_err(|error| AuditError::Open { path: path.to_owned(), error })
}

/// `audit.log` → `audit.log<suffix>` in the same directory.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().map(|name| name.to_os_string()).unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

/// `YYYYMMDD-HHMMSS` and the `.N` that follows it, when `name` is `<live>.YYYYMMDD-HHMMSS[.N]`.
fn rotated_stamp(live: &str, name: &str) -> Option<(String, u32)> {
    let rest = name.strip_prefix(live)?.strip_prefix('.')?;
    let (stamp, counter) = match rest.split_once('.') {
        Some((stamp, counter)) => (stamp, counter.parse().ok()?),
        None => (rest, 0),
    };
    let shape =
        stamp.len() == 15 && stamp.char_indices().all(|(i, c)| if i == 8 { c == '-' } else { c.is_ascii_digit() });
    shape.then(|| (stamp.to_owned(), counter))
}

impl AuditLog {
    /// Rotates when the live file has reached the size limit. Several processes may see a full file at
    /// once: the first to take the lock renames it; the others find the new, small file and do nothing.
    pub(super) fn rotate_if_full(&self, at: DateTime) -> Result<(), AuditError> {
        if self.max_bytes == 0 || !self.is_full() {
            return Ok(());
        }
        let lock_path = sibling(&self.path, ".lock");
        let lock_file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock_path)
            .map_err(|error| AuditError::Lock { path: lock_path.clone(), error })?;
        let _lock =
            lock_exclusive(lock_file).map_err(|errno| AuditError::Lock { path: lock_path, error: errno.into() })?;
        if !self.is_full() {
            return Ok(());
        }
        let stamp = at.strftime("%Y%m%d-%H%M%S").to_string();
        let mut to = sibling(&self.path, &format!(".{stamp}"));
        let mut counter = 0;
        while to.symlink_metadata().is_ok() {
            counter += 1;
            to = sibling(&self.path, &format!(".{stamp}.{counter}"));
        }
        std::fs::rename(&self.path, &to).map_err(|error| AuditError::Rotate { path: self.path.clone(), to, error })?;
        let _ = self.prune_rotated();
        Ok(())
    }

    fn is_full(&self) -> bool {
        std::fs::metadata(&self.path).is_ok_and(|meta| meta.len() >= self.max_bytes)
    }

    /// Rotated files of this log, oldest first (by the stamp in their name).
    pub(super) fn rotated_files(&self) -> Result<Vec<PathBuf>, AuditError> {
        let Some(live) = self.path.file_name().and_then(|name| name.to_str()) else { return Ok(Vec::new()) };
        let dir = match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(AuditError::Read { path: dir.to_owned(), error }),
        };
        let mut rotated: Vec<((String, u32), PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name();
                let key = rotated_stamp(live, name.to_str()?)?;
                Some((key, entry.path()))
            })
            .collect();
        rotated.sort();
        Ok(rotated.into_iter().map(|(_, path)| path).collect())
    }

    /// Deletes rotated files last written more than `retain_days` ago; never the live file. Returns how
    /// many were deleted. Runs by itself on the first append of a process and after each rotation.
    pub(crate) fn prune_rotated(&self) -> Result<usize, AuditError> {
        let Some(retain) = self.retain else { return Ok(0) };
        let Some(cutoff) = SystemTime::now().checked_sub(retain) else { return Ok(0) };
        let mut deleted = 0;
        for path in self.rotated_files()? {
            let old = std::fs::symlink_metadata(&path).and_then(|meta| meta.modified()).is_ok_and(|time| time < cutoff);
            if old && std::fs::remove_file(&path).is_ok() {
                deleted += 1;
            }
        }
        Ok(deleted)
    }
}

/// Blocks until the lock is ours; retried when a signal interrupts the wait.
fn lock_exclusive(mut file: File) -> Result<Flock<File>, Errno> {
    loop {
        match Flock::lock(file, FlockArg::LockExclusive) {
            Ok(lock) => return Ok(lock),
            Err((back, Errno::EINTR)) => file = back,
            Err((_, errno)) => return Err(errno),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognizes_rotated_names() {
        assert_eq!(rotated_stamp("audit.log", "audit.log.20261122-103015"), Some(("20261122-103015".into(), 0)));
        assert_eq!(rotated_stamp("audit.log", "audit.log.20261122-103015.2"), Some(("20261122-103015".into(), 2)));
        for name in
            ["audit.log", "audit.log.lock", "audit.log.bak", "audit.log.20261122_103015", "other.20261122-103015"]
        {
            assert_eq!(rotated_stamp("audit.log", name), None, "{name}");
        }
    }

    #[test]
    fn sibling_names() {
        assert_eq!(sibling(Path::new("/x/audit.log"), ".lock"), PathBuf::from("/x/audit.log.lock"));
        assert_eq!(sibling(Path::new("audit.log"), ".1"), PathBuf::from("audit.log.1"));
    }
}
