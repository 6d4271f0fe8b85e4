//! The config file on disk: reading with positioned syntax errors, typed sections whose errors
//! name the key, merging typed values into the original JSON, and private atomic writes.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::ConfigError;

/// The file's JSON, or `None` when there is no file.
pub(super) fn read_json(path: &Path) -> Result<Option<Value>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, path).map(Some),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(ConfigError::Read { path: path.to_owned(), error }),
    }
}

pub(super) fn parse(text: &str, path: &Path) -> Result<Value, ConfigError> {
    serde_json::from_str(text).map_err(|err| ConfigError::Syntax {
        path: path.to_owned(),
        line: err.line(),
        column: err.column(),
        message: err.to_string(),
    })
}

/// One section, defaults for what is missing. An error is `(key, message)` with the key as
/// precise as serde allows: the first field that fails on its own, else the section.
pub(super) fn section<T: DeserializeOwned + Default>(
    raw: &Map<String, Value>,
    name: &str,
) -> Result<T, (String, String)> {
    let value = match raw.get(name) {
        None | Some(Value::Null) => return Ok(T::default()),
        Some(value) => value,
    };
    let Value::Object(fields) = value else {
        return Err((name.to_owned(), "must be an object".to_owned()));
    };
    serde_json::from_value(value.clone()).map_err(|whole| {
        for (key, field) in fields {
            let alone = Value::Object(Map::from_iter([(key.clone(), field.clone())]));
            if let Err(err) = serde_json::from_value::<T>(alone) {
                return (format!("{name}.{key}"), err.to_string());
            }
        }
        (name.to_owned(), whole.to_string())
    })
}

/// Writes `typed` over `base`: objects are merged key by key (so keys only `base` has survive),
/// anything else replaces.
pub(super) fn merge(base: &mut Value, typed: Value) {
    match (base, typed) {
        (Value::Object(base), Value::Object(typed)) => {
            for (key, value) in typed {
                match base.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (slot, value) => *slot = value,
    }
}

/// Creates `dir` (and parents) readable by the owner only; an existing directory is left as is.
pub(super) fn create_dir_private(dir: &Path) -> std::io::Result<()> {
    crate::home::create_private_dir(dir)
}

pub(super) fn write_error(path: &Path, error: impl std::error::Error + Send + Sync + 'static) -> ConfigError {
    ConfigError::Write { path: path.to_owned(), error: std::io::Error::other(error) }
}

/// Copies the current file (if any) to `<path>.bak`, privately and atomically.
pub(crate) fn backup(path: &Path) -> Result<(), ConfigError> {
    match std::fs::read(path) {
        Ok(previous) => write_replace(&backup_path(path), &previous),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(ConfigError::Read { path: path.to_owned(), error }),
    }
}

pub(super) fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".bak");
    path.with_file_name(name)
}

/// Replaces `path` with `contents`: a mode-0600 temp file in the same directory, synced, then
/// renamed over the target, so a reader sees the old file or the new one, never a mix.
pub(crate) fn write_replace(path: &Path, contents: impl AsRef<[u8]>) -> Result<(), ConfigError> {
    install(path, contents.as_ref(), |temp| std::fs::rename(temp, path))
}

/// Like [`write_replace`], but never replaces an existing file (another process may have created
/// it since we looked): returns `Ok(false)` when `path` already exists.
pub(super) fn write_new(path: &Path, contents: impl AsRef<[u8]>) -> Result<bool, ConfigError> {
    let mut created = true;
    install(path, contents.as_ref(), |temp| match std::fs::hard_link(temp, path) {
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
            created = false;
            std::fs::remove_file(temp)
        }
        linked => linked.and_then(|()| std::fs::remove_file(temp)),
    })?;
    Ok(created)
}

fn install(
    path: &Path,
    contents: &[u8],
    put_in_place: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<(), ConfigError> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp = path.with_file_name(format!(".{name}.{}.{unique}.tmp", std::process::id()));
    let written = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp)?;
        file.write_all(contents)?;
        file.sync_all()?;
        put_in_place(&temp)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(ConfigError::Write { path: path.to_owned(), error });
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Make the rename durable; failing to sync a directory is not worth failing the save.
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}
