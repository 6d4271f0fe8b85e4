//! `ChatRequest` → the chat-completions JSON body (pure).
//!
//! Messages follow the tool protocol every OpenAI-compatible server understands: assistant
//! messages carry `tool_calls` as `{id, type: "function", function: {name, arguments}}` with the
//! arguments as a JSON *string*; tool results are `role: "tool"` messages with `tool_call_id`.

use serde_json::{Map, Value, json};

use super::{ChatRequest, Sampling};
use crate::protocol::{ChatMessage, Role, ToolCall, ToolSpec};

/// Which optional parts of the body the endpoint accepts, and the sampling settings to send.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BodyOptions {
    /// `stream_options: {include_usage: true}` (rejected by some older servers).
    pub stream_options: bool,
    /// The `tools` list (rejected by models without tool support, or left out by `llm.tool_mode`;
    /// calls then come as text).
    pub tools: bool,
    pub sampling: Sampling,
}

impl Default for BodyOptions {
    fn default() -> Self {
        Self { stream_options: true, tools: true, sampling: Sampling::default() }
    }
}

/// The streamed chat-completions request body.
pub(crate) fn chat_body(request: &ChatRequest, options: BodyOptions) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), Value::String(request.model.clone()));
    body.insert("messages".into(), request.messages.iter().map(message).collect());
    body.insert("stream".into(), Value::Bool(true));
    if options.stream_options {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if options.tools && !request.tools.is_empty() {
        body.insert("tools".into(), request.tools.iter().map(tool).collect());
    }
    if let Some(max_tokens) = request.max_tokens {
        body.insert("max_tokens".into(), max_tokens.into());
    }
    // Only what the user set: an endpoint's own defaults (often tuned per model) stay otherwise.
    let Sampling { temperature, top_p, top_k } = options.sampling;
    for (key, value) in [("temperature", temperature.map(Value::from)), ("top_p", top_p.map(Value::from))] {
        if let Some(value) = value.filter(|value| !value.is_null()) {
            body.insert(key.into(), value);
        }
    }
    if let Some(top_k) = top_k {
        body.insert("top_k".into(), top_k.into());
    }
    Value::Object(body)
}

fn message(message: &ChatMessage) -> Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = Map::new();
    out.insert("role".into(), role.into());
    // An assistant turn that only calls tools has no content: `null`, as the API documents.
    let content = if message.content.is_empty() && !message.tool_calls.is_empty() {
        Value::Null
    } else {
        Value::String(message.content.clone())
    };
    out.insert("content".into(), content);
    if !message.tool_calls.is_empty() {
        out.insert("tool_calls".into(), message.tool_calls.iter().map(tool_call).collect());
    }
    if let Some(id) = &message.tool_call_id {
        out.insert("tool_call_id".into(), Value::String(id.clone()));
    }
    Value::Object(out)
}

/// The key that holds tool-call arguments which were not a JSON object (cut off, malformed, or
/// another JSON type), so that what goes back to the endpoint is always an object.
pub(crate) const RAW_ARGUMENTS: &str = "_raw";

/// `arguments` as a JSON object: itself when it is one, else `{"_raw": text}`. Strict servers
/// (llama.cpp) parse every earlier call's arguments and reject the whole request when one is not
/// valid JSON, so a broken call must never go back as it came.
pub(crate) fn object_arguments(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::String(text) => json!({ RAW_ARGUMENTS: text }),
        other => json!({ RAW_ARGUMENTS: other.to_string() }),
    }
}

fn tool_call(call: &ToolCall) -> Value {
    let arguments = object_arguments(&call.arguments).to_string();
    json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}})
}

fn tool(spec: &ToolSpec) -> Value {
    json!({"type": "function", "function": {
        "name": spec.name, "description": spec.description, "parameters": spec.parameters}})
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn request() -> ChatRequest {
        let call = ToolCall { id: "call_7".into(), name: "run_command".into(), arguments: json!({"command": "ls"}) };
        ChatRequest {
            model: "qwen2.5:7b".into(),
            messages: vec![
                ChatMessage::system("rules"),
                ChatMessage::user("list files"),
                ChatMessage::assistant("", vec![call]),
                ChatMessage::tool("call_7", "a.txt\n"),
            ],
            tools: vec![ToolSpec {
                name: "run_command".into(),
                description: "Run a shell command".into(),
                parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
            }],
            max_tokens: Some(512),
        }
    }

    #[test]
    fn the_full_body() {
        let expected = json!({
            "model": "qwen2.5:7b",
            "messages": [
                {"role": "system", "content": "rules"},
                {"role": "user", "content": "list files"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_7", "type": "function", "function": {"name": "run_command", "arguments": "{\"command\":\"ls\"}"}}]},
                {"role": "tool", "content": "a.txt\n", "tool_call_id": "call_7"}
            ],
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [{"type": "function", "function": {"name": "run_command", "description": "Run a shell command",
                       "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}],
            "max_tokens": 512
        });
        assert_eq!(chat_body(&request(), BodyOptions::default()), expected);
    }

    #[test]
    fn optional_parts_can_be_left_out() {
        let mut request = request();
        request.max_tokens = None;
        let body = chat_body(&request, BodyOptions { stream_options: false, tools: false, ..BodyOptions::default() });
        for key in ["stream_options", "tools", "max_tokens", "temperature", "top_p", "top_k"] {
            assert!(body.get(key).is_none(), "{key} in {body}");
        }
        request.tools.clear();
        assert!(chat_body(&request, BodyOptions::default()).get("tools").is_none());
    }

    #[test]
    fn sampling_settings_are_sent_only_when_set() {
        let sampling = Sampling { temperature: Some(0.0), top_p: Some(0.9), top_k: None };
        let body = chat_body(&request(), BodyOptions { sampling, ..BodyOptions::default() });
        assert_eq!((&body["temperature"], &body["top_p"]), (&json!(0.0), &json!(0.9)));
        assert!(body.get("top_k").is_none(), "{body}");
        let sampling = Sampling { top_k: Some(1), ..Sampling::default() };
        let body = chat_body(&request(), BodyOptions { sampling, ..BodyOptions::default() });
        assert_eq!(body["top_k"], json!(1));
        assert!(body.get("temperature").is_none() && body.get("top_p").is_none(), "{body}");
    }

    #[test]
    fn arguments_that_are_not_an_object_go_back_as_valid_json() {
        let call = ToolCall { id: "c".into(), name: "run_command".into(), arguments: Value::String("{bad".into()) };
        let sent = message(&ChatMessage::assistant("Checking.", vec![call]));
        assert_eq!(sent["content"], "Checking.");
        assert_eq!(sent["tool_calls"][0]["function"]["arguments"], r#"{"_raw":"{bad"}"#);
        for (arguments, expected) in [(json!([1]), json!({"_raw": "[1]"})), (json!({"a": 1}), json!({"a": 1}))] {
            assert_eq!(object_arguments(&arguments), expected);
        }
        assert_eq!(message(&ChatMessage::assistant("", vec![]))["content"], "");
    }
}
