//! The approval seam (DESIGN §2 `Approval`): who says yes before a command above Safe runs.
//!
//! `TerminalApprover` asks on stderr, or on `/dev/tty` when stdin is not a terminal; High needs the
//! word `yes` typed out. `ScriptedApprover` answers from a list (tests). `NoApprover` refuses
//! everything (no terminal): a dropped or impossible prompt fails closed.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::sync::Mutex;

use crate::protocol::{Approval, Risk};

/// Everything the human needs to decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// Exactly what will run (sanitized).
    pub command: String,
    /// The display form: removed characters written visibly (`\u{202e}`), when the sanitizer changed it.
    pub display: Option<String>,
    pub risk: Risk,
    pub reasons: Vec<String>,
    /// The model's stated reason.
    pub why: Option<String>,
    /// What "always this session" would allow (`git commit`), offered for Medium only.
    pub grant: Option<String>,
}

pub trait Approver: Send + Sync {
    /// Blocks until the human answers. Any failure to ask is `Approval::Denied`.
    fn ask(&self, request: &ApprovalRequest) -> Approval;
    /// Whether a human can be asked at all; without one, only Safe commands run.
    fn interactive(&self) -> bool;
}

/// Refuses everything: there is no terminal to ask.
pub struct NoApprover;

impl Approver for NoApprover {
    fn ask(&self, _request: &ApprovalRequest) -> Approval {
        Approval::Denied
    }
    fn interactive(&self) -> bool {
        false
    }
}

/// Answers from a script, in order; `Denied` once it runs out. For tests.
pub struct ScriptedApprover {
    answers: Mutex<VecDeque<Approval>>,
    pub asked: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApprover {
    pub fn new(answers: impl IntoIterator<Item = Approval>) -> Self {
        Self { answers: Mutex::new(answers.into_iter().collect()), asked: Mutex::new(Vec::new()) }
    }
}

impl Approver for ScriptedApprover {
    fn ask(&self, request: &ApprovalRequest) -> Approval {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(request.clone());
        }
        self.answers.lock().ok().and_then(|mut answers| answers.pop_front()).unwrap_or_default()
    }
    fn interactive(&self) -> bool {
        true
    }
}

/// Asks the human at the terminal.
pub struct TerminalApprover {
    color: bool,
}

impl TerminalApprover {
    /// `None` when there is no terminal to ask on.
    pub fn open() -> Option<Self> {
        let has_tty = std::io::stdin().is_terminal() || std::fs::File::open("/dev/tty").is_ok();
        let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        has_tty.then_some(Self { color })
    }

    fn prompt(&self, request: &ApprovalRequest) -> std::io::Result<Approval> {
        let (mut input, mut output) = terminal()?;
        let text = prompt_text(request, self.color);
        output.write_all(text.as_bytes())?;
        output.flush()?;
        loop {
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                return Ok(Approval::Denied);
            }
            let answer = line.trim();
            if request.risk == Risk::High {
                return Ok(match answer {
                    "yes" => Approval::Approved,
                    "q" | "quit" | "abort" => Approval::Abort,
                    "e" | "edit" => edited(&mut input, &mut output, &request.command)?,
                    _ => Approval::Denied,
                });
            }
            match answer.to_ascii_lowercase().as_str() {
                "y" | "yes" => return Ok(Approval::Approved),
                "a" | "always" if request.grant.is_some() => return Ok(Approval::ApprovedForSession),
                "e" | "edit" => return edited(&mut input, &mut output, &request.command),
                "n" | "no" | "" => return Ok(Approval::Denied),
                "q" | "quit" | "abort" => return Ok(Approval::Abort),
                _ => {
                    output.write_all(b"  answer y, a, e, n or q: ")?;
                    output.flush()?;
                }
            }
        }
    }
}

impl Approver for TerminalApprover {
    fn ask(&self, request: &ApprovalRequest) -> Approval {
        self.prompt(request).unwrap_or_default()
    }
    fn interactive(&self) -> bool {
        true
    }
}

type TerminalIo = (Box<dyn BufRead>, Box<dyn Write>);

/// Reads from stdin when it is a terminal, else from /dev/tty; writes to stderr or /dev/tty alike.
fn terminal() -> std::io::Result<TerminalIo> {
    if std::io::stdin().is_terminal() {
        return Ok((Box::new(BufReader::new(std::io::stdin())), Box::new(std::io::stderr())));
    }
    let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty")?;
    let writer = tty.try_clone()?;
    Ok((Box::new(BufReader::new(tty)), Box::new(writer)))
}

fn edited(input: &mut Box<dyn BufRead>, output: &mut Box<dyn Write>, command: &str) -> std::io::Result<Approval> {
    writeln!(output, "  current: {command}")?;
    write!(output, "  new command (empty keeps it): ")?;
    output.flush()?;
    let mut line = String::new();
    input.read_line(&mut line)?;
    let line = line.trim_end_matches(['\n', '\r']);
    Ok(if line.trim().is_empty() { Approval::Edited(command.to_owned()) } else { Approval::Edited(line.to_owned()) })
}

/// The approval prompt, as shown (tested as text).
pub fn prompt_text(request: &ApprovalRequest, color: bool) -> String {
    let mut text = String::new();
    let badge = crate::ui::style::badge(request.risk, color);
    text.push_str(&format!("\n  {badge} {}\n", request.command));
    if let Some(display) = &request.display {
        text.push_str(&format!("  typed as: {display}\n"));
    }
    for reason in &request.reasons {
        text.push_str(&format!("    - {reason}\n"));
    }
    if let Some(why) = request.why.as_deref().filter(|w| !w.trim().is_empty()) {
        text.push_str(&format!("  why: {}\n", why.trim()));
    }
    if request.risk == Risk::High {
        text.push_str("  Type yes to run it, e to edit, q to abort; anything else declines: ");
    } else {
        let always = match &request.grant {
            Some(grant) => format!(" · [a] always allow `{grant}` in this session"),
            None => String::new(),
        };
        text.push_str(&format!("  [y] run once{always} · [e] edit · [n] no · [q] abort: "));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(risk: Risk) -> ApprovalRequest {
        ApprovalRequest {
            command: "git commit -m wip".into(),
            display: None,
            risk,
            reasons: vec!["git commit -m wip: git commit changes the repository".into()],
            why: Some("save the work".into()),
            grant: (risk == Risk::Medium).then(|| "git commit".into()),
        }
    }

    #[test]
    fn medium_prompt_offers_the_session_grant() {
        assert_eq!(
            prompt_text(&request(Risk::Medium), false),
            "\n  [MEDIUM] git commit -m wip\n    - git commit -m wip: git commit changes the repository\n  why: save the work\n  [y] run once · [a] always allow `git commit` in this session · [e] edit · [n] no · [q] abort: "
        );
    }

    #[test]
    fn high_prompt_asks_for_yes() {
        let text = prompt_text(&request(Risk::High), false);
        assert!(text.ends_with("Type yes to run it, e to edit, q to abort; anything else declines: "), "{text}");
        assert!(!text.contains("always"));
    }

    #[test]
    fn scripted_answers_in_order_then_denies() {
        let approver = ScriptedApprover::new([Approval::Approved, Approval::Abort]);
        assert_eq!(approver.ask(&request(Risk::Medium)), Approval::Approved);
        assert_eq!(approver.ask(&request(Risk::Medium)), Approval::Abort);
        assert_eq!(approver.ask(&request(Risk::Medium)), Approval::Denied);
        assert_eq!(approver.asked.lock().unwrap().len(), 3);
        assert!(!NoApprover.interactive());
        assert_eq!(NoApprover.ask(&request(Risk::Safe)), Approval::Denied);
    }
}
