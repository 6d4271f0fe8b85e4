//! "Always this session" grants: an operator's, per conversation, kept between its turns. With
//! `--database` they live in the database, so the next turn finds them on whichever replica the
//! proxy sends it to; otherwise in this server's memory.

use std::collections::HashSet;

use super::auth::Principal;
use super::state::AppState;
use super::turn::Turn;
use crate::cli::ServeRole;

pub type Grants = std::sync::Mutex<std::collections::HashMap<(i64, String), HashSet<String>>>;

/// The grants a turn of `conversation` by `principal` starts with. Grants are an operator's:
/// whoever is not one now (demoted, or a new user under a removed one's name) neither uses nor
/// keeps them.
/// A database that cannot be read gives none (the user is asked again).
pub async fn take(state: &AppState, conversation: i64, principal: &Principal) -> HashSet<String> {
    let (user, operator) = (principal.user.as_str(), principal.role == ServeRole::Operator);
    if let Some(replicas) = &state.replicas {
        let found = if operator {
            replicas.grants(conversation, user, principal.credential).await
        } else {
            replicas.drop_grants(conversation, user).await.map(|()| HashSet::new())
        };
        return found.unwrap_or_else(|err| {
            super::log(&format!("conversation {conversation}: grants not read: {err}"));
            HashSet::new()
        });
    }
    let key = (conversation, user.to_owned());
    match state.grants.lock() {
        Ok(mut grants) if !operator => {
            grants.remove(&key);
            HashSet::new()
        }
        Ok(grants) => grants.get(&key).cloned().unwrap_or_default(),
        Err(_) => HashSet::new(),
    }
}

/// Keeps a turn's grants for the conversation's next turns, unless it is being deleted. In the
/// database only while the turn still holds its claim: a delete (which waits for the turn to end)
/// then drops them, on any replica.
pub async fn keep(state: &AppState, turn: &Turn, principal: &Principal, given: HashSet<String>) {
    let user = principal.user.as_str();
    if let Some(replicas) = &state.replicas {
        if !turn.is_deleted()
            && let Err(err) =
                replicas.keep_grants(turn.conversation, user, principal.credential, &turn.claim, &given).await
        {
            super::log(&format!("conversation {}: grants not kept: {err}", turn.conversation));
        }
        return;
    }
    keep_local(&state.grants, turn, (turn.conversation, user.to_owned()), given);
}

/// Checked under the lock the delete drops the grants with, so they are dropped or never kept.
fn keep_local(grants: &Grants, turn: &Turn, key: (i64, String), given: HashSet<String>) {
    if let Ok(mut grants) = grants.lock()
        && !turn.is_deleted()
    {
        grants.insert(key, given);
    }
}

/// Drops every grant of a deleted conversation (with `--database`, its turn's claim too).
pub async fn forget(state: &AppState, conversation: i64) {
    if let Ok(mut grants) = state.grants.lock() {
        grants.retain(|(id, _), _| *id != conversation);
    }
    if let Some(replicas) = &state.replicas
        && let Err(err) = replicas.forget_conversation(conversation).await
    {
        super::log(&format!("conversation {conversation}: its grants and turn were not dropped: {err}"));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_turn_of_a_deleted_conversation_keeps_no_grants() {
        let grants = Grants::default();
        let given = || HashSet::from(["run_command:touch".to_owned()]);
        let turn = Turn::new(1, "alice".into(), Arc::default());
        keep_local(&grants, &turn, (1, "alice".into()), given());
        assert_eq!(grants.lock().unwrap().len(), 1);
        grants.lock().unwrap().clear();
        turn.delete();
        keep_local(&grants, &turn, (1, "alice".into()), given());
        assert!(grants.lock().unwrap().is_empty());
    }
}
