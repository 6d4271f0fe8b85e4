//! Streamed reply text that may be shown as it arrives. Small local models often write their tool
//! calls as text (`llm::text_calls` recovers them once the stream has ended); such a call must never
//! reach the screen as an answer. [`HoldBack`] passes text through as it streams and holds back,
//! from where it starts, anything that may still turn out to be one of the forms the recoverer
//! accepts: a bare JSON value the reply starts with, a fenced block in a call language, an
//! `Action:` line, or a tag such as `<tool_call>`. Held text is decided when the reply ends: a
//! recovered call is never shown; anything else arrives with the final `answer` event.

use crate::llm::text_calls;

use crate::llm::text_calls::{CALL_FENCES, TAGS};

#[derive(Debug)]
pub(crate) struct HoldBack {
    known: Vec<&'static str>,
    text: String,
    /// Bytes of `text` already passed on.
    shown: usize,
    /// A call form was seen (or may be the whole reply): nothing more is passed on.
    held: bool,
    /// Inside a fenced block that cannot hold a call (```bash): its closing fence is no opener.
    in_other_fence: bool,
    /// A ```sh block is a command to run (the agent with text calls): held like a call.
    shell_blocks: bool,
}

impl HoldBack {
    /// `known`: the tool names offered; with none, nothing can be a call and all text streams.
    pub fn new(known: Vec<&'static str>) -> Self {
        Self { known, text: String::new(), shown: 0, held: false, in_other_fence: false, shell_blocks: false }
    }

    /// Also holds from a fenced block in a shell language ([`text_calls::SHELL_FENCES`]).
    pub fn with_shell_blocks(mut self, shell_blocks: bool) -> Self {
        self.shell_blocks = shell_blocks;
        self
    }

    /// The part of the text so far that can be shown now (empty while undecided).
    pub fn push(&mut self, chunk: &str) -> String {
        self.text.push_str(chunk);
        if self.held {
            return String::new();
        }
        let start = self.shown;
        self.advance();
        self.text[start..self.shown].to_owned()
    }

    /// Some text is held back (a possible call, or a line not decided yet).
    pub fn holding(&self) -> bool {
        self.shown < self.text.len() && (self.held || !self.text[self.shown..].trim().is_empty())
    }

    fn advance(&mut self) {
        if self.known.is_empty() {
            self.shown = self.text.len();
            return;
        }
        while self.shown < self.text.len() && !self.held {
            let before = self.shown;
            let rest = &self.text[self.shown..];
            if self.text[..self.shown].trim().is_empty() {
                let trimmed = rest.trim_start();
                // Leading whitespace waits for what follows; a reply opening with a JSON object, or an
                // array of them, may be a bare call (a Markdown link `[docs](…)` is not).
                let in_array = trimmed.strip_prefix('[').map(str::trim_start);
                if trimmed.is_empty() || in_array == Some("") {
                    return;
                }
                if trimmed.starts_with('{') || in_array.is_some_and(|rest| rest.starts_with('{')) {
                    self.held = true;
                    return;
                }
            }
            let at_line_start = self.shown == 0 || self.text[..self.shown].ends_with('\n');
            let line_end = rest.find('\n').map(|i| i + 1);
            let line_len = line_end.unwrap_or(rest.len());
            if at_line_start {
                let line = self.text[self.shown..self.shown + line_len].to_owned();
                match self.line_start(&line, line_end.is_some()) {
                    Decision::Wait => return,
                    Decision::Hold => {
                        self.held = true;
                        return;
                    }
                    Decision::Pass(len) if len > line_len => {
                        self.shown += len;
                        continue;
                    }
                    Decision::Pass(_) => {}
                }
            }
            let rest = &self.text[self.shown..];
            let line = &rest[..line_len];
            // Inside the line: stop before a tag opener, or what may become one.
            for (offset, _) in line.char_indices().filter(|(_, c)| *c == '<' || *c == '[') {
                let tail = &rest[offset..];
                if TAGS.iter().any(|(opener, _)| tail.starts_with(opener)) {
                    self.shown += offset;
                    self.held = true;
                    return;
                }
                if TAGS.iter().any(|(opener, _)| opener.starts_with(tail)) {
                    self.shown += offset;
                    return;
                }
            }
            self.shown += line.len();
            if line_end.is_none() || self.shown == before {
                return;
            }
        }
    }

    /// A line at its start: a fence or an `Action:` line is decided whole.
    fn line_start(&mut self, line: &str, complete: bool) -> Decision {
        let trimmed = line.trim_start();
        let unbold = trimmed.trim_start_matches('*').to_ascii_lowercase();
        if trimmed.starts_with("```") || (!complete && "```".starts_with(trimmed.trim_end())) {
            if !complete {
                return Decision::Wait;
            }
            let language = trimmed[3..].trim().to_ascii_lowercase();
            if self.shell_blocks && !self.in_other_fence && text_calls::SHELL_FENCES.contains(&language.as_str()) {
                return Decision::Hold;
            }
            if self.in_other_fence || !CALL_FENCES.contains(&language.as_str()) {
                self.in_other_fence = !self.in_other_fence;
                return Decision::Pass(0);
            }
            let rest = &self.text[self.shown..];
            let mut offset = line.len();
            while let Some(end) = rest[offset..].find('\n') {
                let inner = &rest[offset..offset + end + 1];
                offset += end + 1;
                if inner.trim().starts_with("```") {
                    let block = &rest[..offset];
                    return if text_calls::recover(block, &self.known).is_some() {
                        Decision::Hold
                    } else {
                        Decision::Pass(offset)
                    };
                }
            }
            return Decision::Wait;
        }
        if unbold.starts_with("action") || (!complete && "action".starts_with(unbold.trim_end())) {
            if !complete {
                return Decision::Wait;
            }
            return if text_calls::recover(line, &self.known).is_some() { Decision::Hold } else { Decision::Pass(0) };
        }
        Decision::Pass(0)
    }
}

enum Decision {
    /// Not decided until more text arrives.
    Wait,
    /// A call: hold from here.
    Hold,
    /// Shown: this many bytes decided whole (a fenced block), or 0 to go on within the line.
    Pass(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["run_command", "read_file"];

    /// What is shown when `text` streams in pieces of `size` bytes (at char boundaries).
    fn shown(text: &str, size: usize) -> String {
        let mut hold = HoldBack::new(KNOWN.to_vec());
        let mut out = String::new();
        let mut piece = String::new();
        for c in text.chars() {
            piece.push(c);
            if piece.len() >= size {
                out.push_str(&hold.push(&std::mem::take(&mut piece)));
            }
        }
        out.push_str(&hold.push(&piece));
        out
    }

    #[test]
    fn prose_streams_whole_and_calls_never_show() {
        let prose =
            "The disk is **80%** full.\nSee [docs](http://x) and `df -h`.\n```bash\nls -la\n```\nAction items: none\n";
        let calls = [
            "{\"name\": \"run_command\", \"arguments\": {\"command\": \"ls\"}}",
            "Let me look.\n<tool_call>{\"name\": \"run_command\", \"arguments\": {\"command\": \"ls\"}}</tool_call>",
            "Checking.\n```json\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"ls\"}}\n```\n",
            "Thought: look\nAction: run_command\nAction Input: {\"command\": \"ls\"}\n",
            "[TOOL_CALLS] [{\"name\": \"read_file\", \"arguments\": {}}]",
            "ok <|python_tag|>{\"name\": \"run_command\", \"parameters\": {}}",
        ];
        for size in [1, 2, 3, 7, 1000] {
            assert_eq!(shown(prose, size), prose, "size {size}");
            for call in calls {
                let out = shown(call, size);
                assert!(!out.contains("run_command") && !out.contains("read_file"), "{size}: {out:?}");
            }
            assert_eq!(shown(calls[1], size), "Let me look.\n");
            assert_eq!(shown(calls[2], size), "Checking.\n");
            assert_eq!(shown(calls[5], size), "ok ");
        }
    }

    /// The agent with text calls runs a ```sh block: it is held like a call (shown, if at all,
    /// with the final answer); other blocks still stream, and without the flag a ```sh block does.
    #[test]
    fn a_shell_block_is_held_when_it_is_a_command_to_run() {
        let text = "Listing.\n```text\nout\n```\n```sh\nls -la\n```\nafter";
        for size in [1, 3, 1000] {
            let mut hold = HoldBack::new(KNOWN.to_vec()).with_shell_blocks(true);
            let mut out = String::new();
            for piece in text.as_bytes().chunks(size) {
                out.push_str(&hold.push(std::str::from_utf8(piece).unwrap()));
            }
            assert_eq!(out, "Listing.\n```text\nout\n```\n", "size {size}");
            assert!(hold.holding());
            assert_eq!(shown(text, size), text, "size {size}: without the flag it streams");
        }
    }

    #[test]
    fn a_folded_tool_s_former_name_written_as_a_text_call_is_held_too() {
        // What the agent passes: the offered family and, through `callable_names`, its old names.
        let known = crate::llm::text_calls::callable_names(["run_command", "file"]);
        let mut hold = HoldBack::new(known);
        let mut out = hold.push("Reading.\nAction: read_file\n");
        out.push_str(&hold.push("Action Input: {\"path\": \"a\"}\n"));
        assert_eq!(out, "Reading.\n");
    }

    #[test]
    fn a_json_fence_that_is_not_a_call_is_shown_once_closed() {
        let text = "Config:\n```json\n{\"a\": 1}\n```\nDone.";
        for size in [1, 4, 100] {
            assert_eq!(shown(text, size), text);
        }
        let mut hold = HoldBack::new(KNOWN.to_vec());
        assert_eq!(hold.push("Config:\n```json\n{\"a\""), "Config:\n");
    }

    #[test]
    fn a_reply_opening_with_a_link_streams_and_one_opening_with_json_waits() {
        for size in [1, 2, 50] {
            assert_eq!(shown("[docs](http://x) say so.", size), "[docs](http://x) say so.");
            assert_eq!(shown("[ {\"a\": 1}]", size), "");
            assert_eq!(shown("  {\"a\": 1}", size), "");
        }
    }

    #[test]
    fn holding_says_whether_text_waits() {
        let mut hold = HoldBack::new(KNOWN.to_vec());
        hold.push("Fine.\n");
        assert!(!hold.holding());
        hold.push("<tool_");
        assert!(hold.holding());
        let mut hold = HoldBack::new(KNOWN.to_vec());
        hold.push("{\"name\"");
        assert!(hold.holding());
    }

    #[test]
    fn without_tools_everything_streams() {
        let mut hold = HoldBack::new(Vec::new());
        assert_eq!(hold.push("{\"name\": \"run_command\"}"), "{\"name\": \"run_command\"}");
    }
}
