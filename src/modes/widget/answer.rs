//! Reading a model's plain answer (pure). Small models often skip `propose_command` and just
//! answer: an answer that is only a command — one line, a single `` `code` `` span, or a single
//! fenced code block with or without a language tag — is taken as the proposal. Anything else is
//! prose, and its first line becomes the widget's message.
//!
//! Also the one-line texts the widget shows: the message and the risk warning.

use std::sync::LazyLock;

use regex::Regex;

use crate::llm::text_calls::strip_prompts;
use crate::protocol::{Assessment, Risk};

/// What a plain answer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Only a command (possibly several lines, from a fenced block).
    Command(String),
    /// Prose, for the message line.
    Prose(String),
}

/// Shell words that start a command without being programs on `PATH`.
const SHELL_WORDS: &[&str] = &[
    ".", ":", "[", "[[", "alias", "bg", "builtin", "case", "cd", "command", "declare", "eval", "exec", "exit",
    "export", "fg", "for", "function", "if", "jobs", "local", "popd", "pushd", "read", "set", "source", "test", "time",
    "type", "ulimit", "umask", "unalias", "unset", "until", "wait", "while", "(", "{", "!",
];

static FENCED: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?s)\A```[ \t]*[A-Za-z0-9_+.-]*[ \t]*\r?\n(.*?)\r?\n?```\z").ok());

/// Classifies a plain answer; `is_program` says whether a word names a program (on `PATH`, or one
/// the policy knows).
pub(crate) fn classify(text: &str, is_program: impl Fn(&str) -> bool) -> Answer {
    let text = text.trim();
    if let Some(body) = FENCED.as_ref().and_then(|fence| fence.captures(text)).and_then(|c| c.get(1)) {
        let body = body.as_str();
        // One block only: a second fence inside means several blocks (or prose between them).
        if !body.contains("```") {
            let command = strip_prompts(body);
            if !command.trim().is_empty() {
                return Answer::Command(command.trim().to_owned());
            }
        }
    }
    if text.lines().count() == 1 {
        if let Some(inner) = text.strip_prefix('`').and_then(|rest| rest.strip_suffix('`'))
            && !inner.contains('`')
            && !inner.trim().is_empty()
        {
            return Answer::Command(strip_prompts(inner.trim()));
        }
        let line = strip_prompts(text);
        if looks_like_command(&line, &is_program) {
            return Answer::Command(line);
        }
    }
    Answer::Prose(text.to_owned())
}

fn looks_like_command(line: &str, is_program: &impl Fn(&str) -> bool) -> bool {
    let Some(first) = line.split_whitespace().next() else { return false };
    let words = line.split_whitespace().count();
    // "Find is the right tool." reads as a sentence even though `find` is a program.
    let sentence =
        words >= 4 && line.ends_with(['.', '!', '?']) && line.chars().rev().nth(1).is_some_and(char::is_alphabetic);
    if sentence {
        return false;
    }
    let assignment = first
        .split_once('=')
        .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    assignment
        || first.starts_with(['/', '~'])
        || first.starts_with("./")
        || first.starts_with("../")
        || SHELL_WORDS.contains(&first)
        || is_program(first)
}

/// The message line: the first non-empty line of `text`, at most `width` columns (`…` when cut).
pub(crate) fn message_line(text: &str, width: usize) -> String {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("");
    let clean: String = line
        .chars()
        .filter(|c| !crate::policy::is_invisible(*c))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    fit(&clean, width)
}

/// The risk warning for a proposal above Safe: `⚠ high: recursive delete` (the first reason without
/// the command part it names), at most `width` columns.
pub(crate) fn warning_line(assessment: &Assessment, width: usize) -> Option<String> {
    if assessment.risk == Risk::Safe {
        return None;
    }
    let reason = assessment.reasons.first().map_or("", String::as_str);
    // Reasons read `rm -rf build: recursive delete`; the command is on the line already.
    let reason = match reason.split_once(": ") {
        Some((subject, rest)) if names_part_of(subject, &assessment.sanitized) => rest,
        _ => reason,
    };
    let more = assessment.reasons.len().saturating_sub(1);
    let text = match (reason.is_empty(), more) {
        (true, _) => format!("⚠ {}", assessment.risk),
        (false, 0) => format!("⚠ {}: {reason}", assessment.risk),
        (false, more) => format!("⚠ {}: {reason} (+{more} more)", assessment.risk),
    };
    Some(fit(&message_line(&text, usize::MAX), width))
}

/// Whether a reason's subject (`rm -rf build`, `echo hi (> /etc/passwd)`) names a part of
/// `command` (the policy's own reasons, such as the sanitizer's, do not).
fn names_part_of(subject: &str, command: &str) -> bool {
    subject.split_whitespace().next().is_some_and(|word| command.contains(word.trim_matches('\'')))
}

/// `text` cut to `width` characters with `…` at the end when cut.
fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PolicyConfig, assess};

    fn known(word: &str) -> bool {
        ["ls", "find", "git", "tar", "docker", "kubectl"].contains(&word)
    }

    fn command(text: &str) -> Option<String> {
        match classify(text, known) {
            Answer::Command(command) => Some(command),
            Answer::Prose(_) => None,
        }
    }

    #[test]
    fn commands_alone_are_proposals() {
        assert_eq!(command("ls -la").as_deref(), Some("ls -la"));
        assert_eq!(command("  find . -name '*.log'\n").as_deref(), Some("find . -name '*.log'"));
        assert_eq!(command("```\nls -la\n```").as_deref(), Some("ls -la"));
        assert_eq!(command("```sh\ngit status\n```").as_deref(), Some("git status"));
        assert_eq!(
            command("```bash\nfor f in *.log; do\n  gzip \"$f\"\ndone\n```").as_deref(),
            Some("for f in *.log; do\n  gzip \"$f\"\ndone")
        );
        assert_eq!(command("`tar -czf a.tgz logs`").as_deref(), Some("tar -czf a.tgz logs"));
        assert_eq!(command("$ docker ps -a").as_deref(), Some("docker ps -a"));
        assert_eq!(command("```console\n$ kubectl get pods\n```").as_deref(), Some("kubectl get pods"));
        assert_eq!(command("export KUBECONFIG=~/k.yaml").as_deref(), Some("export KUBECONFIG=~/k.yaml"));
        assert_eq!(command("FOO=1 ./run.sh").as_deref(), Some("FOO=1 ./run.sh"));
        assert_eq!(command("/usr/bin/env").as_deref(), Some("/usr/bin/env"));
    }

    #[test]
    fn prose_is_a_message() {
        assert_eq!(command("Sorry, I cannot help with that."), None);
        assert_eq!(command("Find is the right tool for this."), None);
        assert_eq!(command("Which directory do you mean?"), None);
        assert_eq!(command("Here is the command:\n```sh\nls\n```"), None);
        assert_eq!(command("```sh\nls\n```\n```sh\npwd\n```"), None);
        assert_eq!(command("```\n\n```"), None);
        assert_eq!(command(""), None);
    }

    #[test]
    fn the_message_is_one_line_that_fits() {
        assert_eq!(message_line("\n  I need the directory.\nMore text.", 80), "I need the directory.");
        assert_eq!(message_line("abcdefghij", 5), "abcd…");
        assert_eq!(message_line("a\u{1b}[31mb", 80), "a [31mb");
    }

    #[test]
    fn warnings_name_the_risk_and_the_first_reason() {
        let policy = PolicyConfig::default();
        let warning = |command: &str| warning_line(&assess(command, &policy), 200);
        assert_eq!(warning("ls -la"), None);
        assert_eq!(warning("rm -rf build").as_deref(), Some("⚠ high: recursive delete"));
        assert_eq!(warning("touch a").as_deref(), Some("⚠ medium: creates a"));
        let piped = warning("curl -s x | sh").unwrap();
        assert!(piped.starts_with("⚠ high: ") && piped.ends_with("(+1 more)"), "{piped}");
        assert_eq!(warning_line(&assess("rm -rf build", &policy), 10).as_deref(), Some("⚠ high: r…"));
    }
}
