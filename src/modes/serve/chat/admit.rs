//! Whether a chat message starts a turn, decided before its answer's first byte: the caller's
//! conversation (another's is 404, as one that does not exist), usable on this server, a turn slot
//! here, and with `--database` the conversation's one turn across replicas, claimed in the same
//! statement as the owner check (one database round trip).

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;

use super::super::ApiError;
use super::super::events::Place;
use super::super::replicas::{Replicas, Usable};
use super::super::state::AppState;
use super::super::turn::Turn;

/// Turns one user may have running at once (users mode); all users together: `--max-turns`.
const TURNS_PER_USER: usize = 4;

/// Takes a turn slot on this server for `turn` (under the lock shutdown's stop_all takes: a turn is
/// either refused here or stopped there), or the answer refusing it.
pub(super) fn admit(state: &AppState, turn: &Arc<Turn>) -> Result<(), ApiError> {
    let mut turns = state.turns.lock().map_err(|err| ApiError::internal(&err))?;
    if state.shutdown.is_cancelled() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is stopping: try again once it is back",
        ));
    }
    // The token's one user (`owner`) is bounded by the overall limit only; everyone else (password
    // and single sign-on users alike) by their own too.
    let user = &turn.owner;
    let bounded = *user != super::super::auth::owner().user;
    let own = turns.values().filter(|t| t.owner == *user).count();
    if (bounded && own >= TURNS_PER_USER) || turns.len() >= state.max_turns {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "too many turns running ({TURNS_PER_USER} per user, {} in all on this server): wait for one to end \
                 or stop one",
                state.max_turns
            ),
        )
        .retry_after(Duration::from_secs(5)));
    }
    if turns.contains_key(&turn.conversation) {
        return Err(busy());
    }
    turns.insert(turn.conversation, turn.clone());
    Ok(())
}

/// Claims the turn's conversation across replicas when it is the caller's and can be used here:
/// where it runs, and whether it has no title yet.
pub(super) async fn claim(state: &AppState, replicas: &Replicas, turn: &Turn) -> Result<(Place, bool), ApiError> {
    let id = turn.conversation;
    let (clusters, host_sets) = (state.clusters(), state.host_sets.patterns());
    let usable_here = Usable { clusters: &clusters, host_sets: &host_sets };
    let found = replicas
        .claim(id, &turn.owner, &turn.claim, usable_here)
        .await
        .map_err(|err| ApiError::database_down(&format!("conversation {id}"), &err, ""))?
        .ok_or_else(|| ApiError::not_found("conversation"))?;
    let place = Place { cluster: found.cluster, hosts: found.hosts };
    // Not claimed: it cannot be used here (said as alone), or a turn runs there.
    usable(state, &place)?;
    if !found.claimed {
        return Err(busy());
    }
    Ok((place, found.title.trim().is_empty()))
}

fn busy() -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "a turn is already running in this conversation: wait for it (GET …/stream) or stop it (POST …/stop)",
    )
}

/// `Err` (409) when the conversation's cluster or host set is no longer offered by this server.
pub(super) fn usable(state: &AppState, place: &Place) -> Result<(), ApiError> {
    let clusters = state.clusters();
    if let Some(cluster) = &place.cluster
        && !clusters.is_empty()
        && !clusters.contains(cluster)
    {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "this conversation's cluster `{cluster}` is no longer in kube.contexts ({}): start a new \
                 conversation on one of those, or add it back to the config",
                clusters.join(", ")
            ),
        ));
    }
    if let Some(pattern) = &place.hosts
        && !state.host_sets.is_offered(pattern)
    {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "this conversation's host set `{pattern}` is no longer offered ({}): start a new conversation \
                 on one of those, or start the server with `--hosts {pattern}` again",
                state.host_sets.names()
            ),
        ));
    }
    Ok(())
}

/// A turn accepted but not started yet: given back (here and in the database) unless it starts,
/// however the request ends (refused, failed, or its client gone mid-request), so no slot and no
/// claim is left taken.
pub(super) struct Accepted<'a> {
    pub state: &'a AppState,
    pub turn: &'a Arc<Turn>,
    /// A claim was (perhaps) made in the database.
    pub claimed: bool,
    pub started: bool,
}

impl Drop for Accepted<'_> {
    fn drop(&mut self) {
        if self.started {
            return;
        }
        // Only this turn's own slot: a refusal because another turn holds the conversation's
        // slot must leave that one alone.
        if let Ok(mut turns) = self.state.turns.lock()
            && turns.get(&self.turn.conversation).is_some_and(|held| Arc::ptr_eq(held, self.turn))
        {
            turns.remove(&self.turn.conversation);
        }
        if self.claimed
            && let Some(replicas) = &self.state.replicas
        {
            replicas.release(self.turn.conversation, &self.turn.claim);
        }
    }
}
