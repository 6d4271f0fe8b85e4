//! The users of `opsai serve --users FILE`: the file (`{"users":[{"name","role","password_hash"}]}`,
//! mode 0600, replaced atomically), argon2id password hashes, and `opsai serve user add|remove|list`.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use argon2::password_hash::{PasswordHasher, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::cli::ServeRole;
use crate::config::ConfigError;
use crate::home::Paths;

mod admin;
mod cache;
#[cfg(test)]
mod pg_tests;
mod source;
mod table;
pub use admin::run;
pub use cache::UsersCache;
pub use source::{UsersSource, for_server};
use table::UsersTable;

#[derive(Debug, Error)]
pub enum UsersError {
    #[error("cannot read the users file {path}: {error}; check its path and permissions")]
    Read { path: PathBuf, error: std::io::Error },
    #[error("the users file {path} is not valid ({error}); fix it or remove it and add the users again")]
    Parse { path: PathBuf, error: serde_json::Error },
    #[error("cannot write the users file {path}: {error}; make its directory writable")]
    Write { path: PathBuf, error: std::io::Error },
    #[error("`{0}` is not a valid user name: use 1 to 64 letters, digits, `.`, `_` or `-`")]
    BadName(String),
    #[error("`{0}` is reserved (the token mode's user, who owns its conversations): choose another name")]
    Reserved(String),
    #[error("cannot hash the password: {0}")]
    Hash(String),
    #[error(transparent)]
    Database(#[from] crate::store::database::DatabaseError),
    /// The database failed a moment ago (the reason then): not tried again yet.
    #[error("{0} (not tried again yet)")]
    DatabaseDown(String),
}

impl UsersError {
    /// What a browser is told when the users cannot be read (503): the details are in the
    /// server's log, not for the browser.
    pub fn unavailable(&self) -> String {
        let problem = match self {
            UsersError::Parse { .. } => "the server's users file fails to load (it is not valid JSON)",
            UsersError::Database(_) | UsersError::DatabaseDown(_) => {
                "the server cannot read its users from the database"
            }
            _ => "the server's users file fails to load (it cannot be read)",
        };
        format!("{problem}: ask its admin to fix it (the server's log says more); you stay logged in, try again then")
    }
}

/// One user as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct User {
    pub name: String,
    pub role: ServeRole,
    pub password_hash: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct UsersFile {
    pub users: Vec<User>,
}

/// Token mode's user: no users-mode user may take the name (and so its conversations).
pub const RESERVED: &str = "owner";

/// `$OPSAI_HOME/serve-users.json`, the file `serve user …` uses when not told another.
pub fn default_path(paths: &Paths) -> PathBuf {
    paths.home.join("serve-users.json")
}

pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

impl UsersFile {
    /// The file's users; a missing file has none.
    pub fn load(path: &Path) -> Result<Self, UsersError> {
        match std::fs::read(path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|error| UsersError::Parse { path: path.to_owned(), error })
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(error) => Err(UsersError::Read { path: path.to_owned(), error }),
        }
    }

    /// The file's users without those a server must not let in, each left out with a line in
    /// the log: a name that is not valid (empty, control or bidi characters, spaces …), the
    /// reserved one, or a name already seen (which of the two would log in is not clear).
    /// `from` names where they were read (a file's path, the database).
    pub fn checked(mut self, from: &str) -> Self {
        let mut seen = std::collections::HashSet::new();
        self.users.retain(|user| {
            let problem = if !valid_name(&user.name) {
                "not a valid user name (1 to 64 letters, digits, `.`, `_` or `-`)"
            } else if user.name == RESERVED {
                "the reserved name of token mode's user"
            } else if !seen.insert(user.name.clone()) {
                "a second entry with this name"
            } else {
                return true;
            };
            super::log(&format!(
                "ignoring the user {:?} in {from}: {problem}; fix it with `opsai serve user remove` and `add`, or by hand",
                user.name
            ));
            false
        });
        self
    }

    /// Replaces the file as `config.json` is replaced: the previous version kept as `FILE.bak`, a
    /// 0600 temp file in the same directory, synced, renamed over it.
    pub fn save(&self, path: &Path) -> Result<(), UsersError> {
        let failed = |error| UsersError::Write { path: path.to_owned(), error };
        let mut text = serde_json::to_string_pretty(self).map_err(|e| failed(std::io::Error::other(e)))?;
        text.push('\n');
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(failed)?;
        }
        let io = |error: ConfigError| match error {
            ConfigError::Read { error, .. } | ConfigError::Write { error, .. } => failed(error),
            other => failed(std::io::Error::other(other)),
        };
        crate::config::file::backup(path).map_err(io)?;
        crate::config::file::write_replace(path, text).map_err(io)
    }

    /// The user `name`; never [`RESERVED`] (a file edited by hand cannot make them).
    pub fn find(&self, name: &str) -> Option<&User> {
        self.users.iter().find(|user| user.name == name && name != RESERVED)
    }
}

/// Holds `FILE.lock` locked while it lives: two `serve user …` at once take turns instead of
/// one losing the other's change.
pub(super) fn lock_file(path: &Path) -> Result<std::fs::File, UsersError> {
    let failed = |error| UsersError::Write { path: path.to_owned(), error };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path.with_file_name(format!("{name}.lock")))
        .map_err(failed)?;
    file.lock().map_err(failed)?;
    Ok(file)
}

/// Why the users file may be read by others than its owner (mode bits for group or world), if so.
pub fn readable_by_others(path: &Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

/// An argon2id PHC string for `password`, with a random salt.
pub fn hash_password(password: &str) -> Result<String, UsersError> {
    let salt_bytes: [u8; 16] = rand::random();
    let salt = SaltString::encode_b64(&salt_bytes).map_err(|e| UsersError::Hash(e.to_string()))?;
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| UsersError::Hash(e.to_string()))
}

/// Whether `password` matches the stored `hash` (a malformed hash matches nothing).
pub fn verify_password(password: &str, hash: &str) -> bool {
    super::passwords::verify(password, hash)
}

/// A hash to check against when the name is unknown, so a wrong name costs as long as a wrong password.
pub fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash_password("opsai-no-such-user").unwrap_or_default())
}

fn argon2() -> Argon2<'static> {
    // OWASP's argon2id minimum (19 MiB, 2 passes), the crate's default.
    Argon2::new(Algorithm::Argon2id, Version::V0x13, Params::default())
}

pub fn role_name(role: ServeRole) -> &'static str {
    match role {
        ServeRole::Viewer => "viewer",
        ServeRole::Operator => "operator",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_reads_the_file_again_only_when_it_was_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users.json");
        let cache = UsersCache::default();
        assert!(cache.get(&path).unwrap().users.is_empty());
        let user = |name: &str| User { name: name.into(), role: ServeRole::Viewer, password_hash: "h".into() };
        UsersFile { users: vec![user("a")] }.save(&path).unwrap();
        let first = cache.get(&path).unwrap();
        assert_eq!(first.users.len(), 1);
        assert!(std::sync::Arc::ptr_eq(&first, &cache.get(&path).unwrap()), "unchanged: not read again");
        UsersFile { users: vec![user("a"), user("b")] }.save(&path).unwrap();
        assert_eq!(cache.get(&path).unwrap().users.len(), 2);
        std::fs::write(&path, "not json").unwrap();
        assert!(matches!(cache.get(&path), Err(UsersError::Parse { .. })));
    }

    #[test]
    fn names_are_checked() {
        assert!(valid_name("alice.b_c-1"));
        assert!(!valid_name(""));
        assert!(!valid_name("a b"));
        assert!(!valid_name(&"x".repeat(65)));
    }

    #[test]
    fn a_hash_verifies_its_password_only() {
        let hash = hash_password("correct horse").unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong", &hash));
        assert!(!verify_password("correct horse", "not a hash"));
    }

    #[test]
    fn the_file_round_trips_with_mode_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users.json");
        let file =
            UsersFile { users: vec![User { name: "a".into(), role: ServeRole::Viewer, password_hash: "h".into() }] };
        file.save(&path).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let loaded = UsersFile::load(&path).unwrap();
        assert_eq!(loaded.find("a").unwrap().role, ServeRole::Viewer);
        assert!(UsersFile::load(&dir.path().join("missing")).unwrap().users.is_empty());
        assert_eq!(readable_by_others(&path), None);
    }

    #[test]
    fn each_save_keeps_the_previous_version_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("users.json");
        let user = |name: &str| User { name: name.into(), role: ServeRole::Viewer, password_hash: "h".into() };
        UsersFile { users: vec![user("a")] }.save(&path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(readable_by_others(&path), Some(0o644));
        UsersFile { users: vec![user("a"), user("b")] }.save(&path).unwrap();
        let backup = dir.path().join("users.json.bak");
        assert_eq!(UsersFile::load(&backup).unwrap().users.len(), 1);
        assert_eq!(std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(UsersFile::load(&path).unwrap().users.len(), 2);
    }
}
