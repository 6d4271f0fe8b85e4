//! Tool calls that small local models print as text instead of sending them structured (pure).
//!
//! Seen in practice (aichat #902, goose #3748, natshell): qwen2.5 through a template that does not
//! map its calls prints `<tool_call>{"name": …, "arguments": …}</tool_call>`; llama3.x prints a
//! bare `{"name": …, "parameters": …}` (sometimes after `<|python_tag|>`); mistral prints
//! `[TOOL_CALLS] [{…}]`; many models wrap the JSON in a fenced ```json block; models prompted in
//! the ReAct style write `Action: run_command` / `Action Input: {…}`.
//!
//! Only names in `known` count, so a prose answer that shows JSON, or a ```bash block meant for
//! the user to read, stays an answer.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::{ChatRequest, ModelReply};
use crate::protocol::ToolCall;

/// The id given to a recovered call (the model sent none).
const RECOVERED_ID: &str = "call_1";

/// Openers of tagged calls, each with the closer that may follow the JSON.
pub(crate) const TAGS: &[(&str, &str)] = &[
    ("<tool_call>", "</tool_call>"),
    ("<function_call>", "</function_call>"),
    ("<|python_tag|>", "<|eom_id|>"),
    ("[TOOL_CALLS]", ""),
];

/// Fence languages that may hold a call; anything else (bash, sh, yaml, …) is left alone.
pub(crate) const CALL_FENCES: &[&str] = &["", "json", "json5", "jsonc", "tool_call", "tool_code", "function_call"];

static FENCE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n((?s:.*?))^[ \t]*```[ \t]*\r?$").ok()
});

/// A fence opened at a line start and never closed: the rest of the reply is its body.
static UNCLOSED_FENCE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?m)^[ \t]*```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n((?s:.*))\z").ok());

static ACTION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?mi)^[ \t]*(?:\*\*)?Action(?:\*\*)?[ \t]*:[ \t]*(?:\*\*)?[ \t]*`?([A-Za-z_][\w.-]*)`?[ \t]*(?:\*\*)?[ \t]*\r?$")
        .ok()
});

static ACTION_INPUT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?mi)^[ \t]*(?:\*\*)?Action[ \t]+Input(?:\*\*)?[ \t]*:[ \t]*(?:\*\*)?[ \t]*").ok());

static OBSERVATION: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(?mi)^[ \t]*Observation[ \t]*:").ok());

/// A call found in the text and the byte range it occupies.
struct Found {
    name: String,
    arguments: Value,
    span: Range<usize>,
}

/// The first tool call for a `known` tool written into `content`, and the prose around it.
pub fn recover(content: &str, known: &[&str]) -> Option<(ToolCall, String)> {
    let found = tagged(content, known)
        .or_else(|| fenced(content, known))
        .or_else(|| react(content, known))
        .or_else(|| bare(content, known))?;
    let prose = format!("{}\n\n{}", content[..found.span.start].trim_end(), content[found.span.end..].trim_start());
    let call = ToolCall { id: RECOVERED_ID.to_owned(), name: found.name, arguments: found.arguments };
    Some((call, prose.trim().to_owned()))
}

/// `<tool_call>{…}</tool_call>` and the other tagged forms; the closer may be missing.
fn tagged(content: &str, known: &[&str]) -> Option<Found> {
    TAGS.iter().find_map(|(opener, closer)| {
        content.match_indices(opener).find_map(|(start, _)| {
            let after = start + opener.len();
            let (value, end) = json_at(content, after)?;
            let (name, arguments) = call_from(&value, known)?;
            let rest = &content[end..];
            let trimmed = rest.trim_start();
            let end = if !closer.is_empty() && trimmed.starts_with(closer) {
                end + (rest.len() - trimmed.len()) + closer.len()
            } else {
                end
            };
            Some(Found { name, arguments, span: start..end })
        })
    })
}

/// A fenced block (```json or untagged) holding `{"name": …, "arguments"|"parameters": …}`.
fn fenced(content: &str, known: &[&str]) -> Option<Found> {
    let fence = FENCE.as_ref()?;
    fence.captures_iter(content).find_map(|caps| {
        let language = caps.get(1).map_or("", |m| m.as_str()).to_ascii_lowercase();
        if !CALL_FENCES.contains(&language.as_str()) {
            return None;
        }
        let body = caps.get(2)?.as_str().trim();
        let value = serde_json::from_str::<Value>(body).ok()?;
        let (name, arguments) = call_from(&value, known)?;
        let whole = caps.get(0)?;
        Some(Found { name, arguments, span: whole.range() })
    })
}

/// `Action: tool` then `Action Input: {…}` (JSON, a fenced block, or a plain string). What comes
/// after the input (usually an invented `Observation:`) is dropped.
fn react(content: &str, known: &[&str]) -> Option<Found> {
    let action = ACTION.as_ref()?.captures(content)?;
    let name = action.get(1)?.as_str();
    let name = name.strip_prefix("functions.").unwrap_or(name);
    if !known.contains(&name) {
        return None;
    }
    let action_start = action.get(0)?.start();
    let after_action = action.get(0)?.end();
    let input = ACTION_INPUT.as_ref()?.find_at(content, after_action);
    let arguments = match input {
        Some(input) => react_input(content, input.end()),
        None => Value::Object(Map::new()),
    };
    Some(Found { name: name.to_owned(), arguments, span: action_start..content.len() })
}

fn react_input(content: &str, start: usize) -> Value {
    if let Some((value, _)) = json_at(content, start) {
        return match value {
            Value::String(text) => {
                serde_json::from_str::<Value>(&text).ok().filter(Value::is_object).unwrap_or(Value::String(text))
            }
            other => other,
        };
    }
    let rest = &content[start..];
    let end = OBSERVATION.as_ref().and_then(|re| re.find(rest)).map_or(rest.len(), |m| m.start());
    let text = rest[..end].trim().trim_matches('`').trim();
    Value::String(text.to_owned())
}

/// A bare JSON call that the content starts with (llama3.x).
fn bare(content: &str, known: &[&str]) -> Option<Found> {
    let start = content.len() - content.trim_start().len();
    if !content[start..].starts_with(['{', '[']) {
        return None;
    }
    let (value, end) = json_at(content, start)?;
    let (name, arguments) = call_from(&value, known)?;
    Some(Found { name, arguments, span: start..end })
}

/// The JSON value starting at `at` (after whitespace and an optional ```json fence), and the
/// byte offset just past it (and past the closing fence).
fn json_at(content: &str, at: usize) -> Option<(Value, usize)> {
    let rest = &content[at..];
    let mut offset = at + (rest.len() - rest.trim_start().len());
    let mut fenced = false;
    if let Some(after_fence) = content[offset..].strip_prefix("```") {
        let line_end = after_fence.find('\n')?;
        offset += 3 + line_end + 1;
        fenced = true;
    }
    let mut values = serde_json::Deserializer::from_str(&content[offset..]).into_iter::<Value>();
    let value = values.next()?.ok()?;
    let mut end = offset + values.byte_offset();
    if fenced {
        let rest = &content[end..];
        if let Some(after) = rest.trim_start().strip_prefix("```") {
            end = content.len() - after.len();
        }
    }
    Some((value, end))
}

/// `{"name", "arguments"}` and its variants (`parameters`, `args`, `input`, a nested `function`,
/// an array of calls) → the name and arguments, for a known name only.
fn call_from(value: &Value, known: &[&str]) -> Option<(String, Value)> {
    let value = match value {
        Value::Array(items) => items.first()?,
        other => other,
    };
    let object = value.as_object()?;
    let source = object.get("function").and_then(Value::as_object).unwrap_or(object);
    let name = ["name", "tool", "tool_name", "function"]
        .iter()
        .find_map(|key| source.get(*key).and_then(Value::as_str))?
        .trim();
    let name = name.strip_prefix("functions.").unwrap_or(name);
    if !known.contains(&name) {
        return None;
    }
    let arguments = ["arguments", "parameters", "args", "input", "tool_input"]
        .iter()
        .find_map(|key| source.get(*key).filter(|v| !v.is_null()))
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    let arguments = match arguments {
        Value::String(text) => {
            serde_json::from_str::<Value>(&text).ok().filter(Value::is_object).unwrap_or(Value::String(text))
        }
        other => other,
    };
    Some((name.to_owned(), arguments))
}

/// Fence languages whose block is a command line to run when the agent was told so (text calls:
/// "to run a command, reply with it alone in a ```sh block").
/// Not `console` or `shell-session`: those hold a prompt and the output after it.
pub(crate) const SHELL_FENCES: &[&str] = &["sh", "bash", "shell", "zsh"];

/// A command written the way a code model writes code (text calls, agent): the first fenced block
/// in a shell language, as a `run_command` call (`why`: the line of prose just before it), and
/// the prose around it. An untagged block stays prose: models quote output and files in those.
/// A block the model opened last and never closed (it ended its reply inside it) is one too, when
/// it holds one line.
pub fn command_block(content: &str) -> Option<(ToolCall, String)> {
    let shell = |caps: &regex::Captures| {
        let language = caps.get(1).map_or("", |m| m.as_str()).to_ascii_lowercase();
        SHELL_FENCES.contains(&language.as_str())
    };
    let closed = FENCE.as_ref()?.captures_iter(content).find(shell);
    let unclosed = || {
        let caps = UNCLOSED_FENCE.as_ref()?.captures(content)?;
        // One line only: prose after a forgotten fence (or a second command) must not run with it.
        let body = caps.get(2)?.as_str().trim();
        let one_line = !body.is_empty() && !body.contains('\n');
        (shell(&caps) && one_line && !body.contains("```") && !FENCE.as_ref()?.is_match(content)).then_some(caps)
    };
    let caps = closed.or_else(unclosed)?;
    let whole = caps.get(0)?;
    let body = caps.get(2)?.as_str().trim();
    // ```sh then `sh` again on the first line (a small model repeating the tag): not a command.
    let body = match body.split_once('\n') {
        Some((first, rest)) if SHELL_FENCES.contains(&first.trim().to_ascii_lowercase().as_str()) => rest,
        _ => body,
    };
    let command = strip_prompts(body.trim());
    let command = command.trim();
    if command.is_empty() || SHELL_FENCES.contains(&command.to_ascii_lowercase().as_str()) {
        return None;
    }
    let before = content[..whole.start()].trim();
    let after = content[whole.end()..].trim();
    let why: String =
        before.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("").trim().chars().take(120).collect();
    let mut arguments = Map::new();
    arguments.insert("command".into(), Value::String(command.to_owned()));
    if !why.is_empty() {
        arguments.insert("why".into(), Value::String(why.trim_end_matches(':').trim().to_owned()));
    }
    let call =
        ToolCall { id: RECOVERED_ID.to_owned(), name: "run_command".to_owned(), arguments: Value::Object(arguments) };
    Some((call, format!("{before}\n\n{after}").trim().to_owned()))
}

/// `$ ls` → `ls` when the text starts with a prompt (a console session): the prompted lines, and
/// not the output shown after them.
pub(crate) fn strip_prompts(text: &str) -> String {
    let mut lines = text.lines().filter(|line| !line.trim().is_empty()).peekable();
    if !lines.peek().is_some_and(|first| first.starts_with("$ ")) {
        return text.to_owned();
    }
    lines.filter_map(|line| line.strip_prefix("$ ")).collect::<Vec<_>>().join("\n")
}

/// The names a call written as text may use: the tools offered, and a folded family's former names
/// (`read_file` for `file`), which still answer.
pub(crate) fn callable_names<'a>(offered: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut names: Vec<&'a str> = offered.into_iter().collect();
    let former: Vec<&'a str> =
        names.iter().flat_map(|name| crate::protocol::former_tool_names(name)).copied().collect();
    names.extend(former);
    names
}

/// When no structured call arrived, a call the model printed into its text (known tools only).
pub(crate) fn recover_text_calls(mut reply: ModelReply, request: &ChatRequest) -> ModelReply {
    if !reply.tool_calls.is_empty() || request.tools.is_empty() {
        return reply;
    }
    let known = callable_names(request.tools.iter().map(|tool| tool.name.as_str()));
    if let Some((call, prose)) = recover(&reply.content, &known) {
        reply.tool_calls.push(call);
        reply.content = prose;
    }
    reply
}

#[cfg(test)]
mod tests;
