//! What the browser may see of a turn: every string redacted with the server's redactor (one
//! place, the turn's publish), text the model wrote with hidden characters written visibly (the
//! display form the terminal shows), and live command output released a line at a time, cleaned of
//! escape sequences, so a secret split across PTY chunks is redacted whole.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::redact::Redactor;

/// A partial line of live output longer than this is released anyway (bounded memory).
pub const PARTIAL_LINE: usize = 4 * 1024;
/// Bytes of a forced cut kept back when the line has no whitespace near the cut.
const HELD_BACK: usize = 256;

/// Keys of an event whose values are ids the API is answered with: never rewritten (at the top
/// level only; the same keys inside tool arguments are rewritten like any other).
const ID_KEYS: [&str; 4] = ["id", "type", "kind", "call_id"];

/// Rewrites every string in an event (keys of objects stay), except its ids.
pub fn each_string(value: &mut Value, rewrite: &mut impl FnMut(&str) -> Option<String>) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if !ID_KEYS.contains(&key.as_str()) {
                    every_string(item, rewrite);
                }
            }
        }
        other => every_string(other, rewrite),
    }
}

fn every_string(value: &mut Value, rewrite: &mut impl FnMut(&str) -> Option<String>) {
    match value {
        Value::String(text) => {
            if let Some(new) = rewrite(text) {
                *text = new;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| every_string(item, rewrite)),
        Value::Object(map) => map.values_mut().for_each(|item| every_string(item, rewrite)),
        _ => {}
    }
}

/// Model-written strings of `value` in their visible form.
pub fn model_text(value: &mut Value) {
    each_string(value, &mut |text| match crate::ui::display::command(text) {
        Cow::Owned(shown) => Some(shown),
        Cow::Borrowed(_) => None,
    });
}

/// Every string of `value` redacted; a command line (any `command` key, the tool arguments' too)
/// word by word, so the approval card shows every operator and command that runs.
pub fn redact(redactor: &Redactor, value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match item {
                    _ if ID_KEYS.contains(&key.as_str()) => {}
                    Value::String(command) if key == crate::redact::COMMAND_KEY || key == "display" => {
                        *command = redactor.redact_command(command);
                    }
                    other => *other = redactor.redact_json(other),
                }
            }
        }
        other => *other = redactor.redact_json(other),
    }
}

/// Live output shown of one turn at most: beyond it the turn's log (kept for `/stream` readers)
/// would grow with whatever a command prints (`yes`). The tool result is bounded on its own.
pub const OUTPUT_LIMIT: usize = 2 * 1024 * 1024;

/// Live output per tool call, held until a line is complete, up to [`OUTPUT_LIMIT`] per turn.
#[derive(Default)]
pub struct OutputLines {
    partial: HashMap<String, String>,
    shown: usize,
    cut: bool,
}

/// What a chunk of output releases.
#[derive(Debug, PartialEq, Eq)]
pub enum Released {
    Text(String),
    /// The turn's output reached [`OUTPUT_LIMIT`]: no more is shown live (said once).
    Cut,
}

impl OutputLines {
    /// Adds a chunk of call `id`'s output; returns what is ready to show: the complete lines, or
    /// everything when the partial line grew past [`PARTIAL_LINE`].
    pub fn push(&mut self, id: &str, chunk: &str) -> Option<Released> {
        if self.cut {
            return None;
        }
        let pending = self.partial.entry(id.to_owned()).or_default();
        pending.push_str(chunk);
        let ready = match pending.rfind('\n') {
            Some(at) => at + 1,
            None if pending.len() > PARTIAL_LINE => forced_cut(pending),
            None => return None,
        };
        let rest = pending.split_off(ready);
        let text = std::mem::replace(pending, rest);
        self.release(text)
    }

    /// What is left of call `id`'s output (it ended).
    pub fn flush(&mut self, id: &str) -> Option<Released> {
        let rest = self.partial.remove(id).filter(|rest| !rest.is_empty() && !self.cut)?;
        self.release(rest)
    }

    fn release(&mut self, text: String) -> Option<Released> {
        self.shown += text.len();
        if self.shown > OUTPUT_LIMIT {
            self.cut = true;
            self.partial.clear();
            return Some(Released::Cut);
        }
        Some(Released::Text(clean(&text)))
    }
}

/// Where a partial line too long to hold is cut: after its last whitespace, so a secret (a word)
/// is released whole with the rest; with none near, [`HELD_BACK`] bytes stay held, the most a
/// secret's first part could be. Each release is redacted on its own.
fn forced_cut(pending: &str) -> usize {
    let floor = |mut at: usize| {
        while !pending.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let after_space = pending.char_indices().rev().find(|(_, c)| c.is_whitespace()).map(|(at, c)| at + c.len_utf8());
    match after_space {
        Some(end) if pending.len() - end <= PARTIAL_LINE - HELD_BACK => end,
        _ => floor(pending.len() - HELD_BACK),
    }
}

/// Terminal output as plain text: escape sequences dropped, `\r` redraws applied.
fn clean(text: &str) -> String {
    crate::exec::output::clean_text(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn output_is_released_by_lines_and_a_long_partial_line_at_the_limit() {
        let text = |t: &str| Some(Released::Text(t.to_owned()));
        let mut lines = OutputLines::default();
        assert_eq!(lines.push("c1", "ghp_0123456789"), None);
        assert_eq!(lines.push("c1", "abcdef\nnext"), text("ghp_0123456789abcdef\n"));
        assert_eq!(lines.push("c1", "\x1b[31mred\x1b[0m\n"), text("nextred\n"));
        // Nothing reaches the browser able to hide text: conceal and same-colour attributes go too.
        assert_eq!(lines.push("c9", "\x1b[8mhid\x1b[30;40mden\x1b[0m\n"), text("hidden\n"));
        assert_eq!(lines.flush("c1"), None);
        assert_eq!(lines.push("c2", "tail"), None);
        assert_eq!(lines.flush("c2"), text("tail"));
        let long = "x".repeat(PARTIAL_LINE + 1);
        assert_eq!(lines.push("c3", &long), text(&long[..PARTIAL_LINE + 1 - HELD_BACK]));
        assert_eq!(lines.flush("c3"), text(&long[PARTIAL_LINE + 1 - HELD_BACK..]));
    }

    #[test]
    fn a_secret_across_a_forced_cut_is_released_whole() {
        let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let redactor = Redactor::default();
        for filler in ["word ", "x"] {
            // The token starts 16 bytes before the first 4100-byte chunk ends.
            let mut line = filler.repeat(4080 / filler.len());
            line.push_str(&format!(" {token} "));
            line.push_str(&filler.repeat(10 * 1024 / filler.len() - line.len() / filler.len()));
            let mut lines = OutputLines::default();
            let mut released: Vec<Released> = Vec::new();
            for chunk in line.as_bytes().chunks(4100) {
                released.extend(lines.push("c1", std::str::from_utf8(chunk).unwrap()));
            }
            released.extend(lines.flush("c1"));
            let pieces: Vec<String> = released
                .into_iter()
                .map(|piece| match piece {
                    Released::Text(text) => redactor.redact(&text),
                    Released::Cut => panic!("cut"),
                })
                .collect();
            assert!(pieces.len() > 2, "{filler:?}: released in parts");
            assert!(pieces.iter().all(|p| !p.contains("ghp_") && !p.contains("a1B2c3")), "{filler:?}");
        }
    }

    #[test]
    fn a_turns_live_output_stops_at_the_limit_once() {
        let mut lines = OutputLines::default();
        let line = format!("{}\n", "y".repeat(1023));
        let released: Vec<Released> = (0..OUTPUT_LIMIT / 1024 + 10).filter_map(|_| lines.push("c1", &line)).collect();
        assert_eq!(released.len(), OUTPUT_LIMIT / 1024 + 1);
        assert_eq!(released.last(), Some(&Released::Cut));
        assert_eq!(lines.push("c2", "more\n"), None);
        assert_eq!(lines.flush("c1"), None);
    }

    #[test]
    fn strings_are_redacted_and_model_text_made_visible_but_ids_kept() {
        let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
        let mut value = json!({
            "id": "c\u{202e}1",
            "content": format!("key {token}"),
            "args": {"why": "x\u{202e}y", "id": token},
        });
        redact(&Redactor::default(), &mut value);
        model_text(&mut value);
        assert!(!value.to_string().contains(&token), "{value}");
        assert_eq!(value["args"]["why"], "x\\u{202e}y");
        assert_eq!(value["id"], "c\u{202e}1");
    }
}
