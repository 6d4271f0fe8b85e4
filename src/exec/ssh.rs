//! `--ssh-host`: commands and files on another host through the system `ssh` (DESIGN §7).
//!
//! - The system client is used as is, so `~/.ssh/config`, the agent, `known_hosts` and every
//!   host-key check apply; opsai never passes an option that weakens them (`ssh.options` from the
//!   config are the user's own, appended).
//! - Multiplexing: [`SshTransport::connect`] starts one master connection (`ControlMaster=yes`,
//!   `ControlPersist`) whose socket lives under `$OPSAI_HOME/ssh/`; every later call says
//!   `ControlMaster=no`, so a call never becomes a master itself (a master forked from a command
//!   would hold its terminal open), and falls back to a direct connection when the master is gone.
//! - [`SshExecutor`] runs a command as `ssh -tt HOST -- 'cd DIR && env … bash --norc -c CMD'` inside
//!   the local [`PtyExecutor`]: live output, bounded capture, the exit status (ssh returns the
//!   remote one), and timeouts and Ctrl-C end the local ssh, which hangs up the remote terminal
//!   and so ends the remote command.
//! - [`SshFs`] (`ssh/files.rs`) implements the file seam with plain (no terminal) ssh calls.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use futures_util::future::BoxFuture;
use thiserror::Error;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use super::pty::PtyExecutor;
use super::{ExecError, ExecResult, Executor, OutputSink};
use crate::policy::quote_word;
use crate::protocol::{CommandRequest, SandboxProfile};

mod files;
pub mod sandbox;
pub use files::SshFs;
pub use sandbox::RemoteSandbox;

/// How long a plain (file or probe) ssh call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Error)]
pub enum SshError {
    #[error("`{0}` is not a host name ssh accepts (no spaces, must not start with `-`)")]
    BadHost(String),
    #[error("cannot create {path}: {error}")]
    ControlDir { path: PathBuf, error: io::Error },
    #[error("cannot start ssh: {0}; install the OpenSSH client")]
    Spawn(io::Error),
    #[error("cannot connect to {host} with ssh: {message}")]
    Connect { host: String, message: String },
}

/// The longest Unix socket path every platform binds (macOS: 104 bytes with the final NUL).
const MAX_SOCKET_PATH: usize = 103;
/// What ssh adds under the control directory while binding: `/`, the 40 hex digits of `%C`, and
/// the `.` plus 16 random characters of the temporary name it binds before renaming.
const SOCKET_NAME_LEN: usize = 1 + 40 + 17;

/// Where the master sockets live: `preferred` (`$OPSAI_HOME/ssh`), unless its path is too long
/// for a socket (a deep `OPSAI_HOME` or `TMPDIR`), then a private directory of this user directly
/// under `/tmp` (ssh would otherwise fail with "too long for Unix domain socket").
pub fn socket_dir(preferred: &Path) -> PathBuf {
    if preferred.as_os_str().len() + SOCKET_NAME_LEN <= MAX_SOCKET_PATH {
        return preferred.to_owned();
    }
    PathBuf::from(format!("/tmp/opsai-ssh-{}", nix::unistd::getuid()))
}

/// Creates `dir` (0700) if missing; when it is `shared` (under `/tmp`), checks it is a real
/// directory of this user that nobody else can enter: another user could have made it first.
fn private_dir(dir: &Path, shared: bool) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    match std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    if !shared {
        return Ok(());
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != nix::unistd::getuid().as_raw() || meta.mode() & 0o077 != 0 {
        return Err(io::Error::other("it is not a directory that only this user can use"));
    }
    Ok(())
}

/// One host reached through the system ssh, with a shared master connection.
#[derive(Debug, Clone)]
pub struct SshTransport {
    host: String,
    control_path: PathBuf,
    persist_s: u64,
    /// `ssh.options` from the config, after opsai's own.
    extra: Vec<String>,
}

impl SshTransport {
    /// `control_dir` is `$OPSAI_HOME/ssh` (created 0700).
    pub fn new(host: &str, control_dir: &Path, persist_s: u64, extra: Vec<String>) -> Result<Self, SshError> {
        if host.is_empty() || host.starts_with('-') || host.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(SshError::BadHost(host.to_owned()));
        }
        let shared = socket_dir(control_dir) != control_dir;
        let control_dir = socket_dir(control_dir);
        private_dir(&control_dir, shared).map_err(|error| SshError::ControlDir { path: control_dir.clone(), error })?;
        // `%C` is a hash of host, port and user: short enough for a socket path, distinct per target.
        let control_path = control_dir.join("%C");
        Ok(Self { host: host.to_owned(), control_path, persist_s, extra })
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    /// What tells this destination apart from every other: the host as given and every option
    /// that can change where or as whom ssh connects (`-p`, `-l`, `-F`, `-o …`), in order.
    pub fn destination_key(&self) -> String {
        let mut key = self.host.clone();
        for option in &self.extra {
            key.push('\0');
            key.push_str(option);
        }
        key
    }

    /// The options every call shares; `master` only for the one that starts the master.
    fn options(&self, master: bool) -> Vec<String> {
        let mut options = vec![
            "-o".to_owned(),
            format!("ControlPath={}", self.control_path.display()),
            "-o".to_owned(),
            if master { "ControlMaster=yes".to_owned() } else { "ControlMaster=no".to_owned() },
            // "Connection to HOST closed." is INFO; errors still show.
            "-o".to_owned(),
            "LogLevel=ERROR".to_owned(),
        ];
        if master {
            options.extend(["-o".to_owned(), format!("ControlPersist={}", self.persist_s)]);
        }
        options.extend(self.extra.iter().cloned());
        options
    }

    /// Starts the master connection in the background (authentication prompts, if any, appear on
    /// the terminal: ssh asks on /dev/tty). An already running master is reused.
    /// [`new`](Self::new), then [`connect`](Self::connect): a transport with its master running.
    pub async fn open(host: &str, control_dir: &Path, persist_s: u64, extra: Vec<String>) -> Result<Self, SshError> {
        let transport = Self::new(host, control_dir, persist_s, extra)?;
        transport.connect().await?;
        Ok(transport)
    }

    pub async fn connect(&self) -> Result<(), SshError> {
        if self.check().await {
            return Ok(());
        }
        let mut command = ssh(self.master_args());
        // The forked master keeps the descriptors it was given: never one of ours that a reader
        // waits on for EOF.
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        let output = tokio::time::timeout(CALL_TIMEOUT, async {
            let child = command.spawn().map_err(SshError::Spawn)?;
            child.wait_with_output().await.map_err(SshError::Spawn)
        })
        .await
        .map_err(|_| SshError::Connect { host: self.host.clone(), message: "timed out".into() })??;
        if output.status.success() {
            Ok(())
        } else {
            let message = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            let message = if message.is_empty() { format!("ssh exited with {}", output.status) } else { message };
            Err(SshError::Connect { host: self.host.clone(), message })
        }
    }

    /// Whether a master connection is up.
    pub async fn check(&self) -> bool {
        let mut command = ssh(self.check_args());
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        matches!(tokio::time::timeout(CALL_TIMEOUT, command.status()).await, Ok(Ok(status)) if status.success())
    }

    /// Ends the master connection (for tests and `/host local`).
    pub async fn disconnect(&self) {
        let mut args = self.options(false);
        args.extend(["-O", "exit", "--"].map(str::to_owned));
        args.push(self.host.clone());
        let mut command = ssh(args);
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let _ = tokio::time::timeout(CALL_TIMEOUT, command.status()).await;
    }

    /// The local command line that runs `remote` (a shell line for the remote login shell) with a
    /// terminal: what the PTY executor runs.
    pub fn terminal_command(&self, remote: &str) -> String {
        let mut words = vec!["ssh".to_owned(), "-tt".to_owned()];
        words.extend(self.options(false));
        words.extend(["--".to_owned(), self.host.clone(), remote.to_owned()]);
        words.iter().map(|word| quote_word(word)).collect::<Vec<_>>().join(" ")
    }

    /// The arguments (after `ssh`) that start this host's master connection in the background:
    /// for a caller that runs it itself (the fleet fan-out bounds and cancels each host's own).
    pub fn master_args(&self) -> Vec<String> {
        let mut args = self.options(true);
        args.extend(["-f", "-N", "--"].map(str::to_owned));
        args.push(self.host.clone());
        args
    }

    /// The arguments (after `ssh`) of `-O check`: exit 0 when this host's master is up.
    pub fn check_args(&self) -> Vec<String> {
        let mut args = self.options(false);
        args.extend(["-O", "check", "--"].map(str::to_owned));
        args.push(self.host.clone());
        args
    }

    /// The arguments (after `ssh`) that run `remote` through the master, with a remote terminal
    /// (`-tt`: hanging up ends the remote command) or without one (`-T`).
    pub fn run_args(&self, terminal: bool, remote: &str) -> Vec<String> {
        let mut args = vec![if terminal { "-tt" } else { "-T" }.to_owned()];
        args.extend(self.options(false));
        args.extend(["--".to_owned(), self.host.clone(), remote.to_owned()]);
        args
    }

    /// Runs `remote` without a terminal, `input` on its stdin; the exit status and both outputs.
    pub async fn call(&self, remote: &str, input: Option<&[u8]>) -> io::Result<std::process::Output> {
        let mut command = ssh(self.run_args(false, remote));
        command.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() });
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let run = async {
            let mut child = command.spawn()?;
            // Written while the outputs are read (a remote side that fills its stdout before
            // reading stdin would otherwise stall both); a remote side that stops reading early
            // (it failed) is reported by its exit status and stderr, not as a broken pipe here.
            let stdin = child.stdin.take();
            let feed = async move {
                let (Some(input), Some(mut stdin)) = (input, stdin) else { return Ok(()) };
                stdin.write_all(input).await?;
                stdin.shutdown().await
            };
            let (fed, output) = tokio::join!(feed, child.wait_with_output());
            let output = output?;
            match fed {
                Err(error) if output.status.success() => Err(error),
                _ => Ok(output),
            }
        };
        tokio::time::timeout(CALL_TIMEOUT, run)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, format!("ssh to {} timed out", self.host)))?
    }
}

/// The local `ssh` with `args`, as every ssh opsai starts outside a terminal of its own is run:
/// in its own process group, so the terminal's Ctrl-C is opsai's to turn into a cancel and not
/// ssh's to die of (its exit 255 would read as ssh failing, a master being opened would go with
/// it); and ended when its handle is dropped (a timeout, a cancelled run).
pub fn ssh<I, S>(args: I) -> tokio::process::Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut command = tokio::process::Command::new("ssh");
    command.args(args).kill_on_drop(true).process_group(0);
    command
}

/// The remote shell line for one command: in `cwd`, with the same pager settings as local runs,
/// through bash (`sh` on a host without it). `--norc`: the login shell has already read the rc
/// files, and a bash started by sshd's shell reads `~/.bashrc` again otherwise (Debian's build
/// does when `SSH_CLIENT` is set), which costs a heavy rc (pyenv, nvm) on every command.
pub fn remote_line(cwd: &Path, command: &str) -> String {
    remote_line_with(&remote_dir(cwd), command, "")
}

/// `cwd` as the remote shell's word: quoted, except that a leading `~` stays a tilde for the
/// remote shell to expand, so `~/x` is the host's own home and never this machine's.
pub(crate) fn remote_dir(cwd: &Path) -> String {
    let text = cwd.to_string_lossy();
    match text.strip_prefix('~') {
        Some("") => "~".to_owned(),
        Some(rest) if rest.starts_with('/') => match rest.trim_start_matches('/') {
            "" => "~/".to_owned(),
            rest => format!("~/{}", quote_word(rest)),
        },
        _ => quote_word(&text),
    }
}

/// [`remote_line`] with `prefix` (shell words, already quoted) before the shell: a sandbox helper.
fn remote_line_with(cwd: &str, command: &str, prefix: &str) -> String {
    let command = quote_word(command);
    let prefix = if prefix.is_empty() { String::new() } else { format!("{prefix} ") };
    format!(
        "cd {cwd} && if command -v bash >/dev/null 2>&1; then env {ENV} {prefix}bash --norc -c {command}; \
         else env {ENV} {prefix}sh -c {command}; fi"
    )
}

const ENV: &str = "PAGER=cat GIT_PAGER=cat GIT_TERMINAL_PROMPT=0";

/// Runs commands on the host: `ssh -tt` inside the local PTY executor; a command that nobody
/// approved runs in the host's sandbox ([`sandbox`]).
pub struct SshExecutor {
    transport: SshTransport,
    local: PtyExecutor,
    sandbox: RemoteSandbox,
}

impl SshExecutor {
    /// `sandbox`: what [`sandbox::probe`] found on the host.
    pub fn new(transport: SshTransport, local: PtyExecutor, sandbox: RemoteSandbox) -> Self {
        Self { transport, local, sandbox }
    }
}

/// A directory that exists here, for the local ssh process (the remote directory is in the line).
fn local_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| std::env::current_dir().ok().filter(|d| d.is_dir()).unwrap_or_else(|| PathBuf::from("/")))
}

impl Executor for SshExecutor {
    fn run<'a>(
        &'a self,
        request: &'a CommandRequest,
        on_output: OutputSink<'a>,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<ExecResult, ExecError>> {
        Box::pin(async move {
            let remote = match request.sandbox {
                None => remote_line(&request.cwd, &request.command),
                // The gate only asks for a sandbox the host has (`auto_run`); should it ask for
                // one anyway, nothing runs uncontained.
                Some(profile) => self.sandbox.line(&request.cwd, &request.command, profile).ok_or_else(|| {
                    ExecError::Spawn(format!("no sandbox on {} to run this command in", self.transport.host()))
                })?,
            };
            let local = CommandRequest {
                command: self.transport.terminal_command(&remote),
                cwd: local_dir().to_owned(),
                // The sandbox is the host's, in the line; the local ssh client needs the network
                // and ~/.ssh.
                sandbox: None,
                ..request.clone()
            };
            self.local.run(&local, on_output, cancel).await
        })
    }

    fn remote_auto_run(
        &self,
        profile: SandboxProfile,
        command: &str,
    ) -> Option<Result<Option<SandboxProfile>, String>> {
        Some(sandbox::auto_run(&self.sandbox, profile, command))
    }
}

#[cfg(test)]
mod tests;
