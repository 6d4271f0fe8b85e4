//! Single sign-on with OpenID Connect (issue 25, docs/serve.md "Single sign-on"): the
//! authorization code flow with PKCE against the issuer's discovery document, the ID token's
//! signature checked against its JWKS (asymmetric algorithms only), its issuer, audience, expiry
//! and nonce, and the role taken from a configurable claim. A login that starts here is bound to
//! the browser that started it (a short-lived cookie), so a callback URL sent to someone else logs
//! nobody in.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::Value;
use sha2::Digest;
use thiserror::Error;

use super::auth::{Principal, random_token};
use crate::cli::ServeRole;

/// A login not finished within this is forgotten (the IdP's own page may take a while).
const PENDING: Duration = Duration::from_secs(600);
/// Logins being made at once; beyond, the oldest is forgotten (a flood cannot grow memory).
const MAX_PENDING: usize = 1024;
/// How long any request to the IdP may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(10);
/// Logins one client address may start a minute: more is a flood meant to push others' pending
/// logins out (behind a proxy, the proxy's address unless it is a `--trusted-proxy`).
const STARTS_PER_ADDRESS: usize = 30;
/// The cookie that binds a login to the browser that started it.
pub const BINDING_COOKIE: &str = "opsai_sso";

/// What the admin configured (`--oidc-*`, `OPSAI_OIDC_CLIENT_SECRET`).
#[derive(Debug, Clone)]
pub struct SsoConfig {
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// Where the IdP sends the browser back: this server's `/api/v2/auth/sso/callback`.
    pub redirect_url: String,
    /// The claim holding the user's groups or roles (`groups`).
    pub role_claim: String,
    /// Claim values that make an operator.
    pub operators: Vec<String>,
    /// Claim values that make a viewer; `*`: everyone the IdP lets in who is not an operator.
    pub viewers: Vec<String>,
    /// Scopes asked for beyond `openid profile email` (`--oidc-scope`, e.g. `groups`).
    pub scopes: Vec<String>,
}

#[derive(Debug, Error)]
pub enum SsoError {
    #[error("the identity provider at {url} could not be read: {reason}; check --oidc-issuer and that it is reachable")]
    Discovery { url: String, reason: String },
    #[error(
        "the identity provider says its issuer is `{found}`, not `{expected}`; give --oidc-issuer exactly as it does"
    )]
    IssuerMismatch { expected: String, found: String },
    #[error("this login was not started here, or took longer than 10 minutes: start it again")]
    UnknownLogin,
    #[error("the identity provider refused the login: {0}")]
    Refused(String),
    #[error("the identity provider's answer is not valid: {0}")]
    Invalid(String),
    #[error(
        "--oidc-issuer needs --oidc-operator VALUE or --oidc-viewer VALUE (values of the role claim): nobody \
         would get in; --oidc-viewer '*' lets in as a viewer everyone the identity provider lets in"
    )]
    NobodyAllowed,
    #[error(
        "{user} may not use this server: none of their `{claim}` ({found}) is allowed (--oidc-operator / --oidc-viewer)"
    )]
    NotAllowed { user: String, claim: String, found: String },
}

#[derive(Deserialize)]
struct Discovery {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
}

struct Pending {
    verifier: String,
    nonce: String,
    binding: String,
    started: Instant,
}

pub struct Sso {
    config: SsoConfig,
    discovery: Discovery,
    /// `discovery.authorization_endpoint`, parsed once.
    authorize: reqwest::Url,
    keys: Mutex<JwkSet>,
    pending: Mutex<HashMap<String, Pending>>,
    starts: super::throttle::Throttle<std::net::IpAddr>,
    http: reqwest::Client,
    /// `--database`: logins started on one replica finish on any (the identity provider sends
    /// the browser back through the load balancer).
    pub shared: std::sync::OnceLock<std::sync::Arc<super::replicas::Replicas>>,
}

/// A login started: where to send the browser, and the binding cookie's value to set.
pub struct Started {
    pub location: String,
    pub binding: String,
}

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

async fn get_json<T: serde::de::DeserializeOwned>(http: &reqwest::Client, url: &str) -> Result<T, SsoError> {
    let failed = |reason: String| SsoError::Discovery { url: url.to_owned(), reason };
    let response = http.get(url).send().await.map_err(|err| failed(err.to_string()))?;
    if !response.status().is_success() {
        return Err(failed(format!("HTTP {}", response.status())));
    }
    response.json().await.map_err(|err| failed(format!("not the JSON expected: {err}")))
}

impl Sso {
    /// Reads the issuer's discovery document and keys; a server that cannot does not start.
    pub async fn discover(config: SsoConfig) -> Result<Self, SsoError> {
        let http = reqwest::Client::builder()
            .timeout(HTTP_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|err| SsoError::Discovery { url: config.issuer.clone(), reason: err.to_string() })?;
        let url = format!("{}/.well-known/openid-configuration", config.issuer.trim_end_matches('/'));
        let discovery: Discovery = get_json(&http, &url).await?;
        if discovery.issuer.trim_end_matches('/') != config.issuer.trim_end_matches('/') {
            return Err(SsoError::IssuerMismatch { expected: config.issuer.clone(), found: discovery.issuer });
        }
        let authorize = reqwest::Url::parse(&discovery.authorization_endpoint).map_err(|err| SsoError::Discovery {
            url: url.clone(),
            reason: format!("its authorization_endpoint is not a URL: {err}"),
        })?;
        let keys: JwkSet = get_json(&http, &discovery.jwks_uri).await?;
        let starts = super::throttle::Throttle::new(Duration::from_secs(60));
        let (keys, pending, shared) = (Mutex::new(keys), Mutex::default(), std::sync::OnceLock::new());
        Ok(Self { config, discovery, authorize, keys, pending, starts, http, shared })
    }

    /// A new login from `client`: the IdP's authorization URL with a fresh state, nonce and PKCE
    /// challenge, the login kept in memory or (`--database`) where every replica finds it.
    /// `Err(Some(wait))`: that address started too many; `Err(None)`: the database failed.
    pub async fn start(&self, client: std::net::IpAddr) -> Result<Started, Option<Duration>> {
        let (state, login, started) = self.prepare(client).map_err(Some)?;
        match self.shared.get() {
            Some(shared) => {
                shared.sso_put(&state, &login.verifier, &login.nonce, &login.binding).await.map_err(|err| {
                    super::log(&format!("single sign-on: a login could not be kept: {err}"));
                    None
                })?;
            }
            None => self.keep(state, login),
        }
        Ok(started)
    }

    /// A login's values and the authorization URL; `Err` is how long `client` must wait.
    fn prepare(&self, client: std::net::IpAddr) -> Result<(String, Pending, Started), Duration> {
        if let Some(wait) = self.starts.admit(&[(client, STARTS_PER_ADDRESS)]) {
            return Err(wait);
        }
        let (state, nonce, verifier, binding) = (random_token(), random_token(), random_token(), random_token());
        let challenge = base64url(&sha2::Sha256::digest(verifier.as_bytes()));
        let mut url = self.authorize.clone();
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", &self.config.redirect_url)
            .append_pair("scope", &scope(&self.config.scopes))
            .append_pair("state", &state)
            .append_pair("nonce", &nonce)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256");
        let started = Started { location: url.into(), binding: binding.clone() };
        Ok((state, Pending { verifier, nonce, binding, started: Instant::now() }, started))
    }

    /// Keeps a started login in memory (the oldest goes when there are too many).
    fn keep(&self, state: String, login: Pending) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.retain(|_, login| login.started.elapsed() < PENDING);
            if pending.len() >= MAX_PENDING
                && let Some(oldest) = pending.iter().min_by_key(|(_, login)| login.started).map(|(k, _)| k.clone())
            {
                pending.remove(&oldest);
            }
            pending.insert(state, login);
        }
    }

    /// The callback: the login `state` names (started by this browser: `binding`), its code
    /// exchanged and its ID token checked; the user and their role.
    pub async fn finish(&self, code: &str, state: &str, binding: Option<&str>) -> Result<Principal, SsoError> {
        let login = if let Some(shared) = self.shared.get() {
            // Taken only with this browser's binding, atomically: a login finishes once, anywhere.
            let taken = shared.sso_take(state, binding.unwrap_or_default(), PENDING).await.map_err(|err| {
                super::log(&format!("single sign-on: {err}"));
                SsoError::UnknownLogin
            })?;
            let (verifier, nonce) = taken.ok_or(SsoError::UnknownLogin)?;
            Pending { verifier, nonce, binding: String::new(), started: Instant::now() }
        } else {
            let mut pending = self.pending.lock().map_err(|_| SsoError::UnknownLogin)?;
            // Checked before it is taken: someone else's request cannot cancel this browser's login.
            let ours = pending.get(state).is_some_and(|login| binding == Some(login.binding.as_str()));
            if !ours {
                return Err(SsoError::UnknownLogin);
            }
            pending.remove(state).filter(|login| login.started.elapsed() < PENDING).ok_or(SsoError::UnknownLogin)?
        };
        let id_token = self.exchange(code, &login.verifier).await?;
        let claims = self.verify(&id_token, &login.nonce).await?;
        self.principal(&claims)
    }

    async fn exchange(&self, code: &str, verifier: &str) -> Result<String, SsoError> {
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", self.config.redirect_url.as_str()),
            ("code_verifier", verifier),
        ];
        let mut request = self.http.post(&self.discovery.token_endpoint);
        // A confidential client authenticates with its secret (HTTP Basic); a public one names
        // itself in the form, and PKCE is its proof.
        match &self.config.client_secret {
            Some(secret) => request = request.basic_auth(&self.config.client_id, Some(secret)),
            None => form.push(("client_id", self.config.client_id.as_str())),
        }
        let response = request.form(&form).send().await.map_err(|err| SsoError::Refused(err.to_string()))?;
        let status = response.status();
        let body: Value = response.json().await.map_err(|err| SsoError::Invalid(format!("token response: {err}")))?;
        if !status.is_success() {
            let error = body["error"].as_str().unwrap_or("unknown error");
            let detail = body["error_description"].as_str().unwrap_or("");
            return Err(SsoError::Refused(format!("{error} {detail}").trim().to_owned()));
        }
        body["id_token"].as_str().map(str::to_owned).ok_or_else(|| SsoError::Invalid("no id_token".into()))
    }

    /// The ID token's claims once its signature, issuer, audience, expiry and nonce hold. A key
    /// id not known yet reads the JWKS again (the IdP rotated its keys).
    async fn verify(&self, id_token: &str, nonce: &str) -> Result<Value, SsoError> {
        let invalid = |what: String| SsoError::Invalid(what);
        let header = jsonwebtoken::decode_header(id_token).map_err(|err| invalid(format!("ID token: {err}")))?;
        if !is_asymmetric(header.alg) {
            return Err(invalid(format!(
                "ID token signed with {:?}: only public-key signatures are accepted",
                header.alg
            )));
        }
        let kid = header.kid.clone().unwrap_or_default();
        let mut key = self.key(&kid);
        if key.is_none() {
            let fresh: JwkSet =
                get_json(&self.http, &self.discovery.jwks_uri).await.map_err(|e| invalid(e.to_string()))?;
            if let Ok(mut keys) = self.keys.lock() {
                *keys = fresh;
            }
            key = self.key(&kid);
        }
        let key = key.ok_or_else(|| invalid(format!("ID token signed with an unknown key `{kid}`")))?;
        let mut validation = Validation::new(header.alg);
        validation.set_audience(&[&self.config.client_id]);
        validation.set_issuer(&[&self.discovery.issuer]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.leeway = 60;
        let data = jsonwebtoken::decode::<Value>(id_token, &key, &validation)
            .map_err(|err| invalid(format!("ID token: {err}")))?;
        if data.claims["nonce"].as_str() != Some(nonce) {
            return Err(invalid("ID token: the nonce is not this login's".into()));
        }
        // Several audiences: the token must have been issued to this client (OIDC Core 3.1.3.7).
        if data.claims["aud"].as_array().is_some_and(|aud| aud.len() > 1)
            && data.claims["azp"].as_str() != Some(self.config.client_id.as_str())
        {
            return Err(invalid("ID token: issued to another client (azp)".into()));
        }
        Ok(data.claims)
    }

    fn key(&self, kid: &str) -> Option<DecodingKey> {
        let keys = self.keys.lock().ok()?;
        let jwk = if kid.is_empty() && keys.keys.len() == 1 { keys.keys.first() } else { keys.find(kid) }?;
        DecodingKey::from_jwk(jwk).ok()
    }

    /// The user and the role their claim gives. The user is `sso:LABEL.ID`: `ID` is derived from
    /// the issuer and `sub`, the one identifier a provider never reassigns (a name or an email can
    /// pass to someone else, and would hand them the conversations); `LABEL` is the readable name
    /// (`preferred_username`, else `email`) when it is made of plain characters, else `user`.
    fn principal(&self, claims: &Value) -> Result<Principal, SsoError> {
        let sub = claims["sub"].as_str().filter(|sub| !sub.is_empty());
        let sub = sub.ok_or_else(|| SsoError::Invalid("the ID token names no subject (sub)".into()))?;
        let label = ["preferred_username", "email"]
            .iter()
            .find_map(|claim| claims[*claim].as_str().filter(|name| plain_name(name)))
            .unwrap_or("user");
        let id = sha2::Sha256::digest(format!("{}\n{sub}", self.discovery.issuer).as_bytes());
        let id: String = id.iter().take(6).map(|byte| format!("{byte:02x}")).collect();
        let user = format!("sso:{label}.{id}");
        let values = claim_values(&claims[self.config.role_claim.as_str()]);
        let has = |allowed: &[String]| values.iter().any(|value| allowed.contains(value));
        let role = if has(&self.config.operators) {
            ServeRole::Operator
        } else if self.config.viewers.iter().any(|viewer| viewer == "*") || has(&self.config.viewers) {
            ServeRole::Viewer
        } else {
            let found = if values.is_empty() { "none".to_owned() } else { values.join(", ") };
            return Err(SsoError::NotAllowed { user, claim: self.config.role_claim.clone(), found });
        };
        Ok(Principal { user, role, credential: None, sso: true })
    }
}

fn is_asymmetric(alg: Algorithm) -> bool {
    !matches!(alg, Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512)
}

/// A name the IdP gave that can be shown as it is in logs, the audit line and the page: 1 to 48
/// letters, digits, `.`, `_`, `-`, `@`. Any other is not shown at all (never filtered into another).
fn plain_name(name: &str) -> bool {
    (1..=48).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}

/// The scopes asked for: OpenID's own and the configured ones, once each.
fn scope(extra: &[String]) -> String {
    let mut scopes = vec!["openid", "profile", "email"];
    for scope in extra.iter().flat_map(|s| s.split_whitespace()) {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    scopes.join(" ")
}

/// A claim as a list of strings: an array of them, one string, or (space- or comma-separated).
fn claim_values(claim: &Value) -> Vec<String> {
    match claim {
        Value::Array(items) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        Value::String(text) => text.split([' ', ',']).filter(|v| !v.is_empty()).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
