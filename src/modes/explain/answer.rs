//! What `opsai explain` prints on stdout: the local view of a command (its parts and risk, no
//! model needed) and the model's explanation, where every suggested command is shown with the
//! risk opsai's own policy gives it: each command of a shell code block (one per line, a line
//! continued while the shell would still wait for more), and each inline code span that parses as
//! a command of a program with arguments. Nothing shown here runs.

use super::target::is_known_program;
use crate::policy::quote_word as quote;
use crate::policy::{self, PolicyConfig, parse, sanitize};
use crate::protocol::{Assessment, Decision, Risk};
use crate::ui::{display, markdown, style};

/// Fence languages whose blocks are commands for the user.
const SHELL_FENCES: &[&str] = &["sh", "bash", "shell", "zsh", "console", "shell-session"];

/// A piece of the model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Text(String),
    /// One command of a shell code block (several lines when continued).
    Command(String),
    /// A comment line of a shell code block: shown, not assessed.
    Comment(String),
}

/// Splits Markdown into prose and shell code blocks (other code blocks stay prose).
pub(crate) fn segments(answer: &str) -> Vec<Segment> {
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
            out.extend(block_commands(&body));
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

/// The commands of a shell block body, in order. A block often holds several commands, one per
/// line; a line joins the next while the shell would still wait for more (a trailing `\`, `|` or
/// `&&`, an open quote, loop or here-document), which is when the parser reports the text as
/// incomplete. Blank lines separate nothing; whatever never parses is one command, which the policy
/// then refuses to call Safe.
fn block_commands(body: &str) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in body.lines() {
        if pending.is_empty() {
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            if trimmed.starts_with('#') {
                out.push(Segment::Comment(trimmed.to_owned()));
                continue;
            }
        }
        pending.push_str(line);
        pending.push('\n');
        if complete(&pending) {
            out.push(Segment::Command(std::mem::take(&mut pending)));
        }
    }
    if !pending.trim().is_empty() {
        out.push(Segment::Command(pending));
    }
    out
}

/// Whether `text` is a whole command: it parses, and does not end in an operator that the grammar
/// accepts at the end of input but the shell would wait to continue.
fn complete(text: &str) -> bool {
    let end = text.trim_end();
    let continued = end.ends_with('\\') || end.ends_with('|') || end.ends_with("&&");
    !continued && parse::parse(text).errors.is_empty()
}

/// The inline code spans (`` `like this` ``) of prose that read as commands: they parse, the first
/// word names a program (`is_program`: the policy's table or `PATH`, so a setting such as
/// `proxy_pass http://app` is not one), and arguments follow it (a lone word such as `nginx`
/// names a thing as often as it runs one).
pub(crate) fn inline_commands(text: &str, is_program: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for span in code_spans(text) {
        let span = span.trim();
        if !span.contains(char::is_whitespace) || span.contains('\n') {
            continue;
        }
        let script = parse::parse(span);
        let program = script.commands.first().and_then(|command| command.words.first()).and_then(|word| word.fixed());
        if script.errors.is_empty() && program.is_some_and(is_program) && !out.iter().any(|seen| seen == span) {
            out.push(span.to_owned());
        }
    }
    out
}

/// Inline code spans as CommonMark reads them: a run of backticks up to the next run of the same
/// length. An unmatched run is literal text.
fn code_spans(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(offset) = text[at..].find('`') {
        let open = at + offset;
        let len = bytes[open..].iter().take_while(|&&b| b == b'`').count();
        let start = open + len;
        let mut search = start;
        let mut close = None;
        while let Some(next) = text[search..].find('`') {
            let run_start = search + next;
            let run = bytes[run_start..].iter().take_while(|&&b| b == b'`').count();
            if run == len {
                close = Some(run_start);
                break;
            }
            search = run_start + run;
        }
        match close {
            Some(end) => {
                spans.push(&text[start..end]);
                at = end + len;
            }
            None => at = start,
        }
    }
    spans
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
/// Commands written inline in prose follow their paragraph group, each with its own badge.
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
                for command in inline_commands(text, &is_known_program) {
                    out.push_str(&command_line(&policy::assess(&command, policy), color));
                }
            }
            Segment::Comment(line) => {
                out.push_str(&style::paint(style::dim(), &format!("  {}", display::line(&line)), color));
                out.push('\n');
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
pub(crate) fn command_view(input: &str, assessment: &Assessment, color: bool) -> String {
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
