//! HTTP statuses and provider error bodies → `LlmError`, worded for the user (pure).
//!
//! Providers word the same failure differently, so the body is matched loosely: OpenAI
//! (`{"error":{"message","code"}}`), Ollama (`{"error":"…"}` or the OpenAI shape), vLLM and
//! llama.cpp (`{"error":{…}}`, `{"message":…}`, `{"detail":…}`), or plain text.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::LlmError;

/// At most this many characters of a provider's error text reach the user.
const MAX_ERROR_TEXT: usize = 300;

static CONTEXT_TOO_LONG: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)context_length_exceeded|maximum context length|context (length|window|size) (is )?(exceeded|too small)|exceeds? (the )?(available |maximum )?context|prompt is too long|too many (input )?tokens|input is too long|reduce the length of the (messages|prompt)",
    )
    .ok()
});

static UNKNOWN_MODEL: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)model_not_found|model\b[^\n]{0,120}?\b(not found|does not exist|doesn't exist|not exist|is not available|no such)|(unknown|invalid|unsupported) model|no such model|model not found",
    )
    .ok()
});

static TOOLS_UNSUPPORTED: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)does not support (tools|tool calling|function calling|functions)|(tools?|tool calling|function calling|tool use) (is |are )?not supported",
    )
    .ok()
});

/// A body saying the request itself is wrong (llama.cpp answers HTTP 500 "Failed to parse tool call
/// arguments"; OpenAI's `invalid_request_error`): never worth a retry, whatever the status.
static INVALID_REQUEST: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)invalid_request_error|invalid request|bad request|failed to parse|could not parse|unable to parse|parse error|is not valid json|invalid (json|argument|parameter|value|type|message|tool|role|schema)|validation error|missing required",
    )
    .ok()
});

fn matches(regex: &LazyLock<Option<Regex>>, text: &str) -> bool {
    regex.as_ref().is_some_and(|re| re.is_match(text))
}

/// What a failed response means for the next attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// Send the same request again later (429, 5xx).
    Transient,
    /// The endpoint rejects `stream_options`: send again without it.
    StreamOptions,
    /// The model rejects `tools`: send again without them and read calls from the text.
    Tools,
    /// Final.
    Fatal,
}

/// Which way a non-2xx response should be handled.
pub(crate) fn rejection(status: u16, body: &str) -> Rejection {
    match status {
        429 if !body.contains("insufficient_quota") => Rejection::Transient,
        500..=599 if is_invalid_request(body) => Rejection::Fatal,
        500 | 502 | 503 | 504 => Rejection::Transient,
        400 | 422 if body.contains("stream_options") => Rejection::StreamOptions,
        400..=499 if matches(&TOOLS_UNSUPPORTED, body) => Rejection::Tools,
        _ => Rejection::Fatal,
    }
}

/// The error for a final non-2xx response to a request for `model` at `base_url`.
pub(crate) fn from_status(status: u16, body: &str, base_url: &str, model: &str) -> LlmError {
    if status == 401 || status == 403 {
        return LlmError::Unauthorized { status };
    }
    if status >= 400 && matches(&CONTEXT_TOO_LONG, body) {
        return LlmError::ContextTooLong;
    }
    if (400..500).contains(&status) && !model.is_empty() && matches(&UNKNOWN_MODEL, body) {
        return unknown_model(model, base_url);
    }
    if status == 404 {
        return LlmError::NotFound { url: base_url.to_owned() };
    }
    if status >= 400 && status != 429 && is_invalid_request(body) {
        return LlmError::Rejected { status, body: error_text(body) };
    }
    LlmError::Http { status, body: error_text(body) }
}

/// The body says the request itself is invalid (or too long for the model).
fn is_invalid_request(body: &str) -> bool {
    matches(&INVALID_REQUEST, body) || matches(&CONTEXT_TOO_LONG, body)
}

/// The error for an error object the provider sent inside a 200 stream.
pub(crate) fn from_stream_error(message: &str, base_url: &str, model: &str) -> LlmError {
    if matches(&CONTEXT_TOO_LONG, message) {
        LlmError::ContextTooLong
    } else if !model.is_empty() && matches(&UNKNOWN_MODEL, message) {
        unknown_model(model, base_url)
    } else {
        LlmError::Protocol(format!("the endpoint reported an error mid-reply: {}", clip(message)))
    }
}

fn unknown_model(model: &str, base_url: &str) -> LlmError {
    let hint = if is_ollama(base_url) {
        format!("; download it with `ollama pull {model}`, or pick another with `opsai config set-llm`")
    } else {
        "; check the name with `opsai config show`, or pick another with `opsai config set-llm`".to_owned()
    };
    LlmError::UnknownModel { model: model.to_owned(), hint }
}

/// Ollama listens on 11434 unless told otherwise.
pub(crate) fn is_ollama(base_url: &str) -> bool {
    let lower = base_url.to_ascii_lowercase();
    lower.contains(":11434") || lower.contains("ollama")
}

/// The readable part of an error body: the provider's message when it is JSON, else the text.
pub(crate) fn error_text(body: &str) -> String {
    let trimmed = body.trim();
    let text = serde_json::from_str::<Value>(trimmed).ok().and_then(|value| message_of(&value));
    clip(text.as_deref().unwrap_or(trimmed))
}

/// The message inside a provider error value: `{"error":{"message":…}}`, `{"error":"…"}`,
/// `{"message":…}`, `{"detail":…}`, or the error object itself.
pub(crate) fn message_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Object(map) => ["error", "message", "detail", "msg"]
            .iter()
            .filter_map(|key| map.get(*key))
            .find_map(message_of)
            .or_else(|| Some(value.to_string())),
        Value::Array(items) => items.first().and_then(message_of),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn clip(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(MAX_ERROR_TEXT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: &str = "http://127.0.0.1:8080/v1";
    const OLLAMA: &str = "http://localhost:11434/v1";

    #[test]
    fn auth_failures_are_unauthorized() {
        for status in [401, 403] {
            let err = from_status(status, r#"{"error":{"message":"Incorrect API key provided"}}"#, LOCAL, "m");
            assert!(matches!(err, LlmError::Unauthorized { status: s } if s == status), "{err:?}");
        }
    }

    #[test]
    fn ollama_unknown_model_hints_pull() {
        let body = r#"{"error":{"message":"model \"qwen9:1b\" not found, try pulling it first","type":"api_error"}}"#;
        let err = from_status(404, body, OLLAMA, "qwen9:1b");
        assert!(matches!(&err, LlmError::UnknownModel { model, .. } if model == "qwen9:1b"));
        assert!(err.to_string().contains("ollama pull qwen9:1b"), "{err}");
    }

    #[test]
    fn openai_unknown_model_names_it_without_ollama_hint() {
        let body = r#"{"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}"#;
        let err = from_status(404, body, "https://api.openai.com/v1", "gpt-9");
        let text = err.to_string();
        assert!(text.contains("`gpt-9`") && !text.contains("ollama"), "{text}");
    }

    #[test]
    fn deepseek_and_vllm_unknown_model_bodies() {
        for body in [
            r#"{"error":{"message":"Model Not Exist","type":"invalid_request_error"}}"#,
            r#"{"object":"error","message":"The model `x` does not exist.","type":"NotFoundError","code":404}"#,
        ] {
            assert!(matches!(from_status(400, body, LOCAL, "x"), LlmError::UnknownModel { .. }), "{body}");
        }
    }

    #[test]
    fn a_bare_404_points_at_the_base_url() {
        let err = from_status(404, "404 page not found", "http://localhost:11434", "qwen2.5:7b");
        assert!(matches!(&err, LlmError::NotFound { url } if url == "http://localhost:11434"));
        assert!(err.to_string().contains("/v1"));
    }

    #[test]
    fn context_length_errors_from_several_providers() {
        for body in [
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","code":"context_length_exceeded"}}"#,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"object":"error","message":"This model's maximum context length is 4096 tokens.","code":400}"#,
        ] {
            assert!(matches!(from_status(400, body, LOCAL, "m"), LlmError::ContextTooLong), "{body}");
        }
        assert!(matches!(from_stream_error("context window exceeded", LOCAL, "m"), LlmError::ContextTooLong));
    }

    #[test]
    fn other_statuses_keep_the_providers_message() {
        let err = from_status(500, r#"{"error":{"message":"upstream exploded"}}"#, LOCAL, "m");
        assert!(matches!(&err, LlmError::Http { status: 500, body } if body == "upstream exploded"), "{err:?}");
        let long = "x".repeat(1000);
        let LlmError::Http { body, .. } = from_status(502, &long, LOCAL, "m") else { panic!("not Http") };
        assert!(body.chars().count() <= MAX_ERROR_TEXT + 1);
    }

    #[test]
    fn an_invalid_request_is_rejected_not_retried_whatever_the_status() {
        let llama = r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 1","type":"server_error"}}"#;
        assert_eq!(rejection(500, llama), Rejection::Fatal);
        let err = from_status(500, llama, LOCAL, "m");
        assert!(
            matches!(&err, LlmError::Rejected { status: 500, body } if body.starts_with("Failed to parse tool call")),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("rejected the request as invalid") && !text.contains("overloaded"), "{text}");
        let openai =
            r#"{"error":{"message":"Invalid value for 'content'.","type":"invalid_request_error","code":null}}"#;
        assert!(matches!(from_status(400, openai, LOCAL, "m"), LlmError::Rejected { status: 400, .. }));
        let too_long = r#"{"error":{"code":500,"message":"the request exceeds the available context size","type":"server_error"}}"#;
        assert_eq!(rejection(500, too_long), Rejection::Fatal);
        assert!(matches!(from_status(500, too_long, LOCAL, "m"), LlmError::ContextTooLong));
        // A server that is only busy or broken is still retried.
        assert_eq!(
            rejection(503, r#"{"error":{"message":"Loading model","type":"unavailable_error"}}"#),
            Rejection::Transient
        );
        assert_eq!(rejection(500, "upstream exploded"), Rejection::Transient);
    }

    #[test]
    fn rejection_kinds() {
        assert_eq!(rejection(429, "slow down"), Rejection::Transient);
        assert_eq!(rejection(429, r#"{"error":{"code":"insufficient_quota"}}"#), Rejection::Fatal);
        for status in [500, 502, 503, 504] {
            assert_eq!(rejection(status, ""), Rejection::Transient);
        }
        assert_eq!(rejection(501, ""), Rejection::Fatal);
        assert_eq!(rejection(400, r#"{"error":"unknown field stream_options"}"#), Rejection::StreamOptions);
        let ollama = r#"{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools"}}"#;
        assert_eq!(rejection(400, ollama), Rejection::Tools);
        assert_eq!(rejection(400, "bad request"), Rejection::Fatal);
    }

    #[test]
    fn messages_from_error_shapes() {
        let cases = [
            (r#"{"error":{"message":"a"}}"#, "a"),
            (r#"{"error":"b"}"#, "b"),
            (r#"{"detail":"c"}"#, "c"),
            (r#"[{"error":{"message":"d"}}]"#, "d"),
            ("plain text", "plain text"),
        ];
        for (body, expected) in cases {
            assert_eq!(error_text(body), expected);
        }
    }

    #[test]
    fn ollama_detection() {
        assert!(is_ollama(OLLAMA));
        assert!(is_ollama("http://ollama.internal:8000/v1"));
        assert!(!is_ollama("https://api.deepseek.com/v1"));
    }
}
