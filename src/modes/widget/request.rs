//! What the widget asks the model (pure): the user message from the shell's line, or from the last
//! history line when the line is empty after a failed command, and the widget's part of the
//! environment layer (cursor, last status, recent history, allowlisted variables).
//!
//! The caller redacts both before they leave the machine.

/// History lines sent at most (the newest ones).
pub(crate) const HISTORY_LINES: usize = 10;
/// Characters kept of one history line.
const HISTORY_LINE_CHARS: usize = 500;

/// The only environment variables whose names and values are described to the model. Each says
/// which environment a command will act on, and none holds a credential by itself:
///
/// - `VIRTUAL_ENV`, `CONDA_DEFAULT_ENV`: the active Python environment (pip, python, pytest);
/// - `AWS_PROFILE`, `AWS_REGION`, `AWS_DEFAULT_REGION`: which AWS account and region `aws` targets
///   (profile names, never keys: `AWS_ACCESS_KEY_ID` and friends are not here);
/// - `KUBECONFIG`: which cluster configuration `kubectl`/`helm` use (a path);
/// - `DOCKER_HOST`, `DOCKER_CONTEXT`: which Docker daemon `docker` talks to (a `user:pass@` in a
///   URL is still redacted);
/// - `LANG`, `LC_ALL`: the locale (message language, sort order, UTF-8 or not);
/// - `TERM`: what the terminal can show (colors, `tput`, pagers).
///
/// Everything else the shell exported stays on the machine: arbitrary variables carry tokens,
/// hostnames and personal data, and a name the model never sees cannot leak.
pub(crate) const ENV_ALLOWLIST: &[&str] = &[
    "VIRTUAL_ENV", "CONDA_DEFAULT_ENV", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "KUBECONFIG", "DOCKER_HOST",
    "DOCKER_CONTEXT", "LANG", "LC_ALL", "TERM",
];

/// The allowlisted variables that are set (non-empty), in [`ENV_ALLOWLIST`] order.
pub(crate) fn allowed_env(lookup: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    ENV_ALLOWLIST
        .iter()
        .filter_map(|name| Some(((*name).to_owned(), lookup(name).filter(|value| !value.is_empty())?)))
        .collect()
}

/// The history the shell wrote on stdin, oldest first: each line trimmed (bash's `fc -ln` puts a
/// tab and a space in front), control characters made spaces (an escape sequence must not fake a
/// prompt line), empty lines dropped, the newest [`HISTORY_LINES`] kept.
pub(crate) fn history_lines(raw: &str) -> Vec<String> {
    let lines: Vec<String> = raw
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| line.chars().take(HISTORY_LINE_CHARS).map(|c| if c.is_control() { ' ' } else { c }).collect())
        .collect();
    let skip = lines.len().saturating_sub(HISTORY_LINES);
    lines.into_iter().skip(skip).collect()
}

/// What the shell sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WidgetInput {
    /// The line being edited.
    pub buffer: String,
    /// The cursor, in characters.
    pub cursor: Option<usize>,
    /// The exit status of the last command.
    pub status: Option<i32>,
    /// Recent history, oldest first (empty when none was sent or it is switched off).
    pub history: Vec<String>,
    /// History was switched off (`OPSAI_NO_HISTORY=1`): a hint then says so.
    pub history_off: bool,
}

/// What to do with the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Ask the model.
    Ask(Prepared),
    /// Nothing to ask: show this hint instead (no request is made).
    Hint(String),
}

/// One request to the model, before redaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The user message: the shell's line, or a request to fix the last command.
    pub task: String,
    /// Lines for the environment layer, each starting with `- `.
    pub notes: String,
}

pub fn plan(input: &WidgetInput) -> Plan {
    let mut notes = String::new();
    let line = input.buffer.trim();
    let task = if !line.is_empty() {
        let length = input.buffer.chars().count();
        if let Some(cursor) = input.cursor.filter(|&cursor| cursor < length) {
            notes.push_str(&format!(
                "- Cursor: at character {cursor} of {length} of the line (the user was typing there)\n"
            ));
        }
        if let Some(status) = input.status {
            notes.push_str(&format!("- Exit status of the last command: {status}\n"));
        }
        input.buffer.clone()
    } else {
        match (input.status, input.history.last()) {
            (Some(status), Some(last)) if status != 0 => {
                format!("My last command failed with exit status {status}; fix it:\n{last}")
            }
            (Some(status), None) if status != 0 && input.history_off => {
                return Plan::Hint(
                    "opsai: history is off (OPSAI_NO_HISTORY), so there is no command to fix; type what you want, \
                     then press Ctrl-G"
                        .to_owned(),
                );
            }
            (Some(status), None) if status != 0 => {
                return Plan::Hint(
                    "opsai: the shell sent no history, so there is no command to fix; type what you want, then \
                     press Ctrl-G"
                        .to_owned(),
                );
            }
            _ => {
                return Plan::Hint(
                    "opsai: type a request (or half a command with a # comment), then press Ctrl-G".to_owned(),
                );
            }
        }
    };
    if !input.history.is_empty() {
        notes.push_str("- Recent shell history, oldest first:\n");
        for entry in &input.history {
            notes.push_str(&format!("  {entry}\n"));
        }
    }
    Plan::Ask(Prepared { task, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(buffer: &str, status: Option<i32>, history: &[&str]) -> WidgetInput {
        WidgetInput {
            buffer: buffer.to_owned(),
            cursor: None,
            status,
            history: history.iter().map(|s| (*s).to_owned()).collect(),
            history_off: false,
        }
    }

    #[test]
    fn history_is_trimmed_and_bounded() {
        let raw = "\t ls -la\n\n\t git status  \n";
        assert_eq!(history_lines(raw), ["ls -la", "git status"]);
        let many: String = (0..25).map(|n| format!("\t cmd{n}\n")).collect();
        let kept = history_lines(&many);
        assert_eq!(kept.len(), HISTORY_LINES);
        assert_eq!(kept.first().map(String::as_str), Some("cmd15"));
        assert_eq!(kept.last().map(String::as_str), Some("cmd24"));
    }

    #[test]
    fn a_line_is_the_task_and_the_rest_are_notes() {
        let mut request = input("tar -czf logs.tgz # only the logs dir", Some(0), &["cd /srv", "ls"]);
        request.cursor = Some(4);
        let Plan::Ask(prepared) = plan(&request) else { panic!("expected a request") };
        assert_eq!(prepared.task, "tar -czf logs.tgz # only the logs dir");
        assert!(prepared.notes.contains("- Cursor: at character 4 of 37"), "{}", prepared.notes);
        assert!(prepared.notes.contains("- Exit status of the last command: 0\n"));
        assert!(prepared.notes.ends_with("oldest first:\n  cd /srv\n  ls\n"), "{}", prepared.notes);
        request.cursor = Some(37);
        let Plan::Ask(prepared) = plan(&request) else { panic!("expected a request") };
        assert!(!prepared.notes.contains("Cursor"), "a cursor at the end is not worth a line");
    }

    #[test]
    fn an_empty_line_after_a_failure_fixes_the_last_command() {
        let Plan::Ask(prepared) = plan(&input("  ", Some(127), &["ls", "gti status"])) else { panic!() };
        assert_eq!(prepared.task, "My last command failed with exit status 127; fix it:\ngti status");
        assert!(matches!(plan(&input("", Some(0), &["ls"])), Plan::Hint(_)));
        assert!(matches!(plan(&input("", None, &["ls"])), Plan::Hint(_)));
        let Plan::Hint(hint) = plan(&input("", Some(1), &[])) else { panic!() };
        assert!(hint.contains("no history"), "{hint}");
        let mut off = input("", Some(1), &[]);
        off.history_off = true;
        let Plan::Hint(hint) = plan(&off) else { panic!() };
        assert!(hint.contains("OPSAI_NO_HISTORY"), "{hint}");
    }

    #[test]
    fn only_allowlisted_variables_are_described() {
        let env = |name: &str| match name {
            "VIRTUAL_ENV" => Some("/srv/venv".to_owned()),
            "LANG" => Some(String::new()),
            "GITHUB_TOKEN" | "MY_APP_CONFIG" => Some("x".to_owned()),
            _ => None,
        };
        assert_eq!(allowed_env(env), [("VIRTUAL_ENV".to_owned(), "/srv/venv".to_owned())]);
        assert!(ENV_ALLOWLIST.iter().all(|name| !crate::redact::is_secret_name(name)));
    }

    #[test]
    fn control_characters_in_history_cannot_fake_prompt_lines() {
        let history = history_lines("echo a\u{1b}[2J\u{8}b\n");
        assert_eq!(history, ["echo a [2J b"]);
    }
}
