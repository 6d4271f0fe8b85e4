//! Cookie sessions and API tokens every replica honours: a login on one replica is a login on all,
//! a logout on one ends it everywhere. Only a SHA-256 of each token is stored, so whoever reads the
//! table cannot use what is in it.

use base64::Engine;
use sha2::Digest;

use super::{ReplicaError, Replicas};
use crate::cli::ServeRole;

/// A session (cookie, with a CSRF token) or an API token (bearer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginKind {
    Session,
    Token,
}

impl LoginKind {
    fn name(self) -> &'static str {
        match self {
            LoginKind::Session => "session",
            LoginKind::Token => "token",
        }
    }
}

/// A login as stored.
#[derive(Debug, Clone)]
pub struct StoredLogin {
    pub user: String,
    pub role: ServeRole,
    pub credential: Option<u64>,
    pub sso: bool,
    pub csrf: String,
    /// Unix milliseconds.
    pub opened_ms: i64,
}

fn hashed(token: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(token.as_bytes()))
}

fn role_of(name: &str) -> ServeRole {
    // Anything else than an operator is a viewer: a damaged row grants the least.
    if name == "operator" { ServeRole::Operator } else { ServeRole::Viewer }
}

impl Replicas {
    pub async fn open_login(&self, kind: LoginKind, token: &str, login: &StoredLogin) -> Result<(), ReplicaError> {
        let credential = login.credential.map(|c| c as i64);
        let role = super::super::users::role_name(login.role);
        self.client()
            .await?
            .execute(
                "INSERT INTO web_logins (token_hash, kind, user_name, role, credential, sso, csrf, opened_ms, seen_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)",
                &[
                    &hashed(token),
                    &kind.name(),
                    &login.user,
                    &role,
                    &credential,
                    &login.sso,
                    &login.csrf,
                    &login.opened_ms,
                ],
            )
            .await?;
        Ok(())
    }

    /// The login `token` names, marked as seen now; `None` when there is none of that kind, or it
    /// was last seen before `idle_cutoff_ms`.
    pub async fn login(
        &self,
        kind: LoginKind,
        token: &str,
        idle_cutoff_ms: i64,
    ) -> Result<Option<StoredLogin>, ReplicaError> {
        let row = self
            .client()
            .await?
            .query_opt(
                // Marked seen at most once a minute: a request is a read, not a write, most times.
                "WITH found AS (
                    SELECT user_name, role, credential, sso, csrf, opened_ms FROM web_logins
                    WHERE token_hash = $1 AND kind = $2 AND seen_ms >= $4::bigint
                 ), touched AS (
                    UPDATE web_logins SET seen_ms = $3::bigint
                    WHERE token_hash = $1 AND kind = $2 AND seen_ms >= $4::bigint AND seen_ms < $3::bigint - 60000
                 )
                 SELECT * FROM found",
                &[&hashed(token), &kind.name(), &crate::store::unix_ms(), &idle_cutoff_ms],
            )
            .await?;
        Ok(row.map(|row| StoredLogin {
            user: row.get(0),
            role: role_of(row.get(1)),
            credential: row.get::<_, Option<i64>>(2).map(|c| c as u64),
            sso: row.get(3),
            csrf: row.get(4),
            opened_ms: row.get(5),
        }))
    }

    /// Keeps a started single sign-on login (its `state` and browser binding hashed).
    pub async fn sso_put(&self, state: &str, verifier: &str, nonce: &str, binding: &str) -> Result<(), ReplicaError> {
        let client = self.client().await?;
        // Logins never finished go after an hour, and only the newest 1024 are kept (as in memory):
        // a flood from many addresses pushes out old unfinished logins, never fills the table.
        client
            .execute(
                "DELETE FROM web_sso WHERE started_ms < $1 OR state_hash IN (
                    SELECT state_hash FROM web_sso ORDER BY started_ms DESC OFFSET 1023
                 )",
                &[&(crate::store::unix_ms() - 3_600_000)],
            )
            .await?;
        client
            .execute(
                "INSERT INTO web_sso (state_hash, binding_hash, verifier, nonce, started_ms) VALUES ($1, $2, $3, $4, $5)",
                &[&hashed(state), &hashed(binding), &verifier, &nonce, &crate::store::unix_ms()],
            )
            .await?;
        Ok(())
    }

    /// Takes the login `state` names when `binding` is its browser's and it is younger than
    /// `within`: its PKCE verifier and nonce. Someone else's request takes nothing.
    pub async fn sso_take(
        &self,
        state: &str,
        binding: &str,
        within: std::time::Duration,
    ) -> Result<Option<(String, String)>, ReplicaError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "DELETE FROM web_sso WHERE state_hash = $1 AND binding_hash = $2 RETURNING verifier, nonce, started_ms",
                &[&hashed(state), &hashed(binding)],
            )
            .await?;
        let fresh = |started: i64| crate::store::unix_ms() - started < within.as_millis() as i64;
        Ok(row.filter(|row| fresh(row.get(2))).map(|row| (row.get(0), row.get(1))))
    }

    pub async fn close_login(&self, token: &str) -> Result<(), ReplicaError> {
        self.client().await?.execute("DELETE FROM web_logins WHERE token_hash = $1", &[&hashed(token)]).await?;
        Ok(())
    }

    /// Forgets logins unused since `idle_cutoff_ms` (and single sign-on ones opened before
    /// `sso_cutoff_ms`).
    pub async fn prune_logins(&self, idle_cutoff_ms: i64, sso_cutoff_ms: i64) -> Result<(), ReplicaError> {
        self.client()
            .await?
            .execute(
                "DELETE FROM web_logins WHERE seen_ms < $1 OR (sso AND opened_ms < $2)",
                &[&idle_cutoff_ms, &sso_cutoff_ms],
            )
            .await?;
        Ok(())
    }
}
