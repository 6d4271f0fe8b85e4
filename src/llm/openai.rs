//! The client for any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp, DeepSeek,
//! Gemini and Anthropic compatibility layers, OpenRouter, …).
//!
//! Why not async-openai (which issue 3 names): its typed stream decoding rejects chunks that real
//! providers send — tool calls without `index`, arguments as an object, `reasoning` fields, usage
//! chunks with empty `choices`, error objects mid-stream — and a reply it cannot decode is lost.
//! The issue requires a self-parsed fallback for exactly those streams anyway, so the tolerant
//! path is the only path: reqwest + eventsource-stream over `serde_json::Value` (`sse`, `stream`).
//!
//! One request: POST `{base_url}/chat/completions` with `stream: true` and
//! `stream_options.include_usage`. Deltas go to the caller as they arrive; the assembled reply
//! comes back, with tool calls recovered from the text when a small model printed them.
//!
//! - Timeouts: 5 s to connect; `timeout` for the response to start and for every idle gap in the
//!   body (keep-alive comments count as activity), never for the whole stream. A model on this
//!   machine gets `with_local_first_byte` instead for the head and the first body bytes: on a CPU
//!   it reads the prompt for minutes before its first token, then streams with short gaps.
//! - Retries (`retry`): 429, 500/502/503/504 (unless the body calls the request invalid) and
//!   dropped connections, at most `RetryPolicy::max_attempts`, only while no delta has been passed
//!   to the caller. Each wait is announced first with a `ModelDelta::Retry` (the caller shows it),
//!   so it is never silent.
//! - A stream that stops early: an error object after HTTP 200 is an error unless whole tool calls
//!   arrived before it (they are kept); a model repeating itself is stopped (`repeat`).
//! - Compatibility: an endpoint that rejects `stream_options`, or a model that rejects `tools`, gets
//!   the request again without them (remembered for this client); a JSON body instead of a stream
//!   is accepted too.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;
use tokio::time::timeout;

use super::classify::{self, Rejection};
use super::retry::{self, RetryPolicy};
use super::sse::{self, SseError};
use super::stream::{ReplyAssembler, Step, StreamError};
use super::text_calls::recover_text_calls;
use super::tool_mode::{self, Purpose, ToolCalls, ToolSetting};
use super::wire::{self, BodyOptions};
use super::{ChatModel, ChatRequest, DeltaSink, LlmError, ModelDelta, ModelReply, Sampling, transport};

/// A streaming chat-completions client for one endpoint.
pub struct OpenAiClient {
    http: reqwest::Client,
    base_url: String,
    api_key: Option<String>,
    /// The HTTP proxy requests go through, to name it when connecting fails.
    proxy: Option<String>,
    timeout: Duration,
    /// The endpoint is on this machine (localhost, a loopback address).
    loopback: bool,
    /// How long a local model may take to send its first byte (`None`: `timeout`).
    local_first_byte: Option<Duration>,
    retry: RetryPolicy,
    without_stream_options: AtomicBool,
    without_tools: AtomicBool,
    sampling: Sampling,
    tool_setting: ToolSetting,
    /// What `tool_setting` came to, per model and purpose (the REPL's `/model` changes the model).
    tool_calls: Mutex<HashMap<(String, Purpose), ToolCalls>>,
    /// The last request's model and purpose resolved to text: its schemas are left out.
    text_calls: AtomicBool,
}

/// How one failed attempt should be followed up.
#[derive(Debug)]
struct Failure {
    error: LlmError,
    next: Next,
    /// A delta reached the caller before the failure.
    emitted: bool,
}

#[derive(Debug)]
enum Next {
    Stop,
    Retry { after: Option<Duration> },
    Without(Rejection),
}

impl Failure {
    fn stop(error: LlmError) -> Self {
        Self { error, next: Next::Stop, emitted: false }
    }
}

impl OpenAiClient {
    /// A client for `base_url` (e.g. `http://localhost:11434/v1`); `api_key` is sent as a bearer
    /// token when present; `timeout` bounds the wait for the first byte and every idle gap.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>, timeout: Duration) -> Result<Self, LlmError> {
        Self::trusting(base_url, api_key, timeout, None)
    }

    /// [`Self::new`] that also trusts the CA certificates in `ca_file` (`llm.ca_file`) for an
    /// `https://` endpoint. The client is built once: loading the system roots costs milliseconds.
    pub(crate) fn trusting(
        base_url: impl Into<String>,
        api_key: Option<String>,
        timeout: Duration,
        ca_file: Option<&std::path::Path>,
    ) -> Result<Self, LlmError> {
        let base_url = base_url.into().trim().trim_end_matches('/').to_owned();
        let invalid = |reason: String| LlmError::InvalidUrl { url: base_url.clone(), reason };
        let parsed = reqwest::Url::parse(&base_url).map_err(|err| invalid(err.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(invalid(format!("the scheme is `{}`, not http or https", parsed.scheme())));
        }
        let loopback = transport::is_loopback(&parsed);
        let proxy = transport::proxy_for(&parsed, loopback, |name| std::env::var(name).ok());
        let extra_roots = match ca_file {
            Some(path) if parsed.scheme() == "https" => transport::read_ca_file(path)?,
            _ => Vec::new(),
        };
        let http = transport::http_client(&parsed, loopback, extra_roots)?;
        let api_key = api_key.map(|key| key.trim().to_owned()).filter(|key| !key.is_empty());
        Ok(Self {
            http,
            base_url,
            api_key,
            proxy,
            timeout,
            loopback,
            local_first_byte: None,
            retry: RetryPolicy::default(),
            without_stream_options: AtomicBool::new(false),
            without_tools: AtomicBool::new(false),
            sampling: Sampling::default(),
            tool_setting: ToolSetting::default(),
            tool_calls: Mutex::new(HashMap::new()),
            text_calls: AtomicBool::new(false),
        })
    }

    /// How long a model on this machine may read the prompt before its first byte (ignored for
    /// other endpoints, which keep `timeout`).
    pub(crate) fn with_local_first_byte(mut self, wait: Duration) -> Self {
        if self.loopback {
            self.local_first_byte = Some(wait);
        }
        self
    }

    /// The sampling settings sent with every request.
    pub fn with_sampling(mut self, sampling: Sampling) -> Self {
        self.sampling = sampling;
        self
    }

    /// How tool calls travel (`llm.tool_mode`); text leaves the schemas out of every request.
    pub fn with_tool_setting(mut self, setting: ToolSetting) -> Self {
        if setting == ToolSetting::Fixed(ToolCalls::Text) {
            self.text_calls.store(true, Ordering::Relaxed);
        }
        self.tool_setting = setting;
        self
    }

    /// [`ChatModel::tool_calls`]: the fixed setting, else what was learned, else the purpose's own
    /// start ([`Purpose::untold`]).
    /// Text leaves the schemas out of the requests until another model or purpose resolves native.
    fn resolve_tool_calls(&self, model: &str, purpose: Purpose) -> ToolCalls {
        let found = match &self.tool_setting {
            ToolSetting::Fixed(fixed) => *fixed,
            ToolSetting::Auto(cache) => {
                let learned = || {
                    cache
                        .as_deref()
                        .and_then(|cache| tool_mode::cached(cache, &self.base_url, model))
                        .unwrap_or(purpose.untold(model))
                };
                match self.tool_calls.lock() {
                    Ok(mut known) => *known.entry((model.to_owned(), purpose)).or_insert_with(learned),
                    Err(_) => learned(),
                }
            }
        };
        self.text_calls.store(found == ToolCalls::Text, Ordering::Relaxed);
        found
    }

    /// Remembered for the next process when `llm.tool_mode` is `auto`.
    fn remember_tool_calls(&self, model: &str, found: ToolCalls) {
        if let ToolSetting::Auto(Some(cache)) = &self.tool_setting {
            // Not remembered is only a lost hint: the next run learns it again.
            let _ = tool_mode::remember(cache, &self.base_url, model, found);
        }
    }

    /// Replaces the retry policy (tests use short waits).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The endpoint, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    async fn complete_with_retries(
        &self,
        request: &ChatRequest,
        on_delta: DeltaSink<'_>,
    ) -> Result<ModelReply, LlmError> {
        let mut attempt = 1;
        loop {
            let options = BodyOptions {
                stream_options: !self.without_stream_options.load(Ordering::Relaxed),
                tools: !self.without_tools.load(Ordering::Relaxed) && !self.text_calls.load(Ordering::Relaxed),
                sampling: self.sampling,
            };
            let body = wire::chat_body(request, options);
            let failure = match self.attempt(request, &body, &mut *on_delta).await {
                Ok(reply) => {
                    let structured = !reply.tool_calls.is_empty();
                    let reply = recover_text_calls(reply, request);
                    // Schemas sent, and the call still came as text: the server does not map this
                    // model's calls (its chat template), so text is the form that works.
                    if options.tools && !request.tools.is_empty() && !structured && !reply.tool_calls.is_empty() {
                        self.remember_tool_calls(&request.model, ToolCalls::Text);
                    }
                    return Ok(reply);
                }
                Err(failure) => failure,
            };
            match failure.next {
                Next::Without(Rejection::StreamOptions) if options.stream_options => {
                    self.without_stream_options.store(true, Ordering::Relaxed);
                }
                Next::Without(Rejection::Tools) if options.tools => self.without_tools.store(true, Ordering::Relaxed),
                Next::Retry { after } if !failure.emitted && attempt < self.retry.max_attempts => {
                    let wait = self.retry.delay(attempt, after);
                    attempt += 1;
                    on_delta(ModelDelta::Retry {
                        reason: retry::reason(&failure.error),
                        wait,
                        attempt,
                        max_attempts: self.retry.max_attempts,
                    });
                    tokio::time::sleep(wait).await;
                }
                _ => return Err(with_attempts(failure.error, attempt)),
            }
        }
    }

    /// One request and its streamed reply.
    async fn attempt(
        &self,
        request: &ChatRequest,
        body: &Value,
        on_delta: DeltaSink<'_>,
    ) -> Result<ModelReply, Failure> {
        let url = format!("{}/chat/completions", self.base_url);
        let post = self.authorized(self.http.post(&url)).header(ACCEPT, "text/event-stream").json(body);
        let started = tokio::time::Instant::now();
        let response = self.send(post, &request.model, true).await?;
        if !response.status().is_success() {
            return Err(self.status_failure(response, &request.model).await);
        }
        let is_json = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.contains("json"));
        let mut assembler = ReplyAssembler::new();
        if is_json {
            // An endpoint that ignored `stream: true` and sent the whole reply.
            let text = match timeout(self.first_byte().max(self.timeout), response.text()).await {
                Err(_) => return Err(Failure::stop(self.timed_out())),
                Ok(Err(err)) => return Err(self.transport_failure(&err, &request.model)),
                Ok(Ok(text)) => text,
            };
            let pushed = assembler.push_data(&text, &mut *on_delta);
            let reply = pushed.and_then(|_| assembler.finish());
            return reply.map_err(|err| self.stream_failure(err, false, &request.model));
        }
        // A local model's head and first bytes share one budget: it may send the head at once and
        // then read the prompt, or the other way round.
        let first = match self.local_first_byte {
            Some(wait) => wait.saturating_sub(started.elapsed()).max(Duration::from_millis(1)),
            None => self.timeout,
        };
        let mut events = sse::events(response.bytes_stream(), first, self.timeout);
        while let Some(item) = events.next().await {
            let emitted = assembler.has_emitted();
            let event = match item {
                Ok(event) => event,
                Err(SseError::Idle) => return Err(Failure { emitted, ..Failure::stop(self.timed_out()) }),
                Err(SseError::FirstByte) => return Err(Failure::stop(self.first_byte_timed_out())),
                Err(SseError::Transport { message, reset }) => {
                    let error = LlmError::Protocol(format!("the connection broke mid-reply: {message}"));
                    let next = if reset { Next::Retry { after: None } } else { Next::Stop };
                    return Err(Failure { error, next, emitted });
                }
                Err(malformed @ SseError::Malformed(_)) => {
                    return Err(Failure { emitted, ..Failure::stop(LlmError::Protocol(malformed.to_string())) });
                }
            };
            let step = if event.event == "error" {
                Err(StreamError::Provider(classify::error_text(&event.data)))
            } else {
                assembler.push_data(&event.data, &mut *on_delta)
            };
            match step {
                Ok(Step::Done) => break,
                Ok(Step::More) => {}
                // llama.cpp streams an error object after calls it could not finish: whole ones still count.
                Err(StreamError::Provider(_)) if assembler.has_complete_call() => {
                    return assembler.salvage().map_err(|err| self.stream_failure(err, true, &request.model));
                }
                Err(err) => return Err(self.stream_failure(err, assembler.has_emitted(), &request.model)),
            }
        }
        let emitted = assembler.has_emitted();
        assembler.finish().map_err(|err| self.stream_failure(err, emitted, &request.model))
    }

    fn authorized(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.api_key {
            Some(key) => builder.bearer_auth(key),
            None => builder,
        }
    }

    /// Sends a request and waits for the response head: at most the first-byte timeout for a
    /// chat reply (`first_byte`), else `timeout`. `model` is only for the message when the endpoint
    /// cannot be reached ("" for `/models`).
    async fn send(
        &self,
        builder: reqwest::RequestBuilder,
        model: &str,
        first_byte: bool,
    ) -> Result<reqwest::Response, Failure> {
        let wait = if first_byte { self.first_byte() } else { self.timeout };
        match timeout(wait, builder.send()).await {
            Err(_) if first_byte => Err(Failure::stop(self.first_byte_timed_out())),
            Err(_) => Err(Failure::stop(self.timed_out())),
            Ok(Err(err)) => Err(self.transport_failure(&err, model)),
            Ok(Ok(response)) => Ok(response),
        }
    }

    async fn status_failure(&self, response: reqwest::Response, model: &str) -> Failure {
        let status = response.status().as_u16();
        let after = retry::retry_after(response.headers());
        let body = timeout(self.timeout, response.text()).await.ok().and_then(Result::ok).unwrap_or_default();
        let rejection = classify::rejection(status, &body);
        let error = match rejection {
            Rejection::Transient if status == 429 => LlmError::RateLimited { attempts: 1 },
            _ => classify::from_status(status, &body, &self.base_url, model),
        };
        let next = match rejection {
            Rejection::Transient => Next::Retry { after },
            Rejection::Fatal => Next::Stop,
            other => Next::Without(other),
        };
        Failure { error, next, emitted: false }
    }

    fn transport_failure(&self, err: &reqwest::Error, model: &str) -> Failure {
        if err.is_connect() {
            // The causes only: reqwest's own text carries the URL, whose words must not count.
            let chain = std::error::Error::source(err).map(sse::describe).unwrap_or_else(|| err.to_string());
            Failure::stop(transport::connect_error(&chain, &self.base_url, model, self.proxy.as_deref()))
        } else if err.is_timeout() {
            Failure::stop(self.timed_out())
        } else if sse::is_reset(err) {
            let error = LlmError::Protocol(format!("the connection was dropped: {}", sse::describe(err)));
            Failure { error, next: Next::Retry { after: None }, emitted: false }
        } else {
            Failure::stop(LlmError::Protocol(sse::describe(err)))
        }
    }

    fn stream_failure(&self, err: StreamError, emitted: bool, model: &str) -> Failure {
        let (error, next) = match err {
            StreamError::Provider(message) => {
                (classify::from_stream_error(&message, &self.base_url, model), Next::Stop)
            }
            StreamError::Unreadable(first) => (
                LlmError::Protocol(format!("the endpoint did not send a chat-completions stream: {first}")),
                Next::Stop,
            ),
            StreamError::Repeating(found) => {
                (LlmError::Repeating { unit: found.unit, copies: found.copies }, Next::Stop)
            }
            StreamError::Empty => (
                LlmError::Protocol("the endpoint closed the stream without sending a reply".to_owned()),
                Next::Retry { after: None },
            ),
        };
        Failure { error, next, emitted }
    }

    fn timed_out(&self) -> LlmError {
        LlmError::Timeout { seconds: whole_seconds(self.timeout) }
    }

    fn first_byte(&self) -> Duration {
        self.local_first_byte.unwrap_or(self.timeout)
    }

    fn first_byte_timed_out(&self) -> LlmError {
        match self.local_first_byte {
            Some(wait) => LlmError::FirstByteTimeout { seconds: whole_seconds(wait) },
            None => self.timed_out(),
        }
    }
}

impl ChatModel for OpenAiClient {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>> {
        Box::pin(self.complete_with_retries(request, on_delta))
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>> {
        Box::pin(self.models_with_retries())
    }

    fn tool_calls(&self, model: &str, purpose: Purpose) -> ToolCalls {
        self.resolve_tool_calls(model, purpose)
    }
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("local_first_byte", &self.local_first_byte)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

/// `wait` in seconds, rounded up, at least 1.
fn whole_seconds(wait: Duration) -> u64 {
    u64::try_from(wait.as_millis().div_ceil(1000)).unwrap_or(u64::MAX).max(1)
}

/// The final error after `attempts` attempts.
fn with_attempts(error: LlmError, attempts: u32) -> LlmError {
    match error {
        LlmError::RateLimited { .. } => LlmError::RateLimited { attempts },
        other => other,
    }
}

mod models;

#[cfg(test)]
mod tests;
