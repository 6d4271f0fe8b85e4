//! Opening `sessions.db`: the file (created `0600` in a `0700` directory, never replaced), the
//! connection's settings, the schema migrations, and SQLite errors as [`SessionError`]s.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, OpenFlags, TransactionBehavior};

use super::SessionError;

/// The schema, one step per version: step `n` takes `user_version` from `n` to `n + 1`. Append only;
/// a released step is never edited.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: conversations and messages (seed 002 §6 without users).
    "CREATE TABLE conversations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        title TEXT NOT NULL,
        cwd TEXT NOT NULL,
        host TEXT NOT NULL,
        model TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        content TEXT NOT NULL,
        tool_calls TEXT CHECK (tool_calls IS NULL OR json_valid(tool_calls)),
        tool_call_id TEXT,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX messages_by_conversation ON messages (conversation_id, id);
    CREATE INDEX conversations_by_cwd ON conversations (cwd, updated_at);
    CREATE INDEX conversations_by_updated ON conversations (updated_at);",
    // 2: `opsai serve`'s users (seed 002 §6): NULL user_id = made in the terminal; cluster_id = the
    // kube context it talks to.
    "ALTER TABLE conversations ADD COLUMN user_id TEXT;
    ALTER TABLE conversations ADD COLUMN cluster_id TEXT;
    CREATE INDEX conversations_by_user ON conversations (user_id, updated_at);",
    // 3: the host set (an inventory pattern) a web conversation's commands run on; NULL = the
    // server itself.
    "ALTER TABLE conversations ADD COLUMN hosts TEXT;",
];

/// The `user_version` this build migrates to.
pub(super) const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Opens `path` ready for use: WAL, `synchronous=NORMAL`, foreign keys on, `busy` as the busy
/// timeout, the schema migrated. When another process holds a lock SQLite does not wait for (a
/// journal-mode switch or a migration at the same moment), tries again until `busy` has passed.
pub(super) fn open(path: &Path, busy: Duration) -> Result<Connection, SessionError> {
    create_file(path)?;
    let deadline = Instant::now() + busy;
    let mut pause = Duration::from_millis(5);
    loop {
        match connect(path, busy) {
            Err(SessionError::Locked { .. }) if Instant::now() + pause < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            result => return result,
        }
    }
}

/// The error a caller can act on: a damaged file, a lock held too long, a read-only file.
pub(super) fn classify(path: &Path, error: rusqlite::Error) -> SessionError {
    let path = path.to_owned();
    match error.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => SessionError::Corrupt { path },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => SessionError::Locked { path },
        Some(ErrorCode::ReadOnly) => SessionError::ReadOnly { path },
        Some(ErrorCode::CannotOpen) => SessionError::CannotOpen { path },
        _ => SessionError::Sqlite(error),
    }
}

/// Creates the directory (`0700`) and an empty file (`0600`) when missing; an existing file is not
/// opened here, let alone truncated.
fn create_file(path: &Path) -> Result<(), SessionError> {
    crate::store::create_private_parent(path)
        .map_err(|error| SessionError::Io { path: path.parent().unwrap_or(path).to_owned(), error })?;
    match OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(SessionError::Io { path: path.to_owned(), error }),
    }
}

fn connect(path: &Path, busy: Duration) -> Result<Connection, SessionError> {
    let sql = |error| classify(path, error);
    // No CREATE: the file exists (a vanished one is an error, not a silent new database); no URI.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut connection = Connection::open_with_flags(path, flags).map_err(sql)?;
    connection.busy_timeout(busy).map_err(sql)?;
    // The first read: a file that is not a database fails here, before anything is written.
    let found = user_version(&connection).map_err(sql)?;
    check_known(path, found)?;
    connection.pragma_update(None, "journal_mode", "WAL").map_err(sql)?;
    connection.pragma_update(None, "synchronous", "NORMAL").map_err(sql)?;
    connection.pragma_update(None, "foreign_keys", true).map_err(sql)?;
    if found < SCHEMA_VERSION {
        migrate(path, &mut connection)?;
    }
    Ok(connection)
}

/// Runs the missing steps, each in its own `BEGIN IMMEDIATE` transaction that re-reads the version
/// first: a process that migrated meanwhile leaves nothing to do.
fn migrate(path: &Path, connection: &mut Connection) -> Result<(), SessionError> {
    let sql = |error| classify(path, error);
    loop {
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        let version = user_version(&transaction).map_err(sql)?;
        check_known(path, version)?;
        let Some(step) = usize::try_from(version).ok().and_then(|version| MIGRATIONS.get(version)) else {
            return Ok(());
        };
        transaction.execute_batch(step).map_err(sql)?;
        transaction.pragma_update(None, "user_version", version + 1).map_err(sql)?;
        transaction.commit().map_err(sql)?;
    }
}

/// A version from a newer opsai is refused; a negative one was not written by opsai at all.
fn check_known(path: &Path, found: i64) -> Result<(), SessionError> {
    if found > SCHEMA_VERSION {
        return Err(SessionError::TooNew { path: path.to_owned(), found, known: SCHEMA_VERSION });
    }
    if found < 0 {
        return Err(SessionError::Corrupt { path: path.to_owned() });
    }
    Ok(())
}

fn user_version(connection: &Connection) -> rusqlite::Result<i64> {
    connection.pragma_query_value(None, "user_version", |row| row.get(0))
}
