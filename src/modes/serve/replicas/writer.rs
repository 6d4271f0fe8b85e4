//! The one task that makes a replica's writes, in the order they were sent, on a connection of
//! its own (so requests never queue behind a busy turn's events). What has queued up is written
//! together: a run of events is one statement (its `INSERT` and its notifications), however many
//! turns stream at once.

use std::sync::Weak;

use super::conn::Conn;
use super::{Op, ReplicaError, Replicas, connect};
use tokio::sync::mpsc;

/// Writes taken from the queue at once, at most.
const BATCH: usize = 512;

/// Tries at writing one batch (every write is idempotent, so a batch is simply written again).
const ATTEMPTS: u32 = 3;

/// Makes the writes. A failed batch is written again on a new connection, twice, then given up
/// and logged: a turn goes on when the database hiccups (its own stream is served from memory),
/// and a lost release is undone by the heartbeat.
pub(super) async fn write_loop(replicas: Weak<Replicas>, mut ops: mpsc::UnboundedReceiver<Op>) {
    let mut client: Option<Conn> = None;
    let mut batch = Vec::with_capacity(BATCH);
    while ops.recv_many(&mut batch, BATCH).await > 0 {
        let Some(replicas) = replicas.upgrade() else { return };
        let mut taken = std::mem::take(&mut batch);
        // Whoever waits for a write is told once it is made or given up, never twice.
        let waiting: Vec<tokio::sync::oneshot::Sender<()>> = taken
            .iter_mut()
            .filter_map(|op| match op {
                Op::Flush(done) | Op::Finish { done, .. } => done.take(),
                _ => None,
            })
            .collect();
        for attempt in 1..=ATTEMPTS {
            match replicas.write_all(&mut client, &taken).await {
                Ok(()) => break,
                Err(err) => {
                    client = None;
                    if attempt == ATTEMPTS {
                        super::super::log(&format!("replicas: a write to the database failed: {err}"));
                    } else {
                        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                    }
                }
            }
        }
        for done in waiting {
            let _ = done.send(());
        }
    }
}

/// Events waiting to be written together.
#[derive(Default)]
struct Events {
    conversations: Vec<i64>,
    claims: Vec<String>,
    seqs: Vec<i64>,
    datas: Vec<String>,
}

impl Replicas {
    async fn write_all(&self, slot: &mut Option<Conn>, ops: &[Op]) -> Result<(), ReplicaError> {
        if slot.as_ref().is_none_or(Conn::is_closed) {
            let (client, connection) = connect(&self.url).await?;
            tokio::spawn(connection);
            *slot = Some(Conn::new(client));
        }
        let Some(client) = slot.as_ref() else { return Ok(()) };
        let mut events = Events::default();
        for op in ops {
            if let Op::Event { conversation, claim, seq, data } = op {
                events.conversations.push(*conversation);
                events.claims.push(claim.to_string());
                events.seqs.push(*seq);
                events.datas.push(data.to_string());
                continue;
            }
            write_events(client, &mut events).await?;
            match op {
                Op::Event { .. } => {}
                Op::Release { conversation, claim } => {
                    client
                        .execute(
                            "WITH turn AS (
                                DELETE FROM web_turns WHERE conversation = $1 AND claim = $2
                             ), pendings AS (
                                DELETE FROM web_pendings WHERE conversation = $1 AND replica = $3
                             )
                             SELECT pg_notify('opsai_events', CAST($1::bigint AS text))",
                            &[conversation, &&**claim, &self.id],
                        )
                        .await?;
                    self.lock_claims().remove(claim);
                }
                Op::Finish { conversation, claim, seq, data, .. } => {
                    client
                        .execute(
                            "WITH turn AS (
                                DELETE FROM web_turns WHERE conversation = $1 AND claim = $2 RETURNING conversation
                             ), last AS (
                                INSERT INTO web_turn_events (conversation, seq, data)
                                SELECT conversation, $3, $4 FROM turn ON CONFLICT DO NOTHING
                             ), pendings AS (
                                DELETE FROM web_pendings WHERE conversation = $1 AND replica = $5
                             )
                             SELECT pg_notify('opsai_events', CAST($1::bigint AS text))",
                            &[conversation, &&**claim, seq, &&**data, &self.id],
                        )
                        .await?;
                    self.lock_claims().remove(claim);
                }
                Op::PendingAdd { request_id, conversation, call_id, owner, request, since } => {
                    client
                        .execute(
                            "INSERT INTO web_pendings (request_id, replica, conversation, call_id, owner, request, since)
                             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
                            &[request_id, &self.id, conversation, call_id, owner, request, since],
                        )
                        .await?;
                }
                Op::PendingGone { request_id } => {
                    client.execute("DELETE FROM web_pendings WHERE request_id = $1", &[request_id]).await?;
                }
                Op::Flush(_) => {}
            }
        }
        write_events(client, &mut events).await
    }
}

/// Conversation ids one notification names at most (a payload is under 8000 bytes).
const IDS_PER_NOTIFICATION: i64 = 300;

/// One statement for every event waiting: their `INSERT`, and notifications naming the
/// conversations among them, made in one commit. A notification goes to every replica's listener,
/// so one per batch, not one per conversation, however many turns stream at once.
async fn write_events(client: &Conn, events: &mut Events) -> Result<(), ReplicaError> {
    if events.seqs.is_empty() {
        return Ok(());
    }
    let taken = std::mem::take(events);
    // Only while the turn still holds its claim: a turn ended by the others writes nothing more
    // (and wakes no one).
    client
        .execute(
            "WITH kept AS (
                INSERT INTO web_turn_events (conversation, seq, data)
                SELECT u.c, u.s, u.d FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[]) AS u(c, k, s, d)
                WHERE EXISTS (SELECT 1 FROM web_turns t WHERE t.conversation = u.c AND t.claim = u.k)
                ON CONFLICT DO NOTHING
                RETURNING conversation
             ), woken AS (
                SELECT c, (row_number() OVER ()) / $5::bigint AS part FROM (SELECT DISTINCT conversation AS c FROM kept) d
             )
             SELECT pg_notify('opsai_events', string_agg(CAST(c AS text), ',')) FROM woken GROUP BY part",
            &[&taken.conversations, &taken.claims, &taken.seqs, &taken.datas, &IDS_PER_NOTIFICATION],
        )
        .await?;
    Ok(())
}
