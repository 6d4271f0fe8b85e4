//! What `opsai serve` reads and changes: one user's conversations, a conversation with its user and
//! cluster, messages with their ids and times, and titles. Times here are unix seconds (the web
//! API's), not the milliseconds stored.

use super::{ConversationId, SessionError, SessionStore, cut_title};
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

impl SessionStore {
    /// `user`'s conversations, the most recently updated first.
    pub fn list_for_user(&self, user: &str) -> Result<Vec<WebConversation>, SessionError> {
        self.backend.list_for_user(user)
    }

    /// Conversation `id`, whoever it belongs to (the caller checks `user`).
    pub fn get_web(&self, id: ConversationId) -> Result<Option<WebConversation>, SessionError> {
        self.backend.get_web(id)
    }

    /// Every message of conversation `id` with its id and time, oldest first.
    pub fn messages_with_meta(&self, id: ConversationId) -> Result<Vec<StoredMessage>, SessionError> {
        self.backend.messages_with_meta(id)?.ok_or(SessionError::NotFound(id))
    }

    /// How many conversations `user` has.
    pub fn count_for_user(&self, user: &str) -> Result<u64, SessionError> {
        self.backend.count_for_user(user)
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
        // One more than asked for: whether it comes says whether a next page exists.
        let asked = i64::try_from(limit).unwrap_or(i64::MAX).saturating_add(1);
        let mut rows = self.backend.page_for_user(user, asked, before)?;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = rows.last().filter(|_| more).map(|(c, updated_ms)| Cursor { updated_ms: *updated_ms, id: c.id });
        Ok((rows.into_iter().map(|(c, _)| c).collect(), next))
    }

    /// Renames conversation `id`: `title` redacted, on one line, at most [`WEB_TITLE_CHARS`] characters.
    pub fn set_title(&self, id: ConversationId, title: &str) -> Result<(), SessionError> {
        let title = cut_title(&self.redactor.redact(title), WEB_TITLE_CHARS);
        if self.backend.set_title(id, &title)? { Ok(()) } else { Err(SessionError::NotFound(id)) }
    }
}
