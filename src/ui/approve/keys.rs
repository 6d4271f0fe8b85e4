//! Reads one answer at the approval prompt with the terminal's signal keys off ([`RawMode`]), so
//! Ctrl-C is an answer ("stop") the moment it is pressed instead of a signal that waits for Enter.
//! Echo and backspace are done here ([`edit`]); the terminal settings are restored on every path.

use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::termios::{self, LocalFlags, SetArg, SpecialCharacterIndices, Termios};

/// What the person typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Line(String),
    /// Ctrl-C.
    Interrupt,
    /// Ctrl-D on an empty line, or the terminal went away.
    End,
}

/// The terminal with its signal keys, line editing and echo off; put back as it was when dropped.
pub(crate) struct RawMode {
    fd: OwnedFd,
    saved: Termios,
}

impl RawMode {
    /// Errors when `input` is not a terminal. Entered before the prompt is drawn, so a key typed the
    /// moment it appears is already read here, never turned into a signal by the terminal.
    pub(crate) fn enter(input: &impl AsFd) -> std::io::Result<Self> {
        // A duplicate of the descriptor, so the guard can hold it while `input` is read.
        let fd = input.as_fd().try_clone_to_owned()?;
        let saved = termios::tcgetattr(&fd).map_err(std::io::Error::from)?;
        let mut raw = saved.clone();
        raw.local_flags.remove(LocalFlags::ISIG | LocalFlags::ICANON | LocalFlags::ECHO | LocalFlags::IEXTEN);
        raw.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        raw.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        termios::tcsetattr(&fd, SetArg::TCSANOW, &raw).map_err(std::io::Error::from)?;
        Ok(Self { fd, saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = termios::tcsetattr(&self.fd, SetArg::TCSANOW, &self.saved);
    }
}

/// One key pressed at the one-key prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A printable ASCII character.
    Char(char),
    Enter,
    /// Ctrl-C.
    Interrupt,
    /// Ctrl-D, or the terminal went away.
    End,
    /// Anything else: an arrow, a function key, a non-ASCII character, another control.
    Other,
}

/// One whole key from `input`: an escape sequence or a multi-byte character is read to its end, so
/// none of its bytes is taken for a key of its own.
pub fn key(input: &mut impl Read) -> std::io::Result<Key> {
    let mut byte = [0u8; 1];
    if input.read(&mut byte)? == 0 {
        return Ok(Key::End);
    }
    Ok(match byte[0] {
        0x03 => Key::Interrupt,
        0x04 => Key::End,
        b'\r' | b'\n' => Key::Enter,
        0x1b => {
            skip_escape(input)?;
            Key::Other
        }
        b @ 0x20..=0x7e => Key::Char(char::from(b)),
        lead @ 0xc0..=0xff => {
            // The continuation bytes of one UTF-8 character: one for 0xC0.., two for 0xE0.., three for 0xF0...
            let more = if lead >= 0xf0 {
                3
            } else if lead >= 0xe0 {
                2
            } else {
                1
            };
            for _ in 0..more {
                if input.read(&mut byte)? == 0 {
                    break;
                }
            }
            Key::Other
        }
        _ => Key::Other,
    })
}

/// The rest of an escape sequence after its ESC: `ESC [ … final`, `ESC O x`, or `ESC x` (Alt-x).
fn skip_escape(input: &mut impl Read) -> std::io::Result<()> {
    let mut byte = [0u8; 1];
    if input.read(&mut byte)? == 0 {
        return Ok(());
    }
    match byte[0] {
        b'[' => {
            while input.read(&mut byte)? == 1 {
                if (0x40..=0x7e).contains(&byte[0]) {
                    break;
                }
            }
        }
        // `ESC O x` is three bytes; at the end of input there is nothing more to skip.
        b'O' => {
            let _ = input.read(&mut byte)?;
        }
        _ => {}
    }
    Ok(())
}

/// Throws away what was typed and not yet read: keys pressed before a prompt was on screen must
/// not answer it, and the Enter typed out of habit after a one-key answer must not reach whatever
/// reads next.
pub(crate) fn discard_typeahead(input: &impl AsFd) {
    let _ = termios::tcflush(input.as_fd(), termios::FlushArg::TCIFLUSH);
}

/// Set once opsai must stop (SIGTERM/SIGHUP): an open prompt then reads a Ctrl-C.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Makes every open and later approval prompt answer as if Ctrl-C were pressed (`runner::stop`), so
/// the refusal is audited and the turn ends instead of waiting for a key that will not come.
pub(crate) fn stop_prompts() {
    STOPPING.store(true, Ordering::SeqCst);
    editor_break().store(true, Ordering::SeqCst);
}

/// Set by [`stop_prompts`] for the line editor under `[e]`, which polls it and gives up (back to
/// the prompt, which then reads the Ctrl-C).
pub(crate) fn editor_break() -> std::sync::Arc<AtomicBool> {
    static BREAK: std::sync::OnceLock<std::sync::Arc<AtomicBool>> = std::sync::OnceLock::new();
    BREAK.get_or_init(|| std::sync::Arc::new(AtomicBool::new(false))).clone()
}

/// The terminal read one `read(2)` at a time (no buffering, so a poll sees every pending byte),
/// checking every 100 ms whether opsai must stop.
pub(crate) struct Keys<'a>(pub BorrowedFd<'a>);

impl Read for Keys<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        loop {
            if STOPPING.load(Ordering::SeqCst) && !buf.is_empty() {
                buf[0] = 0x03;
                return Ok(1);
            }
            let mut fds = [PollFd::new(self.0, PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(100u16)) {
                Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
                Ok(_) => return nix::unistd::read(self.0, buf).map_err(std::io::Error::from),
                Err(err) => return Err(err.into()),
            }
        }
    }
}

/// The line editing itself, on any byte stream (tested without a terminal).
#[cfg(test)]
pub fn edit(input: &mut impl Read, echo: &mut impl Write) -> std::io::Result<Answer> {
    edit_from("", input, echo)
}

/// [`edit`] on a line that starts as `start` (shown, the cursor after it). A multi-line `start`
/// is shown with its line breaks as `⏎`, and kept as it is.
pub fn edit_from(start: &str, input: &mut impl Read, echo: &mut impl Write) -> std::io::Result<Answer> {
    let mut line: Vec<u8> = start.as_bytes().to_vec();
    if !start.is_empty() {
        echo.write_all(crate::ui::display::command(start).replace('\n', "⏎").as_bytes())?;
        echo.flush()?;
    }
    let mut byte = [0u8; 1];
    // Inside an escape sequence (an arrow key): 1 after ESC, 2 inside `ESC [ … final`.
    let mut escape = 0u8;
    loop {
        if input.read(&mut byte)? == 0 {
            return Ok(Answer::End);
        }
        match (escape, byte[0]) {
            (1, b'[' | b'O') => {
                escape = 2;
                continue;
            }
            (2, 0x40..=0x7e) | (1, _) => {
                escape = 0;
                continue;
            }
            (2, _) => continue,
            _ => {}
        }
        match byte[0] {
            0x1b => escape = 1,
            0x03 => {
                echo.write_all(b"^C\r\n")?;
                echo.flush()?;
                return Ok(Answer::Interrupt);
            }
            0x04 if line.is_empty() => {
                echo.write_all(b"\r\n")?;
                echo.flush()?;
                return Ok(Answer::End);
            }
            b'\r' | b'\n' => {
                echo.write_all(b"\r\n")?;
                echo.flush()?;
                return Ok(Answer::Line(String::from_utf8_lossy(&line).into_owned()));
            }
            0x7f | 0x08 => {
                // One character back, however many bytes its UTF-8 takes.
                while let Some(last) = line.pop() {
                    if last & 0xC0 != 0x80 {
                        break;
                    }
                }
                echo.write_all(b"\x08 \x08")?;
            }
            0x15 => {
                let chars = String::from_utf8_lossy(&line).chars().count();
                line.clear();
                echo.write_all("\x08 \x08".repeat(chars).as_bytes())?;
            }
            // Other controls are ignored, never echoed.
            b if b < 0x20 => {}
            b => {
                line.push(b);
                echo.write_all(&[b])?;
            }
        }
        echo.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(bytes: &[u8]) -> (Answer, String) {
        let mut echo = Vec::new();
        let answer = edit(&mut &bytes[..], &mut echo).unwrap();
        (answer, String::from_utf8_lossy(&echo).into_owned())
    }

    #[test]
    fn a_line_with_backspaces_and_kill() {
        assert_eq!(typed(b"yes\r").0, Answer::Line("yes".into()));
        assert_eq!(typed(b"nox\x7f\x7f\x7fyes\n").0, Answer::Line("yes".into()));
        assert_eq!(typed(b"whatever\x15y\r").0, Answer::Line("y".into()));
        assert_eq!(typed("é\x7fy\r".as_bytes()).0, Answer::Line("y".into()));
    }

    #[test]
    fn ctrl_c_and_ctrl_d_answer_at_once() {
        assert_eq!(typed(b"ye\x03s\r"), (Answer::Interrupt, "ye^C\r\n".into()));
        assert_eq!(typed(b"\x04").0, Answer::End);
        assert_eq!(typed(b"y\x04\r").0, Answer::Line("y".into()), "Ctrl-D on a non-empty line is ignored");
        assert_eq!(typed(b"").0, Answer::End);
    }

    fn keys(bytes: &[u8]) -> Vec<Key> {
        let mut input = bytes;
        let mut found = Vec::new();
        while !input.is_empty() {
            found.push(key(&mut input).unwrap());
        }
        found
    }

    #[test]
    fn one_key_at_a_time_with_sequences_read_whole() {
        assert_eq!(keys(b"y"), [Key::Char('y')]);
        assert_eq!(keys(b"\x1b[Ay"), [Key::Other, Key::Char('y')], "an arrow is one key");
        assert_eq!(keys(b"\x1b[1;5Dn"), [Key::Other, Key::Char('n')]);
        assert_eq!(keys(b"\x1bOPq"), [Key::Other, Key::Char('q')], "F1 is one key");
        assert_eq!(keys("éy".as_bytes()), [Key::Other, Key::Char('y')]);
        assert_eq!(keys(b"\r\x03\x04\x01"), [Key::Enter, Key::Interrupt, Key::End, Key::Other]);
        assert_eq!(key(&mut &b""[..]).unwrap(), Key::End);
    }

    #[test]
    fn a_pre_filled_line_is_shown_and_edited_from_its_end() {
        let mut echo = Vec::new();
        let answer = edit_from("touch a", &mut &b"\x7fb.txt\r"[..], &mut echo).unwrap();
        assert_eq!(answer, Answer::Line("touch b.txt".into()));
        assert!(String::from_utf8_lossy(&echo).starts_with("touch a\x08 \x08b.txt"));
    }

    #[test]
    fn controls_are_not_echoed() {
        let (answer, echo) = typed(b"\x1b[Ay\x1b[1;5D\r");
        assert_eq!(answer, Answer::Line("y".into()));
        assert!(!echo.contains('\x1b'), "{echo:?}");
    }
}
