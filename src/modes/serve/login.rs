//! `/api/v2/auth/*`: log in (a cookie session), an API token, log out, and who am I.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::auth::{Caller, Principal};
use super::headers::{Client, cookie, set_cookie, sso_cookie};
use super::state::AppState;
use super::users::role_name;
use super::{ApiError, Body};

#[derive(Deserialize)]
pub struct Credentials {
    username: String,
    password: String,
}

/// How long a login waits for one of the few password checks that run at once.
const QUEUE: Duration = Duration::from_secs(5);

/// Checks the password on a blocking thread: argon2 takes tens of milliseconds of CPU and 19 MiB.
/// Only a few run at once (their memory is kept and reused): a login beyond them waits its turn,
/// and after [`QUEUE`] is answered 429 without a check.
async fn check(state: &Arc<AppState>, ip: IpAddr, credentials: Credentials) -> Result<Principal, ApiError> {
    state.auth.login_guard(ip, &credentials.username)?;
    let waited = tokio::time::timeout(QUEUE, state.auth.verifying.clone().acquire_owned()).await;
    let Ok(Ok(permit)) = waited else {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too many logins at once: try again in a few seconds",
        )
        .retry_after(QUEUE));
    };
    let state = state.clone();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        state.auth.login(ip, &credentials.username, &credentials.password)
    })
    .await
    .map_err(|err| ApiError::internal(&err))?
}

pub async fn login(
    State(state): State<Arc<AppState>>,
    Client(ip): Client,
    headers: HeaderMap,
    Body(credentials): Body<Credentials>,
) -> Result<Response, ApiError> {
    let principal = check(&state, ip, credentials).await?;
    let body = json!({"user": principal.user, "role": role_name(principal.role)});
    let (id, csrf) = state.auth.open_session(principal).await?;
    let mut body = body;
    body["csrf_token"] = csrf.into();
    Ok(([(header::SET_COOKIE, set_cookie(&state, &headers, Some(&id)))], Json(body)).into_response())
}

pub async fn token(
    State(state): State<Arc<AppState>>,
    Client(ip): Client,
    Body(credentials): Body<Credentials>,
) -> Result<Response, ApiError> {
    let principal = check(&state, ip, credentials).await?;
    Ok(Json(json!({"token": state.auth.api_token(principal).await?})).into_response())
}

pub async fn logout(State(state): State<Arc<AppState>>, headers: HeaderMap, caller: Caller) -> Response {
    if let Some((id, _)) = &caller.session {
        state.auth.close_session(id).await;
    }
    if let Some(token) = &caller.bearer {
        state.auth.revoke(token).await;
    }
    (StatusCode::NO_CONTENT, [(header::SET_COOKIE, set_cookie(&state, &headers, None))]).into_response()
}

pub async fn me(State(state): State<Arc<AppState>>, caller: Caller) -> Response {
    Json(json!({
        "user": caller.principal.user,
        "role": role_name(caller.principal.role),
        "csrf_token": caller.session.map(|(_, csrf)| csrf),
        "mode": state.auth.mode_name(),
        "clusters": state.clusters(),
        "host_sets": state.host_sets.json(),
    }))
    .into_response()
}

/// `GET /api/v2/auth/sso`: whether single sign-on is offered (no login needed: the login page asks).
pub async fn sso_status(State(state): State<Arc<AppState>>) -> Response {
    Json(json!({"enabled": state.sso.is_some()})).into_response()
}

fn sso_off() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "single sign-on is not configured: start opsai serve with --oidc-issuer")
}

/// `GET /api/v2/auth/sso/start`: to the identity provider, bound to this browser.
pub async fn sso_start(
    State(state): State<Arc<AppState>>,
    Client(ip): Client,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let sso = state.sso.as_ref().ok_or_else(sso_off)?;
    let started = sso.start(ip).await.map_err(|wait| match wait {
        Some(wait) => ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too many logins started from this address: try again in a minute",
        )
        .retry_after(wait),
        None => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server's database cannot be reached, so the login could not start: try again in a moment",
        ),
    })?;
    let cookie = sso_cookie(&state, &headers, Some(&started.binding));
    Ok((StatusCode::SEE_OTHER, [(header::LOCATION, started.location), (header::SET_COOKIE, cookie)]).into_response())
}

#[derive(Deserialize)]
pub struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /api/v2/auth/sso/callback`: the identity provider's answer; a session and back to the
/// page, or a page that says why not.
pub async fn sso_callback(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    Query(answer): Query<Callback>,
) -> Result<Response, ApiError> {
    let sso = state.sso.as_ref().ok_or_else(sso_off)?;
    let clear = sso_cookie(&state, &headers, None);
    let refused = |status: StatusCode, text: &str| {
        let page = super::page::message_page(&format!("{text} Go back to the page and log in again."));
        let mut response = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response();
        if let Ok(value) = header::HeaderValue::from_str(&clear) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
        response
    };
    if let Some(error) = &answer.error {
        // Only OAuth's own error codes are shown: anyone can make a link with any words in it.
        let plain =
            !error.is_empty() && error.len() <= 64 && error.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        let code = if plain { error.as_str() } else { "an error" };
        return Ok(refused(StatusCode::UNAUTHORIZED, &format!("The identity provider did not log you in ({code}).")));
    }
    let (Some(code), Some(login)) = (&answer.code, &answer.state) else {
        return Ok(refused(
            StatusCode::BAD_REQUEST,
            "This address is the identity provider's way back, without its answer.",
        ));
    };
    let binding = cookie(&headers, super::sso::BINDING_COOKIE);
    match sso.finish(code, login, binding.as_deref()).await {
        Ok(principal) => {
            super::log(&format!("single sign-on: {} logged in ({})", principal.user, role_name(principal.role)));
            let (id, _) = state.auth.open_session(principal).await?;
            let mut response = (
                StatusCode::SEE_OTHER,
                [(header::LOCATION, "/".to_owned()), (header::SET_COOKIE, set_cookie(&state, &headers, Some(&id)))],
            )
                .into_response();
            if let Ok(value) = header::HeaderValue::from_str(&clear) {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
            Ok(response)
        }
        Err(err) => {
            super::log(&format!("single sign-on refused: {err}"));
            let status = match err {
                super::sso::SsoError::NotAllowed { .. } => StatusCode::FORBIDDEN,
                _ => StatusCode::UNAUTHORIZED,
            };
            Ok(refused(status, &err.to_string()))
        }
    }
}
