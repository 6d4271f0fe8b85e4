//! Several `opsai serve` processes on one Postgres database (`--database`) serving one team behind
//! one address (issue 25). What a browser may meet on any replica lives in the database: login
//! sessions and API tokens, the running turn of each conversation (one across all replicas) and
//! its events, and the approvals waiting for an answer. What only the replica running a turn can do
//! (stop it, hand an answer to its waiting gate) is asked of it with `NOTIFY`.
//!
//! - Every write of a turn (its claim, its events in order, its waiting approvals, its release)
//!   goes through one writer task, so a reader elsewhere sees them in the order they happened.
//! - A listener connection `LISTEN`s: `opsai_events` wakes the streams following a conversation,
//!   `opsai_control` carries stops and answers for this replica, `opsai_reply` their outcomes.
//! - Each replica says it is alive every [`BEAT`]; one silent for [`DEAD_AFTER`] (killed, its
//!   machine gone) has its turns ended by the others: each gets an `interrupted` error and its
//!   `done`, its approvals are dropped, and a new message is accepted. Its messages were stored as
//!   they happened, one transaction each, so the conversation holds whole messages only.

mod conn;
mod control;
mod grants;
mod logins;
mod schema;
mod turns;
mod writer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_postgres::{AsyncMessage, Client, NoTls};

use conn::Conn;
use schema::MIGRATIONS;

pub use control::AnswerRequest;
pub use logins::{LoginKind, StoredLogin};
pub use turns::Usable;

use super::state::AppState;
use crate::store::database::{DatabaseError, DatabaseUrl};

/// How often a replica says it is alive.
const BEAT: Duration = Duration::from_secs(2);
/// A replica silent this long is gone: the others end its turns.
const DEAD_AFTER: Duration = Duration::from_secs(10);
/// A replica that could not say it is alive this long stops its own turns (before the others
/// count it gone).
const FENCE_AFTER: Duration = Duration::from_secs(6);

/// Query connections, used in turn: one connection runs its queries one after another, each
/// write waiting for its commit, so requests at once (a burst of chats) would queue behind one.
const CONNECTIONS: usize = 4;

/// A write the writer task makes, in the order they were sent.
/// A turn's writes name its claim: once another turn holds the conversation, they change nothing.
enum Op {
    Event {
        conversation: i64,
        claim: Arc<str>,
        seq: i64,
        data: Arc<str>,
    },
    /// Gives the claim back without a last event (the turn never started).
    Release {
        conversation: i64,
        claim: Arc<str>,
    },
    /// The last event and the release, in one statement: whoever reads the event may claim next.
    Finish {
        conversation: i64,
        claim: Arc<str>,
        seq: i64,
        data: Arc<str>,
        /// Told once it is made (taken by the writer).
        done: Option<oneshot::Sender<()>>,
    },
    PendingAdd {
        request_id: String,
        conversation: i64,
        call_id: String,
        owner: String,
        request: String,
        since: i64,
    },
    PendingGone {
        request_id: String,
    },
    /// Answered once every write sent before it is made (taken by the writer).
    Flush(Option<oneshot::Sender<()>>),
}

pub struct Replicas {
    /// This replica's id (random per process).
    pub id: String,
    url: DatabaseUrl,
    clients: Vec<tokio::sync::RwLock<Arc<Conn>>>,
    /// The connection the next query takes.
    next: std::sync::atomic::AtomicUsize,
    writer: mpsc::UnboundedSender<Op>,
    /// Per conversation followed from here: bumped on each `opsai_events` notification.
    wakers: Mutex<HashMap<i64, watch::Sender<u64>>>,
    /// Answers sent to other replicas, waiting for their outcome.
    replies: Mutex<HashMap<String, oneshot::Sender<String>>>,
    /// When connecting last failed (requests fail fast for a second after).
    connect_failed: Mutex<Option<std::time::Instant>>,
    /// The claims of this replica's turns not yet released (what the heartbeat keeps).
    claims: Mutex<std::collections::HashSet<Arc<str>>>,
    /// The server this replica is part of, for stops and answers from elsewhere.
    state: OnceLock<Weak<AppState>>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    #[error(transparent)]
    Database(#[from] DatabaseError),
    #[error("the database failed: {0}")]
    Query(String),
}

impl From<tokio_postgres::Error> for ReplicaError {
    fn from(err: tokio_postgres::Error) -> Self {
        ReplicaError::Query(err.as_db_error().map_or_else(|| err.to_string(), |db| db.message().to_owned()))
    }
}

async fn connect(
    url: &DatabaseUrl,
) -> Result<(Client, tokio_postgres::Connection<tokio_postgres::Socket, tokio_postgres::tls::NoTlsStream>), ReplicaError>
{
    url.config()
        .connect(NoTls)
        .await
        .map_err(|err| ReplicaError::Database(DatabaseError::Connect { url: url.to_string(), reason: err.to_string() }))
}

impl Replicas {
    /// Migrates the tables, connects, and starts the writer, the listener and the heartbeat.
    pub async fn start(url: DatabaseUrl) -> Result<Arc<Replicas>, ReplicaError> {
        let migrating = url.clone();
        tokio::task::spawn_blocking(move || {
            let mut client = migrating.connect()?;
            migrating.migrate(&mut client, "replicas", MIGRATIONS)
        })
        .await
        .map_err(|err| ReplicaError::Query(err.to_string()))??;
        let mut clients = Vec::with_capacity(CONNECTIONS);
        for _ in 0..CONNECTIONS {
            let (client, connection) = connect(&url).await?;
            tokio::spawn(connection);
            clients.push(tokio::sync::RwLock::new(Arc::new(Conn::new(client))));
        }
        let (writer, ops) = mpsc::unbounded_channel();
        let replicas = Arc::new(Replicas {
            id: super::auth::random_token()[..12].to_owned(),
            url,
            clients,
            next: std::sync::atomic::AtomicUsize::new(0),
            writer,
            wakers: Mutex::default(),
            replies: Mutex::default(),
            claims: Mutex::default(),
            connect_failed: Mutex::default(),
            state: OnceLock::new(),
        });
        replicas.beat().await?;
        tokio::spawn(writer::write_loop(Arc::downgrade(&replicas), ops));
        tokio::spawn(listen_loop(Arc::downgrade(&replicas)));
        tokio::spawn(beat_loop(Arc::downgrade(&replicas)));
        Ok(replicas)
    }

    /// Ties the replica to its server (stops and answers from elsewhere act on it).
    pub fn attach(&self, state: &Arc<AppState>) {
        let _ = self.state.set(Arc::downgrade(state));
    }

    /// A query connection (the next in turn), made again when the last one dropped (a database
    /// restart). While the database is out of reach, one request at a time tries to connect (up to
    /// the connect timeout) and the others are answered at once for a second after each failure.
    async fn client(&self) -> Result<Arc<Conn>, ReplicaError> {
        let slot = &self.clients[self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % CONNECTIONS];
        let current = slot.read().await.clone();
        if !current.is_closed() {
            return Ok(current);
        }
        let recently_failed = || {
            let failed = self.connect_failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            failed.is_some_and(|at| at.elapsed() < Duration::from_secs(1))
        };
        if recently_failed() {
            return Err(ReplicaError::Query("the database cannot be reached (tried a moment ago)".into()));
        }
        let mut slot = slot.write().await;
        if slot.is_closed() {
            if recently_failed() {
                return Err(ReplicaError::Query("the database cannot be reached (tried a moment ago)".into()));
            }
            let made = connect(&self.url).await;
            *self.connect_failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                made.is_err().then(std::time::Instant::now);
            let (client, connection) = made?;
            tokio::spawn(connection);
            *slot = Arc::new(Conn::new(client));
        }
        Ok(slot.clone())
    }

    /// Whether the database answers within 2 s (the load balancer's health check).
    pub async fn reachable(&self) -> bool {
        let check = async { self.client().await?.simple_query("SELECT 1").await.map_err(ReplicaError::from) };
        matches!(tokio::time::timeout(Duration::from_secs(2), check).await, Ok(Ok(_)))
    }

    /// Says this replica is alive, and gives back any claim of its own no turn holds any more (a
    /// release whose write was lost).
    async fn beat(&self) -> Result<(), ReplicaError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO web_replicas (id, seen_ms) VALUES ($1, $2)
                 ON CONFLICT (id) DO UPDATE SET seen_ms = EXCLUDED.seen_ms",
                &[&self.id, &crate::store::unix_ms()],
            )
            .await?;
        let live: Vec<String> = self.lock_claims().iter().map(|claim| claim.to_string()).collect();
        client
            .execute("DELETE FROM web_turns WHERE replica = $1 AND NOT (claim = ANY($2))", &[&self.id, &live])
            .await?;
        Ok(())
    }

    fn lock_claims(&self) -> std::sync::MutexGuard<'_, std::collections::HashSet<Arc<str>>> {
        self.claims.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The server this replica is part of is stopping.
    fn stopping(&self) -> bool {
        self.state.get().and_then(Weak::upgrade).is_some_and(|state| state.shutdown.is_cancelled())
    }

    /// The database, as it may be shown.
    pub fn url(&self) -> String {
        self.url.to_string()
    }

    /// Leaves the replica set at shutdown, once its last writes are made: its row goes, so nobody
    /// waits [`DEAD_AFTER`] for it.
    pub async fn leave(&self) {
        let (flushed, done) = oneshot::channel();
        self.send(Op::Flush(Some(flushed)));
        let _ = tokio::time::timeout(Duration::from_secs(5), done).await;
        if let Ok(client) = self.client().await {
            let _ = client.execute("DELETE FROM web_replicas WHERE id = $1", &[&self.id]).await;
        }
    }

    fn send(&self, op: Op) {
        let _ = self.writer.send(op);
    }

    /// The waker of `conversation`'s followers here.
    fn waker(&self, conversation: i64) -> watch::Receiver<u64> {
        let mut wakers = self.wakers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        wakers.retain(|_, sender| sender.receiver_count() > 0);
        wakers.entry(conversation).or_insert_with(|| watch::channel(0).0).subscribe()
    }

    /// Wakes the followers of each conversation a notification names (ids separated by commas).
    fn wake_each(&self, payload: &str) {
        let wakers = self.wakers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for id in payload.split(',').filter_map(|id| id.trim().parse::<i64>().ok()) {
            if let Some(sender) = wakers.get(&id) {
                sender.send_modify(|n| *n += 1);
            }
        }
    }

    /// Wakes every follower (notifications may have been missed).
    fn wake_all(&self) {
        let wakers = self.wakers.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for sender in wakers.values() {
            sender.send_modify(|n| *n += 1);
        }
    }
}

/// Follows the notifications, connecting again (and waking every follower, who read the table
/// again) whenever the connection drops.
async fn listen_loop(replicas: Weak<Replicas>) {
    loop {
        let Some(strong) = replicas.upgrade() else { return };
        let url = strong.url.clone();
        drop(strong);
        let Ok((client, mut connection)) = connect(&url).await else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        let (notes, mut received) = mpsc::unbounded_channel();
        let polling = tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(Ok(message)) = messages.next().await {
                if let AsyncMessage::Notification(note) = message {
                    let _ = notes.send(note);
                }
            }
        });
        if client.batch_execute("LISTEN opsai_events; LISTEN opsai_control; LISTEN opsai_reply").await.is_ok() {
            if let Some(strong) = replicas.upgrade() {
                strong.wake_all();
            }
            while let Some(note) = received.recv().await {
                let Some(strong) = replicas.upgrade() else { return };
                match note.channel() {
                    "opsai_events" => strong.wake_each(note.payload()),
                    "opsai_control" => strong.clone().control(note.payload()),
                    "opsai_reply" => strong.reply(note.payload()),
                    _ => {}
                }
            }
        }
        polling.abort();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Says this replica is alive, and ends the turns of replicas that stopped saying so. A replica
/// that cannot say so for [`FENCE_AFTER`] stops its own turns first: the others end them at
/// [`DEAD_AFTER`] and take new messages, and two turns must never write one conversation.
async fn beat_loop(replicas: Weak<Replicas>) {
    let mut tick = tokio::time::interval(BEAT);
    let mut alive_at = std::time::Instant::now();
    loop {
        tick.tick().await;
        let Some(replicas) = replicas.upgrade() else { return };
        let beat = tokio::time::timeout(BEAT, replicas.beat()).await;
        if !matches!(beat, Ok(Ok(()))) {
            let reason = match beat {
                Ok(Err(err)) => err.to_string(),
                _ => "no answer within 2 s".to_owned(),
            };
            super::log(&format!("replicas: cannot reach the database: {reason}"));
            if alive_at.elapsed() >= FENCE_AFTER
                && let Some(state) = replicas.state.get().and_then(Weak::upgrade)
                && state.turns.lock().is_ok_and(|turns| !turns.is_empty())
            {
                super::log("replicas: the database is out of reach: this replica's turns are stopped");
                state.stop_all();
            }
            continue;
        }
        alive_at = std::time::Instant::now();
        if let Err(err) = replicas.reap().await {
            super::log(&format!("replicas: cannot end a gone replica's turns: {err}"));
        }
    }
}

#[cfg(test)]
mod tests;
