//! What `opsai serve` reads and changes: one user's conversations, a conversation with its user and
//! cluster, messages with their ids and times, and titles. Times here are unix seconds (the web
//! API's), not the milliseconds stored.

use rusqlite::{OptionalExtension, Row, params};

use super::{ConversationId, SessionError, SessionStore, cut_title, message_from_row};
use crate::protocol::ChatMessage;

/// Characters kept of a web conversation's title, "…" included.
pub(crate) const WEB_TITLE_CHARS: usize = 80;

/// A conversation as the web API shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WebConversation {
    pub id: ConversationId,
    pub title: String,
    /// Its owner; `None` = made in the terminal (no web user may see it).
    pub user: Option<String>,
    /// The kube context it talks to; `None` = kubectl's current one.
    pub cluster: Option<String>,
    /// The host set (an inventory pattern) its commands run on; `None` = the server itself.
    pub hosts: Option<String>,
    pub message_count: i64,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds of the last message (or of creation).
    pub updated_at: i64,
}

/// One stored message with its row id (stable, increasing in the order stored) and time.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    pub id: i64,
    pub message: ChatMessage,
    /// Unix seconds.
    pub created_at: i64,
}

/// Where a page of a user's conversations ended: its last one's update time (ms) and id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    pub updated_ms: i64,
    pub id: ConversationId,
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}_{}", self.updated_ms, self.id)
    }
}

impl std::str::FromStr for Cursor {
    type Err = ();

    fn from_str(text: &str) -> Result<Self, ()> {
        let (updated, id) = text.split_once('_').ok_or(())?;
        Ok(Self { updated_ms: updated.parse().map_err(|_| ())?, id: id.parse().map_err(|_| ())? })
    }
}

const WEB_COLUMNS: &str = "id, title, user_id, cluster_id, message_count, created_at, updated_at, hosts";

fn web_from_row(row: &Row<'_>) -> rusqlite::Result<WebConversation> {
    Ok(WebConversation {
        id: row.get(0)?,
        title: row.get(1)?,
        user: row.get(2)?,
        cluster: row.get(3)?,
        message_count: row.get(4)?,
        created_at: seconds(row.get(5)?),
        updated_at: seconds(row.get(6)?),
        hosts: row.get(7)?,
    })
}

fn seconds(ms: i64) -> i64 {
    ms.div_euclid(1000)
}

impl SessionStore {
    /// `user`'s conversations, the most recently updated first.
    pub fn list_for_user(&self, user: &str) -> Result<Vec<WebConversation>, SessionError> {
        self.with_connection(|connection| {
            connection
                .prepare_cached(&format!(
                    "SELECT {WEB_COLUMNS} FROM conversations WHERE user_id = ?1 ORDER BY updated_at DESC, id DESC"
                ))?
                .query_map(params![user], web_from_row)?
                .collect()
        })
    }

    /// Conversation `id`, whoever it belongs to (the caller checks `user`).
    pub fn get_web(&self, id: ConversationId) -> Result<Option<WebConversation>, SessionError> {
        self.with_connection(|connection| {
            connection
                .prepare_cached(&format!("SELECT {WEB_COLUMNS} FROM conversations WHERE id = ?1"))?
                .query_row(params![id], web_from_row)
                .optional()
        })
    }

    /// Every message of conversation `id` with its id and time, oldest first.
    pub fn messages_with_meta(&self, id: ConversationId) -> Result<Vec<StoredMessage>, SessionError> {
        let messages = self.with_connection(|connection| {
            // One read transaction: the existence check and the rows come from the same snapshot.
            let transaction = connection.transaction()?;
            let exists =
                transaction.prepare_cached("SELECT 1 FROM conversations WHERE id = ?1")?.exists(params![id])?;
            if !exists {
                return Ok(None);
            }
            let mut statement = transaction.prepare_cached(
                "SELECT role, content, tool_calls, tool_call_id, id, created_at FROM messages \
                 WHERE conversation_id = ?1 ORDER BY id",
            )?;
            let rows = statement.query_map(params![id], |row| {
                Ok(StoredMessage { message: message_from_row(row)?, id: row.get(4)?, created_at: seconds(row.get(5)?) })
            })?;
            Ok(Some(rows.collect::<Result<Vec<_>, _>>()?))
        })?;
        messages.ok_or(SessionError::NotFound(id))
    }

    /// How many conversations `user` has.
    pub fn count_for_user(&self, user: &str) -> Result<u64, SessionError> {
        self.with_connection(|connection| {
            connection
                .prepare_cached("SELECT COUNT(*) FROM conversations WHERE user_id = ?1")?
                .query_row(params![user], |row| row.get::<_, i64>(0))
                .map(|n| u64::try_from(n).unwrap_or(0))
        })
    }

    /// At most `limit` of `user`'s conversations, the most recently updated first, starting after
    /// `before` (the [`Cursor`] a previous page ended with); and the cursor of the page's last one
    /// when more follow.
    pub fn page_for_user(
        &self,
        user: &str,
        limit: usize,
        before: Option<Cursor>,
    ) -> Result<(Vec<WebConversation>, Option<Cursor>), SessionError> {
        let (updated, id) = before.map_or((None, None), |c| (Some(c.updated_ms), Some(c.id)));
        let mut rows: Vec<(WebConversation, i64)> = self.with_connection(|connection| {
            connection
                .prepare_cached(&format!(
                    "SELECT {WEB_COLUMNS}, updated_at AS page_updated_ms FROM conversations WHERE user_id = ?1 \
                     AND (?2 IS NULL OR updated_at < ?2 OR (updated_at = ?2 AND id < ?3)) \
                     ORDER BY updated_at DESC, id DESC LIMIT ?4"
                ))?
                .query_map(
                    params![user, updated, id, i64::try_from(limit).unwrap_or(i64::MAX).saturating_add(1)],
                    |row| Ok((web_from_row(row)?, row.get("page_updated_ms")?)),
                )?
                .collect()
        })?;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = rows.last().filter(|_| more).map(|(c, updated_ms)| Cursor { updated_ms: *updated_ms, id: c.id });
        Ok((rows.into_iter().map(|(c, _)| c).collect(), next))
    }

    /// Renames conversation `id`: `title` redacted, on one line, at most [`WEB_TITLE_CHARS`] characters.
    pub fn set_title(&self, id: ConversationId, title: &str) -> Result<(), SessionError> {
        let title = cut_title(&self.redactor.redact(title), WEB_TITLE_CHARS);
        let updated = self.with_connection(|connection| {
            connection.prepare_cached("UPDATE conversations SET title = ?2 WHERE id = ?1")?.execute(params![id, title])
        })?;
        if updated == 0 { Err(SessionError::NotFound(id)) } else { Ok(()) }
    }
}
