//! Reply shapes seen from llama.cpp's `llama-server` (and other local servers): an error object
//! after HTTP 200, `finish_reason: "length"`, usage chunks with empty `choices`, arguments that are
//! not JSON, a model stuck repeating itself.

use serde_json::json;

use super::replies::{Reply, chunk, pieces, reply_sse_events};

/// The usage chunk as llama.cpp sends it: empty `choices`, `usage` and its own `timings`.
pub fn llama_usage_chunk() -> String {
    json!({"id": "chatcmpl-llama", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "smollm2",
           "choices": [], "usage": {"prompt_tokens": 4400, "completion_tokens": 12, "total_tokens": 4412},
           "timings": {"prompt_n": 4400, "prompt_ms": 21000.0, "predicted_n": 12, "predicted_ms": 400.0}})
    .to_string()
}

/// The error object llama.cpp streams after HTTP 200 when generation fails (`code`, `message`,
/// `type` inside `error`, as the last `data:` event, without `[DONE]`).
pub fn llama_stream_error(message: &str) -> String {
    json!({"error": {"code": 500, "message": message, "type": "server_error"}}).to_string()
}

/// `payloads`, then llama.cpp's error object, and the stream ends.
pub fn reply_error_after(payloads: &[String], message: &str) -> Reply {
    let mut all = payloads.to_vec();
    all.push(llama_stream_error(message));
    reply_sse_events(&all)
}

/// A text answer cut by the token limit: `finish_reason: "length"`, then llama.cpp's usage chunk.
pub fn reply_text_cut_at_length(text: &str) -> Reply {
    let mut payloads = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    payloads.extend(pieces(text).into_iter().map(|piece| chunk(json!({"content": piece}), None)));
    payloads.extend([chunk(json!({}), Some("length")), llama_usage_chunk(), "[DONE]".to_owned()]);
    reply_sse_events(&payloads)
}

/// One tool call whose arguments string is `raw` byte for byte (need not be JSON), ending with
/// `finish_reason` (`tool_calls`, or `length` for a call cut by the token limit).
pub fn reply_raw_tool_call(id: &str, name: &str, raw: &str, finish_reason: &str) -> Reply {
    let first = json!({"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}});
    let rest = json!({"index": 0, "function": {"arguments": raw}});
    reply_sse_events(&[
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(json!({"tool_calls": [first]}), None),
        chunk(json!({"tool_calls": [rest]}), None),
        chunk(json!({}), Some(finish_reason)),
        llama_usage_chunk(),
        "[DONE]".to_owned(),
    ])
}

/// A model stuck in a loop: `unit` streamed as its own content delta `times` times, then a normal end.
pub fn reply_repeating(prefix: &str, unit: &str, times: usize) -> Reply {
    let mut payloads = vec![chunk(json!({"role": "assistant", "content": prefix}), None)];
    payloads.extend((0..times).map(|_| chunk(json!({"content": unit}), None)));
    payloads.extend([chunk(json!({}), Some("length")), llama_usage_chunk(), "[DONE]".to_owned()]);
    reply_sse_events(&payloads)
}

/// Each of `deltas` streamed as its own content delta, then a normal end (legitimate output that
/// may repeat itself, such as a table).
pub fn reply_text_deltas(deltas: &[String]) -> Reply {
    let mut payloads = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    payloads.extend(deltas.iter().map(|delta| chunk(json!({"content": delta}), None)));
    payloads.extend([chunk(json!({}), Some("stop")), llama_usage_chunk(), "[DONE]".to_owned()]);
    reply_sse_events(&payloads)
}

/// `payloads`, then the error as older llama.cpp servers stream it: an `error: {…}` line (a field
/// SSE itself ignores), and the stream ends.
pub fn reply_error_line_after(payloads: &[String], message: &str) -> Reply {
    let mut writes: Vec<Vec<u8>> = payloads.iter().map(|p| format!("data: {p}\n\n").into_bytes()).collect();
    let error = json!({"code": 500, "message": message, "type": "server_error"});
    writes.push(format!("error: {error}\n\n").into_bytes());
    super::replies::reply_sse_writes(writes)
}
