//! Runs an inventory program (`ansible-inventory`, an inventory script) to completion with a time
//! limit, its whole process group ended when the limit passes.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

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
    let pid = child.id();
    let stdout = child.stdout.take().map(|pipe| std::thread::spawn(move || drain(pipe)));
    let stderr = child.stderr.take().map(|pipe| std::thread::spawn(move || drain(pipe)));
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.wait());
    });
    let status = match done_rx.recv_timeout(limit) {
        Ok(status) => status.map_err(RunError::Spawn)?,
        Err(_) => {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
            let _ = done_rx.recv();
            return Err(RunError::TimedOut);
        }
    };
    let join =
        |handle: Option<std::thread::JoinHandle<Vec<u8>>>| handle.and_then(|h| h.join().ok()).unwrap_or_default();
    Ok(Finished { status, stdout: join(stdout), stderr: join(stderr) })
}

fn drain(pipe: impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let _ = pipe.take(MAX_OUTPUT).read_to_end(&mut out);
    out
}
