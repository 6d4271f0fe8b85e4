//! The default back end: `$OPSAI_HOME/sessions.db` (SQLite, WAL). One connection behind a mutex;
//! several processes share the file (each append is one short `BEGIN IMMEDIATE` transaction, and
//! a 5 s busy timeout waits for the others).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rusqlite::types::Type;
use rusqlite::{Connection, Row, TransactionBehavior, params};

use super::backend::{Backend, MessageRow, NewRow, message_from_columns, seconds};
use super::web::{Cursor, StoredMessage, WebConversation};
use super::{ConversationId, ConversationSummary, SessionError, schema};

pub(super) struct SqliteBackend {
    path: PathBuf,
    connection: Mutex<Connection>,
}

impl SqliteBackend {
    pub(super) fn open(path: &Path, busy: Duration) -> Result<Self, SessionError> {
        let connection = schema::open(path, busy)?;
        Ok(Self { path: path.to_owned(), connection: Mutex::new(connection) })
    }

    /// Runs `work` on the connection; SQLite errors become the `SessionError` that says what to do.
    fn with_connection<T>(&self, work: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, SessionError> {
        // A panic while the lock was held cannot leave a transaction open (it rolls back on drop).
        let mut connection = self.connection.lock().unwrap_or_else(PoisonError::into_inner);
        work(&mut connection).map_err(|error| schema::classify(&self.path, error))
    }

    fn summaries(&self, sql: &str, param: &dyn rusqlite::ToSql) -> Result<Vec<ConversationSummary>, SessionError> {
        self.with_connection(|connection| {
            connection.prepare_cached(sql)?.query_map([param], summary_from_row)?.collect()
        })
    }

    fn web_rows(&self, sql: &str, param: &dyn rusqlite::ToSql) -> Result<Vec<WebConversation>, SessionError> {
        self.with_connection(|connection| connection.prepare_cached(sql)?.query_map([param], web_from_row)?.collect())
    }

    fn update(&self, sql: &str, id: ConversationId, value: &str) -> Result<bool, SessionError> {
        Ok(self.with_connection(|connection| connection.prepare_cached(sql)?.execute(params![id, value]))? > 0)
    }
}

const SUMMARY_COLUMNS: &str = "id, title, cwd, host, model, created_at, updated_at, message_count, user_id, cluster_id";
const WEB_COLUMNS: &str = "id, title, user_id, cluster_id, message_count, created_at, updated_at, hosts";

impl Backend for SqliteBackend {
    fn create(&self, row: &NewRow<'_>) -> Result<ConversationId, SessionError> {
        let new = row.new;
        self.with_connection(|connection| {
            connection
                .prepare_cached(
                    "INSERT INTO conversations \
                     (title, cwd, host, model, created_at, updated_at, message_count, user_id, cluster_id, hosts) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?5, 0, ?6, ?7, ?8)",
                )?
                .execute(params![
                    row.title, new.cwd, new.host, new.model, row.now_ms, new.user, new.cluster, new.hosts
                ])?;
            Ok(connection.last_insert_rowid())
        })
    }

    fn append(&self, id: ConversationId, row: &MessageRow<'_>) -> Result<bool, SessionError> {
        self.with_connection(|connection| {
            let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let bumped = transaction
                .prepare_cached(
                    "UPDATE conversations SET message_count = message_count + 1, updated_at = max(updated_at, ?2), \
                     title = CASE WHEN trim(title) = '' THEN coalesce(?3, title) ELSE title END WHERE id = ?1",
                )?
                .execute(params![id, row.now_ms, row.title])?;
            if bumped == 0 {
                return Ok(false);
            }
            transaction
                .prepare_cached(
                    "INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id, created_at) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(params![id, row.role, row.content, row.tool_calls, row.tool_call_id, row.now_ms])?;
            transaction.commit()?;
            Ok(true)
        })
    }

    fn get(&self, id: ConversationId) -> Result<Option<ConversationSummary>, SessionError> {
        let sql = format!("SELECT {SUMMARY_COLUMNS} FROM conversations WHERE id = ?1");
        Ok(self.summaries(&sql, &id)?.into_iter().next())
    }

    fn list(&self, limit: i64) -> Result<Vec<ConversationSummary>, SessionError> {
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM conversations WHERE user_id IS NULL \
             ORDER BY updated_at DESC, id DESC LIMIT ?1"
        );
        self.summaries(&sql, &limit)
    }

    fn last_in(&self, cwd: &str) -> Result<Option<ConversationSummary>, SessionError> {
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM conversations WHERE cwd = ?1 AND user_id IS NULL \
             ORDER BY updated_at DESC, id DESC LIMIT 1"
        );
        Ok(self.summaries(&sql, &cwd)?.into_iter().next())
    }

    fn delete(&self, id: ConversationId) -> Result<bool, SessionError> {
        self.with_connection(|connection| {
            let deleted = connection.prepare_cached("DELETE FROM conversations WHERE id = ?1")?.execute(params![id])?;
            Ok(deleted > 0)
        })
    }

    fn set_model(&self, id: ConversationId, model: &str) -> Result<bool, SessionError> {
        self.update("UPDATE conversations SET model = ?2 WHERE id = ?1", id, model)
    }

    fn set_title(&self, id: ConversationId, title: &str) -> Result<bool, SessionError> {
        self.update("UPDATE conversations SET title = ?2 WHERE id = ?1", id, title)
    }

    fn list_for_user(&self, user: &str) -> Result<Vec<WebConversation>, SessionError> {
        let sql =
            format!("SELECT {WEB_COLUMNS} FROM conversations WHERE user_id = ?1 ORDER BY updated_at DESC, id DESC");
        self.web_rows(&sql, &user)
    }

    fn get_web(&self, id: ConversationId) -> Result<Option<WebConversation>, SessionError> {
        let sql = format!("SELECT {WEB_COLUMNS} FROM conversations WHERE id = ?1");
        Ok(self.web_rows(&sql, &id)?.into_iter().next())
    }

    fn messages_with_meta(&self, id: ConversationId) -> Result<Option<Vec<StoredMessage>>, SessionError> {
        self.with_connection(|connection| {
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
        })
    }

    fn count_for_user(&self, user: &str) -> Result<u64, SessionError> {
        self.with_connection(|connection| {
            connection
                .prepare_cached("SELECT COUNT(*) FROM conversations WHERE user_id = ?1")?
                .query_row(params![user], |row| row.get::<_, i64>(0))
                .map(|n| u64::try_from(n).unwrap_or(0))
        })
    }

    fn page_for_user(
        &self,
        user: &str,
        limit: i64,
        before: Option<Cursor>,
    ) -> Result<Vec<(WebConversation, i64)>, SessionError> {
        let (updated, id) = before.map_or((None, None), |c| (Some(c.updated_ms), Some(c.id)));
        self.with_connection(|connection| {
            connection
                .prepare_cached(&format!(
                    "SELECT {WEB_COLUMNS}, updated_at AS page_updated_ms FROM conversations WHERE user_id = ?1 \
                     AND (?2 IS NULL OR updated_at < ?2 OR (updated_at = ?2 AND id < ?3)) \
                     ORDER BY updated_at DESC, id DESC LIMIT ?4"
                ))?
                .query_map(params![user, updated, id, limit], |row| {
                    Ok((web_from_row(row)?, row.get("page_updated_ms")?))
                })?
                .collect()
        })
    }
}

fn summary_from_row(row: &Row<'_>) -> rusqlite::Result<ConversationSummary> {
    Ok(ConversationSummary {
        id: row.get(0)?,
        title: row.get(1)?,
        cwd: row.get(2)?,
        host: row.get(3)?,
        model: row.get(4)?,
        created_at: row.get(5)?,
        updated_at: row.get(6)?,
        message_count: row.get(7)?,
        user: row.get(8)?,
        cluster: row.get(9)?,
    })
}

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

fn message_from_row(row: &Row<'_>) -> rusqlite::Result<crate::protocol::ChatMessage> {
    let role: String = row.get(0)?;
    let tool_calls = row.get_ref(2)?.as_str_or_null()?;
    message_from_columns(&role, row.get(1)?, tool_calls, row.get(3)?)
        .map_err(|reason| rusqlite::Error::FromSqlConversionFailure(0, Type::Text, reason.into()))
}
