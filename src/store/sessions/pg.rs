//! The Postgres back end (`opsai serve --database postgres://…`, issue 25): the same two tables as
//! `sessions.db` in Postgres types (ids from identity columns, never reused; times in unix
//! milliseconds; tool calls as `JSON`, which keeps the model's text and key order), migrated as the
//! component `sessions`, used through a small [`Pool`] of connections.
//!
//! Postgres text cannot hold U+0000, which command output may contain. Text is stored with U+0000
//! written as U+E000 `0` and U+E000 (a private-use character) as U+E000 `e`, and read back exactly:
//! a message round-trips on both back ends alike.

use std::borrow::Cow;
use std::time::Duration;

use postgres::Row;
use postgres::types::ToSql;

use super::backend::{Backend, MessageRow, NewRow, message_from_columns, seconds};
use super::pool::Pool;
use super::web::{Cursor, StoredMessage, WebConversation};
use super::{ConversationId, ConversationSummary, SessionError};
use crate::store::database::{DatabaseError, DatabaseUrl};

/// Connections per store: requests beyond this many at once wait for a free one.
pub(super) const POOL_SIZE: usize = 8;

/// The `sessions` component's schema, one step per version. Append only; a released step is never
/// edited.
pub(super) const PG_MIGRATIONS: &[&str] = &[
    // 1: conversations and messages as in sessions.db at its version 3.
    "CREATE TABLE conversations (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        title TEXT NOT NULL,
        cwd TEXT NOT NULL,
        host TEXT NOT NULL,
        model TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        message_count BIGINT NOT NULL DEFAULT 0,
        user_id TEXT,
        cluster_id TEXT,
        hosts TEXT
    );
    CREATE TABLE messages (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id BIGINT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        content TEXT NOT NULL,
        tool_calls JSON,
        tool_call_id TEXT,
        created_at BIGINT NOT NULL
    );
    CREATE INDEX messages_by_conversation ON messages (conversation_id, id);
    CREATE INDEX conversations_by_cwd ON conversations (cwd, updated_at);
    CREATE INDEX conversations_by_updated ON conversations (updated_at);
    CREATE INDEX conversations_by_user ON conversations (user_id, updated_at);",
];

pub(super) struct PgBackend {
    pool: Pool,
}

impl PgBackend {
    /// Connects and migrates; the connection made stays in the pool.
    pub(super) fn open(url: &DatabaseUrl, idle_check: Duration) -> Result<Self, DatabaseError> {
        let mut client = url.connect()?;
        url.migrate(&mut client, "sessions", PG_MIGRATIONS)?;
        Ok(Self { pool: Pool::new(url.clone(), POOL_SIZE, client, idle_check) })
    }

    fn rows(&self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, DatabaseError> {
        self.pool.run(|connection| {
            let statement = connection.statement(sql)?;
            connection.client.query(&statement, params)
        })
    }

    fn execute(&self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, DatabaseError> {
        self.pool.run(|connection| {
            let statement = connection.statement(sql)?;
            connection.client.execute(&statement, params)
        })
    }

    /// A row the store cannot read (not written by opsai) as an error naming the database.
    fn unreadable(&self, reason: String) -> SessionError {
        SessionError::Database(DatabaseError::Query { url: self.pool.url().to_string(), reason })
    }

    fn summaries(&self, rows: Vec<Row>) -> Result<Vec<ConversationSummary>, SessionError> {
        rows.iter().map(|row| summary_from_row(row).map_err(|err| self.pool.url().query_error(&err).into())).collect()
    }

    fn webs(&self, rows: Vec<Row>) -> Result<Vec<WebConversation>, SessionError> {
        rows.iter().map(|row| web_from_row(row).map_err(|err| self.pool.url().query_error(&err).into())).collect()
    }
}

impl Backend for PgBackend {
    fn create(&self, row: &NewRow<'_>) -> Result<ConversationId, SessionError> {
        let new = row.new;
        let (title, cwd, host, model) = (encode(row.title), encode(new.cwd), encode(new.host), encode(new.model));
        let (user, cluster, hosts) = (new.user.map(encode), new.cluster.map(encode), new.hosts.map(encode));
        let rows = self.rows(
            "INSERT INTO conversations \
             (title, cwd, host, model, created_at, updated_at, message_count, user_id, cluster_id, hosts) \
             VALUES ($1, $2, $3, $4, $5, $5, 0, $6, $7, $8) RETURNING id",
            &[&title, &cwd, &host, &model, &row.now_ms, &user.as_deref(), &cluster.as_deref(), &hosts.as_deref()],
        )?;
        match rows.first().map(|row| row.try_get::<_, i64>(0)) {
            Some(Ok(id)) => Ok(id),
            Some(Err(err)) => Err(self.pool.url().query_error(&err).into()),
            None => Err(self.unreadable("the new conversation's id did not come back".to_owned())),
        }
    }

    fn append(&self, id: ConversationId, row: &MessageRow<'_>) -> Result<bool, SessionError> {
        let (content, tool_call_id, title) = (encode(row.content), row.tool_call_id.map(encode), row.title.map(encode));
        let stored = self.pool.run(|connection| {
            let bump = connection.statement(
                "UPDATE conversations SET message_count = message_count + 1, updated_at = GREATEST(updated_at, $2), \
                 title = CASE WHEN btrim(title) = '' THEN COALESCE($3, title) ELSE title END WHERE id = $1",
            )?;
            let insert = connection.statement(
                "INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id, created_at) \
                 VALUES ($1, $2, $3, $4::TEXT::JSON, $5, $6)",
            )?;
            // The conversation's row is locked by the update until the commit, so messages of one
            // conversation get their ids in the order they are stored.
            let mut transaction = connection.client.transaction()?;
            if transaction.execute(&bump, &[&id, &row.now_ms, &title.as_deref()])? == 0 {
                return Ok(false);
            }
            let params: [&(dyn ToSql + Sync); 6] =
                [&id, &row.role, &content, &row.tool_calls, &tool_call_id.as_deref(), &row.now_ms];
            transaction.execute(&insert, &params)?;
            transaction.commit()?;
            Ok(true)
        })?;
        Ok(stored)
    }

    fn get(&self, id: ConversationId) -> Result<Option<ConversationSummary>, SessionError> {
        let rows = self.rows(
            "SELECT id, title, cwd, host, model, created_at, updated_at, message_count, user_id, cluster_id \
             FROM conversations WHERE id = $1",
            &[&id],
        )?;
        Ok(self.summaries(rows)?.into_iter().next())
    }

    fn list(&self, limit: i64) -> Result<Vec<ConversationSummary>, SessionError> {
        let rows = self.rows(
            "SELECT id, title, cwd, host, model, created_at, updated_at, message_count, user_id, cluster_id \
             FROM conversations WHERE user_id IS NULL ORDER BY updated_at DESC, id DESC LIMIT $1",
            &[&limit],
        )?;
        self.summaries(rows)
    }

    fn last_in(&self, cwd: &str) -> Result<Option<ConversationSummary>, SessionError> {
        let rows = self.rows(
            "SELECT id, title, cwd, host, model, created_at, updated_at, message_count, user_id, cluster_id \
             FROM conversations WHERE cwd = $1 AND user_id IS NULL ORDER BY updated_at DESC, id DESC LIMIT 1",
            &[&encode(cwd)],
        )?;
        Ok(self.summaries(rows)?.into_iter().next())
    }

    fn delete(&self, id: ConversationId) -> Result<bool, SessionError> {
        Ok(self.execute("DELETE FROM conversations WHERE id = $1", &[&id])? > 0)
    }

    fn set_model(&self, id: ConversationId, model: &str) -> Result<bool, SessionError> {
        Ok(self.execute("UPDATE conversations SET model = $2 WHERE id = $1", &[&id, &encode(model)])? > 0)
    }

    fn set_title(&self, id: ConversationId, title: &str) -> Result<bool, SessionError> {
        Ok(self.execute("UPDATE conversations SET title = $2 WHERE id = $1", &[&id, &encode(title)])? > 0)
    }

    fn list_for_user(&self, user: &str) -> Result<Vec<WebConversation>, SessionError> {
        let rows = self.rows(
            "SELECT id, title, user_id, cluster_id, message_count, created_at, updated_at, hosts FROM conversations \
             WHERE user_id = $1 ORDER BY updated_at DESC, id DESC",
            &[&encode(user)],
        )?;
        self.webs(rows)
    }

    fn get_web(&self, id: ConversationId) -> Result<Option<WebConversation>, SessionError> {
        let rows = self.rows(
            "SELECT id, title, user_id, cluster_id, message_count, created_at, updated_at, hosts FROM conversations \
             WHERE id = $1",
            &[&id],
        )?;
        Ok(self.webs(rows)?.into_iter().next())
    }

    fn messages_with_meta(&self, id: ConversationId) -> Result<Option<Vec<StoredMessage>>, SessionError> {
        // One statement, one snapshot: no row = no conversation; a row without a message id = a
        // conversation without messages.
        let rows = self.rows(
            "SELECT m.role, m.content, m.tool_calls::TEXT, m.tool_call_id, m.id, m.created_at \
             FROM conversations c LEFT JOIN messages m ON m.conversation_id = c.id WHERE c.id = $1 ORDER BY m.id",
            &[&id],
        )?;
        if rows.is_empty() {
            return Ok(None);
        }
        let mut messages = Vec::with_capacity(rows.len());
        for row in &rows {
            let read = || -> Result<Option<StoredMessage>, String> {
                let Some(message_id) = row.try_get::<_, Option<i64>>(4).map_err(|e| e.to_string())? else {
                    return Ok(None);
                };
                let column = |n: usize| row.try_get::<_, Option<String>>(n).map_err(|e| e.to_string());
                let role = column(0)?.unwrap_or_default();
                let content = decode(column(1)?.unwrap_or_default());
                let message = message_from_columns(&role, content, column(2)?.as_deref(), column(3)?.map(decode))?;
                let created_ms: i64 = row.try_get(5).map_err(|e| e.to_string())?;
                Ok(Some(StoredMessage { id: message_id, message, created_at: seconds(created_ms) }))
            };
            messages.extend(read().map_err(|reason| self.unreadable(reason))?);
        }
        Ok(Some(messages))
    }

    fn count_for_user(&self, user: &str) -> Result<u64, SessionError> {
        let rows = self.rows("SELECT COUNT(*) FROM conversations WHERE user_id = $1", &[&encode(user)])?;
        let count = rows.first().map(|row| row.try_get::<_, i64>(0)).unwrap_or(Ok(0));
        Ok(u64::try_from(count.map_err(|err| self.pool.url().query_error(&err))?).unwrap_or(0))
    }

    fn page_for_user(
        &self,
        user: &str,
        limit: i64,
        before: Option<Cursor>,
    ) -> Result<Vec<(WebConversation, i64)>, SessionError> {
        let (updated, id) = before.map_or((None, None), |c| (Some(c.updated_ms), Some(c.id)));
        let rows = self.rows(
            "SELECT id, title, user_id, cluster_id, message_count, created_at, updated_at, hosts FROM conversations \
             WHERE user_id = $1 AND ($2::BIGINT IS NULL OR updated_at < $2 OR (updated_at = $2 AND id < $3)) \
             ORDER BY updated_at DESC, id DESC LIMIT $4",
            &[&encode(user), &updated, &id, &limit],
        )?;
        let page = |row: &Row| -> Result<(WebConversation, i64), postgres::Error> {
            Ok((web_from_row(row)?, row.try_get(6)?))
        };
        rows.iter().map(page).collect::<Result<_, _>>().map_err(|err| self.pool.url().query_error(&err).into())
    }
}

fn summary_from_row(row: &Row) -> Result<ConversationSummary, postgres::Error> {
    Ok(ConversationSummary {
        id: row.try_get(0)?,
        title: decode(row.try_get(1)?),
        cwd: decode(row.try_get(2)?),
        host: decode(row.try_get(3)?),
        model: decode(row.try_get(4)?),
        created_at: row.try_get(5)?,
        updated_at: row.try_get(6)?,
        message_count: row.try_get(7)?,
        user: row.try_get::<_, Option<String>>(8)?.map(decode),
        cluster: row.try_get::<_, Option<String>>(9)?.map(decode),
    })
}

fn web_from_row(row: &Row) -> Result<WebConversation, postgres::Error> {
    Ok(WebConversation {
        id: row.try_get(0)?,
        title: decode(row.try_get(1)?),
        user: row.try_get::<_, Option<String>>(2)?.map(decode),
        cluster: row.try_get::<_, Option<String>>(3)?.map(decode),
        message_count: row.try_get(4)?,
        created_at: seconds(row.try_get(5)?),
        updated_at: seconds(row.try_get(6)?),
        hosts: row.try_get::<_, Option<String>>(7)?.map(decode),
    })
}

/// The escape character of stored text (private use: not in text people or programs write).
const ESCAPE: char = '\u{E000}';

/// `text` as Postgres can store it: U+0000 → ESCAPE `0`, ESCAPE → ESCAPE `e`.
pub(crate) fn encode(text: &str) -> Cow<'_, str> {
    if !text.contains(['\0', ESCAPE]) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\0' => out.extend([ESCAPE, '0']),
            ESCAPE => out.extend([ESCAPE, 'e']),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The text [`encode`] was given (an ESCAPE not followed by `0` or `e` is kept as it is).
pub(crate) fn decode(stored: String) -> String {
    if !stored.contains(ESCAPE) {
        return stored;
    }
    let mut out = String::with_capacity(stored.len());
    let mut chars = stored.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            (ESCAPE, Some('0')) => {
                chars.next();
                out.push('\0');
            }
            (ESCAPE, Some('e')) => {
                chars.next();
                out.push(ESCAPE);
            }
            (c, _) => out.push(c),
        }
    }
    out
}
