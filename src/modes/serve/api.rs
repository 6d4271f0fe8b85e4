//! The conversation routes (seed 002 §8.1) and approvals. Every route is authorised per
//! conversation: a user sees only their own (another's is 404, as one that does not exist).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::approvals::{AnswerError, Answerer, Target, decision};
use super::auth::Caller;
use super::quota::{MAX_PAGE, PAGE};
use super::replicas::AnswerRequest;
use super::screen;
use super::state::AppState;
use super::{ApiError, Body, blocking};
use crate::cli::ServeRole;
use crate::protocol::Role;
use crate::store::sessions::{Cursor, NewConversation, StoredMessage, WebConversation};

/// Characters kept of a title given at creation.
const TITLE_CHARS: usize = 200;

/// The conversation `id` when it is the caller's; 404 alike when there is none and when it is
/// another's, so the answer does not tell which ids exist.
pub async fn owned(state: &Arc<AppState>, id: i64, caller: &Caller) -> Result<WebConversation, ApiError> {
    let found = blocking(state, move |state| state.store.get_web(id)).await?.map_err(|err| ApiError::internal(&err))?;
    found
        .filter(|conversation| conversation.user.as_deref() == Some(caller.principal.user.as_str()))
        .ok_or_else(|| ApiError::not_found("conversation"))
}

/// Conversation `id` to read: the caller's own, or for an operator any user's web conversation
/// (read-only: asking, stopping and deleting stay the owner's). Terminal conversations are no
/// one's on the web.
pub async fn readable(state: &Arc<AppState>, id: i64, caller: &Caller) -> Result<WebConversation, ApiError> {
    if caller.principal.role != ServeRole::Operator {
        return owned(state, id, caller).await;
    }
    let found = blocking(state, move |state| state.store.get_web(id)).await?.map_err(|err| ApiError::internal(&err))?;
    found.filter(|conversation| conversation.user.is_some()).ok_or_else(|| ApiError::not_found("conversation"))
}

/// `GET /api/v2/ai/conversations/{id}`: one conversation (an operator may read anyone's).
pub async fn one(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<i64>,
) -> Result<Response, ApiError> {
    let conversation = readable(&state, id, &caller).await?;
    Ok(Json(object(&state, &conversation)).into_response())
}

fn object(state: &AppState, conversation: &WebConversation) -> Value {
    json!({
        "id": conversation.id,
        "title": conversation.title,
        "cluster_id": conversation.cluster,
        "hosts": conversation.hosts,
        "user_id": conversation.user,
        "message_count": conversation.message_count,
        "created_at": conversation.created_at,
        "updated_at": conversation.updated_at,
        "running": state.turn(conversation.id).is_some(),
    })
}

#[derive(Deserialize)]
pub struct CreateBody {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    cluster_id: Option<String>,
    /// One of `opsai serve --hosts`' patterns; none (or empty): the server itself.
    #[serde(default)]
    hosts: Option<String>,
}

pub async fn create(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Body(body): Body<CreateBody>,
) -> Result<Response, ApiError> {
    let clusters = state.clusters();
    let cluster = body.cluster_id.filter(|c| !c.is_empty() && c != "default");
    if let Some(cluster) = &cluster
        && !clusters.contains(cluster)
    {
        let known =
            if clusters.is_empty() { "none are configured (kube.contexts)".to_owned() } else { clusters.join(", ") };
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("cluster_id `{cluster}` is not one of kube.contexts: {known}"),
        ));
    }
    let hosts = body.hosts.filter(|pattern| !pattern.is_empty());
    if let Some(pattern) = &hosts
        && !state.host_sets.is_offered(pattern)
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("hosts `{pattern}` is not a host set this server offers: {}", state.host_sets.names()),
        ));
    }
    let title: String = body.title.unwrap_or_default().trim().chars().take(TITLE_CHARS).collect();
    let user = caller.principal.user.clone();
    state.quota.admit(&user)?;
    let made = blocking(&state, move |state| {
        let _gate = state.quota.gate.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.store.count_for_user(&user)? >= state.quota.max {
            return Ok(None);
        }
        let model = state.parts.config.llm.model.clone();
        let cwd = state.cwd.to_string_lossy().into_owned();
        let new = NewConversation {
            first_request: &title,
            cwd: &cwd,
            host: "web",
            model: &model,
            user: Some(&user),
            cluster: cluster.as_deref(),
            hosts: hosts.as_deref(),
        };
        let id = state.store.create(&new)?;
        state.store.get_web(id).map(Some)
    })
    .await?
    .map_err(|err| ApiError::internal(&err))?;
    let conversation = made.ok_or_else(|| state.quota.full())?;
    let conversation = conversation.ok_or_else(|| ApiError::internal(&"a new conversation vanished"))?;
    Ok((StatusCode::CREATED, Json(object(&state, &conversation))).into_response())
}

/// `?limit=N&before=CURSOR`: one page of the list.
#[derive(Deserialize)]
pub struct Page {
    limit: Option<String>,
    before: Option<String>,
}

/// The caller's conversations, newest first, a page at a time: a `Link: <…>; rel="next"` header
/// names the next page when there is one.
pub async fn list(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Query(page): Query<Page>,
) -> Result<Response, ApiError> {
    let bad = || {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "limit must be a number from 1 to {MAX_PAGE}, and before the cursor a previous page's Link header                  gave"
            ),
        )
    };
    let limit = match page.limit.as_deref() {
        None => PAGE,
        Some(text) => text.parse::<usize>().ok().filter(|n| (1..=MAX_PAGE).contains(n)).ok_or_else(bad)?,
    };
    let before = page.before.as_deref().map(|text| text.parse::<Cursor>().map_err(|()| bad())).transpose()?;
    let user = caller.principal.user.clone();
    let (conversations, next) = blocking(&state, move |state| state.store.page_for_user(&user, limit, before))
        .await?
        .map_err(|err| ApiError::internal(&err))?;
    let list: Vec<Value> = conversations.iter().map(|c| object(&state, c)).collect();
    let mut response = Json(list).into_response();
    if let Some(next) = next
        && let Ok(link) =
            HeaderValue::from_str(&format!("</api/v2/ai/conversations?limit={limit}&before={next}>; rel=\"next\""))
    {
        response.headers_mut().insert(header::LINK, link);
    }
    Ok(response)
}

pub async fn messages(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<i64>,
) -> Result<Response, ApiError> {
    readable(&state, id, &caller).await?;
    let messages = blocking(&state, move |state| state.store.messages_with_meta(id))
        .await?
        .map_err(|err| ApiError::internal(&err))?;
    let list: Vec<Value> = messages.iter().map(|m| message(&state, m)).collect();
    Ok(Json(list).into_response())
}

/// A stored message; a tool call holding a command carries its risk as the policy rates it now.
fn message(state: &AppState, stored: &StoredMessage) -> Value {
    let message = &stored.message;
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let calls = (!message.tool_calls.is_empty()).then(|| {
        message
            .tool_calls
            .iter()
            .map(|call| {
                let mut arguments = call.arguments.clone();
                screen::model_text(&mut arguments);
                let mut value = json!({"id": call.id, "name": call.name, "arguments": arguments});
                if let Some(command) = call.arguments.get("command").and_then(Value::as_str) {
                    let assessment = crate::policy::assess(command, &state.parts.policy);
                    value["risk"] = assessment.risk.as_str().into();
                    // What runs, as the approval showed it; `arguments.command` is as written (made visible).
                    value["command"] = assessment.sanitized.into();
                }
                value
            })
            .collect::<Vec<_>>()
    });
    json!({
        "id": stored.id,
        "role": role,
        "content": if message.role == Role::Assistant { crate::ui::display::command(&message.content) } else { message.content.as_str().into() },
        "tool_calls": calls,
        "tool_call_id": message.tool_call_id,
        "created_at": stored.created_at,
    })
}

/// Deletes a conversation; a running turn is stopped first and given time to end.
pub async fn remove(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<i64>,
) -> Result<StatusCode, ApiError> {
    owned(&state, id, &caller).await?;
    if let Some(turn) = state.turn(id) {
        // Marked before the grants below are dropped, so a turn outlasting the wait keeps none.
        turn.delete();
        state.pendings.abort(id);
        let _ = tokio::time::timeout(std::time::Duration::from_secs(10), turn.finished()).await;
    } else if let Some(replicas) = &state.replicas
        && matches!(replicas.running(id).await, Ok(Some(_)))
    {
        // Running on another replica: stopped there, and given the same time to end.
        if let Err(err) = replicas.stop_elsewhere(id).await {
            super::log(&format!("conversation {id}: the stop before its deletion was not sent: {err}"));
        }
        replicas.ended(id, std::time::Duration::from_secs(10)).await;
    }
    blocking(&state, move |state| state.store.delete(id)).await?.map_err(|err| ApiError::internal(&err))?;
    super::grants::forget(&state, id).await;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize)]
pub struct ApproveBody {
    decision: String,
    #[serde(default)]
    confirm: Option<String>,
    /// Which conversation: required when the same call id waits in two of the caller's.
    #[serde(default)]
    conversation_id: Option<i64>,
    /// The command the answerer saw (the request event's `command`): it must be the one waiting.
    #[serde(default)]
    command: Option<String>,
    /// The request event's `request_id`: required for another user's request.
    #[serde(default)]
    request_id: Option<String>,
}

/// An operator's answer to an approval: one of their own turns, or any user's waiting request
/// (a viewer's waits for an operator).
pub async fn approve(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(call_id): Path<String>,
    Body(body): Body<ApproveBody>,
) -> Result<StatusCode, ApiError> {
    if caller.principal.role != ServeRole::Operator {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "only an operator can approve commands"));
    }
    let approval = decision(&body.decision).ok_or_else(|| {
        ApiError::new(StatusCode::BAD_REQUEST, "decision must be \"approve\", \"approve_session\" or \"deny\"")
    })?;
    let confirmed = body.confirm.as_deref() == Some("yes");
    let target = Target {
        conversation: body.conversation_id,
        command: body.command.as_deref(),
        request: body.request_id.as_deref(),
    };
    let by = Answerer { user: &caller.principal.user, operator: true };
    let mut answered = state.pendings.answer(&call_id, by, target, approval, confirmed);
    // Not waiting here: perhaps on the replica running that turn.
    if answered == Err(AnswerError::NotPending)
        && let Some(replicas) = &state.replicas
    {
        let elsewhere = AnswerRequest { call_id: &call_id, by, target, decision: &body.decision, confirmed };
        answered = replicas.answer_elsewhere(&elsewhere).await.map_err(|err| {
            super::log(&format!("approval {call_id}: {err}"));
            ApiError::new(StatusCode::SERVICE_UNAVAILABLE, format!("{err}: try again in a moment"))
        })?;
    }
    match answered {
        Ok(()) => Ok(StatusCode::NO_CONTENT),
        Err(AnswerError::NotPending) => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no approval waits under that id (answered, timed out or stopped already)",
        )),
        Err(AnswerError::NeedsConfirm) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "this is a high-risk command: send \"confirm\": \"yes\" with the approval (nothing was decided)",
        )),
        Err(AnswerError::TimedOut) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "this approval timed out before your answer and was refused: nothing ran; ask again in the chat",
        )),
        Err(AnswerError::Ambiguous) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "approvals with that id wait in more than one conversation: send its \"conversation_id\" \
             (nothing was decided)",
        )),
        Err(AnswerError::NoGrant) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "this command cannot be approved for the whole conversation: send \"approve\" or \"deny\" (nothing \
             was decided)",
        )),
        Err(AnswerError::NeedsRequestId) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "this is another user's request: send its \"request_id\" (from the request event or GET \
             /api/v2/ai/approvals) so the answer is for the very request you saw (nothing was decided)",
        )),
        Err(AnswerError::OthersSession) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "\"approve_session\" is for your own conversations: send \"approve\" or \"deny\" for another user's \
             request (nothing was decided)",
        )),
        Err(AnswerError::OtherCommand) => Err(ApiError::new(
            StatusCode::CONFLICT,
            "the approval waiting under that id is for another command than the one sent: reload and answer \
             the request shown (nothing was decided)",
        )),
    }
}

/// `GET /api/v2/ai/approvals`: every request waiting for an answer, across conversations and
/// users (operators only), oldest first, each with who asked (`asked_by`) and since when (`since`).
pub async fn queue(State(state): State<Arc<AppState>>, caller: Caller) -> Result<Response, ApiError> {
    if caller.principal.role != ServeRole::Operator {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "only an operator can see the approvals waiting"));
    }
    let mut queue = state.pendings.queue();
    if let Some(replicas) = &state.replicas {
        // Every replica's, with this one's that are not written yet.
        let shared = replicas.queue().await.map_err(|err| ApiError::database_down("approvals", &err, ""))?;
        let known: std::collections::HashSet<String> =
            shared.iter().filter_map(|entry| entry["request_id"].as_str().map(str::to_owned)).collect();
        queue.retain(|entry| entry["request_id"].as_str().is_none_or(|id| !known.contains(id)));
        queue.extend(shared);
        queue.sort_by_key(|entry| entry["since"].as_u64().unwrap_or(0));
    }
    Ok(Json(queue).into_response())
}
