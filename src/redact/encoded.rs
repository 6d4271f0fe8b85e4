//! Secrets a pattern cannot see as they are printed: inside base64 (a config file's encoded
//! value, a Kubernetes Secret's `data:`), or cut in two by a line break (`fold`, a terminal's
//! wrap, a `\n` inside a JSON string). The caller decides what counts as a secret; this module
//! finds the candidates and maps them back to the text.

use std::ops::Range;
use std::sync::LazyLock;

use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use regex::Regex;

/// Shorter base64 runs are not decoded: too little room for a secret and its name.
const MIN_RUN: usize = 16;
/// Longer runs are not decoded (a whole file in base64 is not a value).
const MAX_RUN: usize = 64 * 1024;

static RUN: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_-]{16,}={0,2}").ok());

fn engine(alphabet: &base64::alphabet::Alphabet) -> GeneralPurpose {
    GeneralPurpose::new(
        alphabet,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    )
}

static STANDARD: LazyLock<GeneralPurpose> = LazyLock::new(|| engine(&base64::alphabet::STANDARD));
static URL_SAFE: LazyLock<GeneralPurpose> = LazyLock::new(|| engine(&base64::alphabet::URL_SAFE));

/// Every run of base64 in `text` that decodes to readable text, with that text.
pub(super) fn base64_runs(text: &str) -> Vec<(Range<usize>, String)> {
    let Some(run) = RUN.as_ref() else { return Vec::new() };
    run.find_iter(text)
        .filter(|found| found.len() >= MIN_RUN && found.len() <= MAX_RUN)
        .filter_map(|found| Some((found.range(), decode(found.as_str())?)))
        .collect()
}

/// The text `run` encodes, when it is mostly printable UTF-8 (random bytes and hex are not).
fn decode(run: &str) -> Option<String> {
    let body = run.trim_end_matches('=');
    let url = body.contains(['-', '_']);
    if url && body.contains(['+', '/']) {
        return None;
    }
    let bytes = if url { URL_SAFE.decode(body) } else { STANDARD.decode(body) }.ok()?;
    let decoded = String::from_utf8(bytes).ok()?;
    let printable = decoded.chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t')).count();
    (printable * 10 >= decoded.chars().count() * 9).then_some(decoded)
}

/// Whether `lower` (lowercased text) shows a Kubernetes Secret, whose `data` values are secret
/// whatever they decode to.
pub(super) fn is_kubernetes_secret(lower: &str) -> bool {
    ["kind: secret", "\"kind\": \"secret\"", "\"kind\":\"secret\""].iter().any(|mark| lower.contains(mark))
}

static JSON_DATA: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#""(?:data|stringData)"[ \t\r\n]*:[ \t\r\n]*\{([^{}]*)\}"#).ok());
static JSON_VALUE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#""[^"\r\n]*"[ \t\r\n]*:[ \t\r\n]*"([^"\r\n]+)""#).ok());

/// The values under a Secret's `data:`/`stringData:` (YAML, block scalars included, and JSON).
pub(super) fn kubernetes_values(text: &str) -> Vec<Range<usize>> {
    let mut out = yaml_values(text);
    if let (Some(data), Some(value)) = (JSON_DATA.as_ref(), JSON_VALUE.as_ref()) {
        for block in data.captures_iter(text).filter_map(|caps| caps.get(1)) {
            for found in value.captures_iter(block.as_str()).filter_map(|caps| caps.get(1)) {
                out.push(block.start() + found.start()..block.start() + found.end());
            }
        }
    }
    out
}

fn yaml_values(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    // The indentation of the `data:` line whose block we are in, and of a key whose block scalar
    // (`|`, `>`) continues on the lines below.
    let (mut block, mut scalar): (Option<usize>, Option<usize>) = (None, None);
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let line_start = start;
        start += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let indent = content.len() - content.trim_start_matches([' ', '-']).len();
        let trimmed = content.trim_start_matches([' ', '-']).trim_end();
        if trimmed.is_empty() {
            continue;
        }
        if let Some(key_indent) = scalar {
            if indent > key_indent {
                out.push(line_start + indent..line_start + indent + trimmed.len());
                continue;
            }
            scalar = None;
        }
        if block.is_some_and(|data| indent <= data) {
            block = None;
        }
        if trimmed == "data:" || trimmed == "stringData:" {
            block = Some(indent);
            continue;
        }
        if block.is_none() {
            continue;
        }
        let Some((_, value)) = trimmed.split_once(": ") else { continue };
        let value = value.trim();
        if value.starts_with(['|', '>']) {
            scalar = Some(indent);
        } else if !value.is_empty() {
            let at = line_start + indent + (trimmed.len() - trimmed.trim_start().len());
            let offset = trimmed.rfind(value).unwrap_or(0);
            out.push(at + offset..at + offset + value.len());
        }
    }
    out
}

/// `text` with its line breaks (and the `\n`/`\r` escapes of a JSON string) taken out, and where
/// each remaining byte came from.
pub(super) struct Joined {
    pub text: String,
    map: Vec<usize>,
}

impl Joined {
    /// `None` when the text has no line break to take out.
    pub fn new(text: &str) -> Option<Self> {
        if !text.contains(['\n', '\r']) && !text.contains("\\n") {
            return None;
        }
        let bytes = text.as_bytes();
        let mut joined = String::with_capacity(text.len());
        let mut map = Vec::with_capacity(text.len());
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if c == '\n' || c == '\r' {
                continue;
            }
            if c == '\\' && matches!(bytes.get(at + 1), Some(b'n' | b'r')) {
                chars.next();
                continue;
            }
            joined.push(c);
            map.extend(at..at + c.len_utf8());
        }
        Some(Self { text: joined, map })
    }

    /// The ranges of the original text that `range` of the joined text covers, one per piece
    /// between removed breaks.
    pub fn original(&self, range: Range<usize>) -> Vec<Range<usize>> {
        let mut pieces: Vec<Range<usize>> = Vec::new();
        for &at in self.map.get(range).unwrap_or_default() {
            match pieces.last_mut() {
                Some(last) if last.end == at => last.end = at + 1,
                _ => pieces.push(at..at + 1),
            }
        }
        pieces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_runs_decode_only_to_readable_text() {
        let text = "a: cGFzc3dvcmQ9aHVudGVyMnh5eg== b: 3f786850e387550fdab836ed7e6dc881de23001b";
        let runs = base64_runs(text);
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!(runs[0].1, "password=hunter2xyz");
        assert_eq!(&text[runs[0].0.clone()], "cGFzc3dvcmQ9aHVudGVyMnh5eg==");
    }

    #[test]
    fn kubernetes_secret_values_in_yaml_and_json() {
        let yaml = "apiVersion: v1\nkind: Secret\ndata:\n  username: YWRtaW4=\n  tls.key: |\n    LS0tLS1\n    QkVHSU4=\nmetadata:\n  name: db\n";
        let values: Vec<&str> = kubernetes_values(yaml).into_iter().map(|r| &yaml[r]).collect();
        assert_eq!(values, ["YWRtaW4=", "LS0tLS1", "QkVHSU4="]);
        let json = r#"{"kind":"Secret","data":{"password":"aHVudGVyMg==","user":"YQ=="},"metadata":{"name":"x"}}"#;
        let values: Vec<&str> = kubernetes_values(json).into_iter().map(|r| &json[r]).collect();
        assert_eq!(values, ["aHVudGVyMg==", "YQ=="]);
    }

    #[test]
    fn joined_maps_back_around_breaks_and_escapes() {
        let text = "ab\r\ncd\\nef";
        let joined = Joined::new(text).unwrap();
        assert_eq!(joined.text, "abcdef");
        assert_eq!(joined.original(1..6), vec![1..2, 4..6, 8..10]);
        assert!(Joined::new("plain").is_none());
    }
}
