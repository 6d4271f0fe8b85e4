//! One command on many hosts (issue 24, docs/fleet-run.md): run in parallel (at most `forks` at
//! once) over one ssh master connection per host, each host bounded in time and output, each
//! host's failure its own outcome; then grouped ([`group`]) and rendered for the person and,
//! bounded, for the model ([`render`]). Changes roll out canary first in batches ([`rollout`]).
//!
//! - Transport: the system ssh through [`SshTransport`] (its config, agent, `known_hosts` and
//!   host-key checks as they are), plus `BatchMode=yes` (a fleet run never prompts: fifty password
//!   or host-key questions on one terminal would be unanswerable, so they are per-host failures)
//!   and `ConnectTimeout`. Each host's master is checked, else opened, on its first use by this
//!   [`Fanout`], all hosts in parallel; later commands in the process go straight through it.
//! - Output: the remote terminal's bytes, ANSI-stripped and kept as head and tail
//!   ([`crate::exec::output::Capture`]) plus a hash of every byte (for grouping). Not redacted:
//!   the renderings take the caller's redaction, and [`FleetResult::audit`] is for the audit log,
//!   which redacts as it writes.
//! - Cancellation: the token ends every running host's remote process group (through the master)
//!   and its local ssh, which hangs up its remote terminal (see `host_run`, `session`); hosts not
//!   yet started are [`Skip::Cancelled`].

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod group;
mod host_run;
pub mod outcome;
pub mod render;
pub mod rollout;
mod session;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::join_all;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use self::group::{Group, compact, groups};
pub use self::outcome::{HostAudit, HostRun, Outcome, Skip};
pub use self::render::{MODEL_VIEW_MAX, for_human, for_model, summary};
pub use self::rollout::{MaxFail, Plan, Proceed, RolloutHook};
use crate::exec::output::{DEFAULT_CAPTURE_HEAD, DEFAULT_CAPTURE_TAIL};
use crate::exec::ssh::{RemoteSandbox, SshTransport, remote_line, sandbox};
use crate::fleet::Host;
use crate::protocol::SandboxProfile;

/// `--forks` when not given.
pub const DEFAULT_FORKS: usize = 16;

/// The most hosts running at once: `--forks` is bounded to it, and the semaphore is too (tokio's
/// `Semaphore::new` panics above its own maximum, and a thousand ssh processes is already plenty).
pub const MAX_FORKS: usize = 1024;

/// How much of a host's output goes to the audit log: long enough that a secret in it is whole
/// when the audit log redacts (it cuts and redacts on its own), so no cut leaves a tail unredacted.
const AUDIT_HEAD_CHARS: usize = 2_000;

/// How a fan-out runs.
#[derive(Debug, Clone)]
pub struct FanoutConfig {
    /// Hosts running at once (connecting included).
    pub forks: usize,
    /// Per host, from its start (connecting included) to its end.
    pub timeout: Duration,
    /// ssh's `ConnectTimeout` (the TCP connection and the server's greeting).
    pub connect_timeout: Duration,
    /// `$OPSAI_HOME/ssh`: where the master sockets live.
    pub control_dir: PathBuf,
    /// `ssh.control_persist_s`.
    pub persist_s: u64,
    /// `ssh.options` from the config (`-F FILE`, …), after opsai's own.
    pub ssh_options: Vec<String>,
    /// Characters of each host's output kept at its start and its end.
    pub capture_head: usize,
    pub capture_tail: usize,
}

impl FanoutConfig {
    pub fn new(control_dir: &Path) -> Self {
        Self {
            forks: DEFAULT_FORKS,
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            control_dir: control_dir.to_owned(),
            persist_s: 600,
            ssh_options: Vec::new(),
            capture_head: DEFAULT_CAPTURE_HEAD,
            capture_tail: DEFAULT_CAPTURE_TAIL,
        }
    }
}

/// One command for every host.
#[derive(Debug, Clone)]
pub struct FleetRequest {
    /// Exactly what was shown and approved; each host runs it through `bash -c` (`sh -c`).
    pub command: String,
    /// The remote working directory.
    pub cwd: PathBuf,
    /// `Some`: nobody approved it (Safe, auto-run), so each host runs it in its own sandbox, or
    /// uncontained only when it is plain words on a host without one ([`sandbox::auto_run`]).
    pub sandbox: Option<SandboxProfile>,
    /// This call's limit per host (run_command's `timeout_s`); never longer than
    /// [`FanoutConfig::timeout`], which also applies when it is `None`.
    pub timeout: Option<Duration>,
}

impl FleetRequest {
    /// `command` in `cwd`, approved (no sandbox), within the fan-out's own limit.
    pub fn new(command: impl Into<String>, cwd: impl Into<PathBuf>) -> Self {
        Self { command: command.into(), cwd: cwd.into(), sandbox: None, timeout: None }
    }
}

/// Every host's run of one command, in the order the hosts were given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetResult {
    pub command: String,
    pub runs: Vec<HostRun>,
}

impl FleetResult {
    /// One record per host for the audit log.
    pub fn audit(&self) -> Vec<HostAudit> {
        self.runs
            .iter()
            .map(|run| HostAudit {
                host: run.host.name.clone(),
                command: self.command.clone(),
                exit: run.exit_code(),
                bytes: run.output.total_bytes,
                outcome: run.outcome.label(),
                output: if run.outcome.ran() || run.detail.is_empty() {
                    run.output.head.chars().take(AUDIT_HEAD_CHARS).collect()
                } else {
                    run.detail.clone()
                },
            })
            .collect()
    }

    /// Hosts that failed (not counting those never started).
    pub fn failed(&self) -> usize {
        self.runs.iter().filter(|run| run.outcome.failed()).count()
    }

    pub fn run(&self, name: &str) -> Option<&HostRun> {
        self.runs.iter().find(|run| run.host.name == name)
    }
}

/// How far a batch has got: hosts ended (however they ended), of them failed, of how many.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub done: usize,
    pub failed: usize,
    pub total: usize,
}

/// One host's connection as this process knows it.
struct Conn {
    transport: SshTransport,
    /// Its master was found or opened by this fan-out: the next command needs no check.
    up: bool,
    sandbox: Option<RemoteSandbox>,
}

/// Runs commands on many hosts; keeps each host's connection for the next command.
pub struct Fanout {
    config: FanoutConfig,
    conns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Conn>>>>,
}

impl Fanout {
    pub fn new(config: FanoutConfig) -> Self {
        Self { config, conns: Mutex::new(HashMap::new()) }
    }

    pub fn config(&self) -> &FanoutConfig {
        &self.config
    }

    /// The connection of `host`, made on first use.
    fn conn(&self, host: &Host) -> Result<Arc<tokio::sync::Mutex<Conn>>, String> {
        let mut conns = self.conns.lock().map_err(|_| "the connection table is unusable".to_owned())?;
        if let Some(conn) = conns.get(&host.name) {
            return Ok(conn.clone());
        }
        let mut extra = host.ssh_options();
        extra.extend([
            "-o".to_owned(),
            "BatchMode=yes".to_owned(),
            "-o".to_owned(),
            format!("ConnectTimeout={}", self.config.connect_timeout.as_secs().max(1)),
        ]);
        extra.extend(self.config.ssh_options.iter().cloned());
        let transport = SshTransport::new(host.destination(), &self.config.control_dir, self.config.persist_s, extra)
            .map_err(|error| error.to_string())?;
        let conn = Arc::new(tokio::sync::Mutex::new(Conn { transport, up: false, sandbox: None }));
        conns.insert(host.name.clone(), conn.clone());
        Ok(conn)
    }

    /// Opens (or finds) every host's master in parallel, `forks` at a time, running nothing: a
    /// caller can do this while the person reads the approval, and name the hosts that cannot be
    /// reached before asking. Returns those hosts, as runs that never started.
    pub async fn connect(&self, hosts: &[Host], cancel: &CancellationToken) -> Vec<HostRun> {
        let permits = Semaphore::new(self.config.forks.clamp(1, MAX_FORKS));
        let jobs = hosts.iter().map(|host| async {
            let _permit = tokio::select! {
                biased;
                () = cancel.cancelled() => return None,
                permit = permits.acquire() => permit.ok()?,
            };
            let conn = match self.conn(host) {
                Ok(conn) => conn,
                Err(reason) => return Some(HostRun::not_started(host.clone(), Outcome::SshFailed, reason)),
            };
            let mut conn = conn.lock().await;
            if conn.up {
                return None;
            }
            let deadline = Instant::now() + self.config.timeout;
            match host_run::connect(host, &conn.transport, deadline, cancel).await {
                Ok(()) => {
                    conn.up = true;
                    None
                }
                Err(run) => Some(run),
            }
        });
        join_all(jobs).await.into_iter().flatten().collect()
    }

    /// Runs `request` on every host at once (at most `forks` at a time): the read-only way, with
    /// no canary or batches (see [`Fanout::rollout`] for changes).
    pub async fn run(&self, hosts: &[Host], request: &FleetRequest, cancel: &CancellationToken) -> FleetResult {
        let runs = self.run_batch(hosts, request, cancel, &|_| {}).await;
        FleetResult { command: request.command.clone(), runs }
    }

    /// One batch: every host in parallel, bounded by `forks`; `progress` hears each host's end.
    pub(crate) async fn run_batch(
        &self,
        hosts: &[Host],
        request: &FleetRequest,
        cancel: &CancellationToken,
        progress: &(dyn Fn(Tally) + Sync),
    ) -> Vec<HostRun> {
        let permits = Semaphore::new(self.config.forks.clamp(1, MAX_FORKS));
        let tally = Mutex::new(Tally { done: 0, failed: 0, total: hosts.len() });
        let jobs = hosts.iter().map(|host| async {
            let run = self.run_one(host, request, cancel, &permits).await;
            let now = tally.lock().ok().map(|mut tally| {
                tally.done += 1;
                tally.failed += usize::from(run.outcome.failed());
                *tally
            });
            if let Some(now) = now {
                progress(now);
            }
            run
        });
        join_all(jobs).await
    }

    /// One host of a batch, once a fork is free for it.
    async fn run_one(
        &self,
        host: &Host,
        request: &FleetRequest,
        cancel: &CancellationToken,
        permits: &Semaphore,
    ) -> HostRun {
        let permit = tokio::select! {
            // Biased: once cancelled, a host waiting for its turn never starts.
            biased;
            () = cancel.cancelled() => None,
            permit = permits.acquire() => permit.ok(),
        };
        let Some(_permit) = permit else {
            return HostRun::not_started(host.clone(), Outcome::NotRun(Skip::Cancelled), "");
        };
        if cancel.is_cancelled() {
            return HostRun::not_started(host.clone(), Outcome::NotRun(Skip::Cancelled), "");
        }
        self.run_host(host, request, cancel).await
    }

    async fn run_host(&self, host: &Host, request: &FleetRequest, cancel: &CancellationToken) -> HostRun {
        let started = Instant::now();
        let limit = request.timeout.map_or(self.config.timeout, |asked| asked.min(self.config.timeout));
        let deadline = started + limit;
        let conn = match self.conn(host) {
            Ok(conn) => conn,
            Err(reason) => return HostRun::not_started(host.clone(), Outcome::SshFailed, reason),
        };
        let mut conn = conn.lock().await;
        if !conn.up {
            if let Err(mut run) = host_run::connect(host, &conn.transport, deadline, cancel).await {
                run.duration = started.elapsed();
                return run;
            }
            conn.up = true;
        }
        let remote = match self.remote_line(&mut conn, request).await {
            Ok(line) => line,
            Err(reason) => return HostRun::not_started(host.clone(), Outcome::NoSandbox, reason),
        };
        let job = host_run::Job {
            host: host.clone(),
            transport: &conn.transport,
            remote,
            deadline,
            head: self.config.capture_head,
            tail: self.config.capture_tail,
        };
        let mut run = host_run::command(job, cancel).await;
        run.duration = started.elapsed();
        run
    }

    /// The remote line for this host: plain, or in its sandbox when nobody approved the command.
    async fn remote_line(&self, conn: &mut Conn, request: &FleetRequest) -> Result<String, String> {
        const SIZE: &str = session::PREFIX;
        let Some(profile) = request.sandbox else {
            return Ok(format!("{SIZE}{}", remote_line(&request.cwd, &request.command)));
        };
        if conn.sandbox.is_none() {
            conn.sandbox = Some(sandbox::probe(&conn.transport).await);
        }
        let found = conn.sandbox.clone().unwrap_or(RemoteSandbox::None { reason: "not probed".into() });
        match sandbox::auto_run(&found, profile, &request.command)? {
            Some(profile) => found
                .line(&request.cwd, &request.command, profile)
                .map(|line| format!("{SIZE}{line}"))
                .ok_or_else(|| "no sandbox there to run this command in".to_owned()),
            None => Ok(format!("{SIZE}{}", remote_line(&request.cwd, &request.command))),
        }
    }

    /// Ends every master this fan-out found or opened (tests, and a session that is done).
    pub async fn disconnect_all(&self) {
        let conns: Vec<_> = match self.conns.lock() {
            Ok(conns) => conns.values().cloned().collect(),
            Err(_) => return,
        };
        join_all(conns.iter().map(|conn| async move {
            let mut conn = conn.lock().await;
            conn.transport.disconnect().await;
            conn.up = false;
        }))
        .await;
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::exec::output::Captured;

    #[test]
    fn forks_outside_1_to_1024_is_refused_by_the_command_line() {
        for bad in ["0", "1025", "18446744073709551615", "99999999999999999999"] {
            assert!(crate::cli::Cli::try_parse_from(["opsai", "--forks", bad]).is_err(), "--forks {bad}");
        }
        let cli = crate::cli::Cli::try_parse_from(["opsai", "--forks", "1024"]).expect("1024 is allowed");
        assert_eq!(cli.run.fleet.options.forks, 1024);
    }

    #[tokio::test]
    async fn a_huge_forks_in_the_config_does_not_panic_the_semaphore() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fanout = Fanout::new(FanoutConfig { forks: usize::MAX, ..FanoutConfig::new(dir.path()) });
        let cancel = CancellationToken::new();
        assert!(fanout.connect(&[], &cancel).await.is_empty());
        let request = FleetRequest::new("true", "/");
        assert!(fanout.run(&[], &request, &cancel).await.runs.is_empty());
    }

    #[test]
    fn the_audit_record_keeps_enough_output_for_a_secret_past_200_chars_to_be_whole() {
        let secret = format!("AKIA{}", "Q".repeat(16));
        let output = format!("{}{secret}\n", "x".repeat(190));
        let run = HostRun {
            outcome: Outcome::Ran { exit_code: 0 },
            output: Captured::whole(output.clone()),
            ..HostRun::not_started(Host::named("web-1"), Outcome::Ran { exit_code: 0 }, "")
        };
        let result = FleetResult { command: "env".into(), runs: vec![run] };
        let audit = result.audit();
        assert!(audit[0].output.contains(&secret), "{}", audit[0].output);
        assert_eq!(audit[0].output, output);
    }
}
