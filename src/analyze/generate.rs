//! Template generation (seed 001's "调用 LLM 生成分析步骤"): one request, without tools, asking the
//! model for the read-only commands that show what an object of a new type is. The reply is read
//! leniently (a JSON array, `{"commands": [...]}`, a fenced block or a list of lines: small models
//! write all of them); what comes back is only a candidate, validated by the policy afterwards.

use thiserror::Error;

use crate::llm::ModelRef;
use crate::llm::{ChatRequest, LlmError};
use crate::protocol::ChatMessage;

/// At most this many commands are taken from a reply.
const MAX_COMMANDS: usize = 6;

#[derive(Debug, Error)]
pub(crate) enum GenerateError {
    #[error("the model could not be asked for a `{kind}` template: {error}")]
    Model { kind: String, error: LlmError },
    #[error("the model's `{kind}` template held no command")]
    Empty { kind: String },
}

const SYSTEM: &str = "You write inspection templates for opsai, a terminal assistant for SREs. A template is \
    a short list of read-only shell commands that together show what an object of one type is and what \
    state it is in (identity, version, configuration, status, recent log lines). Write the target as a \
    placeholder: {name} for a name, {port} for a port, {pid} for a process id, {path} for a path; opsai \
    substitutes it shell-quoted, so never quote a placeholder yourself: write it as a whole word or joined \
    only to letters, digits and / . _ : - = , @ % + (`lsof -i :{port}`, `/proc/{pid}/status`); a placeholder \
    inside quotes or next to any other character makes the command unusable. Never write a command that \
    changes anything, asks for input, follows output forever (-f, watch) or prints secrets. Reply with a \
    JSON array of 2 to 4 command strings and nothing else.";

/// The request for `kind`'s template.
pub fn request(model: &str, kind: &str) -> ChatRequest {
    ChatRequest {
        model: model.to_owned(),
        messages: vec![
            ChatMessage::system(SYSTEM),
            ChatMessage::user(format!(
                "Object type: {kind}\nExample for type `container`: \
                 [\"docker inspect {{name}}\", \"docker logs --tail 20 {{name}}\"]"
            )),
        ],
        tools: Vec::new(),
        max_tokens: Some(400),
    }
}

/// Asks `model` for `kind`'s commands (candidates: the caller validates them).
pub(crate) async fn generate(model: ModelRef<'_>, kind: &str) -> Result<Vec<String>, GenerateError> {
    let request = request(model.name, kind);
    let mut ignore = |_| {};
    let reply = model
        .client
        .complete(&request, &mut ignore)
        .await
        .map_err(|error| GenerateError::Model { kind: kind.to_owned(), error })?;
    let commands = parse(&reply.content);
    if commands.is_empty() {
        return Err(GenerateError::Empty { kind: kind.to_owned() });
    }
    Ok(commands)
}

/// The commands in a reply, in order, without duplicates.
pub fn parse(reply: &str) -> Vec<String> {
    let mut commands = json_commands(reply).unwrap_or_else(|| line_commands(reply));
    let mut seen = std::collections::HashSet::new();
    commands.retain(|command| !command.is_empty() && seen.insert(command.clone()));
    commands.truncate(MAX_COMMANDS);
    commands
}

/// A JSON array of strings, or an object with one, anywhere in the reply.
fn json_commands(reply: &str) -> Option<Vec<String>> {
    let strings = |value: &serde_json::Value| -> Option<Vec<String>> {
        let list = value.as_array().or_else(|| value.get("commands")?.as_array())?;
        Some(list.iter().filter_map(|item| item.as_str()).map(|s| s.trim().to_owned()).collect())
    };
    for (open, close) in [('[', ']'), ('{', '}')] {
        let (Some(start), Some(end)) = (reply.find(open), reply.rfind(close)) else { continue };
        if end <= start {
            continue;
        }
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&reply[start..=end])
            && let Some(commands) = strings(&value)
        {
            return Some(commands);
        }
    }
    None
}

/// One command per line: list markers, backticks, `$ ` prompts and fences removed; prose skipped.
fn line_commands(reply: &str) -> Vec<String> {
    reply
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("```"))
        .map(|line| {
            let line = line.trim_start_matches(['-', '*', '•']).trim_start();
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            let line = if digits > 0 && line[digits..].starts_with(['.', ')']) { &line[digits + 1..] } else { line };
            let line = line.trim().trim_matches('`').trim();
            line.strip_prefix("$ ").unwrap_or(line).trim().to_owned()
        })
        // A template command names its target; prose ends with a colon or a full stop.
        .filter(|line| !line.ends_with(':') && !line.ends_with('.') && line.contains('{'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_array_is_read_as_is() {
        assert_eq!(
            parse(r#"["redis-cli -h {name} info", "redis-cli -h {name} config get maxmemory"]"#),
            ["redis-cli -h {name} info", "redis-cli -h {name} config get maxmemory"]
        );
    }

    #[test]
    fn json_in_a_fence_or_an_object_or_after_prose_is_found() {
        let fenced = "Here you go:\n```json\n[\"ls -la {path}\", \"file {path}\"]\n```";
        assert_eq!(parse(fenced), ["ls -la {path}", "file {path}"]);
        assert_eq!(parse(r#"{"commands": ["ps -p {pid}"]}"#), ["ps -p {pid}"]);
    }

    #[test]
    fn a_list_of_lines_is_read_when_there_is_no_json() {
        let reply = "Commands:\n1. `kubectl get pod {name} -o wide`\n- $ kubectl describe pod {name}\n\
                     These show the pod.\n* kubectl describe pod {name}";
        assert_eq!(parse(reply), ["kubectl get pod {name} -o wide", "kubectl describe pod {name}"]);
    }

    #[test]
    fn nothing_usable_is_empty_and_long_lists_are_cut() {
        assert!(parse("I cannot help with that.").is_empty());
        let many: Vec<String> = (0..10).map(|i| format!("echo {i} {{name}}")).collect();
        assert_eq!(parse(&serde_json::to_string(&many).unwrap()).len(), MAX_COMMANDS);
    }

    #[test]
    fn the_request_offers_no_tools_and_names_the_type() {
        let request = request("m", "redis");
        assert!(request.tools.is_empty());
        let text = format!("{:?}", request.messages);
        assert!(text.contains("Object type: redis") && text.contains("read-only"));
    }
}
