//! Approvals in the browser: the turn's approver publishes the request on the turn's stream and
//! blocks (the gate calls it inside `block_in_place`) until the conversation's owner answers with
//! `POST /api/v2/ai/approvals/{call_id}`, the turn is stopped (an abort), or the timeout passes (a
//! refusal, audited like every other). A viewer is never asked: anything above Safe is refused at once.

use std::sync::mpsc::{RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::approval::{ApprovalRequest, Approver};
use crate::cli::ServeRole;
use crate::protocol::{Approval, Risk};

use super::events;
use super::turn::Turn;

struct Pending {
    call_id: String,
    conversation: i64,
    owner: String,
    risk: Risk,
    answer: SyncSender<Approval>,
}

/// The approvals waiting for an answer, across every turn.
#[derive(Default)]
pub struct Pendings {
    waiting: Mutex<Vec<Pending>>,
}

/// Why an answer was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum AnswerError {
    /// Nothing of the caller's waits under that id.
    NotPending,
    /// High needs the typed word.
    NeedsConfirm,
}

impl Pendings {
    /// Answers the caller's pending approval `call_id` (in `conversation` when given).
    pub fn answer(
        &self,
        call_id: &str,
        user: &str,
        conversation: Option<i64>,
        approval: Approval,
        confirmed: bool,
    ) -> Result<(), AnswerError> {
        let Ok(mut waiting) = self.waiting.lock() else { return Err(AnswerError::NotPending) };
        let at = waiting
            .iter()
            .position(|p| p.call_id == call_id && p.owner == user && conversation.is_none_or(|c| c == p.conversation))
            .ok_or(AnswerError::NotPending)?;
        if waiting[at].risk == Risk::High && !confirmed && approval != Approval::Denied {
            return Err(AnswerError::NeedsConfirm);
        }
        let pending = waiting.remove(at);
        let _ = pending.answer.try_send(approval);
        Ok(())
    }

    /// Aborts every approval of `conversation` (its turn was stopped).
    pub fn abort(&self, conversation: i64) {
        if let Ok(mut waiting) = self.waiting.lock() {
            for pending in waiting.extract_if(.., |p| p.conversation == conversation) {
                let _ = pending.answer.try_send(Approval::Abort);
            }
        }
    }

    fn remove(&self, call_id: &str, conversation: i64) {
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.retain(|p| !(p.call_id == call_id && p.conversation == conversation));
        }
    }
}

/// The approver of one turn in the browser.
pub struct BrowserApprover {
    pub turn: Arc<Turn>,
    pub pendings: Arc<Pendings>,
    pub role: ServeRole,
    pub timeout: Duration,
}

impl Approver for BrowserApprover {
    fn ask(&self, request: &ApprovalRequest) -> Approval {
        if self.role != ServeRole::Operator {
            return Approval::Denied;
        }
        let (answer, answered) = sync_channel(1);
        let call_id = request.call_id.clone();
        let conversation = self.turn.conversation;
        if let Ok(mut waiting) = self.pendings.waiting.lock() {
            waiting.push(Pending {
                call_id: call_id.clone(),
                conversation,
                owner: self.turn.owner.clone(),
                risk: request.risk,
                answer,
            });
        }
        // A stop between the turn's last check and the registration above found nothing to abort.
        if self.turn.interrupts.turn.is_cancelled() {
            self.pendings.remove(&call_id, conversation);
            return Approval::Abort;
        }
        self.turn.publish(&events::approval_request(&call_id, request, self.timeout.as_secs()));
        match answered.recv_timeout(self.timeout) {
            Ok(approval) => approval,
            Err(RecvTimeoutError::Timeout) => {
                self.pendings.remove(&call_id, conversation);
                self.turn.publish(&events::approval_timeout(&call_id));
                Approval::Denied
            }
            Err(RecvTimeoutError::Disconnected) => Approval::Abort,
        }
    }

    fn interactive(&self) -> bool {
        self.role == ServeRole::Operator
    }

    fn unavailable(&self) -> &str {
        "an operator's approval in the browser"
    }
}

/// The answers by the API's `decision`.
pub fn decision(text: &str) -> Option<Approval> {
    match text {
        "approve" => Some(Approval::Approved),
        "approve_session" => Some(Approval::ApprovedForSession),
        "deny" => Some(Approval::Denied),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(
        pendings: &Pendings,
        call_id: &str,
        conversation: i64,
        risk: Risk,
    ) -> std::sync::mpsc::Receiver<Approval> {
        let (answer, answered) = sync_channel(1);
        let owner = "alice".to_owned();
        pendings.waiting.lock().unwrap().push(Pending { call_id: call_id.into(), conversation, owner, risk, answer });
        answered
    }

    #[test]
    fn only_the_owner_answers_and_high_needs_the_word() {
        let pendings = Pendings::default();
        let medium = pending(&pendings, "c1", 1, Risk::Medium);
        let high = pending(&pendings, "c2", 1, Risk::High);
        assert_eq!(pendings.answer("c1", "bob", None, Approval::Approved, false), Err(AnswerError::NotPending));
        assert_eq!(pendings.answer("c1", "alice", Some(2), Approval::Approved, false), Err(AnswerError::NotPending));
        assert_eq!(pendings.answer("c1", "alice", None, Approval::Approved, false), Ok(()));
        assert_eq!(medium.recv().unwrap(), Approval::Approved);
        assert_eq!(pendings.answer("c2", "alice", None, Approval::Approved, false), Err(AnswerError::NeedsConfirm));
        assert_eq!(pendings.answer("c2", "alice", None, Approval::Denied, false), Ok(()), "no needs no word");
        assert_eq!(high.recv().unwrap(), Approval::Denied);
        assert_eq!(pendings.answer("c2", "alice", None, Approval::Denied, false), Err(AnswerError::NotPending));
    }

    #[test]
    fn a_stop_aborts_the_conversations_approvals_only() {
        let pendings = Pendings::default();
        let stopped = pending(&pendings, "c1", 1, Risk::Medium);
        let other = pending(&pendings, "c1", 2, Risk::Medium);
        pendings.abort(1);
        assert_eq!(stopped.recv().unwrap(), Approval::Abort);
        assert!(other.try_recv().is_err());
        assert_eq!(pendings.answer("c1", "alice", None, Approval::Approved, false), Ok(()));
        assert_eq!(other.recv().unwrap(), Approval::Approved);
    }
}
