//! What a back end of [`SessionStore`](super::SessionStore) does: rows in, rows out. Everything
//! that must be the same on every back end (redaction, titles, the error when a conversation is
//! missing, the paging rule) happens above this, once.

use super::web::{Cursor, StoredMessage, WebConversation};
use super::{ConversationId, ConversationSummary, NewConversation, SessionError};
use crate::protocol::{ChatMessage, Role};

/// A new conversation's row: the caller's values, its title already redacted and cut.
pub(super) struct NewRow<'a> {
    pub title: &'a str,
    pub new: &'a NewConversation<'a>,
    pub now_ms: i64,
}

/// One message's row, already redacted; `tool_calls` is JSON.
pub(super) struct MessageRow<'a> {
    pub role: &'static str,
    pub content: &'a str,
    pub tool_calls: Option<&'a str>,
    pub tool_call_id: Option<&'a str>,
    pub now_ms: i64,
    /// The conversation's title, given in the same transaction (its first message names it).
    pub title: Option<&'a str>,
}

/// The conversations and messages of one database. Every call blocks.
pub(super) trait Backend: Send + Sync {
    fn create(&self, row: &NewRow<'_>) -> Result<ConversationId, SessionError>;
    /// Stores the message and bumps the conversation's count and update time in one transaction;
    /// `false` (nothing stored) when there is no conversation `id`.
    fn append(&self, id: ConversationId, row: &MessageRow<'_>) -> Result<bool, SessionError>;
    fn get(&self, id: ConversationId) -> Result<Option<ConversationSummary>, SessionError>;
    /// The terminal's conversations (no user), the most recently updated first.
    fn list(&self, limit: i64) -> Result<Vec<ConversationSummary>, SessionError>;
    /// The most recently updated terminal conversation in `cwd`.
    fn last_in(&self, cwd: &str) -> Result<Option<ConversationSummary>, SessionError>;
    /// `false` when there was none; its messages go with it.
    fn delete(&self, id: ConversationId) -> Result<bool, SessionError>;
    /// `false` when there is no conversation `id`.
    fn set_model(&self, id: ConversationId, model: &str) -> Result<bool, SessionError>;
    /// `false` when there is no conversation `id`.
    fn set_title(&self, id: ConversationId, title: &str) -> Result<bool, SessionError>;
    fn list_for_user(&self, user: &str) -> Result<Vec<WebConversation>, SessionError>;
    fn get_web(&self, id: ConversationId) -> Result<Option<WebConversation>, SessionError>;
    /// `None` when there is no conversation `id`; existence and rows from one snapshot.
    fn messages_with_meta(&self, id: ConversationId) -> Result<Option<Vec<StoredMessage>>, SessionError>;
    fn count_for_user(&self, user: &str) -> Result<u64, SessionError>;
    /// At most `limit` of `user`'s conversations after `before`, newest first, each with its update
    /// time in milliseconds (the cursor's).
    fn page_for_user(
        &self,
        user: &str,
        limit: i64,
        before: Option<Cursor>,
    ) -> Result<Vec<(WebConversation, i64)>, SessionError>;
}

pub(super) fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

fn role_from_name(name: &str) -> Option<Role> {
    [Role::System, Role::User, Role::Assistant, Role::Tool].into_iter().find(|role| role_name(*role) == name)
}

/// A stored message back as the model saw it; the reason when a row is not one opsai wrote.
pub(super) fn message_from_columns(
    role: &str,
    content: String,
    tool_calls: Option<&str>,
    tool_call_id: Option<String>,
) -> Result<ChatMessage, String> {
    let role = role_from_name(role).ok_or_else(|| format!("unknown message role {role:?}"))?;
    let tool_calls = match tool_calls {
        None => Vec::new(),
        Some(json) => serde_json::from_str(json).map_err(|error| format!("unreadable tool calls: {error}"))?,
    };
    Ok(ChatMessage { role, content, tool_calls, tool_call_id })
}

/// Unix seconds of a stored time in milliseconds (what the web API shows).
pub(super) fn seconds(ms: i64) -> i64 {
    ms.div_euclid(1000)
}
