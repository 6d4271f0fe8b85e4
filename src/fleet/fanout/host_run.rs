//! One host's part of a fan-out: its master connection (checked, else opened), then the command
//! through it with a remote terminal, bounded in output and time, ended on cancellation.
//!
//! Why a remote terminal (`ssh -tt`): when the local ssh is ended (timeout, Ctrl-C), the master
//! closes the session's channel, sshd closes the terminal, and the kernel hangs up its session:
//! SIGHUP to the remote shell and its foreground process group, so `sleep 300` ends with it. A
//! plain (`-T`) session would leave a remote command that never writes running until it ends.
//! OpenSSH's client has no way to send a signal to a multiplexed session, and a command that
//! ignores SIGHUP would outlive the hang-up, so the remote process group (its id printed by the
//! remote line, `session`) is also ended through a second session on the master.
//!
//! The remote terminal also keeps ssh's own stderr apart from the remote command's (merged into
//! the terminal), which is what tells an ssh failure from a remote exit 255 ([`classify`]).

use std::hash::Hasher;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::outcome::{HostRun, Outcome, Skip, classify, reason};
use super::session::{Marker, kill_line};
use crate::exec::output::Capture;
use crate::exec::ssh::{SshTransport, ssh};
use crate::fleet::Host;

/// From SIGTERM to SIGKILL of the local ssh.
const GRACE: Duration = Duration::from_secs(2);
/// Bytes of ssh's own stderr kept (its messages are a few lines; anything past is dropped).
const STDERR_CAP: usize = 8 * 1024;

/// How one host runs.
pub(super) struct Job<'a> {
    pub host: Host,
    pub transport: &'a SshTransport,
    /// The remote shell line.
    pub remote: String,
    pub deadline: Instant,
    pub head: usize,
    pub tail: usize,
}

/// Why the master could not be used.
type MasterFailure = (Outcome, String);

/// Checks the master and opens it when it is down.
async fn ensure_master(transport: &SshTransport) -> Result<(), MasterFailure> {
    let check =
        ssh(transport.check_args()).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).status().await;
    if check.is_ok_and(|status| status.success()) {
        return Ok(());
    }
    // The master forks into the background once authenticated and points its stdio at
    // /dev/null, so reading stderr to its end ends when the connection is up (or failed).
    let output = ssh(transport.master_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .await
        .map_err(|error| (Outcome::SshFailed, format!("cannot start ssh: {error}; install the OpenSSH client")))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let detail = reason(&stderr);
    let detail = if detail.is_empty() { format!("ssh exited with {}", output.status) } else { detail };
    Err((classify(&stderr).unwrap_or(Outcome::SshFailed), detail))
}

/// Makes sure `host`'s master is up (checked, else opened) before `deadline`; a host that cannot
/// be reached is a run that never started.
pub(super) async fn connect(
    host: &Host,
    transport: &SshTransport,
    deadline: Instant,
    cancel: &CancellationToken,
) -> Result<(), HostRun> {
    let opened = tokio::select! {
        opened = ensure_master(transport) => opened,
        () = tokio::time::sleep_until(deadline) => Err((Outcome::TimedOut, "timed out connecting".into())),
        // Nothing ran: the host is not run, like one whose turn never came.
        () = cancel.cancelled() => Err((Outcome::NotRun(Skip::Cancelled), "cancelled while connecting".into())),
    };
    opened.map_err(|(outcome, detail)| HostRun::not_started(host.clone(), outcome, detail))
}

/// The command itself, through the master.
pub(super) async fn command(job: Job<'_>, cancel: &CancellationToken) -> HostRun {
    // Nothing starts once cancelled: a Ctrl-C between the connection and here leaves the host
    // not run, with no remote process to end.
    if cancel.is_cancelled() {
        return HostRun::not_started(job.host, Outcome::NotRun(Skip::Cancelled), "");
    }
    let mut child = match ssh(job.transport.run_args(true, &job.remote))
        // A pipe nobody writes to, held open: the remote terminal sees no input and no EOF.
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(error) => return HostRun::not_started(job.host, Outcome::SshFailed, format!("cannot start ssh: {error}")),
    };
    let _stdin = child.stdin.take();
    let pid = child.id().and_then(|id| i32::try_from(id).ok()).map(Pid::from_raw);
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (head, tail) = (job.head, job.tail);
    // The remote process group, once its marker went by.
    let (pgid_tx, pgid_rx) = tokio::sync::watch::channel(None::<u32>);
    let read_out = async move {
        let mut capture = Capture::new(head, tail);
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        let mut marker = Marker::default();
        let mut take = |bytes: &[u8]| {
            hasher.write(bytes);
            capture.push(bytes);
        };
        if let Some(mut stdout) = stdout {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n @ 1..) = stdout.read(&mut buf).await {
                take(&marker.push(buf.get(..n).unwrap_or_default()));
                if let Some(pgid) = marker.pgid.take() {
                    let _ = pgid_tx.send(Some(pgid));
                }
            }
        }
        take(&marker.finish());
        (capture.finish(), hasher.finish())
    };
    let read_err = async move {
        let mut kept = Vec::new();
        if let Some(mut stderr) = stderr {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buf).await {
                let room = STDERR_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(buf.get(..n.min(room)).unwrap_or_default());
            }
        }
        String::from_utf8_lossy(&kept).into_owned()
    };
    let work = async { tokio::join!(read_out, read_err, child.wait()) };
    tokio::pin!(work);
    let stopped = tokio::select! {
        done = &mut work => Ok(done),
        () = tokio::time::sleep_until(job.deadline) => Err(Outcome::TimedOut),
        () = cancel.cancelled() => Err(Outcome::Cancelled),
    };
    let ((output, output_hash), stderr, status) = match stopped {
        Ok(done) => done,
        Err(outcome) => {
            // The remote group's id may still be in the pipe, unread (the command started a
            // moment ago): read on until it is there, so the group is ended and not orphaned.
            let mut known = pgid_rx.clone();
            let early = tokio::select! {
                done = &mut work => Some(done),
                _ = tokio::time::timeout(GRACE, known.wait_for(Option::is_some)) => None,
            };
            let pgid = *pgid_rx.borrow();
            // The remote group is ended through the master, and the local ssh ended, which closes
            // the session's channel: the remote terminal hangs up.
            let group = async {
                if let Some(pgid) = pgid {
                    let _ = job.transport.call(&kill_line(pgid), None).await;
                }
            };
            let done = match early {
                Some(done) => Some(done),
                None => {
                    signal(pid, Signal::SIGTERM);
                    let (done, ()) = tokio::join!(stop(&mut work, pid), group);
                    done
                }
            };
            let (output, output_hash) = match done {
                Some(((output, output_hash), _, _)) => (output, output_hash),
                // The master still holds the session's pipes open (its remote side never ended):
                // what it printed is lost, the run is not.
                None => (crate::exec::output::Captured::whole(""), 0),
            };
            let detail = match outcome {
                Outcome::TimedOut => "timed out; its command was ended",
                _ => "cancelled; its command was ended",
            };
            return HostRun {
                host: job.host,
                outcome,
                detail: detail.into(),
                output,
                output_hash,
                duration: Duration::ZERO,
            };
        }
    };
    let (outcome, detail) = match status.map(|status| status.code()) {
        Ok(Some(255)) => match classify(&stderr) {
            Some(outcome) => (outcome, reason(&stderr)),
            None if stderr.trim().is_empty() => (Outcome::Ran { exit_code: 255 }, String::new()),
            None => (Outcome::SshFailed, reason(&stderr)),
        },
        Ok(Some(code)) => (Outcome::Ran { exit_code: code }, String::new()),
        Ok(None) => (Outcome::SshFailed, "the local ssh was killed by a signal".into()),
        Err(error) => (Outcome::SshFailed, format!("cannot wait for ssh: {error}")),
    };
    HostRun { host: job.host, outcome, detail, output, output_hash, duration: Duration::ZERO }
}

/// Waits for the stopped run's end: SIGKILL to the local ssh when SIGTERM did not end it; `None`
/// when even then its output does not end (the master holds the pipes of a remote side that lives on).
async fn stop<F: std::future::Future + Unpin>(work: &mut F, pid: Option<Pid>) -> Option<F::Output> {
    if let Ok(done) = tokio::time::timeout(GRACE, &mut *work).await {
        return Some(done);
    }
    signal(pid, Signal::SIGKILL);
    tokio::time::timeout(GRACE, work).await.ok()
}

fn signal(pid: Option<Pid>, signal: Signal) {
    if let Some(pid) = pid {
        let _ = kill(pid, signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cancel that came after the host's connection and before its command: no ssh is started,
    /// and the host is not run (not "cancelled while running": nothing ran).
    #[tokio::test]
    async fn a_cancel_before_the_command_starts_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let marker = dir.path().join("ran");
        // A host name nobody resolves: should ssh be started anyway, it fails, and never "not run".
        let transport =
            SshTransport::new("opsai-test.invalid", &dir.path().join("ssh"), 30, Vec::new()).expect("transport");
        let cancel = CancellationToken::new();
        cancel.cancel();
        let job = Job {
            host: Host::named("web-1"),
            transport: &transport,
            remote: format!("touch {}", marker.display()),
            deadline: Instant::now() + Duration::from_secs(30),
            head: 100,
            tail: 100,
        };
        let run = command(job, &cancel).await;
        assert_eq!(run.outcome, Outcome::NotRun(Skip::Cancelled), "{run:?}");
        assert!(!marker.exists());
    }
}
