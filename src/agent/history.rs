//! The history budget: keeps a conversation within the model's context by shortening the oldest
//! observations first. The current turn's observations stay whole (seed 001: follow-ups need them).

use crate::protocol::{ChatMessage, Role};

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

#[cfg(test)]
mod tests {
    use super::*;

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
