//! The model seam: a `ChatModel` streams one chat-completions request and returns the assembled
//! reply (text, reasoning and tool calls). Never prints.

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

/// A piece of the reply as it streams in, for live rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelDelta {
    /// `reasoning` / `reasoning_content` deltas: shown as Thought.
    Reasoning(String),
    /// Ordinary content deltas.
    Content(String),
}

/// The whole reply once the stream ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub content: String,
    pub reasoning: String,
    /// Structured calls, or calls recovered from the text for known tool names.
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
}

/// Where streamed deltas go while a request runs.
pub type DeltaSink<'a> = &'a mut (dyn FnMut(ModelDelta) + Send);

pub trait ChatModel: Send + Sync {
    /// Streams one request. `on_delta` sees every piece as it arrives; the reply is the assembly.
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_delta: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>>;

    /// Model names the endpoint offers (`GET /models`), for the set-llm wizard.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, LlmError>>;
}

/// What went wrong talking to the model, worded for the user.
#[derive(Debug, Error)]
pub enum LlmError {
    #[error(
        "cannot connect to the model at {url}. Is it running? For Ollama: `ollama serve`, then \
         `ollama pull qwen2.5:7b`; or point opsai elsewhere with `opsai config set-llm`"
    )]
    Connect { url: String },
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
    #[error("the model did not answer within {seconds} s")]
    Timeout { seconds: u64 },
    #[error("the model's reply could not be read: {0}")]
    Protocol(String),
    #[error("cancelled")]
    Cancelled,
}
