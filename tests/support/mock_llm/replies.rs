//! Scripted replies for [`super::MockLlm`]: SSE streams in each provider's shape, HTTP errors,
//! hangs and broken connections.

use std::time::Duration;

use serde_json::{Value, json};

/// One scripted reply. Build it with the `reply_*` functions, then adjust with the methods.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(super) status: u16,
    pub(super) headers: Vec<(String, String)>,
    pub(super) parts: Vec<Part>,
    pub(super) body_mode: BodyMode,
    pub(super) head_delay: Option<Duration>,
    pub(super) hang_before_head: bool,
    /// Close the connection without finishing the body.
    pub(super) abort: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    /// Written and flushed on its own (its own TCP segment, `TCP_NODELAY` is set).
    Bytes(Vec<u8>),
    Pause(Duration),
    /// Stop writing and hold the connection open.
    Hang,
    /// Write nothing more until the test opens the gate.
    Wait(Gate),
}

/// A signal from the test to a reply held with [`Reply::held_after`]: the rest of the body is
/// written once it is opened (opening first is fine: the permit is kept).
#[derive(Debug, Clone, Default)]
pub struct Gate(pub(super) std::sync::Arc<tokio::sync::Notify>);

impl Gate {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn open(&self) {
        self.0.notify_one();
    }
}

impl PartialEq for Gate {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Gate {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BodyMode {
    Chunked,
    Length,
    CloseDelimited,
}

/// A tool call for the stream builders.
#[derive(Debug, Clone, PartialEq)]
pub struct MockCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

pub fn call(id: &str, name: &str, arguments: Value) -> MockCall {
    MockCall { id: id.to_owned(), name: name.to_owned(), arguments }
}

/// How SSE events are framed on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Framing {
    /// `\r\n` line endings instead of `\n`.
    pub crlf: bool,
    /// `data:{…}` without the space.
    pub no_space: bool,
    /// A `: keep-alive` comment before every event (and an OpenRouter-style comment first).
    pub comments: bool,
}

impl Reply {
    fn new(status: u16, parts: Vec<Part>, body_mode: BodyMode) -> Self {
        Reply { status, headers: Vec::new(), parts, body_mode, head_delay: None, hang_before_head: false, abort: false }
    }

    fn sse(parts: Vec<Part>) -> Self {
        Reply::new(200, parts, BodyMode::Chunked)
            .with_header("Content-Type", "text/event-stream")
            .with_header("Cache-Control", "no-cache")
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Waits before sending the response head.
    pub fn delayed(mut self, delay: Duration) -> Self {
        self.head_delay = Some(delay);
        self
    }

    /// Sends the body without chunked encoding; its end is the connection's close.
    pub fn close_delimited(mut self) -> Self {
        self.body_mode = BodyMode::CloseDelimited;
        self
    }

    /// Writes the body `size` bytes at a time with a short pause between writes, so events, lines
    /// and UTF-8 characters arrive split across reads.
    pub fn split_every(mut self, size: usize) -> Self {
        let mut parts = Vec::new();
        for part in self.parts {
            match part {
                Part::Bytes(bytes) => {
                    for piece in bytes.chunks(size.max(1)) {
                        parts.push(Part::Bytes(piece.to_vec()));
                        parts.push(Part::Pause(Duration::from_millis(1)));
                    }
                }
                other => parts.push(other),
            }
        }
        self.parts = parts;
        self
    }

    /// After the body so far, holds the connection open without finishing.
    pub fn then_hang(mut self) -> Self {
        self.parts.push(Part::Hang);
        self
    }

    /// After the body so far, closes the connection without finishing the body.
    pub fn then_abort(mut self) -> Self {
        self.abort = true;
        self
    }

    /// After `writes` writes of the body, waits until `gate` is opened before writing the rest.
    pub fn held_after(mut self, writes: usize, gate: &Gate) -> Self {
        let mut seen = 0;
        let at = self.parts.iter().position(|part| {
            seen += usize::from(matches!(part, Part::Bytes(_)));
            seen > writes
        });
        self.parts.insert(at.unwrap_or(self.parts.len()), Part::Wait(gate.clone()));
        self
    }

    /// Pauses `pause` after each write of the body so far.
    pub fn with_pauses(mut self, pause: Duration) -> Self {
        let parts = std::mem::take(&mut self.parts);
        for part in parts {
            let is_write = matches!(part, Part::Bytes(_));
            self.parts.push(part);
            if is_write {
                self.parts.push(Part::Pause(pause));
            }
        }
        self
    }

    pub(super) fn body_len(&self) -> usize {
        self.parts.iter().map(|part| if let Part::Bytes(bytes) = part { bytes.len() } else { 0 }).sum()
    }
}

// ---- SSE payloads in the OpenAI chunk shape -------------------------------------------------

/// A `chat.completion.chunk` with one choice carrying `delta`.
pub fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "mock",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
    .to_string()
}

/// The final usage chunk with empty `choices` (`stream_options.include_usage`).
pub fn usage_chunk() -> String {
    json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "mock",
           "choices": [], "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}})
    .to_string()
}

/// `text` cut into a few pieces at word boundaries (as a model streams it).
pub(super) fn pieces(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_inclusive(' ').collect();
    let per_piece = words.len().div_ceil(3).max(1);
    words.chunks(per_piece).map(|c| c.concat()).collect()
}

/// `text` cut into three pieces at character boundaries (arguments fragments).
fn thirds(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(3).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// The payloads of a plain text answer: role chunk, content pieces, stop, usage, `[DONE]`.
pub fn text_payloads(text: &str) -> Vec<String> {
    let mut payloads = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    payloads.extend(pieces(text).into_iter().map(|piece| chunk(json!({"content": piece}), None)));
    payloads.extend([chunk(json!({}), Some("stop")), usage_chunk(), "[DONE]".to_owned()]);
    payloads
}

/// The payloads of OpenAI-style tool calls: per call a first fragment with id, type and name, then
/// the arguments string in pieces, interleaved across calls by `index`.
pub fn openai_fragment_payloads(text: &str, calls: &[MockCall]) -> Vec<String> {
    let mut payloads = vec![chunk(json!({"role": "assistant", "content": null}), None)];
    payloads.extend(pieces(text).into_iter().filter(|p| !p.is_empty()).map(|p| chunk(json!({"content": p}), None)));
    for (index, call) in calls.iter().enumerate() {
        let first = json!({"index": index, "id": call.id, "type": "function",
                           "function": {"name": call.name, "arguments": ""}});
        payloads.push(chunk(json!({"tool_calls": [first]}), None));
    }
    let split: Vec<Vec<String>> = calls.iter().map(|call| thirds(&call.arguments.to_string())).collect();
    for round in 0..split.iter().map(Vec::len).max().unwrap_or(0) {
        for (index, parts) in split.iter().enumerate() {
            if let Some(part) = parts.get(round) {
                let fragment = json!({"index": index, "function": {"arguments": part}});
                payloads.push(chunk(json!({"tool_calls": [fragment]}), None));
            }
        }
    }
    payloads.extend([chunk(json!({}), Some("tool_calls")), usage_chunk(), "[DONE]".to_owned()]);
    payloads
}

/// SSE bytes for `payloads` framed per `framing`.
pub fn frame(payloads: &[String], framing: Framing) -> Vec<Vec<u8>> {
    let eol = if framing.crlf { "\r\n" } else { "\n" };
    let space = if framing.no_space { "" } else { " " };
    let mut events = Vec::new();
    if framing.comments {
        events.push(format!(": OPENROUTER PROCESSING{eol}{eol}").into_bytes());
    }
    for payload in payloads {
        let keep_alive = if framing.comments { format!(":keep-alive{eol}") } else { String::new() };
        events.push(format!("{keep_alive}data:{space}{payload}{eol}{eol}").into_bytes());
    }
    events
}

// ---- Stream replies ---------------------------------------------------------------------------

/// SSE events with the given payloads (one write per event).
pub fn reply_sse_events(payloads: &[String]) -> Reply {
    reply_sse_framed(payloads, Framing::default())
}

/// SSE events framed per `framing` (one write per event).
pub fn reply_sse_framed(payloads: &[String], framing: Framing) -> Reply {
    Reply::sse(frame(payloads, framing).into_iter().map(Part::Bytes).collect())
}

/// An SSE body given byte for byte, in one write (combine with `split_every`).
pub fn reply_sse_raw(bytes: impl Into<Vec<u8>>) -> Reply {
    Reply::sse(vec![Part::Bytes(bytes.into())])
}

/// An SSE body written in the given pieces, one write each (combine with `with_pauses`).
pub fn reply_sse_writes(writes: Vec<Vec<u8>>) -> Reply {
    Reply::sse(writes.into_iter().map(Part::Bytes).collect())
}

/// A streamed text answer.
pub fn reply_text(text: &str) -> Reply {
    reply_sse_events(&text_payloads(text))
}

/// One tool call as OpenAI streams it (id and name on the first fragment only).
pub fn reply_tool_call(id: &str, name: &str, arguments: Value) -> Reply {
    reply_openai_fragments(&[call(id, name, arguments)])
}

/// Text (shown as Thought), then one tool call.
pub fn reply_text_then_tool_call(text: &str, id: &str, name: &str, arguments: Value) -> Reply {
    reply_sse_events(&openai_fragment_payloads(text, &[call(id, name, arguments)]))
}

/// Several calls as OpenAI streams them: fragments keyed by `index`, interleaved.
pub fn reply_openai_fragments(calls: &[MockCall]) -> Reply {
    reply_sse_events(&openai_fragment_payloads("", calls))
}

/// Calls as Ollama streams them: all whole in one chunk, then a finish chunk.
pub fn reply_ollama_whole(calls: &[MockCall]) -> Reply {
    let whole: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(index, c)| {
            json!({"id": c.id, "index": index, "type": "function",
                   "function": {"name": c.name, "arguments": c.arguments.to_string()}})
        })
        .collect();
    reply_sse_events(&[
        chunk(json!({"role": "assistant", "content": "", "tool_calls": whole}), None),
        chunk(json!({"role": "assistant", "content": ""}), Some("tool_calls")),
        usage_chunk(),
        "[DONE]".to_owned(),
    ])
}

/// Calls without `index`: the first fragment of each has its id, later ones have none.
pub fn reply_no_index(calls: &[MockCall]) -> Reply {
    let mut payloads = Vec::new();
    for c in calls {
        for (n, part) in thirds(&c.arguments.to_string()).into_iter().enumerate() {
            let fragment = if n == 0 {
                json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": part}})
            } else {
                json!({"function": {"arguments": part}})
            };
            payloads.push(chunk(json!({"tool_calls": [fragment]}), None));
        }
    }
    payloads.extend([chunk(json!({}), Some("tool_calls")), "[DONE]".to_owned()]);
    reply_sse_events(&payloads)
}

/// `reasoning_content` deltas (DeepSeek, vLLM), then the answer.
pub fn reply_reasoning_then_text(reasoning: &str, text: &str) -> Reply {
    let mut payloads = vec![chunk(json!({"role": "assistant", "content": null, "reasoning_content": ""}), None)];
    payloads
        .extend(pieces(reasoning).into_iter().map(|p| chunk(json!({"content": null, "reasoning_content": p}), None)));
    payloads.extend(text_payloads(text).into_iter().skip(1));
    reply_sse_events(&payloads)
}

/// A whole `chat.completion` JSON body, as an endpoint that ignores `stream: true` sends it.
pub fn reply_json_completion(text: &str) -> Reply {
    reply_json(
        200,
        json!({"id": "chatcmpl-mock", "object": "chat.completion", "model": "mock",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}}),
    )
}

/// Starts a text answer with `partial`, then holds the connection open without finishing.
pub fn reply_hang_mid_stream(partial: &str) -> Reply {
    reply_sse_events(&[chunk(json!({"role": "assistant", "content": partial}), None)]).then_hang()
}

/// Starts a text answer with `partial`, then drops the connection mid-body.
pub fn reply_broken_mid_stream(partial: &str) -> Reply {
    reply_sse_events(&[chunk(json!({"role": "assistant", "content": partial}), None)]).then_abort()
}

/// Sends the stream's head, then drops the connection before any event.
pub fn reply_broken_before_data() -> Reply {
    Reply::sse(Vec::new()).then_abort()
}

/// Accepts the request and never answers.
pub fn reply_hang_before_head() -> Reply {
    let mut reply = Reply::new(200, Vec::new(), BodyMode::Chunked);
    reply.hang_before_head = true;
    reply
}

// ---- Status replies ---------------------------------------------------------------------------

/// Any status with a text body.
pub fn reply_status(status: u16, body: &str) -> Reply {
    Reply::new(status, vec![Part::Bytes(body.as_bytes().to_vec())], BodyMode::Length)
        .with_header("Content-Type", "text/plain")
}

/// Any status with a JSON body.
pub fn reply_json(status: u16, body: Value) -> Reply {
    Reply::new(status, vec![Part::Bytes(body.to_string().into_bytes())], BodyMode::Length)
        .with_header("Content-Type", "application/json")
}

fn openai_error(status: u16, message: &str, kind: &str, code: Value) -> Reply {
    reply_json(status, json!({"error": {"message": message, "type": kind, "param": null, "code": code}}))
}

/// 429, with `Retry-After: <seconds>` when given.
pub fn reply_rate_limited(retry_after: Option<u64>) -> Reply {
    let reply = openai_error(429, "Rate limit reached for requests", "requests", json!("rate_limit_exceeded"));
    match retry_after {
        Some(seconds) => reply.with_header("Retry-After", &seconds.to_string()),
        None => reply,
    }
}

/// 500 with an OpenAI-style error body.
pub fn reply_server_error() -> Reply {
    openai_error(500, "The server had an error while processing your request.", "server_error", Value::Null)
}

/// 401 as OpenAI sends it for a wrong key.
pub fn reply_unauthorized() -> Reply {
    openai_error(401, "Incorrect API key provided: sk-wr***ng.", "invalid_request_error", json!("invalid_api_key"))
}

/// 404 as Ollama sends it for a model that was not pulled.
pub fn reply_model_not_found(model: &str) -> Reply {
    let message = format!("model \"{model}\" not found, try pulling it first");
    openai_error(404, &message, "api_error", Value::Null)
}

/// 400 as OpenAI sends it when the conversation is longer than the context window.
pub fn reply_context_too_long() -> Reply {
    let message = "This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens.";
    openai_error(400, message, "invalid_request_error", json!("context_length_exceeded"))
}

/// 400 as Ollama sends it for a model without tool support.
pub fn reply_tools_unsupported(model: &str) -> Reply {
    let message = format!("registry.ollama.ai/library/{model} does not support tools");
    openai_error(400, &message, "invalid_request_error", Value::Null)
}

/// `GET /models` in the OpenAI shape.
pub fn reply_models(names: &[&str]) -> Reply {
    let data: Vec<Value> = names.iter().map(|n| json!({"id": n, "object": "model", "owned_by": "library"})).collect();
    reply_json(200, json!({"object": "list", "data": data}))
}
