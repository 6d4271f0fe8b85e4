//! The routes: the API, the page and `/healthz`, with the layers every response passes (the
//! same-origin check, the body timeout, JSON errors, the security headers, telemetry).

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use tower_http::set_header::SetResponseHeaderLayer;

use super::state::AppState;
use super::{ApiError, CSP, api, chat, errors, headers, listen, login, page, telemetry};

pub(super) fn router(state: Arc<AppState>, body_timeout: Duration) -> Router {
    let api = Router::new()
        .route("/api/v2/auth/login", post(login::login))
        .route("/api/v2/auth/token", post(login::token))
        .route("/api/v2/auth/logout", post(login::logout))
        .route("/api/v2/auth/me", get(login::me))
        .route("/api/v2/auth/sso", get(login::sso_status))
        .route("/api/v2/auth/sso/start", get(login::sso_start))
        .route("/api/v2/auth/sso/callback", get(login::sso_callback))
        .route("/api/v2/ai/conversations", post(api::create).get(api::list))
        .route("/api/v2/ai/conversations/{id}", delete(api::remove).get(api::one))
        .route("/api/v2/ai/conversations/{id}/messages", get(api::messages))
        .route("/api/v2/ai/conversations/{id}/stream", get(chat::stream))
        .route("/api/v2/ai/conversations/{id}/stop", post(chat::stop))
        .route("/api/v2/ai/chat", post(chat::chat))
        .route("/api/v2/ai/approvals", get(api::queue))
        .route("/api/v2/ai/approvals/{call_id}", post(api::approve))
        .fallback(|| async { ApiError::new(StatusCode::NOT_FOUND, "no such API route: see docs/serve.md") })
        .layer(SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("no-store")));
    Router::new()
        .route("/healthz", get(healthz))
        .route("/", get(page::index))
        .route("/assets/{name}", get(page::asset))
        .merge(api)
        .layer(middleware::from_fn_with_state(state.clone(), same_origin))
        .layer(middleware::from_fn_with_state(body_timeout, listen::read_body))
        .layer(middleware::map_response(errors::json_errors))
        .layer(SetResponseHeaderLayer::overriding(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP)))
        .layer(SetResponseHeaderLayer::overriding(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        .layer(SetResponseHeaderLayer::overriding(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")))
        .layer(middleware::from_fn_with_state(state.clone(), telemetry::measure))
        .with_state(state)
}

/// A request for another host name (DNS rebinding) or from a page on another origin is refused,
/// whatever it carries.
async fn same_origin(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    // A load balancer's check names whatever host it likes; the answer holds nothing to protect.
    if request.uri().path() == "/healthz" {
        return next.run(request).await;
    }
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !state.hosts.allows(host) {
        return ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            "this server does not answer to that host name: use its address, localhost, or a name given \
             with --public-host",
        )
        .into_response();
    }
    if !headers::origin_allowed(request.headers()) {
        return ApiError::new(StatusCode::FORBIDDEN, "the Origin header does not match this server").into_response();
    }
    next.run(request).await
}

/// `GET /healthz`: liveness for a load balancer, without auth and without data; 503 once the
/// server is stopping, or (`--database`) while it cannot reach its database, so the balancer
/// sends new requests elsewhere.
async fn healthz(State(state): State<Arc<AppState>>) -> Response {
    let database_ok = match &state.replicas {
        Some(replicas) => replicas.reachable().await,
        None => true,
    };
    let (status, word) = if state.shutdown.is_cancelled() {
        (StatusCode::SERVICE_UNAVAILABLE, "stopping")
    } else if !database_ok {
        (StatusCode::SERVICE_UNAVAILABLE, "database unreachable")
    } else {
        (StatusCode::OK, "ok")
    };
    (status, [(header::CACHE_CONTROL, "no-store")], axum::Json(serde_json::json!({"status": word}))).into_response()
}
