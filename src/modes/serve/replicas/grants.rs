//! The operators' "always this session" grants, shared by the replicas (see serve::grants).

use std::collections::HashSet;
use std::sync::Arc;

use super::{ReplicaError, Replicas};

impl Replicas {
    pub async fn grants(&self, conversation: i64, user: &str) -> Result<HashSet<String>, ReplicaError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT grant_key FROM web_grants WHERE conversation = $1 AND user_name = $2",
                &[&conversation, &user],
            )
            .await?;
        Ok(rows.iter().map(|row| row.get(0)).collect())
    }

    /// Replaces `user`'s grants in `conversation` with `given`, in one statement, while the turn
    /// holding `claim` still runs it. (The statement's parts see one snapshot: the delete takes
    /// only keys not given, so the insert never meets a row being deleted.)
    pub async fn keep_grants(
        &self,
        conversation: i64,
        user: &str,
        claim: &Arc<str>,
        given: &HashSet<String>,
    ) -> Result<(), ReplicaError> {
        let keys: Vec<&str> = given.iter().map(String::as_str).collect();
        self.client()
            .await?
            .execute(
                "WITH held AS (
                    SELECT 1 FROM web_turns WHERE conversation = $1 AND claim = $3
                 ), gone AS (
                    DELETE FROM web_grants WHERE conversation = $1 AND user_name = $2
                    AND NOT (grant_key = ANY($4::text[])) AND EXISTS (SELECT 1 FROM held)
                 )
                 INSERT INTO web_grants (conversation, user_name, grant_key)
                 SELECT $1, $2, k FROM unnest($4::text[]) k WHERE EXISTS (SELECT 1 FROM held)
                 ON CONFLICT DO NOTHING",
                &[&conversation, &user, &&**claim, &keys],
            )
            .await?;
        Ok(())
    }

    /// Drops `user`'s grants in `conversation` (`None`: everyone's).
    pub async fn drop_grants(&self, conversation: i64, user: Option<&str>) -> Result<(), ReplicaError> {
        self.client()
            .await?
            .execute(
                "DELETE FROM web_grants WHERE conversation = $1 AND ($2::text IS NULL OR user_name = $2)",
                &[&conversation, &user],
            )
            .await?;
        Ok(())
    }
}
