//! The one task that makes a replica's writes, in the order they were sent, on a connection of
//! its own (so requests never queue behind a busy turn's events). What has queued up is written
//! together: a run of events is one `INSERT` and one round of notifications, however many turns
//! stream at once.

use std::sync::Weak;

use tokio::sync::mpsc;
use tokio_postgres::Client;

use super::{Op, ReplicaError, Replicas, connect};

/// Writes taken from the queue at once, at most.
const BATCH: usize = 512;

/// Makes the writes. A failed write is logged and the connection made again for the next ones:
/// a turn goes on when the database hiccups (its own stream is served from memory).
pub(super) async fn write_loop(replicas: Weak<Replicas>, mut ops: mpsc::UnboundedReceiver<Op>) {
    let mut client: Option<Client> = None;
    let mut batch = Vec::with_capacity(BATCH);
    while ops.recv_many(&mut batch, BATCH).await > 0 {
        let Some(replicas) = replicas.upgrade() else { return };
        let taken = std::mem::take(&mut batch);
        if let Err(err) = replicas.write_batch(&mut client, taken).await {
            super::super::log(&format!("replicas: a write to the database failed: {err}"));
            client = None;
        }
    }
}

/// Events waiting to be written together.
#[derive(Default)]
struct Events {
    conversations: Vec<i64>,
    seqs: Vec<i64>,
    datas: Vec<String>,
}

impl Replicas {
    async fn write_batch(&self, slot: &mut Option<Client>, ops: Vec<Op>) -> Result<(), ReplicaError> {
        let mut flushed = Vec::new();
        let result = self.write_all(slot, ops, &mut flushed).await;
        for done in flushed {
            let _ = done.send(());
        }
        result
    }

    async fn write_all(
        &self,
        slot: &mut Option<Client>,
        ops: Vec<Op>,
        flushed: &mut Vec<tokio::sync::oneshot::Sender<()>>,
    ) -> Result<(), ReplicaError> {
        if slot.as_ref().is_none_or(Client::is_closed) {
            let (client, connection) = connect(&self.url).await?;
            tokio::spawn(connection);
            *slot = Some(client);
        }
        let Some(client) = slot.as_ref() else { return Ok(()) };
        let mut events = Events::default();
        for op in ops {
            if let Op::Event { conversation, seq, data } = op {
                events.conversations.push(conversation);
                events.seqs.push(seq);
                events.datas.push(data.to_string());
                continue;
            }
            write_events(client, &mut events).await?;
            match op {
                Op::Event { .. } => {}
                Op::Release { conversation } => {
                    client
                        .execute(
                            "WITH turn AS (
                                DELETE FROM web_turns WHERE conversation = $1 AND replica = $2
                             ), pendings AS (
                                DELETE FROM web_pendings WHERE conversation = $1 AND replica = $2
                             )
                             SELECT pg_notify('opsai_events', CAST($1::bigint AS text))",
                            &[&conversation, &self.id],
                        )
                        .await?;
                }
                Op::PendingAdd { request_id, conversation, call_id, owner, request, since } => {
                    client
                        .execute(
                            "INSERT INTO web_pendings (request_id, replica, conversation, call_id, owner, request, since)
                             VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
                            &[&request_id, &self.id, &conversation, &call_id, &owner, &request, &since],
                        )
                        .await?;
                }
                Op::PendingGone { request_id } => {
                    client.execute("DELETE FROM web_pendings WHERE request_id = $1", &[&request_id]).await?;
                }
                Op::Flush(done) => flushed.push(done),
            }
        }
        write_events(client, &mut events).await
    }
}

/// One `INSERT` for every event waiting, then one notification per conversation among them.
async fn write_events(client: &Client, events: &mut Events) -> Result<(), ReplicaError> {
    if events.seqs.is_empty() {
        return Ok(());
    }
    let taken = std::mem::take(events);
    client
        .execute(
            "INSERT INTO web_turn_events (conversation, seq, data)
             SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[]) ON CONFLICT DO NOTHING",
            &[&taken.conversations, &taken.seqs, &taken.datas],
        )
        .await?;
    let mut woken: Vec<String> = taken.conversations.iter().map(i64::to_string).collect();
    woken.sort();
    woken.dedup();
    client.execute("SELECT pg_notify('opsai_events', c) FROM unnest($1::text[]) c", &[&woken]).await?;
    Ok(())
}
