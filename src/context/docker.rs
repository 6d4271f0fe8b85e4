//! Docker reachability: `docker info` is slow (tens of ms, seconds when the daemon hangs), so its
//! result is cached in `$OPSAI_HOME/cache/context.json` for a minute and refreshed in the
//! background. A request never waits for it beyond the caller's probe budget.
//!
//! In the opsai binary the refresh is a detached helper (opsai re-executed as `__opsai-probe`,
//! which starts a second copy in its own session and exits at once): a run never waits for it and
//! never has docker as a descendant (so its memory is not counted as opsai's). A refresh marks the
//! cache first, so the runs that start while it is under way do not start another.
//!
//! The helper writes its result only while the opsai that started it is still running: its stdin
//! is a pipe whose other end opsai holds until it exits, so end-of-file there means opsai is gone
//! and the result is dropped. Nothing is written into the home after opsai has exited (a test's
//! temporary home, a home the user just removed); a run that ends before `docker info` answers
//! leaves the cache marked, and a later run probes again once the mark is stale.

use std::ffi::{OsStr, OsString};
use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::probe::output_within;

/// How long a cached `docker info` result counts as fresh.
pub(crate) const FRESH_FOR_SECS: u64 = 60;
/// The longest `docker info` may run before it is killed and the daemon reported unreachable.
pub(crate) const PROBE_LIMIT: Duration = Duration::from_secs(2);
/// How long a started refresh keeps other runs from starting their own (longer than
/// [`PROBE_LIMIT`], so only a helper that died lets the next run try again).
pub(crate) const REFRESH_CLAIM_SECS: u64 = 10;
/// The hidden first argument that runs the detached probe helper.
pub(crate) const ENTRY: &str = "__opsai-probe";
/// The helper's second stage: the copy that runs in its own session and does the work.
const DETACHED: &str = "--detached";

/// Set once `main` has checked for [`ENTRY`]: only then is this process the opsai binary that can
/// be re-executed as the helper (a test harness or a library user gets a background thread).
static IS_OPSAI_BINARY: AtomicBool = AtomicBool::new(false);

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

/// The cache file: `{"docker": {"checked_at": <unix seconds>, "status": {...}}}`, plus
/// `"refreshing_since"` while a refresh is under way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CacheFile {
    docker: CachedDocker,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CachedDocker {
    checked_at: u64,
    status: DockerStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refreshing_since: Option<u64>,
}

pub fn cache_path(cache_dir: &Path) -> PathBuf {
    cache_dir.join("context.json")
}

/// The status to show now. A fresh cache entry is used as is; a stale one is used while
/// `refresh` (called at most once) updates it; with no usable entry the answer is `Checking`.
/// An entry whose refresh started less than [`REFRESH_CLAIM_SECS`] ago is not refreshed again.
pub(crate) fn cached_status(cache: &Path, now: u64, refresh: impl FnOnce()) -> DockerStatus {
    let within = |since: u64, secs: u64| since <= now && now - since < secs;
    match read_cache(cache) {
        Some(entry) if within(entry.checked_at, FRESH_FOR_SECS) => entry.status,
        Some(entry) if entry.refreshing_since.is_some_and(|since| within(since, REFRESH_CLAIM_SECS)) => entry.status,
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
    let entry = CachedDocker { checked_at: now, status: status.clone(), refreshing_since: None };
    store(cache, &entry, true)
}

/// Marks the cache as being refreshed since `now`, keeping the status it holds (`Checking` when
/// it holds none), so other runs keep showing it and start no refresh of their own.
pub(crate) fn claim_refresh(cache: &Path, now: u64) -> std::io::Result<()> {
    let entry = read_cache(cache).unwrap_or(CachedDocker {
        checked_at: 0,
        status: DockerStatus::Checking,
        refreshing_since: None,
    });
    store(cache, &CachedDocker { refreshing_since: Some(now), ..entry }, true)
}

/// `create_home`: whether `$OPSAI_HOME` itself may be created. The detached helper may outlive
/// the home it was started for (a test's temporary one): it must not create that again.
fn store(cache: &Path, entry: &CachedDocker, create_home: bool) -> std::io::Result<()> {
    let dir = cache.parent().unwrap_or(Path::new("."));
    match DirBuilder::new().recursive(create_home).mode(0o700).create(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => return Err(err),
        _ => {}
    }
    let file = CacheFile { docker: entry.clone() };
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

/// Starts a refresh that stores its result in `cache`. In the opsai binary it is the detached
/// helper and the receiver never answers (nothing waits for docker); elsewhere a thread probes
/// and answers too.
pub(crate) fn refresh_in_background(docker: PathBuf, cache: PathBuf) -> std::sync::mpsc::Receiver<DockerStatus> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let _ = claim_refresh(&cache, super::unix_now());
    let detach = IS_OPSAI_BINARY.load(Ordering::Relaxed);
    // Even starting the helper (an exec of opsai) stays off the caller's path: a thread starts it
    // and reaps its first stage, which exits as soon as it has started the second. If opsai exits
    // first, the reaper of orphans collects it, and the mark above has the next run retry later.
    let spawned = std::thread::Builder::new().name("docker-probe".to_owned()).spawn(move || {
        if detach && let Ok(mut helper) = start_helper(&docker, &cache) {
            let _ = helper.wait();
            return;
        }
        let status = probe(&docker, PROBE_LIMIT);
        let entry = CachedDocker { checked_at: super::unix_now(), status: status.clone(), refreshing_since: None };
        let _ = store(&cache, &entry, false);
        let _ = sender.send(status);
    });
    // Without a thread there is simply no result: the status stays `Checking`.
    drop(spawned);
    receiver
}

/// The pipe whose write end this process holds until it exits (both ends close on exec, so no
/// command opsai runs keeps it open); helpers get a copy of the read end as stdin.
static ALIVE: OnceLock<Option<(std::io::PipeReader, std::io::PipeWriter)>> = OnceLock::new();

/// The stdin for a helper: the read end of [`ALIVE`], or `/dev/null` (then the helper, seeing
/// end-of-file at once, never writes) when no pipe could be made.
fn alive_stdin() -> Stdio {
    ALIVE
        .get_or_init(|| std::io::pipe().ok())
        .as_ref()
        .and_then(|(reader, _)| reader.try_clone().ok())
        .map_or_else(Stdio::null, Stdio::from)
}

/// True when the opsai that started this helper has exited: its end of the stdin pipe is closed
/// (end-of-file or hang-up), or stdin is not that pipe at all.
fn starter_gone() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::ZERO) {
        // Nobody ever writes to the pipe, so "readable" can only be end-of-file.
        Ok(ready) => ready > 0,
        Err(_) => true,
    }
}

fn start_helper(docker: &Path, cache: &Path) -> std::io::Result<std::process::Child> {
    // The helper runs in `/`, so it holds no directory busy: its paths must not be relative.
    let (docker, cache) = (std::path::absolute(docker)?, std::path::absolute(cache)?);
    Command::new(std::env::current_exe()?)
        .arg(ENTRY)
        .arg(docker)
        .arg(cache)
        .stdin(alive_stdin())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .current_dir("/")
        .spawn()
}

/// Call first thing in `main`: runs the helper when the arguments ask for it (and returns its
/// exit code), and otherwise records that this process is the opsai binary.
pub fn entry_from_args() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new(ENTRY)) {
        IS_OPSAI_BINARY.store(true, Ordering::Relaxed);
        return None;
    }
    Some(helper(args.collect()))
}

/// `ENTRY [--detached] DOCKER CACHE`. The first stage starts the second (no `--detached` → with
/// it) and exits without waiting; the second leaves opsai's session and terminal, probes, and
/// stores the result. Nothing is printed: the helper's output goes nowhere.
fn helper(args: Vec<OsString>) -> ExitCode {
    let (detached, rest) = match args.split_first() {
        Some((first, rest)) if first == DETACHED => (true, rest),
        _ => (false, &args[..]),
    };
    let [docker, cache] = rest else { return ExitCode::FAILURE };
    let (docker, cache) = (Path::new(docker), Path::new(cache));
    if !detached {
        let started = std::env::current_exe().and_then(|exe| {
            Command::new(exe)
                .arg(ENTRY)
                .arg(DETACHED)
                .arg(docker)
                .arg(cache)
                // The pipe to opsai, passed on: the second stage checks it before writing.
                .stdin(Stdio::inherit())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
        });
        return if started.is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE };
    }
    // A session of its own: no terminal, so neither Ctrl-C nor a hang-up meant for opsai's
    // terminal reaches it.
    let _ = nix::unistd::setsid();
    let status = probe(docker, PROBE_LIMIT);
    if starter_gone() {
        return ExitCode::SUCCESS;
    }
    let entry = CachedDocker { checked_at: super::unix_now(), status, refreshing_since: None };
    if store(cache, &entry, false).is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
