//! Who is asking: the access token (token mode) or a user's password (users mode), cookie sessions
//! with their CSRF token, bearer API tokens, and the login rate limit. Everything is in memory: a
//! restart logs everyone out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::FromRequestParts;
use axum::http::request::Parts as RequestParts;
use axum::http::{Method, StatusCode};
use base64::Engine;

use super::ApiError;
use super::headers::{bearer_token, session_cookie};
use super::replicas::{LoginKind, Replicas};
use super::state::AppState;
use super::throttle::Throttle;
use super::users::{UsersSource, dummy_hash, verify_password};
use shared::{close_shared, open_shared};

mod shared;
use crate::cli::ServeRole;

/// A session or API token unused this long is forgotten.
const IDLE: Duration = Duration::from_secs(12 * 3600);
/// A single sign-on session ends this long after its login, used or not: the role it holds is the
/// identity provider's at login, and someone removed there must log in again to be refused.
const SSO_LIFETIME: Duration = Duration::from_secs(8 * 3600);
/// Failed logins within [`WINDOW`] for one name from one address, then that pair waits …
const PAIR_FAILURES: usize = 5;
/// … from one address for any names, then the address waits …
const IP_FAILURES: usize = 20;
/// … and for one name from any addresses, then the addresses that failed for it wait (one that
/// has not been failing still logs in: a stranger cannot lock its owner out).
const NAME_FAILURES: usize = 10;
const WINDOW: Duration = Duration::from_secs(60);
pub const COOKIE: &str = "opsai_session";
/// `OPSAI_SERVE_TOKEN` must be at least this long (the random one is 43 characters).
pub const MIN_TOKEN: usize = 32;
/// Wrong access or API tokens one IP may send per [`WINDOW`] before it is answered 429.
const BAD_TOKENS: usize = 20;
/// Password checks running at once (argon2 takes 19 MiB and tens of milliseconds each); a login
/// beyond them waits for its turn (see `login::check`).
const VERIFYING: usize = super::passwords::KEPT;

/// How people prove who they are.
pub enum Mode {
    /// One access token (printed in the URL); the user is `owner`, an operator.
    Token(String),
    /// The users of a file or of the database (read again as they change, so `serve user add`
    /// needs no restart).
    Users(UsersSource),
}

/// Who a request comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub user: String,
    pub role: ServeRole,
    /// Users mode: which password the session or token was made with ([`credential`]); a changed
    /// password ends them.
    pub credential: Option<u64>,
    /// Logged in through single sign-on: not in the users file; the role is the one the identity
    /// provider gave at login, for the session's life.
    pub sso: bool,
}

/// A fingerprint of a stored password hash (never shown; with `--database` kept beside each
/// login, so it must be the same in every build of every replica: SHA-256, not std's hasher).
fn credential(password_hash: &str) -> u64 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(password_hash.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

struct Session {
    principal: Principal,
    csrf: String,
    last_seen: Instant,
    opened: Instant,
}

impl Session {
    fn alive(&self) -> bool {
        self.alive_at(Instant::now())
    }

    fn alive_at(&self, now: Instant) -> bool {
        let since = |then: Instant| now.saturating_duration_since(then);
        since(self.last_seen) < IDLE && !(self.principal.sso && since(self.opened) >= SSO_LIFETIME)
    }
}

pub struct Auth {
    pub mode: Mode,
    sessions: Mutex<HashMap<String, Session>>,
    api_tokens: Mutex<HashMap<String, (Principal, Instant)>>,
    failures: Throttle<String>,
    /// Permits for password checks.
    pub verifying: std::sync::Arc<tokio::sync::Semaphore>,
    /// Wrong tokens per IP (guessing).
    bad_tokens: Throttle<IpAddr>,
    /// `--database`: sessions and API tokens kept where every replica reads them.
    pub shared: std::sync::OnceLock<std::sync::Arc<Replicas>>,
}

/// A random token: 32 bytes, base64url.
pub fn random_token() -> String {
    let bytes: [u8; 32] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Equal without a timing difference on the first differing byte.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Auth {
    pub fn new(mode: Mode) -> Self {
        Self {
            mode,
            sessions: Mutex::default(),
            api_tokens: Mutex::default(),
            failures: Throttle::new(WINDOW),
            verifying: std::sync::Arc::new(tokio::sync::Semaphore::new(VERIFYING)),
            bad_tokens: Throttle::new(WINDOW),
            shared: std::sync::OnceLock::new(),
        }
    }

    pub fn mode_name(&self) -> &'static str {
        match self.mode {
            Mode::Token(_) => "token",
            Mode::Users(_) => "users",
        }
    }

    /// The token mode's token matches.
    pub fn token_matches(&self, token: &str) -> bool {
        matches!(&self.mode, Mode::Token(expected) if same(expected, token))
    }

    /// `Err` (429) when `ip` sent too many wrong tokens lately: checked before any token it sends.
    pub fn token_guard(&self, ip: Option<IpAddr>) -> Result<(), ApiError> {
        let Some(wait) = ip.and_then(|ip| self.bad_tokens.wait(&[(ip, BAD_TOKENS)])) else { return Ok(()) };
        Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            format!("too many wrong tokens from this address: try again in {} s", wait.as_secs().max(1)),
        )
        .retry_after(wait))
    }

    /// Counts a wrong token from `ip`.
    pub fn bad_token(&self, ip: Option<IpAddr>) {
        if let Some(ip) = ip {
            self.bad_tokens.admit(&[(ip, BAD_TOKENS)]);
        }
    }

    /// A new cookie session: its id and CSRF token.
    pub async fn open_session(&self, principal: Principal) -> Result<(String, String), ApiError> {
        let (id, csrf) = (random_token(), random_token());
        if let Some(shared) = self.shared.get() {
            open_shared(shared, LoginKind::Session, &id, principal, &csrf).await?;
            return Ok((id, csrf));
        }
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.retain(|_, s| s.alive());
            let now = Instant::now();
            sessions.insert(id.clone(), Session { principal, csrf: csrf.clone(), last_seen: now, opened: now });
        }
        Ok((id, csrf))
    }

    pub async fn close_session(&self, id: &str) {
        if let Some(shared) = self.shared.get() {
            close_shared(shared, id).await;
        }
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.remove(id);
        }
    }

    /// Forgets an API token (the access token of token mode stays).
    pub async fn revoke(&self, token: &str) {
        if let Some(shared) = self.shared.get() {
            close_shared(shared, token).await;
        }
        if let Ok(mut tokens) = self.api_tokens.lock() {
            tokens.remove(token);
        }
    }

    pub async fn api_token(&self, principal: Principal) -> Result<String, ApiError> {
        let token = random_token();
        if let Some(shared) = self.shared.get() {
            open_shared(shared, LoginKind::Token, &token, principal, "").await?;
            return Ok(token);
        }
        if let Ok(mut tokens) = self.api_tokens.lock() {
            tokens.retain(|_, (_, seen)| seen.elapsed() < IDLE);
            tokens.insert(token.clone(), (principal, Instant::now()));
        }
        Ok(token)
    }

    /// `Ok(None)`: no such session, or its user was removed or changed password (logged out).
    async fn session(&self, id: &str) -> Result<Option<(Principal, String)>, ApiError> {
        let found = match self.shared.get() {
            Some(_) => self.shared_login(LoginKind::Session, id).await?,
            None => self.sessions.lock().ok().and_then(|mut sessions| {
                let session = sessions.get_mut(id).filter(|s| s.alive())?;
                session.last_seen = Instant::now();
                Some((session.principal.clone(), session.csrf.clone()))
            }),
        };
        let Some((principal, csrf)) = found else { return Ok(None) };
        let current = self.current(principal)?;
        if current.is_none() {
            self.close_session(id).await;
        }
        Ok(current.map(|principal| (principal, csrf)))
    }

    async fn bearer(&self, token: &str) -> Result<Option<Principal>, ApiError> {
        if self.token_matches(token) {
            return Ok(Some(owner()));
        }
        let found = match self.shared.get() {
            Some(_) => self.shared_login(LoginKind::Token, token).await?.map(|(principal, _)| principal),
            None => self.api_tokens.lock().ok().and_then(|mut tokens| {
                let (principal, seen) = tokens.get_mut(token).filter(|(_, seen)| seen.elapsed() < IDLE)?;
                *seen = Instant::now();
                Some(principal.clone())
            }),
        };
        let Some(principal) = found else { return Ok(None) };
        let current = self.current(principal)?;
        if current.is_none() {
            self.revoke(token).await;
        }
        Ok(current)
    }

    /// The principal as the users file says now: a removed user, or one whose password changed,
    /// is logged out (`Ok(None)`) at their next request, and a changed role applies at once. A
    /// file that fails to load logs nobody out: `Err` is a 503 until it is fixed.
    pub fn current(&self, principal: Principal) -> Result<Option<Principal>, ApiError> {
        let Mode::Users(users) = &self.mode else { return Ok(Some(principal)) };
        if principal.sso {
            return Ok(Some(principal));
        }
        let users = users.get().map_err(unloadable)?;
        let Some(user) = users.find(&principal.user) else { return Ok(None) };
        if principal.credential != Some(credential(&user.password_hash)) {
            return Ok(None);
        }
        Ok(Some(Principal { role: user.role, ..principal }))
    }

    /// What a login from `ip` for `name` counts against, with each limit.
    fn login_keys(&self, ip: IpAddr, name: &str) -> [(String, usize); 3] {
        let (pair, by_ip, by_name) = (format!("pair {ip} {name}"), format!("ip {ip}"), format!("name {name}"));
        let name_limit = if self.failures.count(&pair) > 0 { NAME_FAILURES } else { usize::MAX };
        [(pair, PAIR_FAILURES), (by_ip, IP_FAILURES), (by_name, name_limit)]
    }

    /// `Err` (429) when a login from `ip` for `name` would be refused by the limit now: checked
    /// before it waits for a password check, so a throttled flood does not fill that queue.
    pub fn login_guard(&self, ip: IpAddr, name: &str) -> Result<(), ApiError> {
        match self.failures.wait(&self.login_keys(ip, name)) {
            Some(wait) => Err(too_many_failures(wait)),
            None => Ok(()),
        }
    }

    /// Checks a user's password under the rate limit. `Err` is the response to give.
    pub fn login(&self, ip: IpAddr, name: &str, password: &str) -> Result<Principal, ApiError> {
        let Mode::Users(users) = &self.mode else {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "this server has no users (token mode): open the URL opsai serve printed",
            ));
        };
        let keys = self.login_keys(ip, name);
        // Counted as a failure before the check, under the same lock as the limit: parallel
        // attempts cannot all pass the limit before any is counted.
        if let Some(wait) = self.failures.admit(&keys) {
            return Err(too_many_failures(wait));
        }
        let users = users.get().map_err(unloadable)?;
        let user = users.find(name);
        // An unknown name costs a hash check too, so timing does not tell which names exist.
        let ok = verify_password(password, user.map_or(dummy_hash(), |u| u.password_hash.as_str()));
        match user {
            Some(user) if ok => {
                self.failures.forgive(&keys.map(|(key, _)| key));
                Ok(Principal {
                    user: user.name.clone(),
                    role: user.role,
                    credential: Some(credential(&user.password_hash)),
                    sso: false,
                })
            }
            _ => Err(ApiError::new(StatusCode::UNAUTHORIZED, "wrong user name or password")),
        }
    }
}

fn too_many_failures(wait: Duration) -> ApiError {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        format!("too many failed logins: try again in {} s", wait.as_secs().max(1)),
    )
    .retry_after(wait)
}

/// Users that fail to load (a broken file, a database that fails): 503 (nobody is logged in or
/// out), the details in the server's log.
fn unloadable(err: super::users::UsersError) -> ApiError {
    super::log(&err.to_string());
    ApiError::new(StatusCode::SERVICE_UNAVAILABLE, err.unavailable())
}

/// Token mode's one user.
pub fn owner() -> Principal {
    Principal { user: super::users::RESERVED.into(), role: ServeRole::Operator, credential: None, sso: false }
}

/// An authenticated request: who, and (cookie sessions) their session id and CSRF token.
pub struct Caller {
    pub principal: Principal,
    pub session: Option<(String, String)>,
    /// The bearer token it came with (an API token is revoked by logging out with it).
    pub bearer: Option<String>,
}

impl FromRequestParts<std::sync::Arc<AppState>> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut RequestParts,
        state: &std::sync::Arc<AppState>,
    ) -> Result<Self, Self::Rejection> {
        let auth = &state.auth;
        let bearer =
            parts.headers.get(axum::http::header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer_token);
        if let Some(token) = bearer {
            let ip = Some(super::headers::client_ip(parts, &state.proxies));
            auth.token_guard(ip)?;
            // Bearer requests carry no ambient credential, so they need no CSRF token.
            return match auth.bearer(token.trim()).await? {
                Some(principal) => Ok(Caller { principal, session: None, bearer: Some(token.trim().to_owned()) }),
                None => {
                    auth.bad_token(ip);
                    let message = if auth.mode_name() == "token" {
                        "the bearer token is not the access token printed at start (`opsai serve: open …?token=…`)"
                    } else {
                        "the bearer token is not valid (unknown, expired, logged out, or its user changed): get a \
                         new one with POST /api/v2/auth/token"
                    };
                    Err(ApiError::new(StatusCode::UNAUTHORIZED, message))
                }
            };
        }
        let Some(id) = session_cookie(&parts.headers) else {
            return Err(ApiError::unauthorized(auth.mode_name()));
        };
        let Some((principal, csrf)) = auth.session(&id).await? else {
            return Err(ApiError::unauthorized(auth.mode_name()));
        };
        if parts.method != Method::GET && parts.method != Method::HEAD {
            let sent = parts.headers.get("x-csrf-token").and_then(|v| v.to_str().ok()).unwrap_or("");
            if !same(sent, &csrf) {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "missing or wrong X-CSRF-Token header: send the csrf_token from /api/v2/auth/me",
                ));
            }
        }
        Ok(Caller { principal, session: Some((id, csrf)), bearer: None })
    }
}

#[cfg(test)]
mod tests;
