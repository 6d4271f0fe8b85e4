//! `-q`: only the answer on stdout (a protocol), and one line on stderr for what a script must know
//! (an error, a retry, a refused or aborted command).

use std::io::Write;

use super::{ABORTED, Renderer, retry_line};
use crate::protocol::{AgentEvent, ApprovalDecision, ReplyProgress};
use crate::ui::display;

impl<O: Write, E: Write> Renderer<O, E> {
    pub(super) fn quiet(&mut self, event: &AgentEvent) -> std::io::Result<()> {
        // stdout gets only the answer: reply text is held until the reply is decided (it
        // finished without calls, or its `answer` arrived); a thought before a call never goes.
        match event {
            AgentEvent::AnswerDelta { text } if self.answer.active() => return self.stream_answer(text),
            AgentEvent::AnswerDelta { text } => {
                self.undecided.push_str(text);
                return Ok(());
            }
            AgentEvent::Progress { stage: ReplyProgress::AnswerComplete } | AgentEvent::Answer { .. } => {
                let decided = std::mem::take(&mut self.undecided);
                if !decided.is_empty() {
                    self.stream_answer(&decided)?;
                }
                if matches!(event, AgentEvent::Progress { .. }) {
                    return Ok(());
                }
            }
            AgentEvent::Progress { .. } => return Ok(()),
            _ => self.undecided.clear(),
        }
        if self.answer.active() || (self.answer.is_blocks() && matches!(event, AgentEvent::Answer { .. })) {
            // The text streamed so far is complete: an answer, or a thought before a tool call
            // (already written; a line break separates it from what follows).
            let whole = if let AgentEvent::Answer { text } = event { Some(text.as_str()) } else { None };
            self.finish_answer(whole)?;
            if whole.is_some() {
                return Ok(());
            }
        }
        if let AgentEvent::Answer { text } = event {
            let text = if self.raw_answer { text.into() } else { display::prose(text) };
            writeln!(self.out, "{}", text.trim_end())?;
            self.out.flush()?;
        }
        if let AgentEvent::Error { message } = event {
            writeln!(self.err, "opsai: {}", display::command(message))?;
        }
        if let AgentEvent::Retry { .. } = event
            && let Some(line) = retry_line(event)
        {
            writeln!(self.err, "{line}")?;
        }
        // A refusal changes the exit code (3), so `-q` says which command and why, in one line.
        if let AgentEvent::Approval { id, decision, command, .. } = event
            && *decision == ApprovalDecision::Refused
        {
            self.refused = Some((id.clone(), command.clone()));
        }
        if let AgentEvent::Approval { decision, .. } = event
            && *decision == ApprovalDecision::Abort
        {
            writeln!(self.err, "opsai: {}", ABORTED.trim_start_matches("✗ "))?;
        }
        if let AgentEvent::ToolResult { id, output, .. } = event
            && let Some((_, command)) = self.refused.take_if(|refused| refused.0 == *id)
        {
            let reason = output.lines().next().unwrap_or("refused");
            writeln!(self.err, "opsai: not run: {} ({})", display::line(&command), display::line(reason))?;
        }
        Ok(())
    }
}
