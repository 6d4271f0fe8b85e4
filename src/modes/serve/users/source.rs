//! Where a server in users mode reads its users: a users file (`--users FILE`, re-read when it
//! is replaced) or the database's users table (`--database URL`, re-read when the copy in hand
//! is older than [`FRESH`]), so a user removed or changed anywhere counts on every replica within
//! seconds.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::table::UsersTable;
use super::{UsersCache, UsersError, UsersFile};
use crate::store::database::DatabaseUrl;

/// How long the users read from the database are used before they are read again: the longest a
/// user removed (or whose role changed) on another replica keeps their old rights here.
pub const FRESH: Duration = Duration::from_secs(2);

pub enum UsersSource {
    File { path: PathBuf, cache: UsersCache },
    Database(Box<TableCache>),
}

impl UsersSource {
    pub fn file(path: PathBuf) -> Self {
        Self::File { path, cache: UsersCache::default() }
    }

    /// The users now; `Err` (a file that fails to load, a database that fails) logs nobody in or out.
    pub fn get(&self) -> Result<Arc<UsersFile>, UsersError> {
        match self {
            Self::File { path, cache } => cache.get(path),
            Self::Database(table) => table.get(),
        }
    }
}

/// The users table as last read, with the connection it is read on.
pub struct TableCache {
    url: DatabaseUrl,
    last: Mutex<Option<(Instant, Arc<UsersFile>)>>,
    /// Held while reading: one reader at a time, the others then use what it read.
    table: Mutex<Option<UsersTable>>,
    /// The last read that failed, and why: for [`FRESH`] after it, requests get the same answer
    /// at once instead of each waiting out a connection timeout in turn.
    failed: Mutex<Option<(Instant, String)>>,
}

impl TableCache {
    /// Starts with the users already read at startup on `table`.
    pub fn new(table: UsersTable, users: UsersFile) -> Self {
        Self {
            url: table.url().clone(),
            last: Mutex::new(Some((Instant::now(), Arc::new(users)))),
            table: Mutex::new(Some(table)),
            failed: Mutex::new(None),
        }
    }

    fn recently_failed(&self) -> Result<(), UsersError> {
        let failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        match failed.as_ref().filter(|(at, _)| at.elapsed() < FRESH) {
            Some((_, reason)) => Err(UsersError::DatabaseDown(reason.clone())),
            None => Ok(()),
        }
    }

    fn fresh(&self) -> Option<Arc<UsersFile>> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.as_ref().filter(|(at, _)| at.elapsed() < FRESH).map(|(_, users)| users.clone())
    }

    pub fn get(&self) -> Result<Arc<UsersFile>, UsersError> {
        if let Some(users) = self.fresh() {
            return Ok(users);
        }
        self.recently_failed()?;
        off_the_runtime(|| {
            let read = self.read();
            if let Err(err @ UsersError::Database(_)) = &read {
                *self.failed.lock().unwrap_or_else(PoisonError::into_inner) = Some((Instant::now(), err.to_string()));
            }
            read
        })
    }

    /// Reads the table (blocking), reconnecting when the last connection failed.
    fn read(&self) -> Result<Arc<UsersFile>, UsersError> {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        // Another request may have read it, or failed to, while this one waited for the lock.
        if let Some(users) = self.fresh() {
            return Ok(users);
        }
        self.recently_failed()?;
        let connected = match table.take() {
            Some(connected) => connected,
            None => UsersTable::open(&self.url)?,
        };
        let connected = table.insert(connected);
        // A failed query drops the connection (it may be the broken part); the next read reconnects.
        let users = match connected.all() {
            Ok(users) => Arc::new(users.checked("the database's users table")),
            Err(err) => {
                *table = None;
                return Err(err.into());
            }
        };
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some((Instant::now(), users.clone()));
        Ok(users)
    }
}

impl Drop for TableCache {
    /// The connection ends with a blocking call too: off the runtime, as every other call on it.
    fn drop(&mut self) {
        if let Some(table) = self.table.get_mut().unwrap_or_else(PoisonError::into_inner).take() {
            off_the_runtime(move || drop(table));
        }
    }
}

/// Runs a blocking database call where it may block: the `postgres` client drives a runtime of
/// its own, which must not start on an async worker thread (`block_in_place` leaves it first).
fn off_the_runtime<T: Send>(call: impl FnOnce() -> T + Send) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current().map(|handle| handle.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(call),
        // A single-threaded runtime cannot give its thread away: a thread of its own does it.
        Ok(_) => std::thread::scope(|scope| scope.spawn(call).join().unwrap_or_else(|p| std::panic::resume_unwind(p))),
        Err(_) => call(),
    }
}

/// Where `opsai serve` reads its users, checked before it listens. `--users FILE` is that file,
/// with or without a database; else `--database URL` is its users table when it has users (token
/// mode when it has none yet). `Ok(None)`: token mode. `Err`: the exit code (a message was printed).
pub fn for_server(users: Option<&Path>, database: Option<&DatabaseUrl>) -> Result<Option<UsersSource>, u8> {
    let warn = crate::modes::common::warn;
    if let Some(path) = users {
        if let Some(url) = database {
            super::super::log(&format!(
                "users: from {} (--users), not the database {url}: copy them there with `opsai serve user import \
                 --users {} --database URL` and start without --users to share them between replicas",
                path.display(),
                path.display()
            ));
        }
        return file_for_server(path).map(Some);
    }
    let Some(url) = database else { return Ok(None) };
    let loaded = UsersTable::open(url).and_then(|mut table| table.all().map(|users| (table, users)));
    let (table, users) = match loaded {
        Ok(loaded) => loaded,
        Err(err) => {
            warn(&err.to_string());
            return Err(1);
        }
    };
    let users = users.checked("the database's users table");
    if users.users.is_empty() {
        super::super::log(&format!(
            "the database {url} has no users yet: token mode. To log in with users, add one with `opsai serve user \
             add NAME --role operator --database URL` and start the server again"
        ));
        return Ok(None);
    }
    super::super::log(&format!(
        "users: {} in the database {url} (`opsai serve user list --database URL`); changes count within {} s",
        users.users.len(),
        FRESH.as_secs()
    ));
    Ok(Some(UsersSource::Database(Box::new(TableCache::new(table, users)))))
}

/// The users file, read and checked once before the server starts.
fn file_for_server(path: &Path) -> Result<UsersSource, u8> {
    let warn = crate::modes::common::warn;
    // The operators' password hashes: no sandboxed command or automatic read of this server may
    // read them, wherever the file is.
    crate::sandbox::also_deny(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()));
    match UsersFile::load(path).map(|file| file.checked(&path.display().to_string())) {
        Ok(file) if file.users.is_empty() => warn(&format!(
            "{} has no users yet: add one with `opsai serve user add NAME --role operator --users {}`",
            path.display(),
            path.display()
        )),
        Ok(_) => {}
        Err(err) => {
            warn(&err.to_string());
            return Err(2);
        }
    }
    if let Some(mode) = super::readable_by_others(path) {
        warn(&format!(
            "{} can be read by other users (mode {mode:o}): its password hashes can be attacked offline; run `chmod \
             600 {}`",
            path.display(),
            path.display()
        ));
    }
    Ok(UsersSource::file(path.to_owned()))
}
