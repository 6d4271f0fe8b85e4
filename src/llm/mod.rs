//! The model seam: a `ChatModel` streams one chat-completions request and returns the assembled
//! reply (text, reasoning and tool calls). Never prints.
//!
//! - `openai`: the OpenAI-compatible HTTP client (request, status handling, retries, timeouts);
//! - `probe`: the step-by-step checks of `opsai doctor` (route, DNS, TCP, a chat, a tool call);
//! - `wire`: `ChatRequest` → the chat-completions JSON body;
//! - `sse`: response bytes → SSE `data:` payloads, with an idle timeout;
//! - `stream`: payloads → `ModelReply` and live `ModelDelta`s, for every provider's stream shape;
//! - `repeat`: a model stuck repeating the same short chunk, stopped while it streams;
//! - `text_calls`: tool calls that small models print as text instead of sending structured;
//! - `tool_mode`: whether an endpoint takes native tool calls or text ones (`llm.tool_mode`);
//! - `classify`: HTTP statuses and provider error bodies → `LlmError`;
//! - `retry`: which failures are retried, and how long to wait;
//! - `transport`: connect failures (refused, TLS, proxy) → `LlmError`, with advice that fits the endpoint.

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod classify;
pub mod openai;
pub mod probe;
mod repeat;
pub mod retry;
mod sse;
pub mod stream;
pub mod text_calls;
pub mod tool_mode;
pub mod transport;
mod wire;

pub use openai::OpenAiClient;
pub use retry::RetryPolicy;
pub(crate) use wire::object_arguments;

use futures_util::future::BoxFuture;
use thiserror::Error;

use crate::protocol::{ChatMessage, ToolCall, ToolSpec, Usage};

/// One request to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: Option<u32>,
}

/// Sampling settings sent with every request (`llm.temperature`, `llm.top_p`, `llm.top_k`); `None`
/// sends nothing, leaving the endpoint's default.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<u32>,
}

/// A piece of the reply as it streams in, for live rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelDelta {
    /// `reasoning` / `reasoning_content` deltas: shown as Thought.
    Reasoning(String),
    /// Ordinary content deltas.
    Content(String),
    /// An attempt failed and is retried: `reason` (`is busy (429)`, `failed with HTTP 503`), then attempt
    /// `attempt` of `max_attempts` after `wait`. Sent before the wait, so it is never silent.
    Retry { reason: String, wait: std::time::Duration, attempt: u32, max_attempts: u32 },
    /// A piece of a native tool call arrived (its name or a fragment of its arguments): the model
    /// is writing a call, not text.
    ToolCallPiece,
    /// The reply's `finish_reason` arrived and it finished normally; `tool_calls`: whether it holds
    /// native calls. Nothing of the reply follows (only usage and `[DONE]`), so text streamed
    /// before it is decided: an answer unless it holds calls.
    Finished { tool_calls: bool },
}

/// The whole reply once the stream ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub content: String,
    pub reasoning: String,
    /// Structured calls, or calls recovered from the text for known tool names.
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    /// Why the model stopped (`finish_reason`).
    pub finish: Finish,
}

/// Why the model stopped writing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Finish {
    /// It finished (`stop`, `tool_calls`, or no reason given).
    #[default]
    Complete,
    /// `length`: it hit `max_tokens`, so the reply (a tool call too) may be cut anywhere.
    Length,
    /// `content_filter`: the provider withheld the rest.
    ContentFilter,
}

impl Finish {
    /// A `finish_reason` as the providers spell it.
    pub(crate) fn from_reason(reason: &str) -> Self {
        match reason {
            "length" | "max_tokens" => Finish::Length,
            "content_filter" => Finish::ContentFilter,
            _ => Finish::Complete,
        }
    }

    /// What to tell the user when the reply is not whole: `max_tokens` was sent as the value of
    /// the config key `key`.
    pub(crate) fn problem(self, max_tokens: Option<u32>, key: &str) -> Option<String> {
        match (self, max_tokens) {
            (Finish::Complete, _) => None,
            (Finish::Length, Some(limit)) => Some(format!(
                "the answer was cut at {key} = {limit} tokens; raise {key} in config.json \
                 (`opsai config path` prints where it is)"
            )),
            (Finish::Length, None) => Some("the answer was cut by the endpoint's token limit".to_owned()),
            (Finish::ContentFilter, _) => Some(
                "the provider's content filter stopped the answer (finish_reason `content_filter`); rephrase \
                 the request, or use another model (--model)"
                    .to_owned(),
            ),
        }
    }
}

/// Where streamed deltas go while a request runs.
pub(crate) type DeltaSink<'a> = &'a mut (dyn FnMut(ModelDelta) + Send);

pub trait ChatModel: Send + Sync {
    /// Streams one request. `on_delta` sees every piece as it arrives; the reply is the assembly.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>>;

    /// Model names the endpoint offers (`GET /models`), for the set-llm wizard.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>>;

    /// How tool calls travel for `model` at this endpoint (`llm.tool_mode`, or what `auto` learned),
    /// for `purpose`: the prompt says how to call only when the schemas are not sent.
    fn tool_calls(&self, _model: &str, _purpose: tool_mode::Purpose) -> tool_mode::ToolCalls {
        tool_mode::ToolCalls::Native
    }
}

/// What went wrong talking to the model, worded for the user.
#[derive(Debug, Error)]
pub enum LlmError {
    /// Refused, unresolvable or unroutable; `model` is `None` when listing the models.
    #[error("{}", transport::connect_message(url, model.as_deref()))]
    Connect { url: String, model: Option<String> },
    #[error("the TLS connection to {url} failed: {detail}. {}", transport::tls_advice(detail))]
    Tls { url: String, detail: String },
    #[error(
        "cannot reach {url} through the HTTP proxy {proxy}: {detail}. Check HTTPS_PROXY, HTTP_PROXY \
         and ALL_PROXY, or add the endpoint's host to NO_PROXY"
    )]
    Proxy { url: String, proxy: String, detail: String },
    #[error("the model endpoint rejected the API key ({status}); set it with `opsai config set-llm` or OPSAI_API_KEY")]
    Unauthorized { status: u16 },
    #[error("the endpoint does not know the model `{model}`{hint}")]
    UnknownModel { model: String, hint: String },
    #[error("the conversation is too long for the model's context window")]
    ContextTooLong,
    #[error("the model endpoint is rate limiting requests (429) and did not recover after {attempts} attempts")]
    RateLimited { attempts: u32 },
    #[error("the model endpoint failed with HTTP {status}: {body}")]
    Http { status: u16, body: String },
    /// A 4xx/5xx whose body says the request itself is invalid: sending it again cannot help.
    #[error(
        "the model endpoint rejected the request as invalid (HTTP {status}): {body}. This is not a busy \
         server, so it was not retried; check the endpoint's log, or start a new conversation if the \
         error names an earlier message"
    )]
    Rejected { status: u16, body: String },
    /// The reply stopped early (`finish_reason` `length` or `content_filter`); says why and what to do.
    #[error("{0}")]
    Incomplete(String),
    #[error(
        "the model kept repeating {unit:?} ({copies} times in a row) and was stopped; try again or reword \
         the request (small models loop more often: a larger one may not)"
    )]
    Repeating { unit: String, copies: usize },
    #[error("the model did not answer within {seconds} s")]
    Timeout { seconds: u64 },
    /// A model on this machine did not start its reply within `llm.local_first_byte_timeout`.
    #[error("the model on this machine did not start answering within {seconds} s")]
    FirstByteTimeout { seconds: u64 },
    #[error("the model's reply could not be read: {0}")]
    Protocol(String),
    #[error("cancelled")]
    Cancelled,
    #[error(
        "the model endpoint {url} does not exist (HTTP 404); check llm.base_url with `opsai config show` \
         (OpenAI-compatible endpoints usually end in /v1)"
    )]
    NotFound { url: String },
    #[error("llm.base_url `{url}` is not a usable http(s) URL: {reason}; fix it with `opsai config set-llm`")]
    InvalidUrl { url: String, reason: String },
    #[error("could not set up the HTTP client: {0}")]
    Client(String),
}

/// Fuzzing entry (`fuzz/`; not an API): the response body read as `chunks`, through the SSE
/// framing and the reply assembler exactly as a streamed reply is (no HTTP, no text-call
/// recovery). A failure is returned as its message.
#[doc(hidden)]
pub async fn assemble_sse_for_fuzzing(chunks: Vec<Vec<u8>>, on_delta: DeltaSink<'_>) -> Result<ModelReply, String> {
    use futures_util::StreamExt;

    let bytes = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>));
    let hour = std::time::Duration::from_secs(3600);
    let mut events = sse::events(bytes, hour, hour);
    let mut assembler = stream::ReplyAssembler::new();
    while let Some(event) = events.next().await {
        let event = event.map_err(|err| err.to_string())?;
        if event.event == "error" {
            return Err(classify::error_text(&event.data));
        }
        let step = assembler.push_data(&event.data, &mut *on_delta).map_err(|err| format!("{err:?}"))?;
        if step == stream::Step::Done {
            break;
        }
    }
    assembler.finish().map_err(|err| format!("{err:?}"))
}

/// A model and the name to ask it by: what a tool needs to send a side request to the turn's own
/// model.
#[derive(Clone, Copy)]
pub struct ModelRef<'a> {
    pub client: &'a dyn ChatModel,
    pub name: &'a str,
}
