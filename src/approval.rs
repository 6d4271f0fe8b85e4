//! The approval seam (DESIGN §2 `Approval`): who says yes before a command above Safe runs. The
//! rules of when to ask are `tools::gate`'s.
//!
//! The person at a terminal answers through `ui::approve::TerminalApprover` (High needs the word
//! `yes` typed out). `NoApprover` refuses
//! everything (no terminal): a dropped or impossible prompt fails closed.

use crate::protocol::{Approval, Risk};

/// Everything the human needs to decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The id of the tool call asking (a browser answers by it).
    pub call_id: String,
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
    /// `--ssh-host`: the host it runs on, shown as "on HOST".
    pub host: Option<String>,
    /// More to see before deciding, shown under the command (a file tool's unified diff).
    pub detail: Option<String>,
}

pub trait Approver: Send + Sync {
    /// Blocks until the human answers. Any failure to ask is `Approval::Denied`.
    fn ask(&self, request: &ApprovalRequest) -> Approval;
    /// Whether a human can be asked at all; without one, only Safe commands run.
    fn interactive(&self) -> bool;
    /// What a refusal without one says was needed ("refused: medium requires {this}").
    fn unavailable(&self) -> &str {
        "confirmation in a terminal"
    }
    /// True once after an `Abort` that was a Ctrl-C (the turn is then interrupted, not just ended).
    fn interrupted(&self) -> bool {
        false
    }
    /// Who answered the last request when that was not the person who asked (an operator in the
    /// browser answering a viewer's turn), for the audit line.
    fn decided_by(&self) -> Option<String> {
        None
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ScriptedApprover;

    use crate::testing::approval_request as request;

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
