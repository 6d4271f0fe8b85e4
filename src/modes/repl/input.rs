//! Where the REPL's lines come from: the line editor on a terminal, else plain stdin.

use std::io::BufRead;

use reedline::{Reedline, Signal};

use super::editor::AgentPrompt;

/// Where lines come from: the line editor on a terminal, else plain stdin.
pub(super) enum Input {
    Editor(Box<Reedline>),
    Plain(std::io::StdinLock<'static>),
}

pub(super) enum Read {
    Line(String),
    /// Ctrl-C at the prompt: the line was cleared.
    Cleared,
    /// Ctrl-D or the end of stdin.
    End,
}

impl Input {
    pub fn read(&mut self, prompt: &AgentPrompt) -> Read {
        match self {
            Input::Editor(editor) => match editor.read_line(prompt) {
                Ok(Signal::Success(line)) => Read::Line(line),
                Ok(Signal::CtrlC) => Read::Cleared,
                Ok(Signal::CtrlD) => Read::End,
                // An unknown signal or a terminal error: leaving beats spinning on a broken terminal.
                Ok(_) | Err(_) => Read::End,
            },
            Input::Plain(stdin) => {
                let mut line = String::new();
                match stdin.read_line(&mut line) {
                    Ok(0) | Err(_) => Read::End,
                    Ok(_) => Read::Line(line),
                }
            }
        }
    }

    /// Clears the screen, the prompt then at the top; from a pipe nothing is drawn, so nothing to do.
    pub(crate) fn clear_screen(&mut self) -> Option<String> {
        match self {
            Input::Editor(editor) => editor.clear_screen().err().map(|err| format!("cannot clear the screen: {err}")),
            Input::Plain(_) => None,
        }
    }

    /// Writes new history entries to the shared file; the reason when that failed.
    pub fn sync(&mut self) -> Option<String> {
        match self {
            Input::Editor(editor) => editor.sync_history().err().map(|err| format!("history not saved: {err}")),
            Input::Plain(_) => None,
        }
    }
}
