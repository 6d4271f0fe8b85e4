//! The child's process group and the two blocking threads that watch it: one waits for the exit,
//! one reads the PTY. Neither ever runs on the async runtime.

use std::io::Read;

use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;
use tokio::sync::{mpsc, oneshot};

/// Read buffer of the PTY reader (PTY reads rarely return more than 4 KiB).
const READ_BUF: usize = 16 * 1024;
/// Chunks in flight between the reader and the executor: bounds memory when the consumer is slow.
const CHANNEL_CHUNKS: usize = 32;

/// The process group of one command. Dropping it SIGKILLs whatever is left of the group and lets the
/// waiter thread reap the leader: the leader is reaped only after the group was signalled, so its pid
/// (= the group id) cannot be reused by an unrelated process while it is still signalled.
pub(super) struct Group {
    pgid: Pid,
    /// Dropped last: tells the waiter thread to reap.
    reap: Option<std::sync::mpsc::Sender<()>>,
}

impl Group {
    pub(super) fn signal(&self, signal: Signal) {
        // ESRCH: nothing left to signal.
        let _ = killpg(self.pgid, signal);
    }

    /// Signals the group and, when it is another one, the terminal's foreground group.
    pub(super) fn signal_with(&self, foreground: Option<Pid>, signal: Signal) {
        self.signal(signal);
        if let Some(fg) = foreground.filter(|&fg| fg != self.pgid && fg.as_raw() > 1) {
            let _ = killpg(fg, signal);
        }
    }

    /// SIGTERM, and SIGCONT so that stopped members act on it.
    pub(super) fn terminate(&self, foreground: Option<Pid>) {
        self.signal_with(foreground, Signal::SIGTERM);
        self.signal_with(foreground, Signal::SIGCONT);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
        drop(self.reap.take());
    }
}

/// The shell status of a finished child: its code, or 128+n for signal n.
fn exit_code(status: WaitStatus) -> Option<i32> {
    match status {
        WaitStatus::Exited(_, code) => Some(code),
        WaitStatus::Signaled(_, signal, _) => Some(128 + signal as i32),
        _ => None,
    }
}

/// Waits for `pid` on a thread. The receiver gets the exit status as soon as the child has exited;
/// the child is reaped only when the returned [`Group`] is dropped.
pub(super) fn watch(pid: Pid) -> std::io::Result<(oneshot::Receiver<Option<i32>>, Group)> {
    let (exit_tx, exit_rx) = oneshot::channel();
    let (reap_tx, reap_rx) = std::sync::mpsc::channel::<()>();
    let group = Group { pgid: pid, reap: Some(reap_tx) };
    std::thread::Builder::new().name("opsai-pty-wait".into()).spawn(move || {
        let status = wait_exited(pid);
        let _ = exit_tx.send(status.ok().and_then(exit_code));
        // Until the executor has dealt with the rest of the group (or went away).
        let _ = reap_rx.recv();
        if cfg!(any(target_os = "linux", target_os = "android", target_os = "freebsd")) {
            while waitpid(pid, None) == Err(Errno::EINTR) {}
        }
    })?;
    Ok((exit_rx, group))
}

/// Waits until `pid` has exited without reaping it where the platform allows (`WNOWAIT`).
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
fn wait_exited(pid: Pid) -> nix::Result<WaitStatus> {
    use nix::sys::wait::{Id, WaitPidFlag, waitid};
    loop {
        match waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
            Err(Errno::EINTR) => {}
            other => return other,
        }
    }
}

/// Elsewhere the child is reaped at once.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
fn wait_exited(pid: Pid) -> nix::Result<WaitStatus> {
    loop {
        match waitpid(pid, None) {
            Err(Errno::EINTR) => {}
            other => return other,
        }
    }
}

/// Reads the PTY on a thread until EOF (EIO once every slave fd is closed) or until the receiver is
/// dropped. Each chunk ends on a UTF-8 character boundary: an incomplete trailing sequence (at most
/// 3 bytes) is held back and sent with the next read.
pub(super) fn read_chunks(mut reader: Box<dyn Read + Send>) -> std::io::Result<mpsc::Receiver<Vec<u8>>> {
    let (tx, rx) = mpsc::channel(CHANNEL_CHUNKS);
    std::thread::Builder::new().name("opsai-pty-read".into()).spawn(move || {
        let mut buf = vec![0u8; READ_BUF];
        let mut held = 0;
        loop {
            let read = match reader.read(&mut buf[held..]) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let end = held + read;
            let split = end - incomplete_utf8_suffix(&buf[..end]);
            if split > 0 && tx.blocking_send(buf[..split].to_vec()).is_err() {
                return;
            }
            buf.copy_within(split..end, 0);
            held = end - split;
        }
        if held > 0 {
            let _ = tx.blocking_send(buf[..held].to_vec());
        }
    })?;
    Ok(rx)
}

/// The length of a valid but incomplete UTF-8 sequence at the end of `bytes` (0 to 3).
pub(super) fn incomplete_utf8_suffix(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xc0 == 0x80 {
            continue; // a continuation byte: look further back for the lead byte
        }
        let needed = match byte {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => 0,
        };
        return if needed > back { back } else { 0 };
    }
    0
}
