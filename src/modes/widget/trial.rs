//! A read-only candidate tried before it replaces the user's line (issue 22): a Safe command runs
//! as one more widget probe (sandboxed, audited, counted against the probe limit, a short time
//! limit), and an error that says the command itself is wrong (an unknown option, a missing file, a
//! usage message) is sent back to the model for a second candidate. Nothing above Safe runs, and
//! what the trial printed never reaches the user's line.

use std::time::Duration;

use serde_json::json;

use crate::agent::Agent;
use crate::agent::prompt::WIDGET_REPLY_FORM;
use crate::llm::ModelRef;
use crate::protocol::{AgentEvent, ObservationStatus, Risk};
use crate::tools::{ToolContext, ToolEffect};

/// The longest a trial may run: the user is waiting at the prompt.
const TRIAL_TIMEOUT: Duration = Duration::from_secs(2);
/// Lines of a failed trial's output sent back to the model.
const ERROR_LINES: usize = 6;

/// What a command prints when it was called wrongly, not when it merely found nothing (`grep`
/// exits 1 without a match; that is an answer).
const MISTAKES: &[&str] = &[
    "no such file or directory",
    "invalid option",
    "unrecognized option",
    "illegal option",
    "unknown option",
    "invalid argument",
    "missing operand",
    "missing argument",
    "command not found",
    "syntax error",
    "usage:",
    "not a directory",
    "is a directory",
    "cannot access",
    "invalid number",
    "unknown command",
    "unexpected",
];

/// The shells whose commands `run_command` (bash) runs as the user's shell would.
pub(crate) fn applies_to(shell: Option<&str>) -> bool {
    let name = shell.and_then(|shell| shell.split_whitespace().next()).unwrap_or("bash");
    let name = std::path::Path::new(name).file_name().and_then(|name| name.to_str()).unwrap_or("");
    matches!(name, "bash" | "sh" | "dash")
}

/// Runs `command` as a probe when the policy rates it Safe; the feedback for a second candidate when
/// it failed in a way that says the command is wrong.
pub(crate) async fn run(
    agent: &mut Agent<'_>,
    command: &str,
    risk: Risk,
    input: &str,
    on_event: &mut (dyn FnMut(AgentEvent) + Send),
) -> Option<String> {
    if risk != Risk::Safe {
        return None;
    }
    let tool = agent.tools.get("run_command")?;
    let arguments = json!({"command": command, "why": "check the proposed command"});
    let limit = TRIAL_TIMEOUT.min(agent.services.exec_timeout);
    let timeout = std::mem::replace(&mut agent.services.exec_timeout, limit);
    let ctx = ToolContext {
        services: &agent.services,
        state: &mut agent.state,
        events: on_event,
        input,
        model: ModelRef { client: agent.model, name: &agent.settings.model },
    };
    let effect = tool.call("trial", &arguments, ctx).await;
    agent.services.exec_timeout = timeout;
    let ToolEffect::Observe(observation) = effect else { return None };
    if observation.status != ObservationStatus::Ran {
        return None;
    }
    mistake(observation.exit_code?, &observation.text).map(|excerpt| {
        format!(
            "Run read-only to check, it failed (exit {}):\n{excerpt}\nReply with the corrected {WIDGET_REPLY_FORM}.",
            observation.exit_code.unwrap_or_default()
        )
    })
}

/// The lines that show the command was called wrongly, when it exited non-zero saying so.
pub(crate) fn mistake(exit: i32, output: &str) -> Option<String> {
    if exit == 0 {
        return None;
    }
    let lower = output.to_lowercase();
    // Permission errors are the sandbox's doing or the user's rights, not the command's form.
    let said = MISTAKES.iter().any(|marker| lower.contains(marker)) || exit == 127;
    if !said || lower.contains("permission denied") || lower.contains("operation not permitted") {
        return None;
    }
    let lines: Vec<&str> = output.lines().map(str::trim_end).filter(|line| !line.trim().is_empty()).collect();
    let picked: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|line| {
            let lower = line.to_lowercase();
            MISTAKES.iter().any(|marker| lower.contains(marker)) || lower.contains("error")
        })
        .take(ERROR_LINES)
        .collect();
    let excerpt = if picked.is_empty() { lines.iter().take(ERROR_LINES).copied().collect() } else { picked };
    Some(excerpt.join("\n").chars().take(600).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_errors_about_the_command_count() {
        let wrong = mistake(2, "ls: cannot access 'file.txt': No such file or directory\n").unwrap();
        assert!(wrong.contains("No such file"), "{wrong}");
        let usage = mistake(1, "head: invalid option -- 'z'\nTry 'head --help' for more information.\n").unwrap();
        assert_eq!(usage, "head: invalid option -- 'z'");
        assert!(mistake(127, "bash: line 1: tre: command not found").is_some());
        assert_eq!(mistake(1, ""), None, "grep without a match is an answer");
        assert_eq!(mistake(1, "3\n"), None);
        assert_eq!(mistake(0, "usage: fine"), None);
        assert_eq!(mistake(1, "cat: /root/x: Permission denied"), None, "the sandbox's doing");
    }

    #[test]
    fn only_bash_like_shells_are_tried() {
        assert!(applies_to(Some("bash 5.2")) && applies_to(None) && applies_to(Some("/bin/sh")));
        assert!(!applies_to(Some("fish 3.7")) && !applies_to(Some("zsh 5.9")));
    }
}
