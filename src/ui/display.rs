//! The one gate for model-controlled text on its way to the terminal (issue 13 §3). The model has read
//! untrusted output (a README, a log line, a web page), so anything it wrote may carry escape
//! sequences that move the cursor, erase what is shown, retitle the window (OSC 0), set the clipboard
//! (OSC 52) or hide a link (OSC 8), a `\r` that overwrites the line, and bidi or zero-width characters
//! that make text read differently from what it is. Every removal uses [`crate::policy::sanitize`],
//! so the screen and the policy agree on what a character is.
//!
//! Three shapes, by what the text is:
//! - [`prose`]: answers and thoughts. Line breaks and tabs kept; what is removed is dropped silently,
//!   so a multi-line answer stays readable.
//! - [`command`]: text that names what runs (a command, a file path, a diff line). What is removed is
//!   written visibly where it stood (`\x1b[2K`), so the person sees that something was there.
//! - [`line()`]: one-line labels (the `why`, a tool name, an error that quotes the model). Removed
//!   parts shown visibly, line breaks shown as `⏎`, so it can never start a line of its own (a fake
//!   approval prompt) and never spans more than one row's worth of meaning.

use std::borrow::Cow;

use crate::policy::sanitize;

/// Longest one-line label shown; the rest is cut with `…` (a `why` as long as a screen would push the
/// command off it).
pub(crate) const MAX_LINE_CHARS: usize = 500;

/// Multi-line prose with every escape, control (except `\n`, `\t`), bidi and zero-width character removed.
pub fn prose(text: &str) -> Cow<'_, str> {
    if is_plain(text, true) { Cow::Borrowed(text) } else { Cow::Owned(sanitize(text).text) }
}

/// [`prose`] for text that arrives in pieces (a streamed answer): each push returns the sanitized
/// text that can be shown now, holding back an escape sequence that may continue in the next piece,
/// so the pieces shown together are exactly `prose` of the whole, however the text was split.
#[derive(Debug, Default)]
pub(crate) struct ProseStream {
    pending: String,
}

impl ProseStream {
    pub fn push(&mut self, chunk: &str) -> String {
        self.pending.push_str(chunk);
        let settled = crate::policy::settled_len(&self.pending);
        let shown = prose(&self.pending[..settled]).into_owned();
        self.pending.drain(..settled);
        shown
    }

    /// The rest, once no more text follows.
    pub fn finish(&mut self) -> String {
        let shown = prose(&self.pending).into_owned();
        self.pending.clear();
        shown
    }
}

/// A command or path as it should be shown: removed characters written visibly where they stood;
/// line breaks and tabs kept (they are part of what runs).
pub fn command(text: &str) -> Cow<'_, str> {
    if is_plain(text, true) { Cow::Borrowed(text) } else { Cow::Owned(sanitize(text).display) }
}

/// One line: removed characters written visibly, each line break as `⏎`, tabs as spaces, at most
/// [`MAX_LINE_CHARS`] characters.
pub fn line(text: &str) -> Cow<'_, str> {
    let too_long = text.len() > MAX_LINE_CHARS && text.chars().count() > MAX_LINE_CHARS;
    if is_plain(text, false) && !too_long {
        return Cow::Borrowed(text);
    }
    let shown = sanitize(text).display.replace('\n', "⏎").replace('\t', " ");
    if shown.chars().count() <= MAX_LINE_CHARS {
        return Cow::Owned(shown);
    }
    let mut cut: String = shown.chars().take(MAX_LINE_CHARS).collect();
    cut.push('…');
    Cow::Owned(cut)
}

/// True when sanitizing would change nothing (the common case, so no allocation).
fn is_plain(text: &str, multi_line: bool) -> bool {
    text.chars().all(|c| match c {
        '\n' | '\t' => multi_line,
        c if c.is_control() => false,
        c => !crate::policy::is_invisible(c),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every hostile kind the tmux test also puts on a real screen.
    const HOSTILE: &str = "a\x1b[1A\x1b[2Kb\x1b]52;c;cm0gLXJmIH4=\x07c\x1b]8;;http://evil/\x1b\\d\x1b]8;;\x1b\\e\x1b]0;pwned\x07f\rg\u{202e}h\u{200b}i\u{9b}2Jj";

    #[test]
    fn nothing_a_terminal_would_act_on_survives() {
        for shown in [prose(HOSTILE), command(HOSTILE), line(HOSTILE)] {
            assert!(!shown.chars().any(|c| c.is_control() && c != '\n' && c != '\t'), "{shown:?}");
            assert!(!shown.contains(['\u{202e}', '\u{200b}', '\u{9b}']), "{shown:?}");
        }
        assert_eq!(prose(HOSTILE), "abcdefghij");
    }

    #[test]
    fn commands_and_lines_show_what_was_removed() {
        assert_eq!(command("ls\x1b[2K -la"), "ls\\x1b[2K -la");
        assert_eq!(command("rm x\r"), "rm x\\r");
        assert_eq!(command("a\n\tb"), "a\n\tb");
        assert_eq!(line("restart\n  [LOW] ls\tnow"), "restart⏎  [LOW] ls now");
        assert_eq!(line("title\x1b]0;x\x07"), "title\\x1b]0;x\\x07");
    }

    #[test]
    fn streamed_prose_split_anywhere_shows_what_the_whole_would() {
        let texts =
            [HOSTILE, "ok \x1b]52;c;cm0=\x07 done \x1b[2J!\n\x1b[31mred\x1b[0m \u{9d}0;t\u{9c}x\x1b", "plain\nété\r\n"];
        for text in texts {
            let chars: Vec<char> = text.chars().collect();
            for size in 1..=chars.len() {
                let mut stream = ProseStream::default();
                let mut shown: String =
                    chars.chunks(size).map(|piece| stream.push(&piece.iter().collect::<String>())).collect();
                shown.push_str(&stream.finish());
                assert_eq!(shown, prose(text), "pieces of {size}");
            }
        }
    }

    #[test]
    fn plain_text_is_borrowed_and_long_lines_are_cut() {
        assert!(matches!(prose("fine\ttext\n"), Cow::Borrowed(_)));
        assert!(matches!(line("fine text"), Cow::Borrowed(_)));
        let long = "é".repeat(MAX_LINE_CHARS + 10);
        let cut = line(&long);
        assert_eq!(cut.chars().count(), MAX_LINE_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
