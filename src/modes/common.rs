//! What the entry modes share: the render style, a turn's exit code, the probe budget, the
//! command-line overrides, and the lines opsai itself writes on stderr.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::Duration;

use crate::agent::AgentError;
use crate::cli::RunArgs;
use crate::context::ContextInput;
use crate::protocol::TurnOutcome;
use crate::runner::LlmOverrides;
use crate::ui::render::Style;
use crate::ui::{display, style};

/// How long the first request may wait for slow probes (`git status` in a big repository): the
/// model is better served by an answer now than by knowing whether the tree is dirty. (The widget
/// runs no slow probe at all.)
pub(crate) const PROBE_BUDGET: Duration = Duration::from_millis(1);

/// This machine's context input for `home`, its slow probes held to [`PROBE_BUDGET`].
pub(crate) fn context_input(home: &Path) -> ContextInput {
    let mut input = ContextInput::from_process(home);
    input.probe_budget = PROBE_BUDGET;
    input
}

/// `--model` and `--base-url`.
pub fn overrides(args: &RunArgs) -> LlmOverrides {
    LlmOverrides { model: args.model.clone(), base_url: args.base_url.clone() }
}

/// How a turn is rendered: JSON lines, only the answer, or for a person (in colour on a colour
/// terminal, the spinner only when stderr is a terminal and `interactive`).
pub(crate) fn render_style(json: bool, quiet: bool, interactive: bool) -> Style {
    if json {
        Style::Json
    } else if quiet {
        Style::Quiet
    } else {
        Style::Human { color: crate::term::stderr_color(), spinner: interactive && crate::term::stderr_is_terminal() }
    }
}

/// The columns of the terminal on stdout (80 when it has none), for Markdown wrapping.
pub fn stdout_width() -> usize {
    dialoguer::console::Term::stdout().size_checked().map_or(80, |(_, cols)| usize::from(cols))
}

/// A finished turn's exit code (DESIGN §3): 0 done, 3 a command was refused for want of a terminal
/// to confirm it, 130 interrupted (Ctrl-C), 1 the task or the model failed (an `error` event has
/// said why).
pub(crate) fn turn_exit_code(outcome: &Result<TurnOutcome, AgentError>, refused: bool, interrupted: bool) -> u8 {
    match outcome {
        Ok(TurnOutcome::Answer(_)) | Ok(TurnOutcome::Proposed { .. }) if refused => 3,
        Ok(TurnOutcome::Answer(_)) | Ok(TurnOutcome::Proposed { .. }) => 0,
        Ok(TurnOutcome::Aborted) if interrupted => 130,
        Ok(TurnOutcome::Aborted) | Ok(TurnOutcome::StepLimit) | Err(_) => 1,
    }
}

/// Text opsai itself writes on stderr (help, the audit log's lines); control characters written
/// out, as it can quote the model or what it touched.
pub fn say(text: &str) {
    line(&display::command(text.trim_end()));
}

/// A dim `say`, for notes around a conversation.
pub fn note(text: &str) {
    let color = crate::term::stderr_color();
    line(&style::paint(style::dim(), &display::command(text.trim_end()), color));
}

/// `opsai: TEXT` on stderr, in the warning colour on a colour terminal.
pub(crate) fn warn(text: &str) {
    let text = format!("opsai: {}", display::command(text.trim_end()));
    line(&style::paint(style::warning(), &text, crate::term::stderr_color()));
}

/// One line on stderr. On a terminal it starts from the first column and ends with `\r\n`: a
/// spinner or a raw-mode prompt may be on the line.
fn line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = if err.is_terminal() { write!(err, "\r\x1b[2K{text}\r\n") } else { writeln!(err, "{text}") };
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_maps_to_the_documented_exit_codes() {
        let answer = Ok(TurnOutcome::Answer("done".into()));
        assert_eq!(turn_exit_code(&answer, false, false), 0);
        assert_eq!(turn_exit_code(&answer, true, false), 3, "a refusal without a terminal");
        assert_eq!(turn_exit_code(&Ok(TurnOutcome::Aborted), false, true), 130, "Ctrl-C");
        assert_eq!(turn_exit_code(&Ok(TurnOutcome::Aborted), false, false), 1, "`q` at a prompt");
        assert_eq!(turn_exit_code(&Ok(TurnOutcome::StepLimit), true, false), 1, "a failure outweighs a refusal");
    }

    #[test]
    fn json_and_quiet_win_over_the_human_style() {
        assert!(matches!(render_style(true, true, true), Style::Json));
        assert!(matches!(render_style(false, true, true), Style::Quiet));
        assert!(matches!(render_style(false, false, false), Style::Human { spinner: false, .. }));
    }
}
