//! The terminal the person answers on: stdin and stderr when stdin is a terminal, else /dev/tty;
//! in raw mode for as long as it is open, and restored when dropped.

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;

use super::editor;
use super::keys::{self, Answer, Key};

pub(super) struct Terminal {
    input: TerminalInput,
    pub output: Box<dyn Write>,
    /// The person pressed Ctrl-C.
    pub interrupted: bool,
    // Last, so it is dropped (the terminal restored) after everything else.
    _raw: keys::RawMode,
}

enum TerminalInput {
    Stdin(std::io::Stdin),
    Tty(std::fs::File),
}

/// What the line editor under `[e]` gave back.
pub(super) enum Edit {
    /// A changed command, to be assessed and shown again.
    Changed(String),
    /// Ctrl-C, an empty line or the command unchanged: back to the prompt.
    Back,
}

impl Terminal {
    pub fn open() -> std::io::Result<Self> {
        if std::io::stdin().is_terminal() {
            let raw = keys::RawMode::enter(&std::io::stdin())?;
            let (input, output) = (TerminalInput::Stdin(std::io::stdin()), Box::new(std::io::stderr()));
            return Ok(Self { input, output, interrupted: false, _raw: raw });
        }
        let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty")?;
        let raw = keys::RawMode::enter(&tty)?;
        let writer = tty.try_clone()?;
        Ok(Self { input: TerminalInput::Tty(tty), output: Box::new(writer), interrupted: false, _raw: raw })
    }

    /// One key answers (stdin is the terminal); else answers are typed lines on `/dev/tty`.
    pub fn one_key(&self) -> bool {
        matches!(self.input, TerminalInput::Stdin(_))
    }

    /// See [`keys::discard_typeahead`].
    pub fn discard_typeahead(&self) {
        match &self.input {
            TerminalInput::Stdin(stdin) => keys::discard_typeahead(stdin),
            TerminalInput::Tty(tty) => keys::discard_typeahead(tty),
        }
    }

    /// One key, read the moment it is pressed.
    pub fn key(&mut self) -> std::io::Result<Key> {
        match &mut self.input {
            TerminalInput::Stdin(stdin) => keys::key(&mut keys::Keys(stdin.as_fd())),
            TerminalInput::Tty(tty) => keys::key(&mut keys::Keys(tty.as_fd())),
        }
    }

    /// One typed line, after `start` already on it; `None` for Ctrl-C.
    pub fn answer_from(&mut self, start: &str) -> std::io::Result<Option<String>> {
        let answer = match &mut self.input {
            TerminalInput::Stdin(stdin) => keys::edit_from(start, &mut keys::Keys(stdin.as_fd()), &mut self.output),
            TerminalInput::Tty(tty) => keys::edit_from(start, &mut keys::Keys(tty.as_fd()), &mut self.output),
        }?;
        Ok(match answer {
            Answer::Line(line) => Some(line),
            Answer::End => Some(String::new()),
            Answer::Interrupt => {
                self.interrupted = true;
                None
            }
        })
    }

    /// One typed line; `None` for Ctrl-C.
    pub fn answer(&mut self) -> std::io::Result<Option<String>> {
        self.answer_from("")
    }

    /// The command in a line editor, pre-filled, the cursor at its end: the REPL's editor (reedline)
    /// when the prompt is on stderr and it is a terminal, else the prompt's own line editing
    /// (backspace only). A Ctrl-C here cancels the edit, not the turn.
    pub fn edit(&mut self, command: &str) -> std::io::Result<Edit> {
        writeln!(self.output, "  edit the command; Enter runs the check again, Ctrl-C goes back:")?;
        self.output.flush()?;
        let typed = match self.reedline_usable().then(|| editor::edit_line(command)) {
            Some(Ok(typed)) => typed,
            // No line editor on this terminal: the plain line, pre-filled.
            Some(Err(_)) | None => {
                write!(self.output, "  > ")?;
                self.output.flush()?;
                let typed = self.answer_from(command)?;
                // The Ctrl-C was for the edit only.
                self.interrupted = false;
                typed
            }
        };
        Ok(match typed {
            Some(line) if !line.trim().is_empty() && line != command => Edit::Changed(line),
            _ => Edit::Back,
        })
    }

    /// reedline paints on stderr and asks the terminal where the cursor is on stdout: all three
    /// must be the terminal (a piped stdout must not receive the query).
    fn reedline_usable(&self) -> bool {
        matches!(self.input, TerminalInput::Stdin(_))
            && std::io::stderr().is_terminal()
            && std::io::stdout().is_terminal()
    }
}
