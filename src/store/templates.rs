//! The analyze-template cache (`$OPSAI_HOME/cache/analyze_templates.json`, seed 001's format): a map
//! from an object type to `{commands, created_at, hit_count}`.
//!
//! A missing file is an empty cache. A corrupt one is moved aside as `<file>.corrupt` (never silently
//! overwritten), the cache starts empty, and a warning is returned for the caller to show: never fatal.
//! Saves are atomic (a private temp file in the same directory, then a rename; mode 0600).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// The cache file under `$OPSAI_HOME`.
pub(crate) fn default_path(cache_dir: &Path) -> PathBuf {
    cache_dir.join("analyze_templates.json")
}

/// One cached template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Template {
    /// Commands with `{name}`, `{port}`, `{pid}`, `{path}` placeholders.
    pub commands: Vec<String>,
    /// RFC 3339 timestamp.
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub hit_count: u64,
}

#[derive(Debug, Error)]
pub(crate) enum TemplateError {
    #[error("cannot read the template cache {path}: {error}; check that it is readable")]
    Read { path: PathBuf, error: std::io::Error },
    #[error("cannot write the template cache {path}: {error}; make $OPSAI_HOME/cache writable")]
    Write { path: PathBuf, error: std::io::Error },
}

/// The cache as loaded; changes are written with [`TemplateCache::save`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct TemplateCache {
    path: PathBuf,
    pub templates: BTreeMap<String, Template>,
}

impl TemplateCache {
    /// Loads the cache; the second value is a warning when a corrupt file was moved aside.
    pub fn load(path: &Path) -> Result<(Self, Option<String>), TemplateError> {
        let empty = Self { path: path.to_owned(), templates: BTreeMap::new() };
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok((empty, None)),
            Err(error) => return Err(TemplateError::Read { path: path.to_owned(), error }),
        };
        match serde_json::from_slice::<BTreeMap<String, Template>>(&bytes) {
            Ok(templates) => Ok((Self { path: path.to_owned(), templates }, None)),
            Err(error) => {
                let aside = corrupt_path(path);
                let moved = match std::fs::rename(path, &aside) {
                    Ok(()) => format!("moved to {}", aside.display()),
                    Err(rename) => format!("could not be moved aside ({rename})"),
                };
                let warning = format!(
                    "the template cache {} is corrupt ({error}); it {moved} and the cache starts empty",
                    path.display()
                );
                Ok((empty, Some(warning)))
            }
        }
    }

    /// Loads, changes and saves the cache under an exclusive lock on `<file>.lock`, so two opsai
    /// processes counting hits at once both count. `change` says whether anything changed (no write
    /// otherwise). The warning is the corrupt-file one from [`TemplateCache::load`].
    pub(crate) fn update<T>(
        path: &Path,
        change: impl FnOnce(&mut TemplateCache) -> (T, bool),
    ) -> Result<(T, Option<String>), TemplateError> {
        let lock_path = sidecar(path, ".lock");
        let write_error = |error| TemplateError::Write { path: lock_path.clone(), error };
        super::create_private_parent(path).map_err(write_error)?;
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(write_error)?;
        lock.lock().map_err(write_error)?;
        let (mut cache, warning) = Self::load(path)?;
        let (value, changed) = change(&mut cache);
        if changed {
            cache.save()?;
        }
        // The lock is released when `lock` is closed.
        drop(lock);
        Ok((value, warning))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Counts one use of `kind`'s template; false when there is none.
    pub(crate) fn record_hit(&mut self, kind: &str) -> bool {
        match self.templates.get_mut(kind) {
            Some(template) => {
                template.hit_count = template.hit_count.saturating_add(1);
                true
            }
            None => false,
        }
    }

    /// Adds (or replaces) `kind`'s template, created now, with no hits yet.
    pub fn insert(&mut self, kind: &str, commands: Vec<String>) {
        let created_at = jiff::Timestamp::now().to_string();
        self.templates.insert(kind.to_owned(), Template { commands, created_at, hit_count: 0 });
    }

    pub fn clear(&mut self) {
        self.templates.clear();
    }

    /// Writes the cache atomically: temp file (0600) in the same directory, fsync, rename.
    pub fn save(&self) -> Result<(), TemplateError> {
        use std::os::unix::fs::OpenOptionsExt;
        let write_error = |error| TemplateError::Write { path: self.path.clone(), error };
        super::create_private_parent(&self.path).map_err(write_error)?;
        let json = serde_json::to_string_pretty(&self.templates).map_err(|e| write_error(e.into()))?;
        let temp = temp_path(&self.path);
        let result = (|| {
            let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp)?;
            file.write_all(json.as_bytes())?;
            file.write_all(b"\n")?;
            file.sync_all()?;
            std::fs::rename(&temp, &self.path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result.map_err(write_error)
    }
}

fn corrupt_path(path: &Path) -> PathBuf {
    sidecar(path, ".corrupt")
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".tmp.{}.{}", std::process::id(), rand::random::<u32>()));
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A home removed when the value is dropped, so the tests leave nothing in `$TMPDIR`.
    fn temp_home() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn missing_file_is_an_empty_cache() {
        let home_dir = temp_home();
        let home = home_dir.path().to_owned();
        let (cache, warning) = TemplateCache::load(&default_path(&home)).unwrap();
        assert!(cache.templates.is_empty());
        assert!(warning.is_none());
    }

    #[test]
    fn insert_hit_save_and_reload_round_trip_in_seed_format() {
        let home_dir = temp_home();
        let home = home_dir.path().to_owned();
        let path = default_path(&home);
        let (mut cache, _) = TemplateCache::load(&path).unwrap();
        cache.insert("redis", vec!["redis-cli -h {name} info".into()]);
        assert!(cache.record_hit("redis"));
        assert!(!cache.record_hit("nope"));
        cache.save().unwrap();
        let raw: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(raw["redis"]["commands"][0], "redis-cli -h {name} info");
        assert_eq!(raw["redis"]["hit_count"], 1);
        assert!(raw["redis"]["created_at"].as_str().unwrap().starts_with("20"));
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        let (again, warning) = TemplateCache::load(&path).unwrap();
        assert!(warning.is_none());
        assert_eq!(again.templates.get("redis").unwrap().hit_count, 1);
        // No temp files left behind.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn concurrent_updates_from_many_threads_lose_no_hit() {
        let home_dir = temp_home();
        let home = home_dir.path().to_owned();
        let path = default_path(&home);
        TemplateCache::update(&path, |cache| {
            cache.insert("redis", vec!["redis-cli info".into()]);
            ((), true)
        })
        .unwrap();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for _ in 0..10 {
                        TemplateCache::update(&path, |cache| ((), cache.record_hit("redis"))).unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let (cache, _) = TemplateCache::load(&path).unwrap();
        assert_eq!(cache.templates.get("redis").unwrap().hit_count, 80);
    }

    #[test]
    fn corrupt_file_is_moved_aside_with_a_warning() {
        let home_dir = temp_home();
        let home = home_dir.path().to_owned();
        let path = default_path(&home);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "{not json").unwrap();
        let (mut cache, warning) = TemplateCache::load(&path).unwrap();
        assert!(warning.unwrap().contains("corrupt"));
        assert!(cache.templates.is_empty());
        assert_eq!(std::fs::read_to_string(corrupt_path(&path)).unwrap(), "{not json");
        cache.insert("x", vec!["true".into()]);
        cache.save().unwrap();
        cache.clear();
        cache.save().unwrap();
        assert!(TemplateCache::load(&path).unwrap().0.templates.is_empty());
    }
}
