//! `POST /api/v2/ai/chat` (a turn, answered as SSE), `/stream` (its events again) and `/stop`.
//!
//! A turn is a task of the server's multi-thread runtime (the gate blocks in `block_in_place`
//! while the browser decides), built on the shared [`crate::runner::Parts`] with its own services.
//! Its events go to the turn's log, which every SSE reader follows; a reader that disconnects
//! changes nothing. `done` is always the last event: the loop's own is held back until the turn
//! is no longer running, so a new message right after it is not refused as busy.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde::Deserialize;
use serde_json::Value;

use super::approvals::BrowserApprover;
use super::auth::{Caller, Principal};
use super::events::Place;
use super::state::AppState;
use super::turn::{Turn, single};
use super::{ApiError, Body, api, events};
use crate::agent::Agent;
use crate::cli::ServeRole;
use crate::protocol::{AgentEvent, TurnOutcome};
use crate::runner::conversation::Conversation;
use crate::tools::{Registry, RunState, Services, ToolsConfig};
use admit::{Accepted, admit, claim, usable};

mod admit;

/// A comment line this often keeps proxies from closing a quiet stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

#[derive(Deserialize)]
pub struct ChatBody {
    conversation_id: i64,
    message: String,
}

fn sse(stream: impl Stream<Item = Result<Event, std::convert::Infallible>> + Send + 'static) -> Response {
    let mut response = Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)).into_response();
    // A reverse proxy in front (nginx) would otherwise hold the events back in its buffer.
    response.headers_mut().insert("x-accel-buffering", axum::http::HeaderValue::from_static("no"));
    response
}

pub async fn chat(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Body(body): Body<ChatBody>,
) -> Result<Response, ApiError> {
    let message = body.message.trim().to_owned();
    if message.is_empty() {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "the message is empty: write what you want to know"));
    }
    let id = body.conversation_id;
    let turn = Arc::new(
        Turn::new(id, caller.principal.user.clone(), state.parts.redactor.clone()).mirrored(state.replicas.clone()),
    );
    let mut accepted = Accepted { state: &state, turn: &turn, claimed: false, started: false };
    let (place, untitled) = match &state.replicas {
        None => {
            let conversation = api::owned(&state, id, &caller).await?;
            let untitled = conversation.title.trim().is_empty();
            let place = Place { cluster: conversation.cluster, hosts: conversation.hosts };
            usable(&state, &place)?;
            admit(&state, &turn)?;
            (place, untitled)
        }
        // With replicas the claim checks the owner in the same statement (one database round trip
        // fewer before the first byte), and before a slot is taken here: stop, delete and stream
        // find a turn by its slot, so a slot must never stand for another user's conversation.
        Some(replicas) => {
            accepted.claimed = true;
            let found = claim(&state, replicas, &turn).await?;
            admit(&state, &turn)?;
            found
        }
    };
    accepted.started = true;
    drop(accepted);
    turn.publish(&events::start(id));
    tokio::spawn(run(state.clone(), turn.clone(), caller.principal, place, message, untitled));
    Ok(sse(turn.stream()))
}

/// The running turn's events so far and then live; a single `done` when none runs.
pub async fn stream(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<i64>,
) -> Result<Response, ApiError> {
    api::readable(&state, id, &caller).await?;
    if let Some(turn) = state.turn(id) {
        return Ok(sse(turn.stream()));
    }
    // A turn another replica runs: its events as that replica keeps them.
    if let Some(replicas) = &state.replicas
        && matches!(replicas.running(id).await, Ok(Some(_)))
    {
        return Ok(sse(replicas.clone().follow(id)));
    }
    Ok(sse(single(&events::done())))
}

/// Interrupts the running turn, like Ctrl-C: a waiting approval is aborted, a command is stopped.
pub async fn stop(
    State(state): State<Arc<AppState>>,
    caller: Caller,
    Path(id): Path<i64>,
) -> Result<StatusCode, ApiError> {
    api::owned(&state, id, &caller).await?;
    if let Some(turn) = state.turn(id) {
        turn.stop();
        state.pendings.abort(id);
    } else if let Some(replicas) = &state.replicas
        && let Err(err) = replicas.stop_elsewhere(id).await
    {
        return Err(ApiError::database_down(
            &format!("conversation {id}: the stop was not sent"),
            &err,
            ", so the stop was not sent",
        ));
    }
    Ok(StatusCode::NO_CONTENT)
}

/// The turn's task: runs it, then ends its stream with `done` once it no longer counts as running.
async fn run(
    state: Arc<AppState>,
    turn: Arc<Turn>,
    principal: Principal,
    place: Place,
    message: String,
    untitled: bool,
) {
    let mut ending = Ending { state: state.clone(), turn: turn.clone(), done: None };
    ending.done = drive(&state, &turn, &principal, place, &message, untitled).await;
}

/// Ends a turn however its task ends (a panic included): it stops counting as running, and its
/// readers get the last event, `done`.
struct Ending {
    state: Arc<AppState>,
    turn: Arc<Turn>,
    done: Option<Value>,
}

impl Drop for Ending {
    fn drop(&mut self) {
        if let Ok(mut turns) = self.state.turns.lock() {
            turns.remove(&self.turn.conversation);
        }
        // No `done` of its own: the turn failed before or without the loop (a panic included).
        let mut fallback = || {
            let mut done = events::done();
            done["outcome"] = "error".into();
            done
        };
        let done = self.done.take().unwrap_or_else(&mut fallback);
        // With replicas, `done` is shown once the turn's claim is given back with it, so a next
        // message sent on seeing it is never refused as busy, here or elsewhere.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) if self.state.replicas.is_some() => {
                let turn = self.turn.clone();
                runtime.spawn(async move { turn.end(&done).await });
            }
            _ => {
                self.turn.publish(&done);
                self.turn.finish();
            }
        }
    }
}

/// One agent turn on the shared parts; returns the loop's `done` (held back), if it sent one.
async fn drive(
    state: &AppState,
    turn: &Arc<Turn>,
    principal: &Principal,
    mut place: Place,
    message: &str,
    untitled: bool,
) -> Option<Value> {
    let parts = &state.parts;
    let id = turn.conversation;
    let role_label = if principal.role == ServeRole::Operator { "operator" } else { "viewer" };
    // One registry for the turn: the agent's tools, whose names are also all telemetry may name.
    let tools = Registry::agent(ToolsConfig { kube_context: place.cluster.clone(), ..parts.tools_config(state.offer) });
    let mut trace = state.telemetry.turn(id, role_label, tools.names());
    // The host set is read again for each turn: hosts taken out of the inventory are not run on.
    let fleet = match &place.hosts {
        None => None,
        Some(pattern) => match tokio::task::block_in_place(|| state.host_sets.select(&parts.config, pattern)) {
            Ok(fleet) => Some(fleet),
            Err(message) => {
                turn.publish(&events::error(&format!(
                    "this conversation's host set `{pattern}` cannot be used now: {message}"
                )));
                trace.end("error");
                return None;
            }
        },
    };
    if let Some(fleet) = &fleet {
        place.hosts = Some(fleet.label());
    }
    let mut conversation = Conversation::new(Some(&state.store));
    // An untitled conversation is named by its first message, in the same write as the message
    // (not before the answer's first byte): a refused message, or one not stored, names nothing.
    // The store redacts the whole text before it cuts it, so a secret across the cut is not kept
    // in part.
    if untitled {
        conversation.name_with_next_message(message.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let mut history = match tokio::task::block_in_place(|| conversation.resume(id)) {
        Ok((_, messages)) => messages,
        Err(err) => {
            turn.publish(&events::error(&err.to_string()));
            trace.end("error");
            return None;
        }
    };
    // The user's role now: one removed, or whose users file fails to load, is not asked for.
    let role = || state.auth.current(principal.clone()).ok().flatten().map(|now| now.role);
    let approver = BrowserApprover {
        turn: turn.clone(),
        pendings: state.pendings.clone(),
        role: &role,
        timeout: state.approval_timeout,
        decided: std::sync::Mutex::default(),
        telemetry: &state.telemetry,
    };
    let services = Services {
        approver: &approver,
        user: Some(principal.user.clone()),
        fleet: fleet.as_ref(),
        ..parts.services(parts.mode(false, false), conversation.label(), &turn.interrupts)
    };
    let operator = principal.role == ServeRole::Operator;
    let grants = super::grants::take(state, id, principal).await;
    // On a fleet the prompt says where commands run, and each host starts in its login directory.
    let (environment, cwd) = match &fleet {
        Some(fleet) => (format!("{}{}", state.environment, fleet.environment()), std::path::PathBuf::from(".")),
        None => (state.environment.clone(), state.cwd.clone()),
    };
    let mut agent = Agent {
        model: &parts.model,
        recorder: Some(&conversation),
        services,
        tools,
        settings: parts.settings(&parts.config.llm.model, &environment),
        state: RunState { cwd, grants, ..RunState::default() },
    };
    let mut done = None;
    let mut sink = |event: AgentEvent| {
        trace.event(&event);
        match events::data(&event, &place) {
            Some(data) if data["type"] == "done" => done = Some(data),
            Some(data) => turn.publish(&data),
            None => {}
        }
    };
    // A model failure was already sent as an `error` event; the stream ends with `done` either way,
    // saying how the turn ended (a /stream reader cannot tell a stopped turn otherwise).
    let ended = agent.run_turn(&mut history, message, &mut sink).await;
    let outcome = match ended {
        _ if turn.interrupts.turn.is_cancelled() => "stopped",
        Ok(TurnOutcome::Answer(_) | TurnOutcome::Proposed { .. }) => "answer",
        Ok(TurnOutcome::Aborted) => "aborted",
        Ok(TurnOutcome::StepLimit) => "step_limit",
        Err(_) => "error",
    };
    trace.end(outcome);
    let mut done = done.unwrap_or_else(events::done);
    done["outcome"] = outcome.into();
    if operator {
        super::grants::keep(state, turn, principal, std::mem::take(&mut agent.state.grants)).await;
    }
    drop(agent);
    if let Some(warning) = conversation.take_warning() {
        store_failed(turn, &warning);
    }
    Some(done)
}

/// A turn whose messages could not be stored (a full disk, a read-only or locked database) says so
/// in the log and to the browser, before its `done`: the answer shown is not kept.
fn store_failed(turn: &Turn, warning: &str) {
    super::log(&format!("conversation {}: {warning}", turn.conversation));
    turn.publish(&serde_json::json!({
        "type": "error",
        "kind": "store_failed",
        "content": format!(
            "{warning}. What this turn showed is not stored: tell the server's admin (its log says more), and do not \
             rely on finding it here later"
        ),
    }));
}
