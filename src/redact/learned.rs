//! Finding learned secret values however they were printed: as they are, in base64 or base64url (at
//! each of the three byte alignments, so a value in the middle of `env | base64` is found too), in hex
//! (either case), percent-encoded (in a URL), JSON-escaped, and cut by line breaks (a PTY's `\r\n`, `base64`'s 76-column lines). One regex pass
//! over the text with its line breaks taken out; each match is mapped back and redacted line by line,
//! so the line breaks themselves stay.

use std::collections::HashMap;
use std::ops::Range;

use regex::{Regex, RegexBuilder};

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Encoded forms shorter than this are not searched: too likely to occur by chance in other base64.
const MIN_FORM_CHARS: usize = 6;

/// The learned values and every form they are searched in.
pub(super) struct Learned {
    /// Number of values learned (for `Debug`, never the values).
    count: usize,
    /// Every form of every value, each with the marker kind of its value; longest first.
    needles: Vec<(String, String)>,
    /// One pass for all needles; `None` when there are none, or too many to compile.
    regex: Option<Regex>,
    /// Needle → index in `needles`.
    by_needle: HashMap<String, usize>,
}

impl Learned {
    /// `values`: each learned value with the kind that replaces it.
    pub fn new(values: Vec<(String, String)>) -> Self {
        let count = values.len();
        let mut kinds: HashMap<String, String> = HashMap::new();
        for (value, kind) in values {
            for form in forms(&value) {
                // A form shared by two values (never in practice): the first kind in order wins.
                match kinds.get_mut(&form) {
                    Some(existing) if *existing <= kind => {}
                    Some(existing) => *existing = kind.clone(),
                    None => {
                        kinds.insert(form, kind.clone());
                    }
                }
            }
        }
        let mut needles: Vec<(String, String)> = kinds.into_iter().collect();
        needles.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        let regex = if needles.is_empty() {
            None
        } else {
            let alternation: Vec<String> = needles.iter().map(|(needle, _)| regex::escape(needle)).collect();
            RegexBuilder::new(&alternation.join("|")).size_limit(64 << 20).build().ok()
        };
        let by_needle = needles.iter().enumerate().map(|(index, (needle, _))| (needle.clone(), index)).collect();
        Self { count, needles, regex, by_needle }
    }

    pub fn count(&self) -> usize {
        self.count
    }

    /// Calls `found` with each range of `text` that holds (part of) a learned value, and its kind. A
    /// value cut by line breaks gives one range per line; the line breaks are never in a range.
    pub fn find(&self, text: &str, found: &mut impl FnMut(Range<usize>, &str)) {
        if self.needles.is_empty() {
            return;
        }
        let joined = Joined::new(text);
        let haystack = joined.text.as_deref().unwrap_or(text);
        let mut report = |range: Range<usize>, kind: &str| {
            for piece in joined.original(range, text) {
                found(piece, kind);
            }
        };
        if let Some(regex) = &self.regex {
            for hit in regex.find_iter(haystack) {
                if let Some(&index) = self.by_needle.get(hit.as_str()) {
                    report(hit.range(), &self.needles[index].1);
                }
            }
        } else {
            // Too many forms for one regex (never in practice): one pass per form.
            for (needle, kind) in &self.needles {
                for (start, _) in haystack.match_indices(needle.as_str()) {
                    report(start..start + needle.len(), kind);
                }
            }
        }
    }
}

/// The text with `\r` and `\n` taken out, and where each remaining byte came from.
struct Joined {
    /// `None` when the text has no line break (then it is searched as it is).
    text: Option<String>,
    /// Byte offset in the original of each byte of `text`.
    map: Vec<usize>,
}

impl Joined {
    fn new(text: &str) -> Self {
        if !text.contains(['\r', '\n']) {
            return Self { text: None, map: Vec::new() };
        }
        let mut joined = String::with_capacity(text.len());
        let mut map = Vec::with_capacity(text.len());
        for (at, c) in text.char_indices() {
            if c == '\r' || c == '\n' {
                continue;
            }
            joined.push(c);
            map.extend(at..at + c.len_utf8());
        }
        Self { text: Some(joined), map }
    }

    /// The ranges of the original text that a range of the joined text covers, one per line.
    fn original(&self, range: Range<usize>, original: &str) -> Vec<Range<usize>> {
        if self.text.is_none() || range.is_empty() {
            return vec![range];
        }
        let (Some(&start), Some(&last)) = (self.map.get(range.start), self.map.get(range.end - 1)) else {
            return Vec::new();
        };
        let end = last + 1;
        let mut pieces = Vec::new();
        let mut piece_start = start;
        for (offset, byte) in original.as_bytes()[start..end].iter().enumerate() {
            if *byte == b'\r' || *byte == b'\n' {
                if piece_start < start + offset {
                    pieces.push(piece_start..start + offset);
                }
                piece_start = start + offset + 1;
            }
        }
        if piece_start < end {
            pieces.push(piece_start..end);
        }
        pieces
    }
}

/// A value as it is (line breaks taken out, as they are from the text), and its encoded forms.
fn forms(value: &str) -> Vec<String> {
    let plain: String = value.chars().filter(|&c| c != '\r' && c != '\n').collect();
    let mut out = vec![plain];
    let bytes = value.as_bytes();
    for alphabet in [BASE64, BASE64URL] {
        for alignment in 0..3 {
            out.push(base64_core(bytes, alignment, alphabet));
        }
    }
    out.push(hex(bytes, b"0123456789abcdef"));
    out.push(hex(bytes, b"0123456789ABCDEF"));
    // In a URL (`postgres://app:p%40ss@db`) and inside a JSON string (`"pa\"ss"`).
    out.push(percent(bytes, b"0123456789ABCDEF"));
    out.push(percent(bytes, b"0123456789abcdef"));
    out.push(value.replace('\\', "\\\\").replace('"', "\\\""));
    out.retain(|form| form.len() >= MIN_FORM_CHARS);
    out.sort();
    out.dedup();
    out
}

/// The base64 characters that depend on `value` alone when it starts `alignment` bytes into a
/// 3-byte group: whatever came before or after it, an encoding of it contains these.
fn base64_core(value: &[u8], alignment: usize, alphabet: &[u8; 64]) -> String {
    let mut bytes = vec![0u8; alignment];
    bytes.extend_from_slice(value);
    let encoded = base64(&bytes, alphabet);
    // Characters are 6-bit windows; keep those wholly inside the value's bits.
    let first = (8 * alignment).div_ceil(6);
    let end = (8 * bytes.len()) / 6;
    encoded.get(first..end).unwrap_or_default().to_owned()
}

/// Unpadded base64 of `bytes` (the last character of a partial group included).
fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let group = (u32::from(chunk[0]) << 16)
            | (u32::from(chunk.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(chunk.get(2).copied().unwrap_or(0));
        for index in 0..=chunk.len() {
            out.push(char::from(alphabet[((group >> (18 - 6 * index)) & 0x3f) as usize]));
        }
    }
    out
}

/// Percent-encoding of everything but RFC 3986's unreserved characters.
fn percent(bytes: &[u8], digits: &[u8; 16]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for &byte in bytes {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(digits[usize::from(byte >> 4)]));
            out.push(char::from(digits[usize::from(byte & 0xf)]));
        }
    }
    out
}

fn hex(bytes: &[u8], digits: &[u8; 16]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(digits[usize::from(byte >> 4)]));
        out.push(char::from(digits[usize::from(byte & 0xf)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_encoding() {
        assert_eq!(base64(b"hunter2", BASE64), "aHVudGVyMg");
        assert_eq!(base64(b"\xfb\xff", BASE64), "+/8");
        assert_eq!(base64(b"\xfb\xff", BASE64URL), "-_8");
        assert_eq!(hex(b"\x01\xab", b"0123456789ABCDEF"), "01AB");
    }

    #[test]
    fn each_alignment_is_found_inside_a_longer_encoding() {
        let value = b"s3cr3t-value";
        for prefix in ["", "A", "AB", "ABC=x;"] {
            let mut bytes = prefix.as_bytes().to_vec();
            bytes.extend_from_slice(value);
            bytes.extend_from_slice(b"\nTAIL");
            let encoded = base64(&bytes, BASE64);
            let core = base64_core(value, prefix.len() % 3, BASE64);
            assert!(core.len() >= 14 && encoded.contains(&core), "{prefix:?}: {core} in {encoded}");
        }
    }

    #[test]
    fn a_range_across_line_breaks_is_cut_into_lines() {
        let text = "ab\r\ncd\nef";
        let joined = Joined::new(text);
        assert_eq!(joined.text.as_deref(), Some("abcdef"));
        assert_eq!(joined.original(1..5, text), vec![1..2, 4..6, 7..8]);
        assert_eq!(Joined::new("plain").original(0..3, "plain"), vec![0..3]);
    }
}
