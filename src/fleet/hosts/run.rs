//! Runs an inventory program (`ansible-inventory`, an inventory script) to completion with a time
//! limit, its whole process group ended when the limit passes.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// More inventory than any fleet prints; a runaway program is cut here.
const MAX_OUTPUT: u64 = 256 * 1024 * 1024;

pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: Vec<u8>,
}

pub(crate) enum RunError {
    Spawn(std::io::Error),
    TimedOut,
}

/// Runs `program args` with `env` added, stdin empty, for at most `limit`.
pub(crate) fn run(program: &Path, args: &[&str], env: &[(&str, &str)], limit: Duration) -> Result<Finished, RunError> {
    let mut command = Command::new(program);
    command.args(args).envs(env.iter().copied()).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its own process group, so a timeout ends the program's children (a script's curl) too.
    command.process_group(0);
    let mut child = command.spawn().map_err(RunError::Spawn)?;
    let group = i32::try_from(child.id()).ok().map(nix::unistd::Pid::from_raw);
    let deadline = Instant::now() + limit;
    let stdout = child.stdout.take().map(reader);
    let stderr = child.stderr.take().map(reader);
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait());
    });
    let stop = || {
        if let Some(group) = group {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    };
    let status = match done_rx.recv_timeout(limit) {
        Ok(status) => status.map_err(RunError::Spawn)?,
        Err(_) => {
            stop();
            let _ = done_rx.recv();
            return Err(RunError::TimedOut);
        }
    };
    // A background child that kept the pipes open must not hold us past the limit either.
    let collect = |pipe: Option<mpsc::Receiver<Vec<u8>>>| -> Result<Vec<u8>, RunError> {
        let Some(pipe) = pipe else { return Ok(Vec::new()) };
        match pipe.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(bytes) => Ok(bytes),
            Err(mpsc::RecvTimeoutError::Disconnected) => Ok(Vec::new()),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                stop();
                Err(RunError::TimedOut)
            }
        }
    };
    let stdout = collect(stdout)?;
    let stderr = collect(stderr)?;
    Ok(Finished { status, stdout, stderr })
}

/// Reads a pipe to its end on a thread; the bytes arrive on the returned channel.
fn reader(pipe: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(drain(pipe));
    });
    rx
}

fn drain(pipe: impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = pipe.take(MAX_OUTPUT).read_to_end(&mut out);
    out
}
