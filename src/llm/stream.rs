//! Assembling one chat-completions reply from its streamed chunks (pure: no I/O).
//!
//! Feed every SSE `data:` payload to [`ReplyAssembler::push_data`] in order; it emits a
//! [`ModelDelta`] for each piece of reasoning or content as it arrives and [`ReplyAssembler::finish`]
//! returns the whole [`ModelReply`]. Every stream shape seen from real providers is accepted:
//!
//! - OpenAI: tool-call fragments keyed by `index`, the id and name on the first fragment only,
//!   several calls interleaved;
//! - Ollama: each call whole in one chunk, arguments as a string or as an object;
//! - calls without `index`: a new id starts a new call, a fragment without id continues the last
//!   (or the call with the same id); a new name on a call that already has one starts a new call;
//! - the same `index` reused with a different id (some gateways number every call 0);
//! - `reasoning_content` (DeepSeek, vLLM) or `reasoning` (Ollama, OpenRouter) deltas, emitted
//!   before the content of the same chunk;
//! - a usage chunk with empty `choices` (or usage on the last content chunk);
//! - `null`, empty-string or array-of-parts content; the legacy `function_call` delta;
//! - `[DONE]`, or no `[DONE]` at all;
//! - a whole non-streamed response (`choices[].message`) from endpoints that ignore `stream`;
//! - an error object inside the stream ([`StreamError::Provider`]); the whole calls before it can
//!   still be taken ([`ReplyAssembler::salvage`]);
//! - `finish_reason` `length` / `content_filter`, kept as [`Finish`].
//!
//! Besides text, the caller hears that a tool call is being written ([`ModelDelta::ToolCallPiece`],
//! for each fragment) and that the reply finished ([`ModelDelta::Finished`], when `finish_reason`
//! arrives, before usage and `[DONE]`).
//!
//! A model streaming the same short chunk back to back is stopped ([`StreamError::Repeating`],
//! the rule is in `repeat`). Arguments are parsed once the stream ends: empty → `{}`; valid JSON →
//! that value (a JSON string holding an object is unwrapped); anything else stays a string
//! `Value`, so the agent can answer with an InvalidArguments observation (and store the call as
//! `{"_raw": …}`). Calls without an id get `call_1`, `call_2`, ….

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::repeat::RepeatGuard;
use super::{Finish, ModelDelta, ModelReply};
use crate::protocol::{ToolCall, Usage};

/// Whether the stream has more to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    More,
    /// `[DONE]` arrived: stop reading.
    Done,
}

/// A stream that could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamError {
    /// The provider sent an error object instead of (or in the middle of) a reply.
    Provider(String),
    /// No payload could be read as a chat-completions chunk; holds the first one, shortened.
    Unreadable(String),
    /// The stream ended before anything at all arrived.
    Empty,
    /// The model repeated the same short chunk until it was stopped.
    Repeating(super::repeat::Loop),
}

/// A tool call as its fragments arrive.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    /// Concatenated string fragments.
    arguments: String,
    /// Arguments sent as a JSON value rather than a string (some Ollama versions).
    whole: Option<Value>,
}

impl PartialCall {
    /// True when the arguments so far already form a whole JSON value.
    fn has_complete_arguments(&self) -> bool {
        self.whole.is_some()
            || (!self.arguments.trim().is_empty() && serde_json::from_str::<Value>(&self.arguments).is_ok())
    }
}

/// Builds a [`ModelReply`] from a stream of chunks; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct ReplyAssembler {
    content: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    /// Provider `index` → position in `calls`.
    slot_of_index: HashMap<u64, usize>,
    usage: Option<Usage>,
    finish: Finish,
    /// Loops in the content and in the reasoning, watched apart.
    content_loop: RepeatGuard,
    reasoning_loop: RepeatGuard,
    emitted: bool,
    done: bool,
    chunks: usize,
    unreadable: Option<String>,
}

impl ReplyAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    /// True once a delta was passed to `emit`: the user may have seen it, so the request must not
    /// be retried.
    pub(crate) fn has_emitted(&self) -> bool {
        self.emitted
    }

    /// True once `[DONE]` or at least one readable chunk arrived.
    pub(crate) fn has_started(&self) -> bool {
        self.done || self.chunks > 0
    }

    /// One SSE `data:` payload. Blank payloads are ignored; unreadable ones are skipped (and
    /// reported by `finish` only when nothing else was readable).
    pub(crate) fn push_data(&mut self, data: &str, emit: &mut dyn FnMut(ModelDelta)) -> Result<Step, StreamError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Step::More);
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(Step::Done);
        }
        match serde_json::from_str::<Value>(data) {
            Ok(chunk) => self.push_chunk(&chunk, emit).map(|()| Step::More),
            Err(_) => {
                if self.unreadable.is_none() {
                    self.unreadable = Some(data.chars().take(200).collect());
                }
                Ok(Step::More)
            }
        }
    }

    /// One parsed chunk (or a whole non-streamed response).
    pub(crate) fn push_chunk(&mut self, chunk: &Value, emit: &mut dyn FnMut(ModelDelta)) -> Result<(), StreamError> {
        if let Some(error) = chunk.get("error").filter(|error| !error.is_null()) {
            let message = super::classify::message_of(error).unwrap_or_else(|| error.to_string());
            return Err(StreamError::Provider(message));
        }
        self.chunks += 1;
        if let Some(usage) = chunk.get("usage").and_then(parse_usage) {
            self.usage = Some(usage);
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Ok(());
        };
        for choice in choices {
            // Only the first choice is asked for (n = 1); ignore any others.
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Finish::from_reason(reason);
            }
            let delta = choice.get("delta").filter(|d| d.is_object()).or_else(|| choice.get("message"));
            if let Some(delta) = delta.filter(|d| d.is_object()) {
                self.push_delta(delta, emit)?;
            }
            // After the chunk's own delta: a call in the finishing chunk counts.
            if choice.get("finish_reason").and_then(Value::as_str).is_some() && self.finish == Finish::Complete {
                emit(ModelDelta::Finished { tool_calls: !self.calls.is_empty() });
            }
        }
        Ok(())
    }

    fn push_delta(&mut self, delta: &Value, emit: &mut dyn FnMut(ModelDelta)) -> Result<(), StreamError> {
        let reasoning = ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|key| delta.get(*key).and_then(Value::as_str).filter(|text| !text.is_empty()));
        if let Some(text) = reasoning {
            self.reasoning.push_str(text);
            self.emitted = true;
            emit(ModelDelta::Reasoning(text.to_owned()));
            if let Some(found) = self.reasoning_loop.push(text) {
                return Err(StreamError::Repeating(found));
            }
        }
        if let Some(text) = delta.get("content").and_then(content_text).filter(|text| !text.is_empty()) {
            self.content.push_str(&text);
            self.emitted = true;
            let found = self.content_loop.push(&text);
            emit(ModelDelta::Content(text));
            if let Some(found) = found {
                return Err(StreamError::Repeating(found));
            }
        }
        if let Some(fragments) = delta.get("tool_calls").and_then(Value::as_array) {
            for fragment in fragments {
                let index = fragment.get("index").and_then(Value::as_u64);
                let id = fragment.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
                self.push_fragment(index, id, fragment.get("function"));
                emit(ModelDelta::ToolCallPiece);
            }
        }
        if let Some(function) = delta.get("function_call").filter(|f| f.is_object()) {
            self.push_fragment(None, None, Some(function));
            emit(ModelDelta::ToolCallPiece);
        }
        Ok(())
    }

    fn push_fragment(&mut self, index: Option<u64>, id: Option<&str>, function: Option<&Value>) {
        let name =
            function.and_then(|f| f.get("name")).and_then(Value::as_str).map(str::trim).filter(|name| !name.is_empty());
        let slot = self.slot_for(index, id, name);
        let call = &mut self.calls[slot];
        if let (None, Some(id)) = (&call.id, id) {
            call.id = Some(id.to_owned());
        }
        if let (true, Some(name)) = (call.name.is_empty(), name) {
            call.name = name.to_owned();
        }
        match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(fragment)) => call.arguments.push_str(fragment),
            None | Some(Value::Null) => {}
            Some(value) => call.whole = Some(value.clone()),
        }
    }

    /// Which call a fragment belongs to, opening a new one when needed.
    fn slot_for(&mut self, index: Option<u64>, id: Option<&str>, name: Option<&str>) -> usize {
        if let Some(index) = index {
            if let Some(&slot) = self.slot_of_index.get(&index) {
                let other_id = matches!((self.calls[slot].id.as_deref(), id), (Some(old), Some(new)) if old != new);
                if !other_id {
                    return slot;
                }
            }
            let slot = self.open_call();
            self.slot_of_index.insert(index, slot);
            return slot;
        }
        if let Some(id) = id
            && let Some(slot) = self.calls.iter().position(|call| call.id.as_deref() == Some(id))
        {
            return slot;
        }
        let Some(last) = self.calls.len().checked_sub(1) else {
            return self.open_call();
        };
        let last_call = &self.calls[last];
        let continues = match (id, name) {
            (Some(_), _) => last_call.id.is_none() && name.is_none(),
            (None, Some(name)) => {
                last_call.name.is_empty() || (last_call.name == name && !last_call.has_complete_arguments())
            }
            (None, None) => true,
        };
        if continues { last } else { self.open_call() }
    }

    fn open_call(&mut self) -> usize {
        self.calls.push(PartialCall::default());
        self.calls.len() - 1
    }

    /// True when a named call with whole JSON arguments arrived.
    pub(crate) fn has_complete_call(&self) -> bool {
        self.calls.iter().any(|call| !call.name.is_empty() && call.has_complete_arguments())
    }

    /// The reply without the calls that are not whole, for a stream that failed after them: a
    /// complete call is still worth running.
    pub(crate) fn salvage(mut self) -> Result<ModelReply, StreamError> {
        self.calls.retain(|call| !call.name.is_empty() && call.has_complete_arguments());
        self.finish()
    }

    /// The assembled reply.
    pub fn finish(self) -> Result<ModelReply, StreamError> {
        if !self.has_started() {
            return Err(self.unreadable.map_or(StreamError::Empty, StreamError::Unreadable));
        }
        let mut taken: Vec<String> = self.calls.iter().filter_map(|call| call.id.clone()).collect();
        let mut tool_calls = Vec::new();
        for (position, call) in self.calls.into_iter().enumerate() {
            if call.name.is_empty() && call.arguments.trim().is_empty() && call.whole.is_none() {
                continue;
            }
            let id = call.id.unwrap_or_else(|| {
                let mut n = position + 1;
                while taken.contains(&format!("call_{n}")) {
                    n += 1;
                }
                let id = format!("call_{n}");
                taken.push(id.clone());
                id
            });
            let arguments = parse_arguments(&call.arguments, call.whole);
            tool_calls.push(ToolCall { id, name: call.name, arguments });
        }
        let (content, reasoning, usage, finish) = (self.content, self.reasoning, self.usage, self.finish);
        Ok(ModelReply { content, reasoning, tool_calls, usage, finish })
    }
}

/// Assembles a whole reply from its payloads in one go (tests, non-streamed bodies).
pub fn assemble<'a>(
    payloads: impl IntoIterator<Item = &'a str>,
    emit: &mut dyn FnMut(ModelDelta),
) -> Result<ModelReply, StreamError> {
    let mut assembler = ReplyAssembler::new();
    for payload in payloads {
        if assembler.push_data(payload, emit)? == Step::Done {
            break;
        }
    }
    assembler.finish()
}

/// Content as a string: a plain string, or the `text` of every part of an array of parts.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            Some(parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str).or(part.as_str())).collect())
        }
        _ => None,
    }
}

/// Arguments as the model sent them, parsed where possible.
pub(crate) fn parse_arguments(raw: &str, whole: Option<Value>) -> Value {
    if let Some(value) = whole.filter(|_| raw.trim().is_empty()) {
        return unwrap_encoded(value);
    }
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => unwrap_encoded(value),
        Err(_) => Value::String(raw.to_owned()),
    }
}

/// A JSON string that itself holds a JSON object (arguments encoded twice) → that object.
fn unwrap_encoded(value: Value) -> Value {
    if let Value::String(text) = &value
        && let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(text.trim())
    {
        return inner;
    }
    value
}

fn parse_usage(usage: &Value) -> Option<Usage> {
    let count = |keys: [&str; 2]| keys.iter().find_map(|key| usage.get(*key).and_then(Value::as_u64));
    let prompt_tokens = count(["prompt_tokens", "input_tokens"]);
    let completion_tokens = count(["completion_tokens", "output_tokens"]);
    if prompt_tokens.is_none() && completion_tokens.is_none() {
        return None;
    }
    Some(Usage { prompt_tokens: prompt_tokens.unwrap_or(0), completion_tokens: completion_tokens.unwrap_or(0) })
}

#[cfg(test)]
mod llama_tests;
#[cfg(test)]
mod tests;
