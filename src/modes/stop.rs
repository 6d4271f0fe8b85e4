//! SIGTERM and SIGHUP (a closed terminal, `kill`, a service manager) while opsai runs. During a turn
//! they end it the way Ctrl-C does: the running command's process group is sent SIGINT, then
//! SIGTERM and SIGKILL, and its audit line and the conversation are written before opsai exits
//! with 128+n. With no turn running (the REPL waiting at its prompt), or when a turn does not end
//! within [`GRACE`] (an approval prompt blocked on a read), the terminal's settings from the start
//! are put back and opsai exits at once. Either way one line on stderr says which signal stopped
//! opsai and with which exit code.
//!
//! Nothing stored is lost when the grace runs out: every message is written to the sessions
//! database as the agent produces it (each in its own transaction), so only the result of a tool
//! call that never finished is missing, and `conversation::repair` fills that in on resume. An
//! approval prompt is not such a case: [`crate::ui::approve::stop_prompts`] answers it like a Ctrl-C,
//! so its `CONFIRMED: no` audit line is written and the turn ends well within the grace.
//!
//! This is the one place that calls `process::exit`, and it belongs to the modes: when the signal
//! comes, the mode's own thread may be blocked (reading the REPL's next line, or a prompt), so it
//! cannot return a code; every other exit is a code returned up to `main`.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use super::common::warn;

/// How long a cancelled turn gets to finish (a command is SIGKILLed within 4 s of the cancel).
pub const GRACE: Duration = Duration::from_secs(8);

/// The watcher's shared state.
#[derive(Debug, Default)]
pub struct Stop {
    code: AtomicU8,
    turn: Mutex<Option<CancellationToken>>,
}

impl Stop {
    /// Starts watching; call inside the runtime, before the first turn.
    pub fn install() -> std::io::Result<Arc<Stop>> {
        let mut terminate = signal(SignalKind::terminate())?;
        let mut hangup = signal(SignalKind::hangup())?;
        let stop = Arc::new(Stop::default());
        let terminal = saved_terminal();
        let watcher = stop.clone();
        tokio::spawn(async move {
            let code = tokio::select! {
                _ = terminate.recv() => 143,
                _ = hangup.recv() => 129,
            };
            watcher.code.store(code, Ordering::SeqCst);
            let name = if code == 143 { "SIGTERM" } else { "SIGHUP" };
            let turn = watcher.turn.lock().ok().and_then(|turn| turn.clone());
            let had_turn = turn.is_some();
            if let Some(turn) = turn {
                warn(&format!("{name} received: stopping the turn and its command (exit {code})"));
                crate::ui::approve::stop_prompts();
                turn.cancel();
                tokio::time::sleep(GRACE).await;
            }
            if let Some((fd, settings)) = &terminal {
                let _ = nix::sys::termios::tcsetattr(fd, nix::sys::termios::SetArg::TCSANOW, settings);
            }
            if had_turn {
                warn(&format!("the turn did not end within {} s of {name}; exiting (exit {code})", GRACE.as_secs()));
            } else {
                warn(&format!("{name} received: exiting (exit {code})"));
            }
            crate::sandbox::close();
            std::process::exit(i32::from(code));
        });
        Ok(stop)
    }

    /// A turn runs; a signal cancels `turn`.
    pub fn during(&self, turn: CancellationToken) {
        if let Ok(mut slot) = self.turn.lock() {
            *slot = Some(turn);
        }
    }

    /// No turn runs; a signal exits at once.
    pub fn idle(&self) {
        if let Ok(mut slot) = self.turn.lock() {
            *slot = None;
        }
    }

    /// The exit code when a signal stopped the run.
    pub fn code(&self) -> Option<u8> {
        match self.code.load(Ordering::SeqCst) {
            0 => None,
            code => Some(code),
        }
    }
}

/// The controlling terminal's settings now, to restore when a signal ends opsai mid-prompt.
fn saved_terminal() -> Option<(std::fs::File, nix::sys::termios::Termios)> {
    let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").ok()?;
    let settings = nix::sys::termios::tcgetattr(&tty).ok()?;
    Some((tty, settings))
}
