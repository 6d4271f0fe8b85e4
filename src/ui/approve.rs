//! The approval prompt at the terminal: [`TerminalApprover`] asks on stderr, or on `/dev/tty` when
//! stdin is not a terminal. Medium and Safe are answered by one key, no Enter (`y a e n q`); High
//! needs the word `yes` typed out and Enter, so no stray key can approve it. When stdin is not the
//! terminal (a pipe feeds opsai and the prompt is on `/dev/tty`), every answer is a typed line, as
//! before. Any failure to ask is a no.

mod editor;
mod keys;
mod terminal;

use std::io::Write;

use crate::approval::{ApprovalRequest, Approver};
use crate::protocol::{Approval, Risk};
use crate::ui::display;
use keys::Key;
pub(crate) use keys::stop_prompts;
use terminal::{Edit, Terminal};

/// Asks the human at the terminal.
pub(crate) struct TerminalApprover {
    color: bool,
    /// The last answer was Ctrl-C.
    ctrl_c: std::sync::atomic::AtomicBool,
}

/// Shown under the prompt after a key that is not an answer.
const KEY_HINT: &str = "  (one key, no Enter: y runs it, e edits, n declines, q stops the task) ";

impl TerminalApprover {
    /// `None` when there is no terminal to ask on.
    pub fn open() -> Option<Self> {
        use std::io::IsTerminal;
        let has_tty = std::io::stdin().is_terminal() || std::fs::File::open("/dev/tty").is_ok();
        let color = crate::term::stderr_color();
        has_tty.then_some(Self { color, ctrl_c: std::sync::atomic::AtomicBool::new(false) })
    }

    fn prompt(&self, request: &ApprovalRequest) -> std::io::Result<Approval> {
        let mut tty = Terminal::open()?;
        // Keys pressed before the prompt was on screen did not answer it.
        tty.discard_typeahead();
        let answer = self.answer_on(&mut tty, request);
        if tty.interrupted {
            self.ctrl_c.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        answer
    }

    fn answer_on(&self, tty: &mut Terminal, request: &ApprovalRequest) -> std::io::Result<Approval> {
        let text = prompt_text(request, self.color);
        tty.output.write_all(text.as_bytes())?;
        tty.output.flush()?;
        loop {
            let answer = match request.risk {
                Risk::High => typed_answer(tty)?,
                _ if tty.one_key() => key_answer(tty, request)?,
                _ => line_answer(tty, request)?,
            };
            match answer {
                Chosen::Edit => match tty.edit(&request.command)? {
                    Edit::Changed(command) => return Ok(Approval::Edited(command)),
                    Edit::Back => {
                        tty.output.write_all(text.as_bytes())?;
                        tty.output.flush()?;
                    }
                },
                Chosen::Answer(approval) => return Ok(approval),
            }
        }
    }
}

/// An answer, or `[e]`.
enum Chosen {
    Answer(Approval),
    Edit,
}

/// High: a typed line. Only `yes` runs it; `e` edits, `q` stops; anything else declines.
fn typed_answer(tty: &mut Terminal) -> std::io::Result<Chosen> {
    let Some(answer) = tty.answer()? else { return Ok(Chosen::Answer(Approval::Abort)) };
    Ok(match answer.trim() {
        "yes" => Chosen::Answer(Approval::Approved),
        "q" | "quit" | "abort" => Chosen::Answer(Approval::Abort),
        "e" | "edit" => Chosen::Edit,
        _ => Chosen::Answer(Approval::Denied),
    })
}

/// Safe and Medium on `/dev/tty` (stdin is a pipe): a typed line; Enter alone declines.
fn line_answer(tty: &mut Terminal, request: &ApprovalRequest) -> std::io::Result<Chosen> {
    loop {
        let Some(answer) = tty.answer()? else { return Ok(Chosen::Answer(Approval::Abort)) };
        return Ok(match answer.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Chosen::Answer(Approval::Approved),
            "a" | "always" if request.grant.is_some() => Chosen::Answer(Approval::ApprovedForSession),
            "e" | "edit" => Chosen::Edit,
            "n" | "no" | "" => Chosen::Answer(Approval::Denied),
            "q" | "quit" | "abort" => Chosen::Answer(Approval::Abort),
            _ => {
                tty.output.write_all(b"  answer y, a, e, n or q and Enter: ")?;
                tty.output.flush()?;
                continue;
            }
        });
    }
}

/// Safe and Medium: one key acts at once. A key that is no answer (Enter too) gets a hint once
/// and is otherwise ignored; Ctrl-D declines, Ctrl-C stops the task.
fn key_answer(tty: &mut Terminal, request: &ApprovalRequest) -> std::io::Result<Chosen> {
    let mut hinted = false;
    loop {
        let answered = match tty.key()? {
            Key::Char(c) => match c.to_ascii_lowercase() {
                'y' => Some(("y", Chosen::Answer(Approval::Approved))),
                'a' if request.grant.is_some() => Some(("a", Chosen::Answer(Approval::ApprovedForSession))),
                'e' => Some(("e", Chosen::Edit)),
                'n' => Some(("n", Chosen::Answer(Approval::Denied))),
                'q' => Some(("q", Chosen::Answer(Approval::Abort))),
                _ => None,
            },
            Key::Interrupt => {
                tty.interrupted = true;
                Some(("^C", Chosen::Answer(Approval::Abort)))
            }
            Key::End => Some(("^D", Chosen::Answer(Approval::Denied))),
            Key::Enter | Key::Other => None,
        };
        let Some((echo, chosen)) = answered else {
            if !hinted {
                hinted = true;
                let always = if request.grant.is_some() { ", a always allows it this session" } else { "" };
                let hint = KEY_HINT.replacen(", e edits", &format!("{always}, e edits"), 1);
                write!(tty.output, "\r\n{hint}")?;
                tty.output.flush()?;
            }
            continue;
        };
        writeln!(tty.output, "{echo}\r")?;
        tty.output.flush()?;
        // The Enter typed out of habit after the key answers nothing, and reaches nothing else.
        tty.discard_typeahead();
        return Ok(chosen);
    }
}

impl Approver for TerminalApprover {
    fn ask(&self, request: &ApprovalRequest) -> Approval {
        self.prompt(request).unwrap_or_default()
    }
    fn interactive(&self) -> bool {
        true
    }
    fn interrupted(&self) -> bool {
        self.ctrl_c.swap(false, std::sync::atomic::Ordering::SeqCst)
    }
}

/// Lines above the choices past which the command is repeated right above them: a long diff or a
/// long list of reasons must not scroll what runs off the screen.
const REPEAT_AFTER_LINES: usize = 12;

/// The approval prompt, as shown (tested as text). Every field but the badge may come from the model
/// and passes through [`display`]: the command with whatever the sanitizer removed written out, its
/// continuation lines indented under it (no line of it can pass for a line of the prompt); the
/// `why`, the grant and the host on one line each.
pub(crate) fn prompt_text(request: &ApprovalRequest, color: bool) -> String {
    let mut text = String::new();
    let badge = crate::ui::style::badge(request.risk, color);
    let command = command_block(&request.command);
    match &request.host {
        Some(host) => text.push_str(&format!("\n  {badge} on {}: {command}\n", display::line(host))),
        None => text.push_str(&format!("\n  {badge} {command}\n")),
    }
    if let Some(detail) = request.detail.as_deref().filter(|d| !d.is_empty()) {
        for line in detail.lines() {
            text.push_str(&format!("    {}\n", display::command(line)));
        }
    }
    if let Some(shown) = &request.display {
        text.push_str(&format!("  typed as: {}\n", command_block(shown)));
    }
    for reason in &request.reasons {
        text.push_str(&format!("    - {}\n", display::line(reason)));
    }
    if let Some(why) = request.why.as_deref().filter(|w| !w.trim().is_empty()) {
        text.push_str(&format!("  why: {}\n", display::line(why.trim())));
    }
    if text.lines().count() > REPEAT_AFTER_LINES {
        text.push_str(&format!("  runs: {command}\n"));
    }
    if request.risk == Risk::High {
        text.push_str("  Type yes and Enter to run it, e to edit, q to abort; anything else declines: ");
    } else {
        let always = match &request.grant {
            Some(grant) => format!(" · [a] always allow `{}` for this session", display::line(grant)),
            None => String::new(),
        };
        text.push_str(&format!("  [y] run once{always} · [e] edit · [n] no · [q] abort: "));
    }
    text
}

/// A command as shown in the prompt: removed characters written out; a line break starts a
/// continuation line marked `│` under the first, so a multi-line command reads as one block.
fn command_block(command: &str) -> String {
    display::command(command.trim_end_matches('\n')).replace('\n', "\n    │ ")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::approval_request as request;

    #[test]
    fn the_host_and_the_detail_are_shown() {
        let mut asked = request(Risk::Medium);
        asked.host = Some("db-1".into());
        asked.detail = Some("--- a\n+++ b\n-echo 1\n+echo 2".into());
        let text = prompt_text(&asked, false);
        assert!(
            text.starts_with("\n  [MEDIUM] on db-1: git commit -m wip\n    --- a\n    +++ b\n    -echo 1\n"),
            "{text}"
        );
    }

    #[test]
    fn medium_prompt_offers_the_session_grant() {
        assert_eq!(
            prompt_text(&request(Risk::Medium), false),
            "\n  [MEDIUM] git commit -m wip\n    - git commit -m wip: git commit changes the repository\n  why: save the work\n  [y] run once · [a] always allow `git commit` for this session · [e] edit · [n] no · [q] abort: "
        );
    }

    #[test]
    fn every_model_field_is_shown_without_terminal_controls() {
        let hostile = "\x1b[1A\x1b[2K\x1b]0;pwned\x07\x1b]52;c;cm0=\x07\x1b]8;;http://x/\x1b\\\r";
        let request = ApprovalRequest {
            call_id: "c1".into(),
            command: "touch /tmp/a\nrm -rf /tmp/b".into(),
            display: Some(format!("touch /tmp/a{hostile}")),
            risk: Risk::Medium,
            reasons: vec![format!("reason{hostile}")],
            why: Some(format!("tidy\n  [LOW] ls\n{hostile}")),
            grant: Some(format!("touch{hostile}")),
            host: Some(format!("db{hostile}")),
            detail: Some(format!("+line{hostile}\n-other")),
        };
        let text = prompt_text(&request, false);
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text:?}");
        assert!(text.contains(": touch /tmp/a\n    │ rm -rf /tmp/b\n"), "{text}");
        assert!(text.contains("  why: tidy⏎  [LOW] ls⏎\\x1b[1A\\x1b[2K"), "{text}");
        // No line of the prompt starts with anything the model wrote but the command itself.
        for line in text.lines().filter(|l| !l.is_empty()) {
            let known = ["  [MEDIUM] on ", "    │ ", "    +", "    -", "  typed as: ", "  why: ", "  [y] run once"];
            assert!(known.iter().any(|k| line.starts_with(k)), "{line:?}");
        }
    }

    #[test]
    fn a_long_block_repeats_the_command_above_the_choices() {
        let mut asked = request(Risk::Medium);
        asked.detail = Some((0..40).map(|n| format!("+line {n}")).collect::<Vec<_>>().join("\n"));
        let text = prompt_text(&asked, false);
        assert!(text.ends_with("  runs: git commit -m wip\n  [y] run once · [a] always allow `git commit` for this session · [e] edit · [n] no · [q] abort: "), "{text}");
        assert!(!prompt_text(&request(Risk::Medium), false).contains("runs:"));
    }

    #[test]
    fn high_prompt_asks_for_yes() {
        let text = prompt_text(&request(Risk::High), false);
        assert!(
            text.ends_with("Type yes and Enter to run it, e to edit, q to abort; anything else declines: "),
            "{text}"
        );
        assert!(!text.contains("always"));
    }
}
