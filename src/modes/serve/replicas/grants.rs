//! The operators' "always this session" grants, shared by the replicas (see serve::grants). Each
//! names the password it was given under (`credential`): a user given a new password, or a new
//! user under a removed one's name, does not find them.

use std::collections::HashSet;
use std::sync::Arc;

use super::{ReplicaError, Replicas};

impl Replicas {
    /// `user`'s grants in `conversation`, given under `credential` (the password of the login).
    pub async fn grants(
        &self,
        conversation: i64,
        user: &str,
        credential: Option<u64>,
    ) -> Result<HashSet<String>, ReplicaError> {
        let credential = credential.map(|c| c as i64);
        let rows = self
            .client()
            .await?
            .query(
                "SELECT grant_key FROM web_grants
                 WHERE conversation = $1 AND user_name = $2 AND credential IS NOT DISTINCT FROM $3",
                &[&conversation, &user, &credential],
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
        credential: Option<u64>,
        claim: &Arc<str>,
        given: &HashSet<String>,
    ) -> Result<(), ReplicaError> {
        let keys: Vec<&str> = given.iter().map(String::as_str).collect();
        let credential = credential.map(|c| c as i64);
        self.client()
            .await?
            .execute(
                "WITH held AS (
                    SELECT 1 FROM web_turns WHERE conversation = $1 AND claim = $3
                 ), gone AS (
                    DELETE FROM web_grants WHERE conversation = $1 AND user_name = $2
                    AND NOT (grant_key = ANY($4::text[])) AND EXISTS (SELECT 1 FROM held)
                 )
                 INSERT INTO web_grants (conversation, user_name, grant_key, credential)
                 SELECT $1, $2, k, $5 FROM unnest($4::text[]) k WHERE EXISTS (SELECT 1 FROM held)
                 ON CONFLICT (conversation, user_name, grant_key) DO UPDATE SET credential = EXCLUDED.credential",
                &[&conversation, &user, &&**claim, &keys, &credential],
            )
            .await?;
        Ok(())
    }

    /// Drops `user`'s grants in `conversation`.
    pub async fn drop_grants(&self, conversation: i64, user: &str) -> Result<(), ReplicaError> {
        self.client()
            .await?
            .execute("DELETE FROM web_grants WHERE conversation = $1 AND user_name = $2", &[&conversation, &user])
            .await?;
        Ok(())
    }

    /// Drops what the replicas keep of a deleted conversation: its grants, and its turn's claim and
    /// events, so a turn that outlasted the delete's wait (on any replica) keeps nothing after it.
    pub async fn forget_conversation(&self, conversation: i64) -> Result<(), ReplicaError> {
        self.client()
            .await?
            .execute(
                "WITH grants AS (
                    DELETE FROM web_grants WHERE conversation = $1
                 ), events AS (
                    DELETE FROM web_turn_events WHERE conversation = $1
                 )
                 DELETE FROM web_turns WHERE conversation = $1",
                &[&conversation],
            )
            .await?;
        Ok(())
    }
}
