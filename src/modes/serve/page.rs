//! The page and its assets (three scripts, one style sheet), embedded in the binary, and the token URL's exchange for a cookie.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::auth::owner;
use super::headers::{Client, cross_site, set_cookie};
use super::state::AppState;

const INDEX: &str = include_str!("page/index.html");
/// Each asset under `/assets/`: its name, content type and text. The scripts load in the page's
/// order: Markdown, then the turn renderer that uses it, then the app.
const ASSETS: &[(&str, &str, &str)] = &[
    ("markdown.js", JAVASCRIPT, include_str!("page/markdown.js")),
    ("render.js", JAVASCRIPT, include_str!("page/render.js")),
    ("app.js", JAVASCRIPT, include_str!("page/app.js")),
    ("app.css", "text/css; charset=utf-8", include_str!("page/app.css")),
];
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";

const WRONG_TOKEN: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>opsai</title></head>\
<body><p>This access token is not valid (opsai serve prints a new one each time it starts): open the URL \
opsai serve printed last.</p></body></html>";

const FROM_ELSEWHERE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>opsai</title></head>\
<body><p>A link from another site cannot log in to opsai serve: copy the URL opsai serve printed into the \
address bar.</p></body></html>";

/// `/`: the page; with `?token=` the token is exchanged for a session cookie and the address bar
/// is cleaned by a redirect.
pub async fn index(
    State(state): State<Arc<AppState>>,
    Client(ip): Client,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let Some(token) = query.get("token") else {
        return ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], INDEX).into_response();
    };
    // A token URL is opened by hand, not by another site's page: such a request is refused
    // without comparing or counting its token.
    if cross_site(&headers) {
        return (StatusCode::FORBIDDEN, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], FROM_ELSEWHERE)
            .into_response();
    }
    if let Err(limited) = state.auth.token_guard(Some(ip)) {
        return limited.into_response();
    }
    if !state.auth.token_matches(token) {
        state.auth.bad_token(Some(ip));
        return (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], WRONG_TOKEN)
            .into_response();
    }
    let (id, _) = match state.auth.open_session(owner()).await {
        Ok(opened) => opened,
        Err(err) => return err.into_response(),
    };
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, "/".to_owned()), (header::SET_COOKIE, set_cookie(&state, &headers, Some(&id)))],
    )
        .into_response()
}

/// `/assets/{name}`: one of [`ASSETS`], or 404.
pub async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(known, _, _)| *known == name) {
        Some((_, kind, text)) => ([(header::CONTENT_TYPE, *kind)], *text).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// A page of one message, for answers the browser navigates to (the single sign-on callback):
/// the text escaped, so an identity provider's words stay text.
pub fn message_page(text: &str) -> String {
    let escaped: String = text
        .chars()
        .map(|c| match c {
            '&' => "&amp;".to_owned(),
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&#39;".to_owned(),
            c if c.is_control() => " ".to_owned(),
            c => c.to_string(),
        })
        .collect();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>opsai</title></head><body><p>{escaped}</p>\
         <p><a href=\"/\">Back to opsai</a></p></body></html>"
    )
}
