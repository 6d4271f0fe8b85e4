//! Docker reachability: `docker info` is slow (tens of ms, seconds when the daemon hangs), so its
//! result is cached in `$OPSAI_HOME/cache/context.json` for a minute and refreshed in the
//! background. A request never waits for it beyond the caller's probe budget.

use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::probe::output_within;

/// How long a cached `docker info` result counts as fresh.
pub(crate) const FRESH_FOR_SECS: u64 = 60;
/// The longest `docker info` may run before it is killed and the daemon reported unreachable.
pub(crate) const PROBE_LIMIT: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum DockerStatus {
    /// No `docker` on `PATH`.
    NotInstalled,
    /// Installed; no result yet (the first probe is still running).
    Checking,
    /// `docker info` answered: `server 27.1.1, 3 containers (1 running)`.
    Running { summary: String },
    /// `docker info` failed: its first stderr line, or a timeout.
    Unreachable { reason: String },
}

/// The cache file: `{"docker": {"checked_at": <unix seconds>, "status": {...}}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CacheFile {
    docker: CachedDocker,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CachedDocker {
    checked_at: u64,
    status: DockerStatus,
}

pub fn cache_path(opsai_home: &Path) -> PathBuf {
    opsai_home.join("cache").join("context.json")
}

/// The status to show now. A fresh cache entry is used as is; a stale one is used while
/// `refresh` (called at most once) updates it; with no usable entry the answer is `Checking`.
pub(crate) fn cached_status(cache: &Path, now: u64, refresh: impl FnOnce()) -> DockerStatus {
    match read_cache(cache) {
        Some(entry) if entry.checked_at <= now && now - entry.checked_at < FRESH_FOR_SECS => entry.status,
        Some(stale) => {
            refresh();
            stale.status
        }
        None => {
            refresh();
            DockerStatus::Checking
        }
    }
}

fn read_cache(cache: &Path) -> Option<CachedDocker> {
    let text = std::fs::read_to_string(cache).ok()?;
    serde_json::from_str::<CacheFile>(&text).ok().map(|file| file.docker)
}

/// Stores a probe result (private directory and file, temp + rename so readers never see half).
pub fn write_cache(cache: &Path, now: u64, status: &DockerStatus) -> std::io::Result<()> {
    let dir = cache.parent().unwrap_or(Path::new("."));
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let file = CacheFile { docker: CachedDocker { checked_at: now, status: status.clone() } };
    let text = serde_json::to_string(&file).map_err(std::io::Error::other)?;
    let temp = dir.join(format!(".context.json.{}.{:?}.tmp", std::process::id(), std::thread::current().id()));
    let result = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut out| out.write_all(text.as_bytes()))
        .and_then(|()| std::fs::rename(&temp, cache));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Runs `docker info` (killed after `limit`) and summarizes it.
pub fn probe(docker: &Path, limit: Duration) -> DockerStatus {
    let mut command = Command::new(docker);
    command.args(["info", "--format", "{{.ServerVersion}}|{{.Containers}}|{{.ContainersRunning}}"]);
    let Some(output) = output_within(command, limit) else {
        return DockerStatus::Unreachable {
            reason: format!("`docker info` did not answer within {} s", limit.as_secs()),
        };
    };
    if output.success {
        return DockerStatus::Running { summary: summarize(&output.stdout) };
    }
    let reason = output.stderr.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("`docker info` failed");
    DockerStatus::Unreachable { reason: reason.chars().take(160).collect() }
}

fn summarize(stdout: &str) -> String {
    let fields: Vec<&str> = stdout.trim().split('|').collect();
    match fields[..] {
        [version, total, running] => format!("server {version}, {total} containers ({running} running)"),
        _ => stdout.trim().chars().take(160).collect(),
    }
}

/// Probes in a background thread and stores the result, so the next run has it.
pub(crate) fn refresh_in_background(docker: PathBuf, cache: PathBuf) -> std::sync::mpsc::Receiver<DockerStatus> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("docker-probe".to_owned()).spawn(move || {
        let status = probe(&docker, PROBE_LIMIT);
        let _ = write_cache(&cache, super::unix_now(), &status);
        let _ = sender.send(status);
    });
    // Without a thread there is simply no result: the status stays `Checking`.
    drop(spawned);
    receiver
}
