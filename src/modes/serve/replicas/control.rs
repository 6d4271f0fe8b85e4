//! What only the replica running a turn can do, asked of it by the others: stop the turn, and
//! hand an operator's answer to its waiting gate (checked there, by the same rules as a local
//! answer, and its outcome sent back).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{Op, ReplicaError, Replicas};
use crate::modes::serve::approvals::{AnswerError, Answerer, Target, decision};

/// How long an answer waits for the replica running the turn to say what became of it.
const REPLY_WITHIN: Duration = Duration::from_secs(5);

/// An answer to an approval that waits on another replica.
pub struct AnswerRequest<'a> {
    pub call_id: &'a str,
    pub by: Answerer<'a>,
    pub target: Target<'a>,
    /// The API's `decision` word.
    pub decision: &'a str,
    pub confirmed: bool,
}

impl Replicas {
    /// Keeps a waiting approval where operators on every replica see it.
    pub fn pending_added(
        &self,
        request_id: &str,
        conversation: i64,
        call_id: &str,
        owner: &str,
        request: &Value,
        since: u64,
    ) {
        self.send(Op::PendingAdd {
            request_id: request_id.to_owned(),
            conversation,
            call_id: call_id.to_owned(),
            owner: owner.to_owned(),
            request: request.to_string(),
            since: since as i64,
        });
    }

    pub fn pending_gone(&self, request_id: &str) {
        self.send(Op::PendingGone { request_id: request_id.to_owned() });
    }

    /// Every approval waiting on any replica, oldest first, as the operators' queue shows it.
    pub async fn queue(&self) -> Result<Vec<Value>, ReplicaError> {
        let rows = self
            .client()
            .await?
            .query("SELECT request, owner, since FROM web_pendings ORDER BY since, request_id", &[])
            .await?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let mut entry: Value = serde_json::from_str(row.get::<_, &str>(0)).ok()?;
                entry["asked_by"] = row.get::<_, String>(1).into();
                entry["since"] = row.get::<_, i64>(2).into();
                Some(entry)
            })
            .collect())
    }

    /// Asks the replica running `conversation`'s turn to stop it.
    pub async fn stop_elsewhere(&self, conversation: i64) -> Result<(), ReplicaError> {
        self.notify("opsai_control", &json!({"kind": "stop", "conversation": conversation})).await
    }

    /// Answers an approval waiting on another replica: `Ok(Err(_))` is that replica's refusal,
    /// by the same rules as here.
    pub async fn answer_elsewhere(&self, answer: &AnswerRequest<'_>) -> Result<Result<(), AnswerError>, ReplicaError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT replica, request, owner, conversation FROM web_pendings WHERE call_id = $1 AND replica <> $2",
                &[&answer.call_id, &self.id],
            )
            .await?;
        let target = answer.target;
        let candidates: Vec<(String, Value, String)> = rows
            .iter()
            .filter(|row| answer.by.operator || row.get::<_, &str>(2) == answer.by.user)
            .filter(|row| target.conversation.is_none_or(|c| c == row.get::<_, i64>(3)))
            .filter_map(|row| Some((row.get(0), serde_json::from_str(row.get::<_, &str>(1)).ok()?, row.get(2))))
            .filter(|(_, request, _): &(String, Value, String)| {
                target.request.is_none_or(|id| request["request_id"].as_str() == Some(id))
            })
            .collect();
        let (replica, request, owner) = match candidates.as_slice() {
            [] => return Ok(Err(AnswerError::NotPending)),
            [one] => one.clone(),
            _ if target.conversation.is_none() => return Ok(Err(AnswerError::Ambiguous)),
            [first, ..] => first.clone(),
        };
        if owner != answer.by.user && target.request.is_none() {
            return Ok(Err(AnswerError::NeedsRequestId));
        }
        if target.command.is_some_and(|command| request["command"].as_str() != Some(command)) {
            return Ok(Err(AnswerError::OtherCommand));
        }
        let reply = super::super::auth::random_token();
        let (sender, received) = oneshot::channel();
        self.replies.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(reply.clone(), sender);
        // The very request seen (a fleet's "the rest?" asks again under the same call id), and a
        // digest of the command the answerer named, checked there against the one waiting. Every
        // field is bounded, so the notification stays far under PostgreSQL's 8000 bytes.
        let message = json!({
            "kind": "answer",
            "to": replica,
            "reply": reply,
            "request_id": request["request_id"],
            "user": answer.by.user,
            "operator": answer.by.operator,
            "command_sha": target.command.map(digest),
            "decision": answer.decision,
            "confirmed": answer.confirmed,
        });
        let sent = self.notify("opsai_control", &message).await;
        let outcome = match sent {
            Ok(()) => tokio::time::timeout(REPLY_WITHIN, received).await.ok().and_then(Result::ok),
            Err(err) => {
                self.forget_reply(&reply);
                return Err(err);
            }
        };
        self.forget_reply(&reply);
        let code = outcome.ok_or_else(|| {
            ReplicaError::Query(
                "the server running that turn did not say within 5 s whether it took the answer: look at the \
                 conversation before answering again"
                    .into(),
            )
        })?;
        Ok(if code == "ok" { Ok(()) } else { Err(AnswerError::from_code(&code).unwrap_or(AnswerError::NotPending)) })
    }

    fn forget_reply(&self, reply: &str) {
        self.replies.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(reply);
    }

    async fn notify(&self, channel: &str, message: &Value) -> Result<(), ReplicaError> {
        self.client().await?.execute("SELECT pg_notify($1, $2)", &[&channel, &message.to_string()]).await?;
        Ok(())
    }

    /// A stop or an answer from another replica.
    pub(super) fn control(self: Arc<Self>, payload: &str) {
        let Ok(message) = serde_json::from_str::<Value>(payload) else { return };
        let Some(state) = self.state.get().and_then(std::sync::Weak::upgrade) else { return };
        match message["kind"].as_str() {
            Some("stop") => {
                if let Some(conversation) = message["conversation"].as_i64()
                    && let Some(turn) = state.turn(conversation)
                {
                    turn.stop();
                    state.pendings.abort(conversation);
                }
            }
            Some("answer") if message["to"].as_str() == Some(self.id.as_str()) => {
                let code = answer_here(&state, &message);
                let reply = json!({"reply": message["reply"], "code": code});
                tokio::spawn(async move {
                    if let Err(err) = self.notify("opsai_reply", &reply).await {
                        super::super::log(&format!("replicas: cannot send an answer's outcome back: {err}"));
                    }
                });
            }
            _ => {}
        }
    }

    /// The outcome of an answer this replica asked another for.
    pub(super) fn reply(&self, payload: &str) {
        let Ok(message) = serde_json::from_str::<Value>(payload) else { return };
        let (Some(reply), Some(code)) = (message["reply"].as_str(), message["code"].as_str()) else { return };
        let waiting = self.replies.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(reply);
        if let Some(sender) = waiting {
            let _ = sender.send(code.to_owned());
        }
    }
}

/// SHA-256 of a command, as hex: how an answer names the command it saw.
fn digest(command: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(command.as_bytes()).iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Takes an answer sent from another replica, by the local rules, for the very request it names
/// and (when the answerer named one) the very command; its outcome as a code.
fn answer_here(state: &crate::modes::serve::state::AppState, message: &Value) -> &'static str {
    let text = |key: &str| message[key].as_str().unwrap_or_default();
    let Some(approval) = decision(text("decision")) else { return AnswerError::NotPending.code() };
    let Some((call_id, conversation, command)) = state.pendings.lookup(text("request_id")) else {
        return AnswerError::NotPending.code();
    };
    if message["command_sha"].as_str().is_some_and(|sha| sha != digest(&command)) {
        return AnswerError::OtherCommand.code();
    }
    let by = Answerer { user: text("user"), operator: message["operator"].as_bool() == Some(true) };
    let target =
        Target { conversation: Some(conversation), command: Some(&command), request: Some(text("request_id")) };
    let confirmed = message["confirmed"].as_bool() == Some(true);
    match state.pendings.answer(&call_id, by, target, approval, confirmed) {
        Ok(()) => "ok",
        Err(err) => err.code(),
    }
}
