//! The execution seam: an `Executor` runs one approved command and reports what happened.
//! `output` holds the pure parts (ANSI stripping, bounded capture, observation text). Never prints:
//! live output goes to the `on_output` callback, which the UI renders.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod fs;
pub mod output;
pub mod pty;
pub mod ssh;

use std::time::Duration;

use futures_util::future::BoxFuture;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use crate::protocol::{CommandRequest, SandboxProfile};

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecResult {
    /// The exit status; 128+n when killed by signal n.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Cancelled through the token (Ctrl-C).
    pub interrupted: bool,
    /// Bounded, ANSI-stripped, CRLF-normalized capture (not yet redacted). Its `total_bytes` is
    /// what the command printed, in bytes of cleaned text (escapes dropped, `\r\n` as `\n`), kept
    /// or dropped: what a person would call its output, without the PTY's additions.
    pub output: output::Captured,
    pub duration: Duration,
}

/// Where live output chunks go: raw terminal bytes for display (escape sequences included); each
/// chunk ends on a UTF-8 character boundary.
pub(crate) type OutputSink<'a> = &'a mut (dyn FnMut(&[u8]) + Send);

pub trait Executor: Send + Sync {
    /// Runs `request.command` through `bash -c` in `request.cwd`. Cancelling `cancel` interrupts it.
    fn run<'a>(
        &'a self,
        request: &'a CommandRequest,
        on_output: OutputSink<'a>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ExecResult, ExecError>>;

    /// On another host (`--ssh-host`): how a Safe `command` that nobody approves may run there —
    /// `Ok(Some(profile))` in the host's sandbox, `Ok(None)` uncontained (plain words on a host
    /// without one), `Err(why it must ask)`. `None`: this executor runs commands here, where the
    /// local sandbox applies.
    fn remote_auto_run(
        &self,
        _profile: SandboxProfile,
        _command: &str,
    ) -> Option<Result<Option<SandboxProfile>, String>> {
        None
    }
}

#[derive(Debug, Error)]
pub enum ExecError {
    #[error("cannot start the command: {0}")]
    Spawn(String),
    #[error("cannot open a terminal for the command: {0}")]
    Pty(String),
    #[error("the working directory {0} does not exist")]
    NoSuchDirectory(String),
}
