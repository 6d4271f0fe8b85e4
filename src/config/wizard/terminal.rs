//! The real [`Prompter`]: dialoguer on stderr, or on `/dev/tty` when stdin or stderr is not a
//! terminal (`opsai config set-llm < /dev/null 2>log`). No terminal at all → `ConfigError::NoTerminal`.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal};
use std::path::Path;

use dialoguer::console::Term;
use dialoguer::theme::ColorfulTheme;
use dialoguer::{Confirm, Input, Password, Select};

use super::{Connect, Prompter, SetLlmOutcome, set_llm_with};
use crate::config::ConfigError;

/// `opsai config set-llm`: asks on the user's terminal, saves to `<opsai_home>/config.json`.
/// A missing terminal is `ConfigError::NoTerminal` (exit 2) before anything is asked.
pub(crate) async fn set_llm(opsai_home: &Path, connect: Connect<'_>) -> Result<SetLlmOutcome, ConfigError> {
    let mut prompter = TermPrompter::new(open_terminal()?);
    let outcome = set_llm_with(&mut prompter, opsai_home, connect).await?;
    if matches!(outcome, SetLlmOutcome::Saved { .. }) {
        for var in ["OPSAI_BASE_URL", "OPSAI_MODEL", "OPSAI_API_KEY"] {
            if std::env::var_os(var).is_some_and(|v| !v.is_empty()) {
                let _ = prompter.note(&format!("note: {var} is set in this shell and overrides the saved value"));
            }
        }
    }
    Ok(outcome)
}

/// The terminal to prompt on: stderr when stdin and stderr both are terminals, else `/dev/tty`.
pub(crate) fn open_terminal() -> Result<Term, ConfigError> {
    if io::stdin().is_terminal() && io::stderr().is_terminal() {
        return Ok(Term::stderr());
    }
    let open = || -> io::Result<File> { OpenOptions::new().read(true).write(true).open("/dev/tty") };
    let (read, write) = open().and_then(|r| Ok((r, open()?))).map_err(|_| ConfigError::NoTerminal)?;
    let term = Term::read_write_pair(read, write);
    if term.is_term() { Ok(term) } else { Err(ConfigError::NoTerminal) }
}

/// dialoguer prompts on one terminal.
pub(crate) struct TermPrompter {
    term: Term,
    theme: ColorfulTheme,
}

impl TermPrompter {
    pub fn new(term: Term) -> Self {
        Self { term, theme: ColorfulTheme::default() }
    }
}

fn io_error(err: dialoguer::Error) -> io::Error {
    err.into()
}

impl Prompter for TermPrompter {
    fn select(&mut self, prompt: &str, items: &[String], default: usize) -> io::Result<usize> {
        Select::with_theme(&self.theme)
            .with_prompt(prompt)
            .items(items)
            .default(default)
            .max_length(12)
            .interact_on(&self.term)
            .map_err(io_error)
    }

    fn input(&mut self, prompt: &str, default: &str) -> io::Result<String> {
        // A default, not initial text: dialoguer's initial text is editable, and typing a URL
        // appended to it (`http://localhost:11434/v1http://…`).
        let mut input = Input::<String>::with_theme(&self.theme).with_prompt(prompt).allow_empty(true);
        if !default.is_empty() {
            input = input.default(default.to_owned());
        }
        input.interact_text_on(&self.term).map_err(io_error)
    }

    fn password(&mut self, prompt: &str) -> io::Result<String> {
        Password::with_theme(&self.theme)
            .with_prompt(prompt)
            .allow_empty_password(true)
            // The theme would report `********` even when nothing was typed; the wizard says
            // what became of the key instead.
            .report(false)
            .interact_on(&self.term)
            .map_err(io_error)
    }

    fn confirm(&mut self, prompt: &str, default: bool) -> io::Result<bool> {
        Confirm::with_theme(&self.theme).with_prompt(prompt).default(default).interact_on(&self.term).map_err(io_error)
    }

    fn note(&mut self, line: &str) -> io::Result<()> {
        self.term.write_line(line)
    }
}
