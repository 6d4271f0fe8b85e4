//! Logins kept in the database (`--database`), for [`Auth`]: a login on one replica is a login on
//! every replica, with the same idle and single sign-on lifetimes as in memory.

use super::super::ApiError;
use super::super::replicas::{LoginKind, Replicas, StoredLogin};
use super::{Auth, IDLE, Principal, SSO_LIFETIME};

impl Auth {
    /// A login kept in the database, as this server would keep it in memory: `None` when there is
    /// none, it idled out, or (single sign-on) it outlived its lifetime.
    pub(super) async fn shared_login(
        &self,
        kind: LoginKind,
        token: &str,
    ) -> Result<Option<(Principal, String)>, ApiError> {
        let Some(shared) = self.shared.get() else { return Ok(None) };
        let now = crate::store::unix_ms();
        let idle_cutoff = now - IDLE.as_millis() as i64;
        let found = shared.login(kind, token, idle_cutoff).await.map_err(|err| unavailable(&err))?;
        let Some(login) = found else { return Ok(None) };
        let age = now - login.opened_ms;
        let principal = Principal { user: login.user, role: login.role, credential: login.credential, sso: login.sso };
        if principal.sso && age >= SSO_LIFETIME.as_millis() as i64 {
            close_shared(shared, token).await;
            return Ok(None);
        }
        Ok(Some((principal, login.csrf)))
    }
}

/// The database is unreachable: nobody is let in, nobody is logged out; try again.
pub(super) fn unavailable(err: &super::super::replicas::ReplicaError) -> ApiError {
    ApiError::database_down("logins", err, "")
}

pub(super) async fn open_shared(
    shared: &Replicas,
    kind: LoginKind,
    token: &str,
    principal: Principal,
    csrf: &str,
) -> Result<(), ApiError> {
    let now = crate::store::unix_ms();
    let _ = shared.prune_logins(now - IDLE.as_millis() as i64, now - SSO_LIFETIME.as_millis() as i64).await;
    let login = StoredLogin {
        user: principal.user,
        role: principal.role,
        credential: principal.credential,
        sso: principal.sso,
        csrf: csrf.to_owned(),
        opened_ms: now,
    };
    shared.open_login(kind, token, &login).await.map_err(|err| unavailable(&err))
}

pub(super) async fn close_shared(shared: &Replicas, token: &str) {
    if let Err(err) = shared.close_login(token).await {
        super::super::log(&format!("logins: a logout was not kept: {err}"));
    }
}
