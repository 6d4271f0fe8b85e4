//! `OpenAiClient` against the mock LLM server: every stream shape and text form, retries,
//! timeouts and the user-facing errors.

mod failures;
mod streams;

use std::time::Duration;

use opsai::llm::{ChatModel, ChatRequest, LlmError, ModelDelta, ModelReply, OpenAiClient, RetryPolicy};
use opsai::protocol::{ChatMessage, ToolSpec};
use serde_json::json;

use crate::support::mock_llm::MockLlm;

/// The API key the tests send; it must appear in no request body.
const KEY: &str = "sk-test-0123456789abcdef";

/// Retries with waits short enough for tests; `Retry-After` capped at 300 ms.
fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        retry_after_cap: Duration::from_millis(300),
    }
}

fn client_with_timeout(mock: &MockLlm, timeout: Duration) -> OpenAiClient {
    OpenAiClient::new(mock.base_url(), Some(KEY.to_owned()), timeout).unwrap().with_retry(fast_retry())
}

fn client(mock: &MockLlm) -> OpenAiClient {
    client_with_timeout(mock, Duration::from_secs(10))
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "run_command".into(),
            description: "Run a shell command and return its output".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}, "cwd": {"type": "string"},
                               "why": {"type": "string"}}, "required": ["command"]}),
        },
        ToolSpec {
            name: "propose_command".into(),
            description: "Propose one command for the user to run".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"},
                               "explanation": {"type": "string"}}, "required": ["command", "explanation"]}),
        },
    ]
}

fn request() -> ChatRequest {
    ChatRequest {
        model: "qwen2.5:7b".into(),
        messages: vec![
            ChatMessage::system("You are opsai."),
            ChatMessage::user("find log files over 100 MB under /var/log"),
        ],
        tools: tools(),
        max_tokens: None,
    }
}

/// Runs one completion, collecting the deltas.
/// The text deltas (content, reasoning, retries); the progress signals a spinner uses (tool-call
/// pieces, the finish) are left out here and checked in `streams::progress_signals_arrive_in_order`.
async fn complete(client: &OpenAiClient, request: &ChatRequest) -> (Result<ModelReply, LlmError>, Vec<ModelDelta>) {
    let (result, deltas) = complete_all(client, request).await;
    let text = deltas.into_iter().filter(|d| !matches!(d, ModelDelta::ToolCallPiece | ModelDelta::Finished { .. }));
    (result, text.collect())
}

/// Every delta, progress signals included.
async fn complete_all(client: &OpenAiClient, request: &ChatRequest) -> (Result<ModelReply, LlmError>, Vec<ModelDelta>) {
    let mut deltas = Vec::new();
    let result = client.complete(request, &mut |delta| deltas.push(delta)).await;
    (result, deltas)
}

/// The concatenated content deltas.
fn content_of(deltas: &[ModelDelta]) -> String {
    deltas.iter().filter_map(|d| if let ModelDelta::Content(text) = d { Some(text.as_str()) } else { None }).collect()
}
