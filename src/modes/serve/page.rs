//! The page and its two assets, embedded in the binary, and the token URL's exchange for a cookie.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::auth::{owner, set_cookie};
use super::state::AppState;

const INDEX: &str = include_str!("page/index.html");
const SCRIPT: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/app.css");

const WRONG_TOKEN: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>opsai</title></head>\
<body><p>This access token is not valid (opsai serve prints a new one each time it starts): open the URL \
opsai serve printed last.</p></body></html>";

/// `/`: the page; with `?token=` the token is exchanged for a session cookie and the address bar
/// is cleaned by a redirect.
pub async fn index(
    State(state): State<Arc<AppState>>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(token) = query.get("token") else {
        return ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response();
    };
    if let Err(limited) = state.auth.token_guard(Some(addr.ip())) {
        return limited.into_response();
    }
    if !state.auth.token_matches(token) {
        state.auth.bad_token(Some(addr.ip()));
        return (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], WRONG_TOKEN)
            .into_response();
    }
    let (id, _) = state.auth.open_session(owner());
    (StatusCode::SEE_OTHER, [(header::LOCATION, "/".to_owned()), (header::SET_COOKIE, set_cookie(Some(&id)))])
        .into_response()
}

pub async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT).into_response()
}

pub async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}
