//! A small fixed pool of Postgres connections for the store: requests served at once each take a
//! free connection instead of queueing behind one. Connections are made when first needed.
//!
//! A connection the server ended (a restart, an admin's `pg_terminate_backend`) is replaced: one
//! that sat idle is checked with an empty query before it is used (what the server sent meanwhile
//! is only read then), and one whose call failed other than by an ordinary SQL error is dropped,
//! so the next call connects afresh. Nothing is retried after a failed call: a write whose reply
//! was lost may have been committed, and doing it again would store it twice.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use postgres::error::Severity;
use postgres::{Client, Statement};

use crate::store::database::{DatabaseError, DatabaseUrl};

/// One connection and the statements prepared on it (a statement is parsed once per connection,
/// then each call is one round trip).
pub(super) struct Connection {
    pub client: Client,
    statements: HashMap<&'static str, Statement>,
    last_used: Instant,
}

/// A connection unused this long is checked before its next use.
pub(super) const IDLE_CHECK: Duration = Duration::from_secs(1);
/// How long that check may take before the connection counts as gone.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

impl Connection {
    fn new(client: Client) -> Self {
        Self { client, statements: HashMap::new(), last_used: Instant::now() }
    }

    /// `sql` prepared on this connection.
    pub fn statement(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql)?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }

    /// False when the server has ended this connection. One used within `idle_check` is taken as
    /// it is (a check per call would double the round trips).
    fn is_open(&mut self, idle_check: Duration) -> bool {
        if self.client.is_closed() {
            return false;
        }
        self.last_used.elapsed() < idle_check || self.client.is_valid(CHECK_TIMEOUT).is_ok()
    }
}

/// Whether `err` leaves the connection unusable: anything but an SQL statement's own error (a
/// constraint, a syntax error), after which the session goes on.
fn ends_connection(client: &Client, err: &postgres::Error) -> bool {
    client.is_closed() || err.as_db_error().is_none_or(|db| db.parsed_severity() != Some(Severity::Error))
}

pub(super) struct Pool {
    url: DatabaseUrl,
    slots: Vec<Mutex<Option<Connection>>>,
    next: AtomicUsize,
    idle_check: Duration,
}

impl Pool {
    /// `size` slots (at least one), the first holding `first`.
    pub fn new(url: DatabaseUrl, size: usize, first: Client, idle_check: Duration) -> Self {
        let slots: Vec<_> = (0..size.max(1)).map(|_| Mutex::new(None)).collect();
        if let Some(slot) = slots.first()
            && let Ok(mut slot) = slot.lock()
        {
            *slot = Some(Connection::new(first));
        }
        Self { url, slots, next: AtomicUsize::new(0), idle_check }
    }

    pub fn url(&self) -> &DatabaseUrl {
        &self.url
    }

    /// Runs `work` on a free connection (reconnecting when the one in the slot is gone). A failure
    /// that closed the connection empties the slot for the next call.
    pub fn run<T>(&self, work: impl FnOnce(&mut Connection) -> Result<T, postgres::Error>) -> Result<T, DatabaseError> {
        let mut slot = self.slot();
        // A stale client is dropped here, on this (blocking) thread.
        let open = slot.as_mut().is_some_and(|connection| connection.is_open(self.idle_check));
        let mut connection = match slot.take() {
            Some(connection) if open => connection,
            _ => Connection::new(self.url.connect()?),
        };
        let result = work(&mut connection);
        connection.last_used = Instant::now();
        match result {
            Ok(value) => {
                *slot = Some(connection);
                Ok(value)
            }
            Err(err) => {
                if !ends_connection(&connection.client, &err) {
                    *slot = Some(connection);
                }
                Err(self.url.query_error(&err))
            }
        }
    }

    /// A free slot holding a connection when there is one, else a free empty one (a connection is
    /// made only when all made are busy), else the next one in turn, waited for.
    fn slot(&self) -> MutexGuard<'_, Option<Connection>> {
        let count = self.slots.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let mut empty = None;
        for offset in 0..count {
            let slot = &self.slots[(start + offset) % count];
            let guard = match slot.try_lock() {
                Ok(guard) => guard,
                Err(TryLockError::Poisoned(poisoned)) => Self::recovered(slot, poisoned.into_inner()),
                Err(TryLockError::WouldBlock) => continue,
            };
            if guard.is_some() {
                return guard;
            }
            empty.get_or_insert(guard);
        }
        if let Some(guard) = empty {
            return guard;
        }
        let slot = &self.slots[start % count];
        match slot.lock() {
            Ok(guard) => guard,
            Err(poisoned) => Self::recovered(slot, poisoned.into_inner()),
        }
    }

    /// A slot whose last user panicked: its connection may be mid-conversation with the server,
    /// so it is dropped and the next call connects afresh.
    fn recovered<'a>(
        slot: &'a Mutex<Option<Connection>>,
        mut guard: MutexGuard<'a, Option<Connection>>,
    ) -> MutexGuard<'a, Option<Connection>> {
        *guard = None;
        slot.clear_poison();
        guard
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let connections: Vec<Connection> = self
            .slots
            .iter_mut()
            .filter_map(|slot| slot.get_mut().unwrap_or_else(PoisonError::into_inner).take())
            .collect();
        if connections.is_empty() {
            return;
        }
        // Dropping a client runs its own small runtime (it says goodbye to the server), which
        // panics on a thread that drives async tasks, as the last owner of the store may be.
        let _ = std::thread::spawn(move || drop(connections)).join();
    }
}
