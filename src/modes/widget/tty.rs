//! `/dev/tty` while the widget works (reference/shell-integration.md §1.3, §1.4). stdin is the
//! history pipe, stdout is captured by the shell and stderr is /dev/null, so the terminal itself
//! is the only way to the user:
//!
//! - [`Tty::open`] turns ISIG, ICANON, ECHO and IEXTEN off, so Ctrl-C arrives as a byte instead of
//!   a SIGINT that would also hit the shell. The saved settings are put back by [`restore`], which
//!   the `Tty`'s `Drop`, the panic hook and every exit path call; typed-ahead input is discarded
//!   then, so an impatient Enter cannot run the proposal before the user has seen it.
//! - [`Keys`] reads keys on a thread (`VMIN=0 VTIME=1`: each read returns within 0.1 s); Ctrl-C
//!   or a lone Esc cancels. Other keys are eaten.
//! - [`Spinner`] draws at the cursor without moving it: `ESC 7`, frame, text, `ESC 8`, one
//!   `write(2)` per frame, so a kill can never leave the cursor displaced; [`Spinner::erase`] wipes
//!   it (`ESC 7 ESC [K ESC 8`).
//! - [`Tty::warn`] writes the risk warning on the current line and moves to the next one, so the
//!   shell's redraw puts its prompt below the warning.
//!
//! Without a terminal (no `/dev/tty`, or not a tty) there is no spinner, no key reading and no
//! warning; SIGINT/SIGTERM/SIGHUP still cancel (see `widget::converse`).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::fcntl::OFlag;
use nix::sys::termios::{self, FlushArg, LocalFlags, SetArg, SpecialCharacterIndices, Termios};

/// The spinner's frames: one column each.
const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Time between frames.
pub(crate) const FRAME_INTERVAL: Duration = Duration::from_millis(80);
/// Characters of text after the frame: the spinner must not reach the right margin.
const LABEL_CHARS: usize = 24;
/// Erases what the spinner drew, without moving the cursor.
pub(crate) const ERASE: &[u8] = b"\x1b7\x1b[K\x1b8";

/// The terminal's settings before [`Tty::open`] changed them, for [`restore`].
struct Saved {
    tty: File,
    termios: Termios,
}

static SAVED: Mutex<Option<Saved>> = Mutex::new(None);

/// Puts the terminal back as it was (once; later calls do nothing) and drops typed-ahead input.
pub(crate) fn restore() {
    let saved = match SAVED.lock() {
        Ok(mut slot) => slot.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    if let Some(saved) = saved {
        let _ = termios::tcflush(&saved.tty, FlushArg::TCIFLUSH);
        let _ = termios::tcsetattr(&saved.tty, SetArg::TCSANOW, &saved.termios);
    }
}

/// For the panic hook: erase the spinner and restore the terminal.
pub(crate) fn emergency_cleanup() {
    if let Ok(slot) = SAVED.lock()
        && let Some(saved) = slot.as_ref()
    {
        let _ = (&saved.tty).write(ERASE);
    }
    restore();
}

/// `/dev/tty` in raw mode; restored when dropped.
pub(crate) struct Tty {
    file: File,
}

impl Tty {
    /// Opens `/dev/tty` and turns the signal keys, line editing and echo off. `None` when there is
    /// no terminal or its settings cannot be read or changed.
    pub fn open() -> Option<Tty> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags((OFlag::O_NONBLOCK | OFlag::O_NOCTTY).bits())
            .open("/dev/tty")
            .ok()?;
        let saved = termios::tcgetattr(&file).ok()?;
        let mut raw = saved.clone();
        raw.local_flags.remove(LocalFlags::ISIG | LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::IEXTEN);
        // `read` returns after 0.1 s even without a key (see `read_keys`).
        raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 0;
        raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 1;
        let keep = file.try_clone().ok()?;
        // Registered before the change, so no path can leave the terminal changed and unrecorded.
        match SAVED.lock() {
            Ok(mut slot) => *slot = Some(Saved { tty: keep, termios: saved }),
            Err(_) => return None,
        }
        if termios::tcsetattr(&file, SetArg::TCSANOW, &raw).is_err() {
            restore();
            return None;
        }
        Some(Tty { file })
    }

    /// Columns of the terminal, if it says.
    pub fn width(&self) -> Option<usize> {
        let (read, write) = (self.file.try_clone().ok()?, self.file.try_clone().ok()?);
        let term = dialoguer::console::Term::read_write_pair(read, write);
        term.size_checked().map(|(_, cols)| usize::from(cols)).filter(|&cols| cols > 0)
    }

    /// A spinner on this terminal; `None` on a terminal that cannot save and restore the cursor.
    pub fn spinner(&self) -> Option<Spinner> {
        let dumb = std::env::var("TERM").map_or(true, |term| term.is_empty() || term == "dumb");
        if dumb {
            return None;
        }
        Some(Spinner { out: self.file.try_clone().ok()?, frame: 0, label: String::new(), drawn: false })
    }

    /// The key reader: a thread reading `/dev/tty` until Ctrl-C or Esc.
    pub fn keys(&self) -> std::io::Result<Keys> {
        let input = OpenOptions::new().read(true).custom_flags(OFlag::O_NOCTTY.bits()).open("/dev/tty")?;
        let (sender, cancelled) = tokio::sync::oneshot::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::Builder::new().name("keys".to_owned()).spawn(move || read_keys(input, sender, flag))?;
        Ok(Keys { cancelled, stop })
    }

    /// Writes `text` on the current line (erased first) and moves to the start of the next one.
    pub(crate) fn warn(&self, text: &str) {
        let bytes = format!("\r\x1b[K{text}\r\n");
        let _ = write_retrying(&self.file, bytes.as_bytes());
    }
}

impl Drop for Tty {
    fn drop(&mut self) {
        restore();
    }
}

/// One write, retried briefly when the terminal's output queue is full (the descriptor is
/// non-blocking); a partial write is finished.
fn write_retrying(mut file: &File, mut bytes: &[u8]) -> std::io::Result<()> {
    let mut tries = 0;
    while !bytes.is_empty() {
        match file.write(bytes) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(written) => bytes = &bytes[written..],
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock && tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Keys read on a thread until one cancels.
pub(crate) struct Keys {
    cancelled: tokio::sync::oneshot::Receiver<()>,
    stop: Arc<AtomicBool>,
}

impl Keys {
    /// Resolves on Ctrl-C, a lone Esc, or when the terminal goes away; other keys are eaten.
    pub async fn cancelled(&mut self) {
        let _ = (&mut self.cancelled).await;
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        // The thread stops reading at its next wake-up (at most `VTIME`, 0.1 s).
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The key thread: `read` returns after at most `VTIME` (0.1 s) with or without a key, so a lone
/// Esc is told from the start of an escape sequence (which arrives in one piece), and the thread
/// notices when it is no longer wanted.
fn read_keys(mut input: File, cancel: tokio::sync::oneshot::Sender<()>, stop: Arc<AtomicBool>) {
    let mut buf = [0u8; 64];
    let mut escape = false;
    let mut quick_empty_reads = 0;
    while !stop.load(Ordering::Relaxed) {
        let started = std::time::Instant::now();
        let count = match input.read(&mut buf) {
            Ok(count) => count,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if count == 0 {
            // A timeout after 0.1 s; a hung-up terminal answers 0 at once, again and again.
            if started.elapsed() < Duration::from_millis(20) {
                quick_empty_reads += 1;
                if quick_empty_reads >= 5 {
                    break;
                }
                continue;
            }
            quick_empty_reads = 0;
            if escape {
                break;
            }
            continue;
        }
        quick_empty_reads = 0;
        let keys = &buf[..count];
        if keys.contains(&0x03) {
            break;
        }
        escape = keys.last() == Some(&0x1b);
    }
    if !stop.load(Ordering::Relaxed) {
        let _ = cancel.send(());
    }
}

/// A spinner drawn at the cursor.
pub(crate) struct Spinner {
    out: File,
    frame: usize,
    label: String,
    drawn: bool,
}

impl Spinner {
    /// Shows `text` (made one short line of plain characters) beside the frame, now.
    pub fn show(&mut self, text: &str) {
        self.label = label(text);
        self.draw();
    }

    /// The next frame.
    pub fn tick(&mut self) {
        self.frame = (self.frame + 1) % FRAMES.len();
        self.draw();
    }

    /// Removes the spinner from the screen (nothing when it was never drawn).
    pub fn erase(&mut self) {
        if self.drawn {
            let _ = write_retrying(&self.out, ERASE);
            self.drawn = false;
        }
    }

    fn draw(&mut self) {
        // One write per frame; a frame that does not fit the terminal's queue is skipped.
        let _ = (&self.out).write(&frame_bytes(FRAMES[self.frame], &self.label));
        self.drawn = true;
    }
}

/// `ESC 7`, erase to the end of the line, frame, text, `ESC 8`.
pub(crate) fn frame_bytes(frame: &str, label: &str) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(16 + frame.len() + label.len());
    bytes.extend_from_slice(b"\x1b7\x1b[K");
    bytes.extend_from_slice(frame.as_bytes());
    if !label.is_empty() {
        bytes.push(b' ');
        bytes.extend_from_slice(label.as_bytes());
    }
    bytes.extend_from_slice(b"\x1b8");
    bytes
}

/// Printable ASCII only (one column each, no escape sequences from a model's command), on one
/// line, at most [`LABEL_CHARS`] characters.
pub(crate) fn label(text: &str) -> String {
    let flat: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '?' })
        .collect();
    if flat.chars().count() <= LABEL_CHARS {
        return flat;
    }
    let cut: String = flat.chars().take(LABEL_CHARS - 3).collect();
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_saves_and_restores_the_cursor_around_its_text() {
        let bytes = frame_bytes("⠋", "ls -la");
        assert_eq!(bytes, "\x1b7\x1b[K⠋ ls -la\x1b8".as_bytes());
        assert_eq!(frame_bytes("⠙", ""), "\x1b7\x1b[K⠙\x1b8".as_bytes());
    }

    #[test]
    fn labels_are_short_plain_and_on_one_line() {
        assert_eq!(label("git  status\n-s"), "git status -s");
        assert_eq!(label("echo \u{1b}[2Jé"), "echo ?[2J?");
        let long = label("find / -name '*.log' -size +100M -mtime +7");
        assert_eq!(long.chars().count(), LABEL_CHARS);
        assert!(long.ends_with("..."));
    }
}
