//! The running turn of each conversation across replicas: claimed in one row (so a second
//! message on another replica is refused as busy), its events kept in order for streams opened on
//! other replicas, released after its last event, and ended by the others when its replica dies.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event;
use futures_util::Stream;
use serde_json::{Value, json};

use super::{DEAD_AFTER, Op, ReplicaError, Replicas, now_ms};

/// A follower reads the table again at least this often, notification or not.
const POLL: Duration = Duration::from_secs(2);

/// The outcome a turn of a gone replica ends with.
pub const INTERRUPTED: &str = "interrupted";

impl Replicas {
    /// Claims `conversation`'s turn for this replica: `false` when a turn runs there already (on
    /// any replica). The previous turn's events go.
    pub async fn claim(&self, conversation: i64, owner: &str) -> Result<bool, ReplicaError> {
        let row = self
            .client()
            .await?
            .query_one(
                "WITH claimed AS (
                    INSERT INTO web_turns (conversation, replica, owner, started_ms) VALUES ($1, $2, $3, $4)
                    ON CONFLICT DO NOTHING RETURNING conversation
                 ), cleared AS (
                    DELETE FROM web_turn_events WHERE conversation IN (SELECT conversation FROM claimed)
                 )
                 SELECT count(*) FROM claimed",
                &[&conversation, &self.id, &owner, &now_ms()],
            )
            .await?;
        Ok(row.get::<_, i64>(0) == 1)
    }

    /// Gives the claim back without a turn (the turn could not start after all).
    pub fn release(&self, conversation: i64) {
        self.send(Op::Release { conversation });
    }

    /// Keeps the `seq`th event of this replica's turn of `conversation` for readers elsewhere.
    pub fn event(&self, conversation: i64, seq: usize, data: Arc<str>) {
        self.send(Op::Event { conversation, seq: seq as i64, data });
    }

    /// The replica running `conversation`'s turn, when one does (here or elsewhere).
    pub async fn running(&self, conversation: i64) -> Result<Option<String>, ReplicaError> {
        let row = self
            .client()
            .await?
            .query_opt("SELECT replica FROM web_turns WHERE conversation = $1", &[&conversation])
            .await?;
        Ok(row.map(|row| row.get(0)))
    }

    /// Returns once no turn of `conversation` runs on any replica, or `limit` has passed.
    pub async fn ended(&self, conversation: i64, limit: Duration) {
        let mut waker = self.waker(conversation);
        let _ = tokio::time::timeout(limit, async {
            while matches!(self.running(conversation).await, Ok(Some(_))) {
                let _ = tokio::time::timeout(POLL, waker.changed()).await;
            }
        })
        .await;
    }

    /// The events of `conversation`'s turn running on another replica: those so far, then each
    /// as it is kept, ending after `done` (or when the turn is gone without one).
    pub fn follow(
        self: Arc<Self>,
        conversation: i64,
    ) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
        let waker = self.waker(conversation);
        let state = (self, waker, 0i64, Vec::<String>::new(), false);
        futures_util::stream::unfold(state, move |(replicas, mut waker, mut next, mut ready, mut ended)| async move {
            loop {
                if !ready.is_empty() {
                    let data = ready.remove(0);
                    let event = Event::default().event("message").data(data);
                    return Some((Ok(event), (replicas, waker, next, ready, ended)));
                }
                if ended {
                    return None;
                }
                match replicas.events_after(conversation, next).await {
                    Ok((events, running)) => {
                        for (seq, data) in events {
                            next = seq + 1;
                            ended |= is_done(&data);
                            ready.push(data);
                        }
                        if !ready.is_empty() {
                            continue;
                        }
                        if !running {
                            // Released between two reads: one more read takes what came before.
                            let (events, _) = replicas.events_after(conversation, next).await.unwrap_or_default();
                            ready.extend(events.into_iter().map(|(_, data)| data));
                            ended = true;
                            if !ready.iter().any(|data| is_done(data)) {
                                ready.push(super::super::events::done().to_string());
                            }
                            continue;
                        }
                    }
                    Err(err) => {
                        super::super::log(&format!(
                            "replicas: cannot read conversation {conversation}'s events: {err}"
                        ));
                    }
                }
                let _ = tokio::time::timeout(POLL, waker.changed()).await;
            }
        })
    }

    /// The events from `seq` on, and whether the turn still runs.
    pub(super) async fn events_after(
        &self,
        conversation: i64,
        seq: i64,
    ) -> Result<(Vec<(i64, String)>, bool), ReplicaError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT seq, data FROM web_turn_events WHERE conversation = $1 AND seq >= $2 ORDER BY seq",
                &[&conversation, &seq],
            )
            .await?;
        let running = client.query_opt("SELECT 1 FROM web_turns WHERE conversation = $1", &[&conversation]).await?;
        Ok((rows.iter().map(|row| (row.get(0), row.get(1))).collect(), running.is_some()))
    }

    /// Ends the turns of replicas silent for [`DEAD_AFTER`]: each gets an `interrupted` error and
    /// its `done`, its approvals go, and its conversation takes a new message.
    pub(super) async fn reap(&self) -> Result<(), ReplicaError> {
        let client = self.client().await?;
        let cutoff = now_ms() - DEAD_AFTER.as_millis() as i64;
        let error = json!({
            "type": "error",
            "kind": INTERRUPTED,
            "content": "the server running this turn stopped before it ended: what it showed up to here is kept; \
                        send the message again to continue",
        });
        let mut done = super::super::events::done();
        done["outcome"] = INTERRUPTED.into();
        // One statement: a reader sees the turn running, or ended with both events, never between.
        let gone = client
            .query(
                "WITH gone AS (
                    DELETE FROM web_turns t WHERE NOT EXISTS (
                        SELECT 1 FROM web_replicas r WHERE r.id = t.replica AND r.seen_ms >= $1
                    ) RETURNING conversation, replica
                 ), next AS (
                    SELECT g.conversation, g.replica, COALESCE(
                        (SELECT MAX(e.seq) + 1 FROM web_turn_events e WHERE e.conversation = g.conversation), 0
                    ) AS seq FROM gone g
                 ), kept AS (
                    INSERT INTO web_turn_events (conversation, seq, data)
                    SELECT conversation, seq, $2 FROM next UNION ALL SELECT conversation, seq + 1, $3 FROM next
                    ON CONFLICT DO NOTHING
                 ), dropped AS (
                    DELETE FROM web_pendings p WHERE p.replica IN (SELECT replica FROM gone)
                 )
                 SELECT conversation, replica FROM next",
                &[&cutoff, &error.to_string(), &done.to_string()],
            )
            .await?;
        for row in &gone {
            let (conversation, replica): (i64, String) = (row.get(0), row.get(1));
            client.execute("SELECT pg_notify('opsai_events', $1)", &[&conversation.to_string()]).await?;
            super::super::log(&format!(
                "conversation {conversation}: its turn ended with replica {replica}, which stopped"
            ));
        }
        client.execute("DELETE FROM web_replicas WHERE seen_ms < $1", &[&(cutoff - 3_600_000)]).await?;
        // A finished turn's events serve nobody once its last readers are done with them.
        client
            .execute(
                "DELETE FROM web_turn_events e WHERE e.kept_ms < $1
                 AND NOT EXISTS (SELECT 1 FROM web_turns t WHERE t.conversation = e.conversation)",
                &[&(now_ms() - 60_000)],
            )
            .await?;
        Ok(())
    }
}

fn is_done(data: &str) -> bool {
    serde_json::from_str::<Value>(data).is_ok_and(|value| value["type"] == "done")
}
