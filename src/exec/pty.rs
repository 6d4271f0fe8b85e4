//! [`PtyExecutor`]: runs an approved command through `bash -c` in a pseudo-terminal (DESIGN §7).
//!
//! - The child is a session leader (portable-pty does `setsid` + `TIOCSCTTY`), so its pid is the
//!   process group every signal goes to; `ChildKiller::kill` (SIGHUP to one pid) is never used.
//! - `bash -c` (`sh -c` where bash is not on `PATH`) in `request.cwd`, which must exist (portable-pty
//!   would silently fall back to `$HOME`). `PWD` is set to it; `PAGER=cat GIT_PAGER=cat
//!   GIT_TERMINAL_PROMPT=0`; `TERM=xterm-256color` when unset; then the executor's own overrides.
//! - The PTY is sized like the user's terminal (stderr, else stdout; followed on SIGWINCH), else 24×80,
//!   unless a fixed size is configured.
//! - **stdin** is the PTY and nothing is ever written to it (the writer is never taken, so no EOF is
//!   sent either): a command that reads stdin sees a terminal where nobody types, and waits until
//!   the timeout or Ctrl-C. Commands are expected to be non-interactive (`-y`, `--no-pager`).
//! - Every chunk read goes to `on_output` raw (escape sequences included, each chunk ending on a
//!   UTF-8 character boundary) and into the bounded [`Capture`] for the model.
//! - `request.timeout` → SIGTERM (+SIGCONT) to the group, SIGKILL 2 s later. Cancelling the token
//!   (Ctrl-C) → SIGINT to the terminal's foreground group, as a terminal would; if it is still
//!   running 2 s later, SIGTERM, then SIGKILL after 2 s more. A token already cancelled before the
//!   start runs nothing and reports `interrupted` with no exit status.
//! - After the child exits the PTY is read until EOF; if a process that ignored the hangup still
//!   holds the terminal, reading stops once the PTY has been quiet for 100 ms (at most 1 s after the
//!   exit), the group is SIGKILLed, and reading is abandoned 500 ms later if a `setsid` escapee keeps
//!   it open. In every case whatever is left of the process group is SIGKILLed when the run ends:
//!   a command cannot leave background jobs behind (only `setsid` detaches, and not from a
//!   sandboxed command: its helper kills the whole tree, `crate::sandbox::process`).
//! - Exit by signal n is reported as 128+n.
//! - `request.sandbox`: the PTY's child is opsai's own sandbox helper (`crate::sandbox`), which
//!   applies the sandbox to itself and then `exec`s the shell, so the process, its pid and its
//!   process group are the same as without; secret-looking environment variables are removed.

mod process;
#[cfg(test)]
mod tests;

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use futures_util::future::BoxFuture;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::output::{Capture, DEFAULT_CAPTURE_HEAD, DEFAULT_CAPTURE_TAIL};
use super::{ExecError, ExecResult, Executor, OutputSink};
use crate::protocol::{CommandRequest, SandboxProfile};

/// From SIGTERM to SIGKILL, and from SIGINT to SIGTERM.
const GRACE: Duration = Duration::from_secs(2);
/// After the child exited: stop reading when the PTY has been quiet this long…
const DRAIN_QUIET: Duration = Duration::from_millis(100);
/// …or this long after the exit, whichever comes first; then SIGKILL the group.
const DRAIN_MAX: Duration = Duration::from_secs(1);
/// After that SIGKILL, stop waiting for EOF (a `setsid` escapee holds the terminal).
const DRAIN_GIVE_UP: Duration = Duration::from_millis(500);
/// Stands in for a timeout too large to represent.
const NO_DEADLINE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);
/// When there is no terminal to copy the size from.
const DEFAULT_SIZE: (u16, u16) = (24, 80);

/// Runs commands in a PTY; see the module documentation for the behaviour.
#[derive(Debug, Clone)]
pub struct PtyExecutor {
    /// Rows and columns; `None`: like the user's terminal.
    size: Option<(u16, u16)>,
    capture_head: usize,
    capture_tail: usize,
    env: Vec<(OsString, OsString)>,
    /// Variables of opsai's environment that no command gets (`exec.hidden_env`).
    hidden: Vec<OsString>,
}

impl Default for PtyExecutor {
    fn default() -> Self {
        Self {
            size: None,
            capture_head: DEFAULT_CAPTURE_HEAD,
            capture_tail: DEFAULT_CAPTURE_TAIL,
            env: Vec::new(),
            hidden: Vec::new(),
        }
    }
}

impl PtyExecutor {
    /// Sized like the user's terminal, capturing 2000 + 2000 characters.
    pub fn new() -> Self {
        Self::default()
    }

    /// A fixed PTY size instead of the user's terminal's.
    pub fn with_size(mut self, rows: u16, cols: u16) -> Self {
        self.size = Some((rows.max(1), cols.max(1)));
        self
    }

    /// `exec.capture_head` / `exec.capture_tail`, in characters.
    pub(crate) fn with_capture(mut self, head: usize, tail: usize) -> Self {
        self.capture_head = head;
        self.capture_tail = tail;
        self
    }

    /// These variables of opsai's own environment are given to no command.
    pub(crate) fn without_env(mut self, names: &[String]) -> Self {
        self.hidden.extend(names.iter().map(OsString::from));
        self
    }

    #[cfg(test)]
    /// An environment variable for every command, set after the defaults (so it can override them).
    pub(crate) fn with_env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    fn command(&self, request: &CommandRequest) -> Result<CommandBuilder, ExecError> {
        let shell_args = [OsString::from("-c"), OsString::from(&request.command)];
        let mut cmd = match request.sandbox {
            None => CommandBuilder::from_argv(std::iter::once(OsString::from(shell())).chain(shell_args).collect()),
            Some(profile) => {
                let argv = crate::sandbox::wrap(profile, OsStr::new(shell()), &shell_args)
                    .map_err(|e| ExecError::Spawn(format!("cannot set up the sandbox: {e}")))?;
                CommandBuilder::from_argv(argv)
            }
        };
        // Absolute (not canonical: a symlinked directory keeps the name the model used) for `PWD`.
        let cwd = std::path::absolute(&request.cwd).unwrap_or_else(|_| request.cwd.clone());
        cmd.cwd(&cwd);
        cmd.env("PWD", &cwd);
        if cmd.get_env("TERM").is_none_or(|term| term.is_empty()) {
            cmd.env("TERM", "xterm-256color");
        }
        cmd.env("PAGER", "cat");
        cmd.env("GIT_PAGER", "cat");
        cmd.env("GIT_TERMINAL_PROMPT", "0");
        for (key, value) in &self.env {
            cmd.env(key, value);
        }
        // `opsai serve`'s access token and database URL (which may hold its password) are the
        // server's, never a command's (the crate cannot remove them from its own environment
        // without unsafe code).
        cmd.env_remove("OPSAI_SERVE_TOKEN");
        cmd.env_remove("OPSAI_DATABASE_URL");
        for name in &self.hidden {
            cmd.env_remove(name);
        }
        if request.sandbox == Some(SandboxProfile::Strict) {
            // The helper removes them too; removing them here covers macOS's sandbox-exec.
            let secret: Vec<OsString> = cmd
                .iter_full_env_as_str()
                .filter(|(name, _)| crate::sandbox::env::is_secret_name(name))
                .map(|(name, _)| OsString::from(name))
                .collect();
            for name in secret {
                cmd.env_remove(name);
            }
        }
        Ok(cmd)
    }

    fn pty_size(&self) -> PtySize {
        let (rows, cols) = self.size.or_else(user_terminal_size).unwrap_or(DEFAULT_SIZE);
        PtySize { rows, cols, pixel_width: 0, pixel_height: 0 }
    }

    async fn execute(
        &self,
        request: &CommandRequest,
        on_output: OutputSink<'_>,
        cancel: CancellationToken,
    ) -> Result<ExecResult, ExecError> {
        let started = Instant::now();
        if !request.cwd.is_dir() {
            return Err(ExecError::NoSuchDirectory(request.cwd.display().to_string()));
        }
        if cancel.is_cancelled() {
            return Ok(finished(started, None, false, true, Capture::new(0, 0)));
        }
        // What runs with the user's rights may write files the sandbox's prepared views did not
        // see: they are built again for the commands after it (and during it, for parallel ones).
        let _unsandboxed = request.sandbox.is_none().then(Invalidate::new);
        let pair = native_pty_system().openpty(self.pty_size()).map_err(|e| ExecError::Pty(format!("{e:#}")))?;
        let child = pair.slave.spawn_command(self.command(request)?).map_err(|e| ExecError::Spawn(format!("{e:#}")))?;
        // While we hold a slave fd the master never reaches EOF.
        drop(pair.slave);
        let master = pair.master;
        let pid = child.process_id().and_then(|pid| i32::try_from(pid).ok()).map(Pid::from_raw);
        let pid = pid.ok_or_else(|| ExecError::Spawn("the child has no process id".into()))?;
        if request.sandbox.is_some() {
            crate::sandbox::helper_started(pid.as_raw().unsigned_abs());
        }
        // Reaped through `process::watch`, never through `child`.
        drop(child);
        let (exit_rx, group) = match process::watch(pid) {
            Ok(watch) => watch,
            Err(err) => {
                let _ = nix::sys::signal::killpg(pid, Signal::SIGKILL);
                let _ = nix::sys::wait::waitpid(pid, None);
                return Err(ExecError::Spawn(format!("cannot start a thread: {err}")));
            }
        };
        let reader = master.try_clone_reader().map_err(|e| ExecError::Pty(format!("{e:#}")))?;
        let mut chunks =
            process::read_chunks(reader).map_err(|e| ExecError::Spawn(format!("cannot start a thread: {e}")))?;

        // A timeout too large to add is no timeout.
        let deadline = started.checked_add(request.timeout).unwrap_or_else(|| started + NO_DEADLINE);
        let mut run = Run::new(started, deadline);
        let mut capture = Capture::new(self.capture_head, self.capture_tail);
        let mut winch = if self.size.is_none() { signal(SignalKind::window_change()).ok() } else { None };
        let mut exit_rx = exit_rx;
        let cancelled = cancel.cancelled();
        tokio::pin!(cancelled);
        let timer = tokio::time::sleep_until(run.deadline);
        tokio::pin!(timer);

        while !(run.exit.is_some() && run.reader_done) {
            let wake = run.next_wake();
            if let Some(at) = wake
                && timer.deadline() != at
            {
                timer.as_mut().reset(at);
            }
            tokio::select! {
                biased;
                code = &mut exit_rx, if run.exit.is_none() => {
                    run.exit = Some(code.ok().flatten());
                    run.exited_at = Instant::now();
                }
                () = &mut cancelled, if !run.interrupted && run.exit.is_none() => {
                    run.interrupted = true;
                    if run.escalation.is_none() {
                        let target = foreground(master.as_ref()).unwrap_or(pid);
                        let _ = nix::sys::signal::killpg(target, Signal::SIGINT);
                        run.escalation = Some((Signal::SIGTERM, Instant::now() + GRACE));
                    }
                }
                () = &mut timer, if wake.is_some() => run.on_timer(&group, master.as_ref()),
                chunk = chunks.recv(), if !run.reader_done => match chunk {
                    Some(chunk) => {
                        on_output(&chunk);
                        capture.push(&chunk);
                        while let Ok(chunk) = chunks.try_recv() {
                            on_output(&chunk);
                            capture.push(&chunk);
                        }
                        run.last_data = Instant::now();
                    }
                    None => run.reader_done = true,
                },
                Some(()) = next_winch(&mut winch) => {
                    if let Some((rows, cols)) = user_terminal_size() {
                        let _ = master.resize(PtySize { rows, cols, pixel_width: 0, pixel_height: 0 });
                    }
                }
            }
        }
        // Kills what is left of the group, then the waiter thread reaps the leader.
        drop(group);
        drop(chunks);
        let exit = run.exit.flatten();
        Ok(finished(started, exit, run.timed_out, run.interrupted, capture))
    }
}

impl Executor for PtyExecutor {
    fn run<'a>(
        &'a self,
        request: &'a CommandRequest,
        on_output: OutputSink<'a>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ExecResult, ExecError>> {
        Box::pin(self.execute(request, on_output, cancel))
    }
}

/// Makes the sandbox's prepared rulesets stale when created and when dropped.
struct Invalidate;

impl Invalidate {
    fn new() -> Self {
        crate::sandbox::invalidate_prepared();
        Self
    }
}

impl Drop for Invalidate {
    fn drop(&mut self) {
        crate::sandbox::invalidate_prepared();
    }
}

fn finished(
    started: Instant,
    exit_code: Option<i32>,
    timed_out: bool,
    interrupted: bool,
    capture: Capture,
) -> ExecResult {
    ExecResult { exit_code, timed_out, interrupted, output: capture.finish(), duration: started.elapsed() }
}

/// The state of one run between events.
struct Run {
    deadline: Instant,
    /// `Some` once the child exited: its status, if known.
    exit: Option<Option<i32>>,
    exited_at: Instant,
    reader_done: bool,
    last_data: Instant,
    timed_out: bool,
    interrupted: bool,
    /// The next signal to send if the child is still running then.
    escalation: Option<(Signal, Instant)>,
    /// After the drain's SIGKILL: when to stop waiting for EOF.
    give_up_at: Option<Instant>,
}

impl Run {
    fn new(started: Instant, deadline: Instant) -> Self {
        Self {
            deadline,
            exit: None,
            exited_at: started,
            reader_done: false,
            last_data: started,
            timed_out: false,
            interrupted: false,
            escalation: None,
            give_up_at: None,
        }
    }

    /// When the timer must fire next, if anything is pending.
    fn next_wake(&self) -> Option<Instant> {
        if self.exit.is_none() {
            let deadline = (!self.timed_out && !self.interrupted).then_some(self.deadline);
            let escalation = self.escalation.map(|(_, at)| at);
            return [deadline, escalation].into_iter().flatten().min();
        }
        if self.reader_done {
            return None;
        }
        if let Some(at) = self.give_up_at {
            return Some(at);
        }
        let quiet = self.last_data.max(self.exited_at) + DRAIN_QUIET;
        Some(quiet.min(self.exited_at + DRAIN_MAX))
    }

    fn on_timer(&mut self, group: &process::Group, master: &dyn MasterPty) {
        let now = Instant::now();
        if self.exit.is_none() {
            if let Some((signal, at)) = self.escalation
                && now >= at
            {
                let fg = foreground(master);
                if signal == Signal::SIGKILL {
                    group.signal_with(fg, Signal::SIGKILL);
                    self.escalation = None;
                } else {
                    group.terminate(fg);
                    self.escalation = Some((Signal::SIGKILL, now + GRACE));
                }
            }
            if !self.timed_out && !self.interrupted && now >= self.deadline {
                self.timed_out = true;
                group.terminate(foreground(master));
                self.escalation = Some((Signal::SIGKILL, now + GRACE));
            }
        } else if let Some(at) = self.give_up_at {
            if now >= at {
                self.reader_done = true;
            }
        } else if self.next_wake().is_some_and(|at| now >= at) {
            group.signal(Signal::SIGKILL);
            self.give_up_at = Some(now + DRAIN_GIVE_UP);
        }
    }
}

/// The PTY's foreground process group, while the terminal has one.
fn foreground(master: &dyn MasterPty) -> Option<Pid> {
    master.process_group_leader().filter(|&pgid| pgid > 1).map(Pid::from_raw)
}

async fn next_winch(winch: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
    match winch {
        Some(winch) => winch.recv().await,
        None => std::future::pending().await,
    }
}

/// Rows and columns of the user's terminal (stderr, else stdout), through `console`'s safe query.
fn user_terminal_size() -> Option<(u16, u16)> {
    use dialoguer::console::Term;
    Term::stderr().size_checked().or_else(|| Term::stdout().size_checked())
}

/// `bash` when it is on `PATH`, else `/bin/sh`.
fn shell() -> &'static str {
    static SHELL: OnceLock<&'static str> = OnceLock::new();
    SHELL.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let found = std::env::split_paths(&path).any(|dir| is_executable(dir.join("bash")));
        if found { "bash" } else { "/bin/sh" }
    })
}

fn is_executable(path: PathBuf) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
