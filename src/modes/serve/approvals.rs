//! Approvals in the browser: the turn's approver publishes the request on the turn's stream and
//! blocks (the gate calls it inside `block_in_place`) until an operator answers with
//! `POST /api/v2/ai/approvals/{call_id}`, the turn is stopped (an abort), or the timeout passes (a
//! refusal, audited like every other). A viewer's request waits for an operator: every operator
//! sees the waiting requests of every conversation (`GET /api/v2/ai/approvals`) and may answer
//! one; the audit line then names the operator who decided.

use std::collections::VecDeque;

use serde_json::{Value, json};
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
    /// This request's own id: the model picks call ids, and a fleet's "the rest?" asks again under
    /// the first request's, so only this names the very request an answer was given to.
    request_id: String,
    conversation: i64,
    owner: String,
    risk: Risk,
    /// The command as the request event showed it, which an answer may name to be sure.
    command: String,
    /// The request offers "always" (it has a grant), as the terminal does only then.
    grantable: bool,
    /// The request event, as the operators' queue shows it.
    request: Value,
    /// Unix seconds it began waiting.
    since: u64,
    /// The answer and who gave it.
    answer: SyncSender<(Approval, String)>,
}

/// The approvals waiting for an answer, across every turn.
#[derive(Default)]
pub struct Pendings {
    waiting: Mutex<Vec<Pending>>,
    /// `--database`: where operators on the other replicas see them.
    pub mirror: std::sync::OnceLock<Arc<super::replicas::Replicas>>,
    /// The last approvals that timed out (call id, conversation, owner): a late answer is told so.
    expired: Mutex<VecDeque<(String, i64, String)>>,
}

/// Timed-out approvals remembered for late answers.
const EXPIRED: usize = 64;
/// Requests one viewer may have waiting for an operator at once: more would let a few viewers
/// hold every turn slot for the whole approval timeout.
const VIEWER_WAITING: usize = 2;

/// Why an answer was not taken.
#[derive(Debug, PartialEq, Eq)]
pub enum AnswerError {
    /// Nothing of the caller's waits under that id.
    NotPending,
    /// High needs the typed word.
    NeedsConfirm,
    /// The id waits in more than one of the caller's conversations: the answer must name which.
    Ambiguous,
    /// The answer named another command than the one waiting.
    OtherCommand,
    /// It timed out before the answer came, and was refused.
    TimedOut,
    /// `approve_session` for a request without a grant (nothing to remember for the session).
    NoGrant,
    /// `approve_session` for another user's request: a grant is its giver's, for their own turns.
    OthersSession,
    /// Another user's request answered without its `request_id`.
    NeedsRequestId,
}

/// Who answers: a user, and whether they may answer others' requests (an operator).
#[derive(Debug, Clone, Copy)]
pub struct Answerer<'a> {
    pub user: &'a str,
    pub operator: bool,
}

/// Which pending approval an answer is for, beyond its call id.
#[derive(Debug, Default, Clone, Copy)]
pub struct Target<'a> {
    pub conversation: Option<i64>,
    /// The command the answerer saw, compared byte for byte.
    pub command: Option<&'a str>,
    /// The request event's `request_id`: required to answer another user's request.
    pub request: Option<&'a str>,
}

impl AnswerError {
    /// The refusal as one word, between replicas.
    pub fn code(&self) -> &'static str {
        match self {
            AnswerError::NotPending => "not_pending",
            AnswerError::NeedsConfirm => "needs_confirm",
            AnswerError::Ambiguous => "ambiguous",
            AnswerError::OtherCommand => "other_command",
            AnswerError::TimedOut => "timed_out",
            AnswerError::NoGrant => "no_grant",
            AnswerError::OthersSession => "others_session",
            AnswerError::NeedsRequestId => "needs_request_id",
        }
    }

    pub fn from_code(code: &str) -> Option<AnswerError> {
        [
            AnswerError::NotPending,
            AnswerError::NeedsConfirm,
            AnswerError::Ambiguous,
            AnswerError::OtherCommand,
            AnswerError::TimedOut,
            AnswerError::NoGrant,
            AnswerError::OthersSession,
            AnswerError::NeedsRequestId,
        ]
        .into_iter()
        .find(|err| err.code() == code)
    }
}

impl Pendings {
    /// Starts waiting: here, and (`--database`) for every replica's operators.
    fn add(&self, pending: Pending) {
        if let Some(mirror) = self.mirror.get() {
            let p = &pending;
            mirror.pending_added(&p.request_id, p.conversation, &p.call_id, &p.owner, &p.request, p.since);
        }
        if let Ok(mut waiting) = self.waiting.lock() {
            waiting.push(pending);
        }
    }

    /// No longer waiting (answered, stopped, timed out).
    fn gone(&self, pending: &Pending) {
        if let Some(mirror) = self.mirror.get() {
            mirror.pending_gone(&pending.request_id);
        }
    }

    /// Answers the caller's pending approval `call_id`. The model picks call ids, so two of the
    /// caller's conversations may wait under the same one: then the answer must name the
    /// conversation, and when it names the command that must be the one waiting.
    pub fn answer(
        &self,
        call_id: &str,
        by: Answerer,
        target: Target,
        approval: Approval,
        confirmed: bool,
    ) -> Result<(), AnswerError> {
        let user = by.user;
        let Ok(mut waiting) = self.waiting.lock() else { return Err(AnswerError::NotPending) };
        let mine = |p: &&Pending| {
            p.call_id == call_id
                && (by.operator || p.owner == user)
                && target.request.is_none_or(|request| request == p.request_id)
        };
        if target.conversation.is_none() && waiting.iter().filter(mine).count() > 1 {
            return Err(AnswerError::Ambiguous);
        }
        let Some(at) = waiting.iter().position(|p| mine(&p) && target.conversation.is_none_or(|c| c == p.conversation))
        else {
            let expired = self.expired.lock().is_ok_and(|expired| {
                expired.iter().any(|(id, conversation, owner)| {
                    id == call_id
                        && (by.operator || owner == user)
                        && target.conversation.is_none_or(|c| c == *conversation)
                })
            });
            return Err(if expired { AnswerError::TimedOut } else { AnswerError::NotPending });
        };
        if target.command.is_some_and(|command| command != waiting[at].command) {
            return Err(AnswerError::OtherCommand);
        }
        if waiting[at].owner != user && target.request.is_none() {
            return Err(AnswerError::NeedsRequestId);
        }
        if approval == Approval::ApprovedForSession && !waiting[at].grantable {
            return Err(AnswerError::NoGrant);
        }
        if approval == Approval::ApprovedForSession && waiting[at].owner != user {
            return Err(AnswerError::OthersSession);
        }
        if waiting[at].risk == Risk::High && !confirmed && approval != Approval::Denied {
            return Err(AnswerError::NeedsConfirm);
        }
        let pending = waiting.remove(at);
        self.gone(&pending);
        let _ = pending.answer.try_send((approval, user.to_owned()));
        Ok(())
    }

    /// The call id, conversation and command of the request waiting as `request_id`.
    pub fn lookup(&self, request_id: &str) -> Option<(String, i64, String)> {
        let waiting = self.waiting.lock().ok()?;
        let pending = waiting.iter().find(|p| p.request_id == request_id)?;
        Some((pending.call_id.clone(), pending.conversation, pending.command.clone()))
    }

    /// Whether `owner` (a viewer) already has as many requests waiting as they may.
    fn viewer_at_cap(&self, owner: &str) -> bool {
        self.waiting
            .lock()
            .map_or(true, |waiting| waiting.iter().filter(|p| p.owner == owner).count() >= VIEWER_WAITING)
    }

    /// Every waiting request, oldest first, with who asked and since when (the operators' queue).
    pub fn queue(&self) -> Vec<Value> {
        let Ok(waiting) = self.waiting.lock() else { return Vec::new() };
        let mut queue: Vec<(u64, Value)> = waiting
            .iter()
            .map(|p| {
                let mut entry = p.request.clone();
                entry["asked_by"] = p.owner.clone().into();
                entry["since"] = p.since.into();
                (p.since, entry)
            })
            .collect();
        queue.sort_by_key(|(since, _)| *since);
        queue.into_iter().map(|(_, entry)| entry).collect()
    }

    /// Aborts every approval of `conversation` (its turn was stopped).
    pub fn abort(&self, conversation: i64) {
        if let Ok(mut waiting) = self.waiting.lock() {
            for pending in waiting.extract_if(.., |p| p.conversation == conversation) {
                self.gone(&pending);
                let _ = pending.answer.try_send((Approval::Abort, String::new()));
            }
        }
    }

    /// Takes the approval off the waiting list; `false` when it was no longer there (answered).
    fn remove(&self, call_id: &str, conversation: i64) -> bool {
        let Ok(mut waiting) = self.waiting.lock() else { return false };
        let taken: Vec<Pending> =
            waiting.extract_if(.., |p| p.call_id == call_id && p.conversation == conversation).collect();
        taken.iter().for_each(|pending| self.gone(pending));
        !taken.is_empty()
    }

    /// Takes a timed-out approval off the waiting list and remembers it; `false` when an answer
    /// took it first (that answer counts).
    fn expire(&self, call_id: &str, conversation: i64, owner: &str) -> bool {
        // The waiting list's lock is held while the expired one is written, so an answer sees
        // the approval in one list or the other.
        let Ok(mut waiting) = self.waiting.lock() else { return false };
        let taken: Vec<Pending> =
            waiting.extract_if(.., |p| p.call_id == call_id && p.conversation == conversation).collect();
        taken.iter().for_each(|pending| self.gone(pending));
        if taken.is_empty() {
            return false;
        }
        if let Ok(mut expired) = self.expired.lock() {
            if expired.len() >= EXPIRED {
                expired.pop_front();
            }
            expired.push_back((call_id.to_owned(), conversation, owner.to_owned()));
        }
        true
    }
}

/// The approver of one turn in the browser.
pub struct BrowserApprover<'a> {
    pub turn: Arc<Turn>,
    pub pendings: Arc<Pendings>,
    /// The turn's user's role now (the users file, read again): one demoted mid-turn, removed, or
    /// whose file fails to load is refused at once, not at their next turn.
    pub role: &'a (dyn Fn() -> Option<ServeRole> + Send + Sync),
    pub timeout: Duration,
    /// The operator who answered the last request, when not the turn's own user.
    pub decided: Mutex<Option<String>>,
    pub telemetry: &'a super::telemetry::Telemetry,
}

impl BrowserApprover<'_> {
    /// Whether anyone can answer: a user who still exists (a viewer's request waits for an operator).
    fn askable(&self) -> bool {
        (self.role)().is_some()
    }
}

fn now_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Approver for BrowserApprover<'_> {
    fn ask(&self, request: &ApprovalRequest) -> Approval {
        if let Ok(mut decided) = self.decided.lock() {
            *decided = None;
        }
        let Some(role) = (self.role)() else { return Approval::Denied };
        if role != ServeRole::Operator && self.pendings.viewer_at_cap(&self.turn.owner) {
            return Approval::Unanswered(format!(
                "{VIEWER_WAITING} of your requests already wait for an operator: ask again once they are answered"
            ));
        }
        let (answer, answered) = sync_channel(1);
        // The command as the request event shows it: what an answer naming it must match.
        let command = self.turn.shown(&request.command);
        let call_id = request.call_id.clone();
        let conversation = self.turn.conversation;
        let timeout_s = self.timeout.as_secs();
        let mut event = events::approval_request(&call_id, conversation, &command, request, timeout_s);
        // The asker's page says who may answer; operators see it in their queue.
        event["needs_operator"] = (role != ServeRole::Operator).into();
        let request_id = super::auth::random_token();
        event["request_id"] = request_id.clone().into();
        self.pendings.add(Pending {
            call_id: call_id.clone(),
            request_id,
            conversation,
            owner: self.turn.owner.clone(),
            risk: request.risk,
            command,
            grantable: request.grant.is_some(),
            request: self.turn.redacted(&event),
            since: now_s(),
            answer,
        });
        // A stop between the turn's last check and the registration above found nothing to abort.
        if self.turn.interrupts.turn.is_cancelled() {
            self.pendings.remove(&call_id, conversation);
            return Approval::Abort;
        }
        self.turn.publish(&event);
        let asked = std::time::Instant::now();
        let answer = self.wait(&call_id, conversation, &answered);
        let ended = match &answer {
            Approval::Approved | Approval::Edited(_) => "approved",
            Approval::ApprovedForSession => "approved_for_session",
            Approval::Denied => "denied",
            Approval::Unanswered(_) => "timeout",
            Approval::Abort => "abort",
        };
        self.telemetry.approval_wait(asked.elapsed(), ended);
        answer
    }

    fn interactive(&self) -> bool {
        self.askable()
    }

    fn unavailable(&self) -> &str {
        "an operator's approval in the browser"
    }

    fn decided_by(&self) -> Option<String> {
        self.decided.lock().ok().and_then(|decided| decided.clone())
    }
}

impl BrowserApprover<'_> {
    /// Waits for the answer to the request published as `call_id`, or the timeout.
    fn wait(
        &self,
        call_id: &str,
        conversation: i64,
        answered: &std::sync::mpsc::Receiver<(Approval, String)>,
    ) -> Approval {
        match answered.recv_timeout(self.timeout) {
            Ok(answer) => self.decided(call_id, answer),
            Err(RecvTimeoutError::Timeout) => {
                if !self.pendings.expire(call_id, conversation, &self.turn.owner) {
                    // Answered between the timeout and here: the answer (sent before it was
                    // taken off the list) is what the operator was told was decided.
                    return answered.try_recv().map_or(Approval::Denied, |answer| self.decided(call_id, answer));
                }
                self.turn.publish(&events::approval_timeout(call_id));
                Approval::Unanswered(format!("no operator answered within {} s", self.timeout.as_secs()))
            }
            Err(RecvTimeoutError::Disconnected) => Approval::Abort,
        }
    }

    /// Takes an answer: one by another user (an operator answering a viewer) is said on the
    /// stream and kept for the audit line.
    fn decided(&self, call_id: &str, (approval, by): (Approval, String)) -> Approval {
        if !by.is_empty() && by != self.turn.owner {
            self.turn.publish(&json!({"type": "approval", "kind": "decided_by", "id": call_id, "decided_by": by}));
            if let Ok(mut decided) = self.decided.lock() {
                *decided = Some(by);
            }
        }
        approval
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
mod tests;
