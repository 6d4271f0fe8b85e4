//! The users file as the server reads it: again only when it changed, without the entries no user
//! may have, and kept while the file is briefly missing.

use std::path::Path;

use super::{UsersError, UsersFile};

/// The users file as last read, read again only when its identity, size or modification time
/// changed (a save renames a new file into place): a request costs a `stat`, not a read and a parse.
#[derive(Default)]
pub struct UsersCache {
    last: std::sync::Mutex<Option<(Option<Stamp>, std::sync::Arc<UsersFile>)>>,
}

/// What tells one version of the file from another; `None` when there is no file.
type Stamp = (u64, u64, u64, i64, i64);

impl UsersCache {
    pub fn get(&self, path: &Path) -> Result<std::sync::Arc<UsersFile>, UsersError> {
        use std::os::unix::fs::MetadataExt;
        let stamp = match std::fs::metadata(path) {
            Ok(meta) => Some((meta.dev(), meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => return Err(UsersError::Read { path: path.to_owned(), error }),
        };
        let mut last = self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((seen, users)) = last.as_ref()
            && *seen == stamp
        {
            return Ok(users.clone());
        }
        // A file that was there and is gone (being replaced by hand, a restore, a mount that is
        // late) logs nobody out: the users last read stay until it is back.
        if stamp.is_none()
            && let Some((Some(_), users)) = last.as_ref()
        {
            let users = users.clone();
            super::super::log(&format!(
                "the users file {} is missing: keeping the {} users last read until it is back (to log everyone \
                 out, remove them with `opsai serve user remove`)",
                path.display(),
                users.users.len()
            ));
            *last = Some((None, users.clone()));
            return Ok(users);
        }
        if last.as_ref().is_some_and(|(seen, _)| seen.is_none()) && stamp.is_some() {
            super::super::log(&format!("the users file {} is back: reading it again", path.display()));
        }
        let users = std::sync::Arc::new(UsersFile::load(path)?.checked(&path.display().to_string()));
        *last = Some((stamp, users.clone()));
        Ok(users)
    }
}
