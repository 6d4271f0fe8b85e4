//! Conversations and their messages, as in seed 002 §6 (DESIGN §8): by default in
//! `$OPSAI_HOME/sessions.db` (SQLite, WAL); for `opsai serve --database postgres://…` in Postgres
//! (issue 25), shared by every replica. A conversation made in the terminal has no user; one made
//! by `opsai serve` belongs to its signed-in user (`web`). The terminal lists and continues only its own.
//!
//! - One [`SessionStore`] type whatever the back end ([`backend::Backend`]: [`sqlite`], [`pg`]);
//!   what must not differ between them (redaction, titles, not-found errors, pages) is done here.
//! - Every message is stored as it happens: one short transaction inserts it and bumps its
//!   conversation's `message_count` and `updated_at`. Several processes (or replicas) write at once
//!   without errors and without losing a message.
//! - Everything stored is redacted first: message content, the title, and every string inside
//!   tool-call arguments (which stay valid JSON).
//! - The schema is versioned (SQLite: `PRAGMA user_version`; Postgres: `opsai_schema`); processes
//!   opening a new database at once migrate it exactly once. A database from a newer opsai is
//!   refused and left untouched.
//! - A file that is not a database, or a damaged one, is an error that says what to do; it is never
//!   overwritten, truncated or deleted.
//!
//! Calls block (SQLite on the calling thread; the Postgres client drives its own runtime): from
//! async code, run them on a blocking thread.

mod backend;
#[cfg(test)]
mod concurrency_tests;
mod pg;
#[cfg(test)]
mod pg_tests;
mod pool;
mod schema;
mod sqlite;
#[cfg(test)]
mod test_db;
#[cfg(test)]
mod tests;
mod web;
#[cfg(test)]
mod web_tests;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

use crate::protocol::{ChatMessage, ToolCall};
use crate::redact::Redactor;
use crate::store::database::{DatabaseError, DatabaseUrl};
use backend::{Backend, MessageRow, NewRow, role_name};

pub use web::{Cursor, StoredMessage, WebConversation};

/// Text as the Postgres back end stores it and back (for a query of the `conversations` table made
/// elsewhere on the same database: the replicas' claim of a turn).
pub(crate) use pg::{decode as pg_decode, encode as pg_encode};

pub(crate) type ConversationId = i64;

/// How a conversation id is printed everywhere — lists, messages, the audit log's SESSION field,
/// backup directories: `c14`.
pub(crate) fn label(id: ConversationId) -> String {
    format!("c{id}")
}

/// A conversation id as the user may type it: `14`, or `c14` as it is printed (also `C14`, `#14`).
pub(crate) fn parse_id(text: &str) -> Result<ConversationId, String> {
    let trimmed = text.trim();
    let digits = trimmed.strip_prefix(['c', 'C', '#']).unwrap_or(trimmed);
    match digits.parse::<ConversationId>() {
        Ok(id) if id > 0 && digits.bytes().all(|b| b.is_ascii_digit()) => Ok(id),
        _ => Err(format!("`{text}` is not a conversation id such as c14 or 14 (`opsai sessions list` shows them)")),
    }
}

/// A session name as typed, in its printed form: a conversation id in any accepted form becomes
/// `c14`; anything else (`s4242`, a run that saved no conversation) is kept as it is.
pub(crate) fn session_label(text: &str) -> String {
    parse_id(text).map(label).unwrap_or_else(|_| text.trim().to_owned())
}

/// One saved conversation, without its messages.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConversationSummary {
    pub id: ConversationId,
    /// The first request, redacted, on one line, at most [`TITLE_CHARS`] characters.
    pub title: String,
    pub cwd: String,
    pub host: String,
    pub model: String,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds of the last message (or of creation).
    pub updated_at: i64,
    pub message_count: i64,
    /// `opsai serve`'s user it belongs to; `None` = made in the terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The kube context a web conversation talks to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
}

/// What [`SessionStore::create`] needs; the first request becomes the title (its message is appended
/// separately, like every other).
#[derive(Debug, Clone, Copy)]
pub struct NewConversation<'a> {
    pub first_request: &'a str,
    pub cwd: &'a str,
    pub host: &'a str,
    pub model: &'a str,
    /// `opsai serve`'s signed-in user; `None` in the terminal.
    pub user: Option<&'a str>,
    /// The kube context (`kube.contexts`) a web conversation talks to.
    pub cluster: Option<&'a str>,
    /// The host set (`opsai serve --hosts PATTERN`) a web conversation's commands run on.
    pub hosts: Option<&'a str>,
}

#[derive(Debug, Error)]
pub enum SessionError {
    #[error("cannot create {path}: {error}; make its directory writable, or set OPSAI_HOME to a writable directory")]
    Io { path: PathBuf, error: std::io::Error },
    #[error(
        "{path} is not a valid SQLite database (damaged, or some other file); opsai left it untouched. \
         Move it aside (e.g. `mv '{path}' '{path}.broken'`) and opsai starts a new one; its conversations \
         may be recoverable with `sqlite3 '{path}.broken' .recover`"
    )]
    Corrupt { path: PathBuf },
    #[error(
        "{path} is locked by another program (waited 5 s); close other opsai or sqlite3 processes using it \
         and try again"
    )]
    Locked { path: PathBuf },
    #[error(
        "{path} has schema version {found}, newer than this opsai knows ({known}); opsai left it untouched. \
         Upgrade opsai, or set OPSAI_HOME elsewhere to keep both"
    )]
    TooNew { path: PathBuf, found: i64, known: i64 },
    #[error(
        "cannot write to {path}: it or its directory is read-only; make both writable, or set OPSAI_HOME \
         to a writable directory"
    )]
    ReadOnly { path: PathBuf },
    #[error(
        "cannot open {path}: check that the file and its directory exist and are readable and writable, \
         or set OPSAI_HOME to a writable directory"
    )]
    CannotOpen { path: PathBuf },
    #[error("no saved conversation c{0}; `opsai sessions list` shows the saved ones")]
    NotFound(ConversationId),
    #[error(
        "c{id} is {user}'s conversation in opsai serve; continue it in the browser, or start a new one here \
         (`opsai sessions show c{id}` shows it)"
    )]
    Web { id: ConversationId, user: String },
    #[error("the sessions database failed: {0}; if this persists, move sessions.db aside to start a new one")]
    Sqlite(#[from] rusqlite::Error),
    /// Postgres (`opsai serve --database`): its message names the database (never the password) and
    /// what to check.
    #[error("{0}")]
    Database(#[from] DatabaseError),
    #[error("cannot store a message's tool calls: {0}")]
    Encode(#[from] serde_json::Error),
}

/// Characters kept of the first request as a title, "…" included.
pub(crate) const TITLE_CHARS: usize = 60;

/// How long a call waits for another process's write to finish before giving up with `Locked`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The conversations in one database: `Send + Sync`; open one store per process (several
/// processes may share the SQLite file, several replicas the Postgres database).
pub struct SessionStore {
    backend: Box<dyn Backend>,
    /// Where it is, for messages: the SQLite file's path, or the URL without its password.
    place: Place,
    redactor: Arc<Redactor>,
}

#[derive(Debug)]
enum Place {
    File(PathBuf),
    Database(String),
}

impl std::fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStore").field("place", &self.place).finish_non_exhaustive()
    }
}

impl SessionStore {
    /// Opens (creating the directory `0700` and the file `0600` when missing) and migrates the schema.
    pub fn open(path: &Path, redactor: Arc<Redactor>) -> Result<Self, SessionError> {
        Self::open_with_timeout(path, redactor, BUSY_TIMEOUT)
    }

    /// [`SessionStore::open`] with another busy timeout (tests of a locked file wait less).
    fn open_with_timeout(path: &Path, redactor: Arc<Redactor>, busy: Duration) -> Result<Self, SessionError> {
        let backend = sqlite::SqliteBackend::open(path, busy)?;
        Ok(Self { backend: Box::new(backend), place: Place::File(path.to_owned()), redactor })
    }

    /// Connects to the Postgres database `url` and migrates its `sessions` tables. Blocks: not on
    /// an async worker thread.
    pub fn open_database(url: &DatabaseUrl, redactor: Arc<Redactor>) -> Result<Self, SessionError> {
        Self::open_database_checking(url, redactor, pool::IDLE_CHECK)
    }

    /// [`SessionStore::open_database`] checking connections idle `idle_check` before use (tests
    /// check every one, or none).
    fn open_database_checking(
        url: &DatabaseUrl,
        redactor: Arc<Redactor>,
        idle_check: Duration,
    ) -> Result<Self, SessionError> {
        let backend = pg::PgBackend::open(url, idle_check)?;
        Ok(Self { backend: Box::new(backend), place: Place::Database(url.to_string()), redactor })
    }

    /// The SQLite file; `None` on Postgres.
    pub fn path(&self) -> Option<&Path> {
        match &self.place {
            Place::File(path) => Some(path),
            Place::Database(_) => None,
        }
    }

    /// Where the conversations are, as it may be shown (a path, or a URL without its password).
    pub fn location(&self) -> String {
        match &self.place {
            Place::File(path) => path.display().to_string(),
            Place::Database(url) => url.clone(),
        }
    }

    /// A new, empty conversation titled after the (redacted) first request (a web one's title may
    /// be longer: [`web::WEB_TITLE_CHARS`]).
    pub fn create(&self, new: &NewConversation<'_>) -> Result<ConversationId, SessionError> {
        let request = self.redactor.redact(new.first_request);
        let title = if new.user.is_some() { cut_title(&request, web::WEB_TITLE_CHARS) } else { title_for(&request) };
        self.backend.create(&NewRow { title: &title, new, now_ms: crate::store::unix_ms() })
    }

    /// Stores one message (redacted) at the end of conversation `id`.
    pub fn append(&self, id: ConversationId, message: &ChatMessage) -> Result<(), SessionError> {
        self.append_titled(id, message, None)
    }

    /// [`Self::append`], naming the conversation `title` (as [`Self::set_title`] would) in the same
    /// transaction: a web conversation's first message names it, and one not stored names nothing.
    pub fn append_naming(&self, id: ConversationId, message: &ChatMessage, title: &str) -> Result<(), SessionError> {
        let title = cut_title(&self.redactor.redact(title), web::WEB_TITLE_CHARS);
        self.append_titled(id, message, Some(&title))
    }

    fn append_titled(
        &self,
        id: ConversationId,
        message: &ChatMessage,
        title: Option<&str>,
    ) -> Result<(), SessionError> {
        let content = self.redactor.redact(&message.content);
        let tool_calls = if message.tool_calls.is_empty() {
            None
        } else {
            let redacted: Vec<ToolCall> = message.tool_calls.iter().map(|call| self.redact_call(call)).collect();
            Some(serde_json::to_string(&redacted)?)
        };
        let row = MessageRow {
            role: role_name(message.role),
            content: &content,
            tool_calls: tool_calls.as_deref(),
            tool_call_id: message.tool_call_id.as_deref(),
            now_ms: crate::store::unix_ms(),
            title,
        };
        if self.backend.append(id, &row)? { Ok(()) } else { Err(SessionError::NotFound(id)) }
    }

    /// Every message of conversation `id`, oldest first.
    pub fn messages(&self, id: ConversationId) -> Result<Vec<ChatMessage>, SessionError> {
        Ok(self.messages_with_meta(id)?.into_iter().map(|stored| stored.message).collect())
    }

    pub fn get(&self, id: ConversationId) -> Result<Option<ConversationSummary>, SessionError> {
        self.backend.get(id)
    }

    /// At most `limit` conversations made in the terminal, the most recently updated first.
    pub fn list(&self, limit: usize) -> Result<Vec<ConversationSummary>, SessionError> {
        self.backend.list(i64::try_from(limit).unwrap_or(i64::MAX))
    }

    /// The most recently updated terminal conversation in `cwd`; when there is none there (or no
    /// `cwd`), the most recently updated of all the terminal's.
    pub fn last(&self, cwd: Option<&str>) -> Result<Option<ConversationSummary>, SessionError> {
        if let Some(cwd) = cwd {
            let in_cwd = self.backend.last_in(cwd)?;
            if in_cwd.is_some() {
                return Ok(in_cwd);
            }
        }
        Ok(self.list(1)?.into_iter().next())
    }

    /// Deletes conversation `id` and its messages; `false` when there was none.
    pub fn delete(&self, id: ConversationId) -> Result<bool, SessionError> {
        self.backend.delete(id)
    }

    /// Records the model the conversation continues with.
    pub(crate) fn set_model(&self, id: ConversationId, model: &str) -> Result<(), SessionError> {
        if self.backend.set_model(id, model)? { Ok(()) } else { Err(SessionError::NotFound(id)) }
    }

    fn redact_call(&self, call: &ToolCall) -> ToolCall {
        ToolCall { id: call.id.clone(), name: call.name.clone(), arguments: self.redactor.redact_json(&call.arguments) }
    }
}

/// The title for a conversation: the request on one line (each line break or other control character
/// becomes a space), trimmed, cut on a character boundary to at most [`TITLE_CHARS`] characters with
/// "…" as the last one when anything was cut.
pub(crate) fn title_for(first_request: &str) -> String {
    cut_title(first_request, TITLE_CHARS)
}

/// `text` on one line, trimmed, at most `max` characters ("…" last when cut).
fn cut_title(text: &str, max: usize) -> String {
    let one_line: String = text.replace("\r\n", " ").chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let one_line = one_line.trim();
    if one_line.chars().count() <= max {
        return one_line.to_owned();
    }
    let mut title: String = one_line.chars().take(max.saturating_sub(1)).collect();
    title.truncate(title.trim_end().len());
    title.push('…');
    title
}
