//! What `opsai explain` prints on stdout: the local view of a command (its parts and risk, no
//! model needed) and the model's explanation, where every suggested command (each ```sh block)
//! is shown with the risk opsai's own policy gives it. Nothing shown here runs.

use crate::policy::quote_word as quote;
use crate::policy::{self, PolicyConfig, sanitize};
use crate::protocol::{Assessment, Decision, Risk};
use crate::ui::{display, markdown, style};

/// Fence languages whose blocks are commands for the user.
const SHELL_FENCES: &[&str] = &["sh", "bash", "shell", "zsh", "console", "shell-session"];

/// A piece of the model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Text(String),
    /// The body of a shell code block.
    Command(String),
}

/// Splits Markdown into prose and shell code blocks (other code blocks stay prose).
pub fn segments(answer: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut lines = answer.lines();
    while let Some(line) = lines.next() {
        let Some((marker, len, language)) = fence(line) else {
            text.push_str(line);
            text.push('\n');
            continue;
        };
        let mut body = String::new();
        let mut closed = false;
        for inner in lines.by_ref() {
            if fence(inner).is_some_and(|(m, l, lang)| m == marker && l >= len && lang.is_empty()) {
                closed = true;
                break;
            }
            body.push_str(inner);
            body.push('\n');
        }
        if closed && SHELL_FENCES.contains(&language.to_ascii_lowercase().as_str()) {
            if !text.is_empty() {
                out.push(Segment::Text(std::mem::take(&mut text)));
            }
            out.push(Segment::Command(body));
        } else {
            text.push_str(line);
            text.push('\n');
            text.push_str(&body);
            if closed {
                text.push_str(&marker.to_string().repeat(len));
                text.push('\n');
            }
        }
    }
    if !text.is_empty() {
        out.push(Segment::Text(text));
    }
    out
}

/// A fence line: its marker, length and language.
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let rest = line.trim_start();
    let marker = rest.chars().next().filter(|&c| c == '`' || c == '~')?;
    let len = rest.chars().take_while(|&c| c == marker).count();
    if len < 3 {
        return None;
    }
    let info = rest[len..].trim();
    Some((marker, len, info.split_whitespace().next().unwrap_or("")))
}

/// The model's answer for the terminal: prose as Markdown (styled when `color`), and each
/// suggested command on its own line after its risk badge, with the reasons when it is not Safe.
pub fn render(answer: &str, policy: &PolicyConfig, color: bool, width: usize) -> String {
    let mut out = String::new();
    for segment in segments(answer) {
        match segment {
            Segment::Text(text) => {
                let text = text.trim_start_matches(['\n', '\r']);
                if color {
                    out.push_str(&markdown::render(text, width, true));
                } else {
                    out.push_str(&markdown::render(text, usize::MAX, false));
                }
            }
            Segment::Command(body) if body.trim().is_empty() => {}
            Segment::Command(body) => {
                let assessment = policy::assess(body.trim_end(), policy);
                out.push_str(&command_line(&assessment, color));
            }
        }
    }
    out
}

/// `  [MEDIUM] systemctl restart nginx` and the reasons below it.
fn command_line(assessment: &Assessment, color: bool) -> String {
    let badge = style::badge(assessment.risk, color);
    let pad = " ".repeat(assessment.risk.as_str().len() + 2);
    let mut out = String::new();
    for (index, line) in assessment.sanitized.trim().lines().enumerate() {
        let lead = if index == 0 { badge.as_str() } else { pad.as_str() };
        out.push_str(&format!("  {lead} {line}\n"));
    }
    if assessment.risk > Risk::Safe || assessment.decision == Decision::Deny {
        for reason in &assessment.reasons {
            out.push_str(&style::paint(style::dim(), &format!("      - {}", display::line(reason)), color));
            out.push('\n');
        }
    }
    out
}

/// The local view of a command, printed before the model's explanation:
///
/// ```text
/// find . -name "*.log" -mtime +7 -delete
/// parts:
///   1. find . -name '*.log' -mtime +7 -delete
/// risk: [HIGH] · opsai asks before running it
///   - find . -name *.log -mtime +7 -delete: find -delete deletes every match
/// ```
/// Parts are the simple commands the policy parser found, wrappers (`sudo`, `bash -c`, `find -exec`)
/// looked through, each word quoted as the shell would need it.
pub fn command_view(input: &str, assessment: &Assessment, color: bool) -> String {
    let mut out = String::new();
    if assessment.changed_by_sanitizer {
        out.push_str(&style::paint(style::removed(), &sanitize(input).display, color));
        out.push('\n');
        out.push_str(&format!("runs as: {}\n", assessment.sanitized));
    } else {
        out.push_str(&format!("{}\n", assessment.sanitized));
    }
    if !assessment.commands.is_empty() {
        out.push_str("parts:\n");
        for (index, argv) in assessment.commands.iter().enumerate() {
            let words: Vec<String> = argv.iter().map(|word| quote(word)).collect();
            out.push_str(&format!("  {}. {}\n", index + 1, words.join(" ")));
        }
    }
    let decision = match assessment.decision {
        Decision::Allow => "read-only: opsai would run it without asking",
        Decision::Ask => "opsai asks before running it",
        Decision::Deny => "refused by your rules",
    };
    out.push_str(&format!("risk: {} · {decision}\n", style::badge(assessment.risk, color)));
    for reason in &assessment.reasons {
        out.push_str(&style::paint(style::dim(), &format!("  - {}", display::line(reason)), color));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;
