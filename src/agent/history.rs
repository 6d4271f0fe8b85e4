//! The history budget: keeps a conversation within the model's context by shortening the oldest
//! observations first. The current turn's observations stay whole (seed 001: follow-ups need them).
//! Also keeps every stored tool call's arguments a JSON object (`unusable_arguments`, `repair_arguments`).

use crate::llm::object_arguments;
use crate::protocol::{ChatMessage, Role, ToolCall};

/// Ends every shortened observation, so it is never shortened twice.
const SHORTENED_MARK: &str = " to save context]";
/// What an observation is cut to when the budget is exceeded.
const SHORTENED_CHARS: usize = 300;

/// Shortens tool messages before `keep_from` (oldest first) until the whole history fits `max_chars`.
/// Returns how many messages were shortened.
pub fn fit(messages: &mut [ChatMessage], keep_from: usize, max_chars: usize) -> usize {
    let mut total: usize = messages.iter().map(|m| m.content.chars().count()).sum();
    let mut shortened = 0;
    for message in messages.iter_mut().take(keep_from) {
        if total <= max_chars {
            break;
        }
        if message.role != Role::Tool || message.content.ends_with(SHORTENED_MARK) {
            continue;
        }
        let length = message.content.chars().count();
        if length <= SHORTENED_CHARS {
            continue;
        }
        let head: String = message.content.chars().take(SHORTENED_CHARS).collect();
        message.content =
            format!("{head}\n... [{} chars of older output dropped{SHORTENED_MARK}", length - SHORTENED_CHARS);
        total -= length - message.content.chars().count();
        shortened += 1;
    }
    shortened
}

/// At most this many characters of unusable arguments are quoted back to the model.
const QUOTED_ARGUMENTS: usize = 200;

/// When `call`'s arguments are not a JSON object (cut off, malformed, or another JSON type), replaces
/// them with `{"_raw": text}` — what is stored and sent back must be valid JSON — and returns the
/// error the call's observation should carry.
pub(crate) fn unusable_arguments(call: &mut ToolCall) -> Option<String> {
    if call.arguments.is_object() {
        return None;
    }
    let raw = match &call.arguments {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    call.arguments = object_arguments(&call.arguments);
    let mut quoted: String = raw.chars().take(QUOTED_ARGUMENTS).collect();
    if raw.chars().count() > QUOTED_ARGUMENTS {
        quoted.push('…');
    }
    Some(format!(
        "arguments must be a JSON object, and these were cut off or not valid JSON: `{quoted}`. \
         Nothing ran; send the call again with complete JSON arguments"
    ))
}

/// A conversation saved before arguments were kept as objects can hold a call whose arguments are
/// not valid JSON, which a strict server rejects with the whole request: each becomes `{"_raw": …}`.
/// Returns how many calls were repaired.
pub(crate) fn repair_arguments(messages: &mut [ChatMessage]) -> usize {
    let calls = messages.iter_mut().flat_map(|message| message.tool_calls.iter_mut());
    calls.filter_map(unusable_arguments).count()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(arguments: serde_json::Value) -> ToolCall {
        ToolCall { id: "c1".into(), name: "run_command".into(), arguments }
    }

    #[test]
    fn arguments_that_are_not_an_object_are_kept_as_raw_text_with_an_error() {
        let mut cut = call(json!("{\"command\": \"ls -"));
        let error = unusable_arguments(&mut cut).unwrap();
        assert_eq!(cut.arguments, json!({"_raw": "{\"command\": \"ls -"}));
        assert!(
            error.starts_with("arguments must be a JSON object") && error.contains("`{\"command\": \"ls -`"),
            "{error}"
        );
        let mut long = call(json!("x".repeat(500)));
        assert!(unusable_arguments(&mut long).unwrap().contains(&format!("{}…`", "x".repeat(200))));
        let mut list = call(json!([1, 2]));
        assert!(unusable_arguments(&mut list).is_some());
        assert_eq!(list.arguments, json!({"_raw": "[1,2]"}));
        let mut fine = call(json!({"command": "ls"}));
        assert_eq!(unusable_arguments(&mut fine), None);
        assert_eq!(fine.arguments, json!({"command": "ls"}));
    }

    #[test]
    fn a_saved_conversation_with_broken_arguments_is_repaired() {
        let mut messages = vec![
            ChatMessage::user("list"),
            ChatMessage::assistant("", vec![call(json!("{\"command\": ")), call(json!({"command": "ls"}))]),
            ChatMessage::tool("c1", "[ERROR]: arguments must be a JSON object"),
        ];
        assert_eq!(repair_arguments(&mut messages), 1);
        assert_eq!(messages[1].tool_calls[0].arguments, json!({"_raw": "{\"command\": "}));
        assert_eq!(messages[1].tool_calls[1].arguments, json!({"command": "ls"}));
        assert_eq!(repair_arguments(&mut messages), 0, "repairing twice changes nothing");
    }

    #[test]
    fn shortens_oldest_observations_first_and_keeps_the_current_turn() {
        let long = "x".repeat(5000);
        let mut messages = vec![
            ChatMessage::system("s"),
            ChatMessage::user("first"),
            ChatMessage::tool("call_1", long.clone()),
            ChatMessage::tool("call_2", long.clone()),
            ChatMessage::user("follow-up"),
            ChatMessage::tool("call_3", long.clone()),
        ];
        let shortened = fit(&mut messages, 4, 11_000);
        assert_eq!(shortened, 1);
        assert!(messages[2].content.ends_with("[4700 chars of older output dropped to save context]"));
        assert_eq!(messages[3].content, long);
        assert_eq!(messages[5].content, long, "the current turn stays whole");
        assert_eq!(fit(&mut messages, 4, 100), 1, "only the older turn can shrink");
    }
}
