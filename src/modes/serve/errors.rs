//! The API's errors: `{"error": "what happened and what to do"}` with a status, for the handlers'
//! own and for what the router and its layers answer themselves (a path that does not parse, an
//! unknown route, a method a route does not take, a body too large), which are plain text or empty
//! otherwise.

use std::time::Duration;

use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;

use super::log;

/// An API error: `{"error": "what happened and what to do"}` with its status.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    retry_after: Option<Duration>,
    /// On a 401: the auth mode, so the page knows whether to show a login form.
    mode: Option<&'static str>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self { status, message: message.into(), retry_after: None, mode: None }
    }

    pub fn unauthorized(mode: &'static str) -> Self {
        let message = if mode == "token" {
            "not logged in: open the URL opsai serve printed, or send Authorization: Bearer TOKEN"
        } else {
            "not logged in: log in with POST /api/v2/auth/login, or send Authorization: Bearer TOKEN"
        };
        Self { mode: Some(mode), ..Self::new(StatusCode::UNAUTHORIZED, message) }
    }

    pub fn retry_after(self, wait: Duration) -> Self {
        Self { retry_after: Some(wait), ..self }
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            format!("no {what} with that id: list yours with GET /api/v2/ai/conversations"),
        )
    }

    /// The database (`--database`) did not answer: `context` and the reason go to the log; the
    /// caller is told what did not happen (`outcome`, e.g. ", so the stop was not sent") and to
    /// try again.
    pub fn database_down(context: &str, reason: &dyn std::fmt::Display, outcome: &str) -> Self {
        log(&format!("{context}: {reason}"));
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("the server's database cannot be reached{outcome}: try again in a moment"),
        )
        .retry_after(Duration::from_secs(5))
    }

    /// A failure of the server itself: logged, and said without details.
    pub fn internal(err: &dyn std::fmt::Display) -> Self {
        log(&err.to_string());
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "the server failed: see its log (stderr)")
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = serde_json::json!({"error": self.message});
        if let Some(mode) = self.mode {
            body["mode"] = mode.into();
        }
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(wait) = self.retry_after
            && let Ok(value) = HeaderValue::from_str(&wait.as_secs().max(1).to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}

/// A JSON body whose problems are answered `400 {"error"}`.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::Json::<T>::from_request(request, state).await {
            Ok(axum::Json(value)) => Ok(Body(value)),
            Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Err(ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "the request body is too large (64 KiB at most)"))
            }
            Err(rejection) => Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("the body is not the JSON this route takes ({}): see docs/serve.md", rejection.body_text()),
            )),
        }
    }
}

/// Any error response that is not JSON already (nor the page's HTML) becomes the API's JSON, with
/// its status and headers (`Allow`, `Retry-After`) kept.
pub async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let kind = response.headers().get(header::CONTENT_TYPE).map(|t| t.as_bytes().to_ascii_lowercase());
    let own = kind.is_some_and(|t| t.starts_with(b"application/json") || t.starts_with(b"text/html"));
    if !(status.is_client_error() || status.is_server_error()) || own {
        return response;
    }
    let message = match status {
        StatusCode::BAD_REQUEST => {
            "the request's path or query is not valid (a conversation id is a number): see docs/serve.md"
        }
        StatusCode::NOT_FOUND => "no such route: see docs/serve.md for the API",
        StatusCode::METHOD_NOT_ALLOWED => {
            "this route does not take that method (the Allow header lists those it takes): see docs/serve.md"
        }
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is too large (64 KiB at most)",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "send the body as JSON with Content-Type: application/json",
        _ => "the request failed: see docs/serve.md, or the server's log",
    };
    let (mut parts, _) = response.into_parts();
    let mut answer = ApiError::new(status, message).into_response();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::CONTENT_TYPE);
    for (name, value) in &parts.headers {
        answer.headers_mut().insert(name.clone(), value.clone());
    }
    answer
}
