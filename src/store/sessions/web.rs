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

    /// Renames conversation `id`: `title` redacted, on one line, at most [`WEB_TITLE_CHARS`] characters.
    pub fn set_title(&self, id: ConversationId, title: &str) -> Result<(), SessionError> {
        let title = cut_title(&self.redactor.redact(title), WEB_TITLE_CHARS);
        let updated = self.with_connection(|connection| {
            connection.prepare_cached("UPDATE conversations SET title = ?2 WHERE id = ?1")?.execute(params![id, title])
        })?;
        if updated == 0 { Err(SessionError::NotFound(id)) } else { Ok(()) }
    }
}
