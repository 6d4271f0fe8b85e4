//! The running turn of each conversation across replicas: claimed in one row (so a second
//! message on another replica is refused as busy), its events kept in order for streams opened on
//! other replicas, released after its last event, and ended by the others when its replica dies.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::Event;
use futures_util::Stream;
use serde_json::{Value, json};

use super::{DEAD_AFTER, Op, ReplicaError, Replicas};

/// A follower reads the table again at least this often, notification or not.
const POLL: Duration = Duration::from_secs(2);

/// The outcome a turn of a gone replica ends with.
pub const INTERRUPTED: &str = "interrupted";

/// Where a conversation may run on this server: `kube.contexts` (empty: any cluster) and the
/// host sets offered.
#[derive(Clone, Copy)]
pub struct Usable<'a> {
    pub clusters: &'a [String],
    pub host_sets: &'a [String],
}

/// The caller's conversation as a claim found it.
#[derive(Debug)]
pub struct Claimed {
    pub title: String,
    pub cluster: Option<String>,
    pub hosts: Option<String>,
    /// This turn holds the conversation now.
    pub claimed: bool,
}

impl Replicas {
    /// Claims `conversation`'s turn for this replica under `claim` (the turn's own token), in one
    /// statement with the owner check: only a conversation of `owner`'s is claimed, and only when
    /// it can be used here (its cluster among `usable.clusters`, or none are configured; its host
    /// set among `usable.host_sets`). `None`: no conversation of that id is `owner`'s (none, or
    /// another's). `Some` with `claimed` false: a turn runs there already (on any replica), or it
    /// cannot be used here (the caller tells which from what comes back). The previous turn's
    /// events go with a claim made.
    pub async fn claim(
        &self,
        conversation: i64,
        owner: &str,
        claim: &Arc<str>,
        usable: Usable<'_>,
    ) -> Result<Option<Claimed>, ReplicaError> {
        use crate::store::sessions::{pg_decode, pg_encode};
        let encoded = |list: &[String]| list.iter().map(|text| pg_encode(text).into_owned()).collect::<Vec<_>>();
        let (clusters, host_sets) = (encoded(usable.clusters), encoded(usable.host_sets));
        let user = pg_encode(owner);
        // Counted as live before the row exists: the heartbeat never gives back a claim being made.
        self.lock_claims().insert(claim.clone());
        let made = self
            .client()
            .await?
            .query_opt(
                // The conversations table is the sessions store's, in the same database.
                "WITH mine AS (
                    SELECT title, cluster_id, hosts,
                        (cluster_id IS NULL OR cardinality($6::TEXT[]) = 0 OR cluster_id = ANY($6::TEXT[]))
                        AND (hosts IS NULL OR hosts = ANY($7::TEXT[])) AS usable
                    FROM conversations WHERE id = $1 AND user_id = $8
                 ), claimed AS (
                    INSERT INTO web_turns (conversation, replica, claim, owner, started_ms)
                    SELECT $1, $2, $3, $4, $5 FROM mine WHERE usable
                    ON CONFLICT DO NOTHING RETURNING conversation
                 ), cleared AS (
                    DELETE FROM web_turn_events WHERE conversation IN (SELECT conversation FROM claimed)
                 )
                 SELECT title, cluster_id, hosts, (SELECT count(*) FROM claimed) FROM mine",
                &[
                    &conversation,
                    &self.id,
                    &&**claim,
                    &owner,
                    &crate::store::unix_ms(),
                    &clusters,
                    &host_sets,
                    &user.as_ref(),
                ],
            )
            .await;
        let found = made.map(|row| {
            row.map(|row| Claimed {
                title: pg_decode(row.get(0)),
                cluster: row.get::<_, Option<String>>(1).map(pg_decode),
                hosts: row.get::<_, Option<String>>(2).map(pg_decode),
                claimed: row.get::<_, i64>(3) == 1,
            })
        });
        if !matches!(found, Ok(Some(Claimed { claimed: true, .. }))) {
            self.lock_claims().remove(claim);
        }
        Ok(found?)
    }

    /// Gives the claim back without a turn (the turn could not start after all).
    pub fn release(&self, conversation: i64, claim: &Arc<str>) {
        self.send(Op::Release { conversation, claim: claim.clone() });
    }

    /// Keeps the `seq`th event of this replica's turn of `conversation` for readers elsewhere.
    pub fn event(&self, conversation: i64, claim: &Arc<str>, seq: usize, data: Arc<str>) {
        self.send(Op::Event { conversation, claim: claim.clone(), seq: seq as i64, data });
    }

    /// Keeps the turn's last event and releases its claim in one write; returns once it is made
    /// (or after 5 s: the heartbeat then gives the claim back).
    pub async fn finish(&self, conversation: i64, claim: &Arc<str>, seq: usize, data: Arc<str>) {
        let (done, made) = tokio::sync::oneshot::channel();
        self.send(Op::Finish { conversation, claim: claim.clone(), seq: seq as i64, data, done: Some(done) });
        let _ = tokio::time::timeout(Duration::from_secs(5), made).await;
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
    /// as it is kept, ending after `done`, when the turn is gone without one, when another turn
    /// holds the conversation, or when this server stops.
    pub fn follow(
        self: Arc<Self>,
        conversation: i64,
    ) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static {
        let waker = self.waker(conversation);
        let follower =
            Follower { replicas: self, conversation, waker, next: 0, claim: None, ready: Vec::new(), ended: false };
        futures_util::stream::unfold(follower, |mut follower| async move {
            let data = follower.next_event().await?;
            Some((Ok(Event::default().event("message").data(data)), follower))
        })
    }

    /// The events from `seq` on and the claim of the turn running now (`None`: none runs), read
    /// in one statement so both come from one moment.
    pub(super) async fn events_after(
        &self,
        conversation: i64,
        seq: i64,
    ) -> Result<(Vec<(i64, String)>, Option<String>), ReplicaError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT t.claim, e.seq, e.data FROM (SELECT 1) AS one
                 LEFT JOIN web_turns t ON t.conversation = $1
                 LEFT JOIN web_turn_events e ON e.conversation = $1 AND e.seq >= $2
                 ORDER BY e.seq",
                &[&conversation, &seq],
            )
            .await?;
        let claim = rows.first().and_then(|row| row.get::<_, Option<String>>(0));
        let events = rows
            .iter()
            .filter_map(|row| Some((row.get::<_, Option<i64>>(1)?, row.get::<_, Option<String>>(2)?)))
            .collect();
        Ok((events, claim))
    }

    /// Ends the turns of replicas silent for [`DEAD_AFTER`]: each gets an `interrupted` error and
    /// its `done`, its approvals go, and its conversation takes a new message.
    pub(super) async fn reap(&self) -> Result<(), ReplicaError> {
        let client = self.client().await?;
        let cutoff = crate::store::unix_ms() - DEAD_AFTER.as_millis() as i64;
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
                &[&(crate::store::unix_ms() - 60_000)],
            )
            .await?;
        Ok(())
    }
}

fn is_done(data: &str) -> bool {
    serde_json::from_str::<Value>(data).is_ok_and(|value| value["type"] == "done")
}

/// One stream following a turn on another replica.
struct Follower {
    replicas: Arc<Replicas>,
    conversation: i64,
    waker: tokio::sync::watch::Receiver<u64>,
    next: i64,
    /// The claim of the turn followed (the first one seen running).
    claim: Option<String>,
    ready: Vec<String>,
    ended: bool,
}

impl Follower {
    async fn next_event(&mut self) -> Option<String> {
        let mut failures = 0u32;
        loop {
            if !self.ready.is_empty() {
                return Some(self.ready.remove(0));
            }
            if self.ended || self.replicas.stopping() {
                return None;
            }
            match self.replicas.events_after(self.conversation, self.next).await {
                Ok((events, claim)) => {
                    failures = 0;
                    if self.claim.is_none() {
                        self.claim.clone_from(&claim);
                    }
                    // Another turn holds the conversation: the one followed is over.
                    let over = claim.is_none() || claim != self.claim;
                    if !over || claim.is_none() {
                        for (seq, data) in events {
                            self.next = seq + 1;
                            self.ended |= is_done(&data);
                            self.ready.push(data);
                        }
                    }
                    if over && !self.ended {
                        self.ended = true;
                        self.ready.push(super::super::events::done().to_string());
                    }
                    if !self.ready.is_empty() {
                        continue;
                    }
                }
                Err(err) => {
                    failures += 1;
                    // Once per outage, not every poll.
                    if failures == 1 {
                        super::super::log(&format!(
                            "replicas: cannot read conversation {}'s events: {err}",
                            self.conversation
                        ));
                    }
                }
            }
            let _ = tokio::time::timeout(POLL, self.waker.changed()).await;
        }
    }
}
