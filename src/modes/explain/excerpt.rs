//! What the model sees of piped input: at most `keep` characters of cleaned text (escape sequences
//! dropped, redraws applied, invalid UTF-8 replaced), the first half from the beginning and the
//! second from the end, joined by `... [N bytes truncated] ...`.
//!
//! The parts are chosen line by line on the raw windows `input` kept, each line cleaned on its own
//! (`exec::output::clean_text`), so only the few lines shown are ever decoded. A line that does not
//! fit ends the part; it is cut inside only when at least a quarter of the part's budget is left (one
//! huge line, a minified JSON document), so a part does not end with a stub of a line. N counts the
//! raw input bytes not shown: the whole input is `shown head + N + shown tail` bytes. A token cut in
//! two at such a cut may be the visible half of a secret the redactor can no longer recognise, so a
//! long word at a cut edge is replaced by `[REDACTED:cut]`.

use super::input::RawInput;
use crate::exec::output::{clean_text, join_cut};

/// Characters of piped input shown to the model, head and tail together.
pub(crate) const DEFAULT_KEEP_CHARS: usize = 12_000;

/// A word at a cut edge this long or longer is replaced: it may be part of a secret.
const MIN_CUT_TOKEN: usize = 12;

/// The text for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Excerpt {
    pub text: String,
    /// Raw input bytes not shown.
    pub truncated_bytes: u64,
    pub total_bytes: u64,
}

/// One end of the input, as chosen.
struct Part {
    text: String,
    /// Raw bytes of the input it covers.
    used: usize,
}

pub(crate) fn excerpt(input: &RawInput, keep: usize) -> Excerpt {
    let total = input.total();
    let head_budget = keep / 2;
    let tail_budget = keep - head_budget;
    let (head, tail, head_ends_line, tail_starts_line) = if input.middle == 0 {
        let whole = [input.head.as_slice(), input.tail.as_slice()].concat();
        let clean = clean_text(&whole);
        if chars(&clean) <= keep {
            return Excerpt { text: clean, truncated_bytes: 0, total_bytes: total };
        }
        let head = take_head(&whole, head_budget);
        let tail = take_tail(&whole[head.used..], tail_budget);
        let (head_ends, tail_starts) =
            (at_line_start(&whole, head.used), at_line_start(&whole, whole.len() - tail.used));
        (head, tail, head_ends, tail_starts)
    } else {
        let head = take_head(&input.head, head_budget);
        let tail = take_tail(&input.tail, tail_budget);
        let tail_start = input.tail.len() - tail.used;
        let tail_starts = if tail_start == 0 { input.tail_starts_line } else { at_line_start(&input.tail, tail_start) };
        let head_ends = at_line_start(&input.head, head.used);
        (head, tail, head_ends, tail_starts)
    };
    let truncated = total - head.used as u64 - tail.used as u64;
    if truncated == 0 {
        // Cleaning line by line kept a little more than cleaning the whole did: all of it fits.
        return Excerpt { text: head.text + &tail.text, truncated_bytes: 0, total_bytes: total };
    }
    let mut text = head.text;
    if !head_ends_line {
        text = scrub_end(&text);
    }
    let tail = if tail_starts_line { tail.text } else { scrub_start(&tail.text) };
    Excerpt { text: join_cut(&text, truncated, &tail), truncated_bytes: truncated, total_bytes: total }
}

/// Whole lines from the start of `bytes` while they fit in `budget` characters.
fn take_head(bytes: &[u8], budget: usize) -> Part {
    let mut part = Part { text: String::new(), used: 0 };
    let mut taken = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let clean = clean_text(line);
        let n = chars(&clean);
        if taken + n <= budget {
            part.text.push_str(&clean);
            part.used += line.len();
            taken += n;
            continue;
        }
        let left = budget - taken;
        if left >= budget / 4 && left > 0 {
            let (len, clean) = fit(line, left, |count| prefix_len(line, count), |len| &line[..len]);
            part.text.push_str(&clean);
            part.used += len;
        }
        break;
    }
    part
}

/// Whole lines from the end of `bytes` while they fit in `budget` characters.
fn take_tail(bytes: &[u8], budget: usize) -> Part {
    let mut pieces: Vec<String> = Vec::new();
    let mut used = 0;
    let mut taken = 0;
    for line in bytes.split_inclusive(|&b| b == b'\n').rev() {
        let clean = clean_text(line);
        let n = chars(&clean);
        if taken + n <= budget {
            pieces.push(clean);
            used += line.len();
            taken += n;
            continue;
        }
        let left = budget - taken;
        if left >= budget / 4 && left > 0 {
            let (len, clean) = fit(line, left, |count| suffix_len(line, count), |len| &line[line.len() - len..]);
            pieces.push(clean);
            used += len;
        }
        break;
    }
    pieces.reverse();
    Part { text: pieces.concat(), used }
}

/// The longest piece of `line` (as `piece(len)` cuts it) whose cleaned text has at most `left`
/// characters: `count_len(left)` bytes holding `left` characters, or, when invalid UTF-8 makes
/// that too many, `left` bytes (a byte never cleans to more than one character).
fn fit<'l>(
    line: &'l [u8],
    left: usize,
    count_len: impl Fn(usize) -> usize,
    piece: impl Fn(usize) -> &'l [u8],
) -> (usize, String) {
    let len = count_len(left);
    let clean = clean_text(piece(len));
    if chars(&clean) <= left {
        return (len, clean);
    }
    let len = left.min(line.len());
    let clean: String = clean_text(piece(len)).chars().take(left).collect();
    (len, clean)
}

/// Bytes of the first `count` characters of `line` (a character starts at any non-continuation byte).
fn prefix_len(line: &[u8], count: usize) -> usize {
    let mut seen = 0;
    for (i, &b) in line.iter().enumerate() {
        if !is_continuation(b) {
            if seen == count {
                return i;
            }
            seen += 1;
        }
    }
    line.len()
}

/// Bytes of the last `count` characters of `line`.
fn suffix_len(line: &[u8], count: usize) -> usize {
    let mut seen = 0;
    let mut start = line.len();
    for (i, &b) in line.iter().enumerate().rev() {
        if !is_continuation(b) {
            if seen == count {
                break;
            }
            seen += 1;
            start = i;
        }
    }
    line.len() - start
}

/// True when `at` is the start of `bytes` or follows a newline.
fn at_line_start(bytes: &[u8], at: usize) -> bool {
    at == 0 || bytes.get(at - 1) == Some(&b'\n')
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

fn chars(text: &str) -> usize {
    if text.is_ascii() { text.len() } else { text.chars().count() }
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// `text` with a long word at its end replaced (the word was cut).
fn scrub_end(text: &str) -> String {
    let start = text.trim_end_matches(is_token_char).len();
    if text.len() - start >= MIN_CUT_TOKEN { format!("{}[REDACTED:cut]", &text[..start]) } else { text.to_owned() }
}

/// `text` with a long word at its start replaced (the word was cut).
fn scrub_start(text: &str) -> String {
    let rest = text.trim_start_matches(is_token_char);
    if text.len() - rest.len() >= MIN_CUT_TOKEN { format!("[REDACTED:cut]{rest}") } else { text.to_owned() }
}

#[cfg(test)]
mod tests;
