//! What happened on one host: the outcome kinds, ssh's own failures told apart from its stderr,
//! and the per-host record the caller audits.

use std::time::Duration;

use serde::Serialize;

use crate::exec::output::Captured;
use crate::fleet::Host;

/// Why a host did not run the command at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Skip {
    /// Cancelled (Ctrl-C) before its turn came.
    Cancelled,
    /// The canary failed, so the rollout stopped before this host's batch.
    CanaryFailed,
    /// The human said stop after the canary.
    Declined,
    /// More hosts failed than `max_fail` allows, so the rollout stopped before this host's batch.
    MaxFail,
}

impl Skip {
    pub fn describe(self) -> &'static str {
        match self {
            Skip::Cancelled => "cancelled before it started",
            Skip::CanaryFailed => "not run: the canary failed",
            Skip::Declined => "not run: stopped after the canary",
            Skip::MaxFail => "not run: too many hosts failed (max-fail)",
        }
    }
}

/// One host's outcome. Everything but [`Outcome::Ran`] is a failure of that host alone: the batch
/// goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The command ran to its end with this exit status (128+n when a signal ended it).
    Ran { exit_code: i32 },
    /// ssh could not reach it: name not resolved, connection refused, no route.
    Unreachable,
    /// Its host key is not the one in `known_hosts`, or none is known (ssh never asks here).
    HostKey,
    /// The server refused every key (or asked for a password, which a fleet run never types).
    AuthFailed,
    /// It did not finish (or connect) within the per-host timeout; its remote command was ended.
    TimedOut,
    /// Cut while running by a cancellation; its remote command was ended.
    Cancelled,
    /// Never started.
    NotRun(Skip),
    /// It needed a sandbox for a command nobody approved, and has none for this command.
    NoSandbox,
    /// ssh failed otherwise (a bad option, a broken config, a host name ssh refuses).
    SshFailed,
}

impl Outcome {
    /// Ran and exited 0.
    pub fn succeeded(&self) -> bool {
        matches!(self, Outcome::Ran { exit_code: 0 })
    }

    /// Started and ended on its own (any exit status).
    pub fn ran(&self) -> bool {
        matches!(self, Outcome::Ran { .. })
    }

    /// Counts against `max_fail`: anything but a run that exited 0, except hosts never started.
    pub fn failed(&self) -> bool {
        !self.succeeded() && !matches!(self, Outcome::NotRun(_))
    }

    /// Ssh or the host could not be reached or used at all (the model's "not reached").
    pub fn unreached(&self) -> bool {
        matches!(
            self,
            Outcome::Unreachable | Outcome::HostKey | Outcome::AuthFailed | Outcome::SshFailed | Outcome::NoSandbox
        )
    }

    /// A short word for the audit line and JSON: `ran`, `unreachable`, `host-key`, …
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Ran { .. } => "ran",
            Outcome::Unreachable => "unreachable",
            Outcome::HostKey => "host-key",
            Outcome::AuthFailed => "auth-failed",
            Outcome::TimedOut => "timed-out",
            Outcome::Cancelled => "cancelled",
            Outcome::NotRun(_) => "not-run",
            Outcome::NoSandbox => "no-sandbox",
            Outcome::SshFailed => "ssh-failed",
        }
    }

    /// What a person reads for a group of hosts with this outcome.
    pub fn describe(&self) -> String {
        match self {
            Outcome::Ran { exit_code } => format!("exit {exit_code}"),
            Outcome::Unreachable => "unreachable".into(),
            Outcome::HostKey => "host key changed or unknown (check known_hosts; nothing ran)".into(),
            Outcome::AuthFailed => "authentication failed (no key accepted; nothing ran)".into(),
            Outcome::TimedOut => "timed out (its command was ended)".into(),
            Outcome::Cancelled => "cancelled while running (its command was ended)".into(),
            Outcome::NotRun(skip) => skip.describe().into(),
            Outcome::NoSandbox => "no sandbox there for a command nobody approved (nothing ran)".into(),
            Outcome::SshFailed => "ssh failed".into(),
        }
    }
}

/// One host's run, with its output raw (ANSI-stripped and bounded, not redacted: redaction is
/// the caller's, see the renderings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRun {
    pub host: Host,
    pub outcome: Outcome,
    /// ssh's own message when ssh failed or gave up (its first line that says why), else empty.
    pub detail: String,
    /// What the remote command printed (stdout and stderr merged by its terminal), head and tail.
    pub output: Captured,
    /// A hash of every byte it printed, so hosts whose outputs differ only in the dropped middle
    /// are not taken as identical.
    pub output_hash: u64,
    pub duration: Duration,
}

impl HostRun {
    pub(crate) fn not_started(host: Host, outcome: Outcome, detail: impl Into<String>) -> Self {
        Self {
            host,
            outcome,
            detail: detail.into(),
            output: Captured::whole(""),
            output_hash: 0,
            duration: Duration::ZERO,
        }
    }

    /// The exit status when the command ran to its end.
    pub fn exit_code(&self) -> Option<i32> {
        match self.outcome {
            Outcome::Ran { exit_code } => Some(exit_code),
            _ => None,
        }
    }
}

/// What the caller writes as one audit line for one host (`store::audit`'s record gets `HOST:`,
/// `EXIT:` and `OUTPUT:` from it; the log redacts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostAudit {
    pub host: String,
    pub command: String,
    pub exit: Option<i32>,
    /// Bytes of (cleaned) output the command printed, kept or not.
    pub bytes: u64,
    /// [`Outcome::label`].
    pub outcome: &'static str,
    /// The start of the output, or ssh's reason when it did not run.
    pub output: String,
}

/// Tells ssh's own failure apart from the remote command's: ssh exits 255 for both, but with
/// `-tt` the remote side's stderr goes to the terminal (our stdout), so ssh's stderr holds only
/// ssh's messages. `None`: nothing ssh said marks a failure of its own.
pub fn classify(stderr: &str) -> Option<Outcome> {
    let text = stderr.to_ascii_lowercase();
    let any = |needles: &[&str]| needles.iter().any(|needle| text.contains(needle));
    if any(&[
        "host identification has changed",
        "host key verification failed",
        "host key is known",
        "no matching host key",
        "host key for",
    ]) {
        return Some(Outcome::HostKey);
    }
    if any(&["permission denied (", "too many authentication failures", "no more authentication methods"]) {
        return Some(Outcome::AuthFailed);
    }
    if any(&["timed out", "timeout"]) {
        return Some(Outcome::TimedOut);
    }
    if any(&[
        "could not resolve hostname",
        "name or service not known",
        "connection refused",
        "no route to host",
        "network is unreachable",
        "connection closed by",
        "connection reset by",
        "kex_exchange_identification",
        "banner exchange",
    ]) {
        return Some(Outcome::Unreachable);
    }
    None
}

/// The line of ssh's stderr that says why (the last non-empty one, where ssh puts its verdict;
/// the changed-host-key warning's banner comes first and says less).
pub fn reason(stderr: &str) -> String {
    let lines: Vec<&str> =
        stderr.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with("@@@")).collect();
    let pick = lines
        .iter()
        .find(|line| line.contains("IDENTIFICATION HAS CHANGED"))
        .or_else(|| lines.last())
        .copied()
        .unwrap_or_default();
    pick.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_messages_are_told_apart() {
        let cases = [
            ("ssh: Could not resolve hostname nowhere.invalid: Name or service not known", Outcome::Unreachable),
            ("ssh: connect to host 127.0.0.1 port 1: Connection refused", Outcome::Unreachable),
            ("ssh: connect to host 10.0.0.1 port 22: No route to host", Outcome::Unreachable),
            ("Connection timed out during banner exchange", Outcome::TimedOut),
            (
                "@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nHost key verification failed.",
                Outcome::HostKey,
            ),
            (
                "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.",
                Outcome::HostKey,
            ),
            ("root@127.0.0.1: Permission denied (publickey).", Outcome::AuthFailed),
            ("kex_exchange_identification: read: Connection reset by peer", Outcome::Unreachable),
        ];
        for (stderr, want) in cases {
            assert_eq!(classify(stderr), Some(want), "{stderr}");
        }
        assert_eq!(classify(""), None);
        assert_eq!(classify("bash: line 1: nope: command not found"), None);
        assert_eq!(
            reason(
                "@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n@@@@@\nHost key verification failed.\n"
            ),
            "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @"
        );
        assert_eq!(
            reason("a\n\nssh: connect to host x port 1: Connection refused\n"),
            "ssh: connect to host x port 1: Connection refused"
        );
    }

    #[test]
    fn failures_count_but_hosts_never_started_do_not() {
        assert!(!Outcome::Ran { exit_code: 0 }.failed());
        assert!(Outcome::Ran { exit_code: 1 }.failed());
        assert!(Outcome::TimedOut.failed() && Outcome::Unreachable.failed());
        assert!(!Outcome::NotRun(Skip::MaxFail).failed());
    }
}
