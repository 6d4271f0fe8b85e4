//! Step 1 of the policy: remove what a terminal would hide or reinterpret (DESIGN §6.1).
//!
//! ANSI/OSC escape sequences, C0/C1 controls other than `\n` and `\t`, bidi controls and
//! zero-width characters are removed: they can make the text shown differ from the text run
//! (`\u{202e}` reverses what follows, `\r` overwrites the line, OSC 52 sets the clipboard).
//! Every removed category is absent from the output, so sanitizing twice equals sanitizing once.

use std::fmt::Write as _;

/// The result of sanitizing one command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sanitized {
    /// What would run.
    pub text: String,
    /// The input with each removed character written visibly (`\x1b`, `\u{202e}`) where it stood.
    pub display: String,
    /// One entry per kind of thing removed, e.g. `ANSI escape sequence`.
    pub removed: Vec<&'static str>,
}

impl Sanitized {
    pub fn changed(&self) -> bool {
        !self.removed.is_empty()
    }
}

pub fn sanitize(input: &str) -> Sanitized {
    let mut out = Sanitized { text: String::with_capacity(input.len()), display: String::new(), removed: Vec::new() };
    let chars: Vec<char> = input.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\x1b' || c == '\u{9b}' || c == '\u{9d}' {
            let end = escape_end(&chars, i);
            out.note("ANSI escape sequence");
            for &removed in &chars[i..end] {
                push_visible(&mut out.display, removed);
            }
            i = end;
            continue;
        }
        if let Some(kind) = hidden_kind(c) {
            out.note(kind);
            push_visible(&mut out.display, c);
        } else {
            out.text.push(c);
            out.display.push(c);
        }
        i += 1;
    }
    out
}

/// Bytes of `input` whose sanitized text more input cannot change: all of it, unless it ends
/// inside an escape sequence that may still continue (then up to where that sequence starts). Text
/// that streams in pieces is sanitized up to here, so a sequence split across pieces is still
/// removed whole.
pub fn settled_len(input: &str) -> usize {
    let chars: Vec<(usize, char)> = input.char_indices().collect();
    let plain: Vec<char> = chars.iter().map(|(_, c)| *c).collect();
    let mut i = 0;
    while i < plain.len() {
        if matches!(plain[i], '\x1b' | '\u{9b}' | '\u{9d}') {
            let end = escape_end(&plain, i);
            if end >= plain.len() {
                return chars[i].0;
            }
            i = end;
        } else {
            i += 1;
        }
    }
    input.len()
}

impl Sanitized {
    fn note(&mut self, kind: &'static str) {
        if !self.removed.contains(&kind) {
            self.removed.push(kind);
        }
    }
}

/// A bidi control or a zero-width/invisible character: text that reads differently from what it
/// is. The live screen and the model's capture of command output drop the same set, so both see
/// the same line.
pub fn is_invisible(c: char) -> bool {
    matches!(hidden_kind(c), Some("bidirectional control" | "zero-width or invisible character"))
}

/// Why a single character is removed, or `None` when it is kept.
fn hidden_kind(c: char) -> Option<&'static str> {
    match c {
        '\n' | '\t' => None,
        '\r' => Some("carriage return"),
        '\0'..='\x1f' | '\x7f' => Some("control character"),
        '\u{80}'..='\u{9f}' => Some("C1 control character"),
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}' => {
            Some("bidirectional control")
        }
        '\u{200b}'..='\u{200d}'
        | '\u{2060}'..='\u{2064}'
        | '\u{feff}'
        | '\u{180e}'
        | '\u{00ad}'
        | '\u{034f}'
        | '\u{115f}'
        | '\u{1160}'
        | '\u{3164}'
        | '\u{ffa0}'
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{e0000}'..='\u{e007f}' => Some("zero-width or invisible character"),
        _ => None,
    }
}

/// Index one past the escape sequence starting at `start` (ESC, or the 8-bit CSI/OSC introducers).
/// Covers CSI (`ESC [ … final`), OSC/DCS/PM/APC/SOS strings (ended by BEL or ST) and two-byte escapes.
fn escape_end(chars: &[char], start: usize) -> usize {
    let first = chars[start];
    let (kind, body) = match first {
        '\u{9b}' => ('[', start + 1),
        '\u{9d}' => (']', start + 1),
        _ => match chars.get(start + 1) {
            None => return start + 1,
            Some(&next) => (next, start + 2),
        },
    };
    match kind {
        '[' => {
            let mut j = body;
            while j < chars.len() && ('\x20'..='\x3f').contains(&chars[j]) {
                j += 1;
            }
            if j < chars.len() && ('\x40'..='\x7e').contains(&chars[j]) { j + 1 } else { j }
        }
        ']' | 'P' | 'X' | '^' | '_' => {
            let mut j = body;
            while j < chars.len() {
                match chars[j] {
                    '\x07' | '\u{9c}' => return j + 1,
                    '\x1b' if chars.get(j + 1) == Some(&'\\') => return j + 2,
                    '\x1b' => return j,
                    _ => j += 1,
                }
            }
            j
        }
        // A two-character escape (ESC 7, ESC c, ESC ( B …); never swallow a newline or another ESC.
        '\n' | '\x1b' => body - 1,
        _ => body,
    }
}

fn push_visible(display: &mut String, c: char) {
    match c {
        '\x1b' => display.push_str("\\x1b"),
        '\x07' => display.push_str("\\x07"),
        '\r' => display.push_str("\\r"),
        c if (c as u32) < 0x20 || c == '\x7f' => {
            let _ = write!(display, "\\x{:02x}", c as u32);
        }
        c if hidden_kind(c).is_some() || matches!(c, '\u{9b}' | '\u{9d}') => {
            let _ = write!(display, "\\u{{{:x}}}", c as u32);
        }
        c => display.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_input_is_untouched() {
        let s = sanitize("ls -la | grep 'x y'\necho ok\t!");
        assert_eq!(s.text, "ls -la | grep 'x y'\necho ok\t!");
        assert_eq!(s.display, s.text);
        assert!(!s.changed());
    }

    #[test]
    fn removes_escapes_and_shows_them() {
        let s = sanitize("echo \x1b[31mred\x1b[0m; \x1b]52;c;cm0gLXJmIH4=\x07ls");
        assert_eq!(s.text, "echo red; ls");
        assert_eq!(s.display, "echo \\x1b[31mred\\x1b[0m; \\x1b]52;c;cm0gLXJmIH4=\\x07ls");
        assert_eq!(s.removed, vec!["ANSI escape sequence"]);
    }

    #[test]
    fn removes_bidi_zero_width_and_carriage_returns() {
        let s = sanitize("ls\u{202e} -la\u{200b}\rrm");
        assert_eq!(s.text, "ls -larm");
        assert_eq!(s.display, "ls\\u{202e} -la\\u{200b}\\rrm");
        assert_eq!(s.removed, vec!["bidirectional control", "zero-width or invisible character", "carriage return"]);
    }

    #[test]
    fn unterminated_sequences_do_not_eat_the_rest_of_a_line() {
        assert_eq!(sanitize("ls\x1b").text, "ls");
        assert_eq!(sanitize("ls\x1b\nrm x").text, "ls\nrm x");
        assert_eq!(sanitize("a\x1b[12").text, "a");
        assert_eq!(sanitize("a\x1b]0;title\x1b[31mb").text, "ab");
    }

    #[test]
    fn a_sequence_that_may_continue_is_not_settled() {
        assert_eq!(settled_len("ab"), 2);
        assert_eq!(settled_len("ab\x1b"), 2);
        assert_eq!(settled_len("ab\x1b[3"), 2);
        assert_eq!(settled_len("ab\x1b]0;t\nmore"), 2);
        assert_eq!(settled_len("ab\x1b[31mc"), 8);
        assert_eq!(settled_len("é\x1b]0;t\x07x"), 9);
    }
}
