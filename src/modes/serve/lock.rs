//! One `opsai serve` per home: two servers on one sessions database would both accept turns for
//! the same conversations and interleave their messages (user, user, assistant, assistant). The
//! first holds an exclusive lock on `serve.lock` beside the database for as long as it runs (the
//! kernel drops it when the process ends, however it ends) and writes its pid and address there;
//! a second is refused with both.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The held lock; released when dropped (or when the process ends).
pub struct HomeLock {
    file: File,
}

/// What the second server is told.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another opsai serve ({holder}) already serves this home's sessions database ({path}): two servers on \
         one database would interleave their turns; stop that one, or start this one with another OPSAI_HOME"
    )]
    Held { holder: String, path: PathBuf },
    #[error("cannot lock {path}: {error}; check that its directory is writable")]
    Io { path: PathBuf, error: std::io::Error },
}

impl HomeLock {
    /// Takes the lock at `path`, or says who holds it.
    pub fn take(path: &Path) -> Result<Self, LockError> {
        let failed = |error| LockError::Io { path: path.to_owned(), error };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(failed)?;
        match file.try_lock() {
            Ok(()) => Ok(Self { file }),
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                let holder = text.lines().collect::<Vec<_>>().join(", ");
                let holder = if holder.trim().is_empty() { "starting".to_owned() } else { holder };
                Err(LockError::Held { holder, path: path.with_file_name("sessions.db") })
            }
            Err(std::fs::TryLockError::Error(error)) => Err(failed(error)),
        }
    }

    /// Writes who holds it: this pid and the address it listens on.
    pub fn record(&mut self, listening: &str) {
        let text = format!("pid {}, listening on {listening}\n", std::process::id());
        let _ = self.file.set_len(0);
        let _ = self.file.rewind();
        let _ = self.file.write_all(text.as_bytes());
        let _ = self.file.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_told_who_holds_it_until_it_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.lock");
        let mut first = HomeLock::take(&path).unwrap();
        first.record("127.0.0.1:8765");
        let refused = HomeLock::take(&path).err().unwrap().to_string();
        assert!(refused.contains(&format!("pid {}", std::process::id())), "{refused}");
        assert!(refused.contains("listening on 127.0.0.1:8765"), "{refused}");
        drop(first);
        assert!(HomeLock::take(&path).is_ok());
    }
}
