//! A tool call's `▶` line, held until its decision (issue 23, printed once): an approval prompt
//! shows the command and its reasons itself, so the renderer prints them only when nobody was
//! asked, and says so when an earlier `[a]` grant let the command run.

use std::io::Write;

use super::Renderer;
use crate::protocol::{AgentEvent, ApprovalDecision};
use crate::ui::{display, style};

/// See [`Renderer::held`].
#[derive(Debug)]
pub(super) struct HeldCall {
    pub id: String,
    /// `▶ tool [RISK]  command`.
    pub head: String,
    /// The reasons, one line each, under the head.
    pub reasons: String,
}

/// A tool call still held when the turn ends (the turn was cut off before its decision) is
/// printed, so no call goes unshown.
impl<O: Write, E: Write> Drop for Renderer<O, E> {
    fn drop(&mut self) {
        if let Some(held) = self.held.take() {
            let _ = write!(self.err, "{}\n{}", held.head, held.reasons);
            let _ = self.err.flush();
        }
    }
}

impl<O: Write, E: Write> Renderer<O, E> {
    /// Before `event`: the held tool call's lines are printed, unless its approval prompt showed
    /// them (a person answered it, or it was edited and is announced again). An earlier `[a]` that
    /// let it run says so on its line.
    pub(super) fn release_held(&mut self, event: &AgentEvent) -> std::io::Result<()> {
        let Some(held) = self.held.take() else { return Ok(()) };
        let mut note = None;
        match event {
            AgentEvent::ToolCall { id, .. } if *id == held.id => return Ok(()),
            AgentEvent::Approval { id, decision, grant, .. } if *id == held.id => match (decision, grant) {
                (ApprovalDecision::Approved | ApprovalDecision::Denied | ApprovalDecision::Abort, _)
                | (ApprovalDecision::ApprovedForSession, None) => return Ok(()),
                (ApprovalDecision::ApprovedForSession, Some(grant)) => {
                    note = Some(format!("approved by your [a] for `{}`", display::line(grant)));
                }
                _ => {}
            },
            _ => {}
        }
        self.clear_spinner();
        match note {
            Some(note) => {
                let note = self.paint(style::dim(), &format!("  ({note})"));
                writeln!(self.err, "{}{note}", held.head)?;
            }
            None => writeln!(self.err, "{}", held.head)?,
        }
        write!(self.err, "{}", held.reasons)
    }
}
