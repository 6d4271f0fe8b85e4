//! The token patterns: one table of regexes, each naming the kind of secret it finds, which part of
//! the match is the secret, and the plain substrings (triggers) one of which every match contains.
//! A regex runs only on text that holds one of its triggers, and is compiled the first time it is
//! needed: most text needs few of them, so neither the first call nor a typical one pays for all.
//! Every regex runs in time linear in the text.

use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use regex::{Captures, Regex, RegexSet};

mod named;
mod providers;

use named::{
    describes_a_secret, is_secret_key, local_name, mixes_cases_and_digits, named_key, named_value, names_password,
};

/// Which part of a match is the secret, and what must hold for it to count.
#[derive(Debug, Clone, Copy)]
pub(super) enum Take {
    /// The whole match.
    Whole,
    /// The whole match, when it has a digit and a letter: random tokens do, prose does not.
    WholeRandom,
    /// Group 1.
    Group,
    /// Group 1, when it has a digit and a letter.
    GroupRandom,
    /// Group 1, unless it is a placeholder such as `$VAR`, `null` or `***`.
    GroupValue,
    /// `key: value`: group 1 is the key; the value is the first of groups 2–4 that matched.
    Assignment,
    /// `NAME=value` for any name: group 1 is the name, which must look secret
    /// ([`super::is_secret_name`]); the value is the first of groups 2–4 that matched.
    Named,
    /// `<name …>value</name>`: group 1 the opening tag's name (it must look secret), group 2 the
    /// value, group 3 the closing tag's name (the same).
    Element,
    /// Group 1 in prose (`my password is hunter2`), unless it is a word that describes the
    /// password rather than being it (`is wrong`, `is stored in vault`).
    Prose,
    /// Group 1, when it mixes upper- and lower-case letters and digits (an AWS secret key; a git
    /// SHA is hex in one case).
    GroupMixed,
}

pub(super) struct Pattern {
    pub kind: &'static str,
    haystack: Haystack,
    /// Lowercase substrings, one of which every match contains (compared with the ASCII-lowercased text).
    triggers: &'static [&'static str],
    source: String,
    /// Compiled on first need; `None` if the source failed to compile (a test proves none does).
    regex: OnceLock<Option<Regex>>,
    take: Take,
}

/// ASCII whitespace. Unicode `\s` (and Unicode case folding: `K` also matches the Kelvin sign) makes
/// the automata several times larger and slower to build, for no secret that matters.
macro_rules! ws {
    () => {
        r" \t\r\n\x0b\x0c"
    };
}

/// An assignment's value: double-quoted, single-quoted, or a bare word up to a delimiter.
const VALUE: &str = concat!(r#"(?:"([^"\r\n]*)"|'([^'\r\n]*)'|([^"#, ws!(), r#""'`,;&|(){}\[\]<>]+))"#);

/// Words that end a key whose value is a secret: `DB_PASSWORD`, `GITHUB_TOKEN`, `client_secret`,
/// `api-key` (not `passwords` or `max_tokens`: the key must end with the word). A key containing
/// `pass` names a password.
const SECRET_KEYS: &str = r"pass(?:word|wd|phrase)|secret|token|(?:api|access|secret|private|auth)[_-]?key";

/// Flags whose next word is a secret: `--password hunter2`, `-pass pass:x`, `--token abc`.
const SECRET_FLAGS: &str = r"password|passwd|pass|token|api-key|secret";

/// What a regex runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Haystack {
    Text,
    /// The ASCII-lowercased text (same byte offsets): case-insensitive keywords written in lowercase.
    /// Far cheaper to compile than `(?i)`, whose case variants of every keyword make large automata.
    Lowercase,
}

pub(super) type Source = (&'static str, Haystack, &'static [&'static str], String, Take);

fn sources() -> Vec<Source> {
    use Haystack::*;
    use Take::*;
    let mut all: Vec<Source> = vec![
        // A whole PEM block; or, when the output was cut, its head or its tail.
        (
            "private-key",
            Text,
            &["private key"],
            concat!(
                r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
                r"(?:(?s:.)*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----",
                r"|(?:\r?\n[A-Za-z][A-Za-z-]*:[^\n]*)*(?:[",
                ws!(),
                r"]*\n[A-Za-z0-9+/]{16,}={0,2})*)"
            )
            .into(),
            Whole,
        ),
        (
            "private-key",
            Text,
            &["private key"],
            concat!(r"(?:[A-Za-z0-9+/=]{16,}[", ws!(), r"]*)+-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----").into(),
            Whole,
        ),
        ("anthropic", Text, &["sk-ant-"], r"(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,}".into(), WholeRandom),
        ("openai", Text, &["sk-"], r"(?-u:\b)sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}".into(), WholeRandom),
        ("aws-access-key-id", Text, &["akia", "asia"], r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)".into(), Whole),
        (
            "aws-secret-key",
            Lowercase,
            &["secret"],
            r#"secret_?access_?key["']?[ \t]*[:=][ \t]*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#.into(),
            Group,
        ),
        (
            "github",
            Text,
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
            r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})".into(),
            Whole,
        ),
        (
            "gitlab",
            Text,
            &["glpat-", "gldt-", "glrt-", "glptt-"],
            r"(?-u:\b)gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}".into(),
            Whole,
        ),
        (
            "slack",
            Text,
            &["xox", "hooks.slack.com"],
            r"(?-u:\b)(?:xox[abprse]-[A-Za-z0-9-]{10,}|hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+]{20,})"
                .into(),
            Whole,
        ),
        ("google-api-key", Text, &["aiza"], r"(?-u:\b)AIza[0-9A-Za-z_-]{35}".into(), Whole),
        (
            "stripe",
            Text,
            &["k_live_", "k_test_", "k_prod_", "whsec_"],
            r"(?-u:\b)(?:[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9+/=]{24,})".into(),
            Whole,
        ),
        ("npm", Text, &["npm_"], r"(?-u:\b)npm_[A-Za-z0-9]{36}".into(), Whole),
        ("huggingface", Text, &["hf_"], r"(?-u:\b)hf_[A-Za-z0-9]{30,}".into(), Whole),
        ("jwt", Text, &["eyj"], r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*".into(), Whole),
    ];
    all.extend(providers::tokens());
    let generic: Vec<Source> = vec![
        (
            "authorization",
            Lowercase,
            &["authorization"],
            concat!(
                r#"(?-u:\b)(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?"#,
                r#"(?:(?:bearer|basic|token|digest|negotiate|ntlm)[ \t]+)?([^"#,
                ws!(),
                r#""',]+)"#
            )
            .into(),
            GroupValue,
        ),
        ("bearer", Lowercase, &["bearer"], r"(?-u:\b)bearer[ \t]+([A-Za-z0-9._~+/=-]{8,})".into(), GroupRandom),
        (
            "url-password",
            Text,
            &["://"],
            concat!(r"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^", ws!(), r"/?#@:]*:([^", ws!(), r"/?#]+)@").into(),
            GroupValue,
        ),
        (
            "secret",
            Lowercase,
            &["pass", "secret", "token", "key"],
            format!(r#"({SECRET_KEYS})["']?[ \t]*[:=][ \t]*{VALUE}"#),
            Assignment,
        ),
        (
            "secret",
            Lowercase,
            &["pass", "secret", "token", "key"],
            format!(r#"(?:^|[{}])(--?(?:{SECRET_FLAGS}))[ \t]+{VALUE}"#, ws!()),
            Assignment,
        ),
    ];
    all.extend(generic);
    all.extend(providers::arguments());
    all.extend(named::sources());
    all
}

/// Every pattern, in priority order: when two matches start at the same place and are as long,
/// the earlier kind names the marker.
pub(super) static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    sources()
        .into_iter()
        .map(|(kind, haystack, triggers, source, take)| Pattern {
            kind,
            haystack,
            triggers,
            source,
            regex: OnceLock::new(),
            take,
        })
        .collect()
});

/// For each pattern in [`PATTERNS`], one regex matching any of its triggers: one pass over the text
/// tells which patterns can match at all (scanning for each trigger in turn cost a pass per trigger).
static TRIGGERS: LazyLock<Option<RegexSet>> = LazyLock::new(|| {
    let alternations = PATTERNS
        .iter()
        .map(|pattern| pattern.triggers.iter().map(|trigger| regex::escape(trigger)).collect::<Vec<_>>().join("|"));
    RegexSet::new(alternations).ok()
});

/// Whether each pattern in [`PATTERNS`] has a trigger in `lower` (the ASCII-lowercased text).
pub(super) fn triggered(lower: &str) -> Vec<bool> {
    match TRIGGERS.as_ref() {
        Some(set) => {
            let matches = set.matches(lower);
            (0..PATTERNS.len()).map(|index| matches.matched(index)).collect()
        }
        // Never (a test compiles it): fall back to a scan per trigger.
        None => PATTERNS.iter().map(|pattern| pattern.triggers.iter().any(|t| lower.contains(t))).collect(),
    }
}

/// Every kind a pattern can report, for recognizing markers already in the text.
pub(super) fn is_pattern_kind(kind: &str) -> bool {
    kind == PASSWORD || PATTERNS.iter().any(|pattern| pattern.kind == kind)
}

/// The kind of an assignment whose key names a password.
const PASSWORD: &str = "password";

impl Pattern {
    /// A token shape (a provider's prefix and length): worth finding again in text whose line
    /// breaks were taken out, where a generic `key=value` rule would join unrelated lines.
    pub fn is_token(&self) -> bool {
        matches!(self.take, Take::Whole | Take::WholeRandom) && self.kind != "private-key"
    }

    /// Calls `found` with the byte range of every secret this pattern finds in `text`; `lower` is
    /// `text` in ASCII lowercase. Called only for the patterns [`triggered`] names.
    pub fn find(&self, text: &str, lower: &str, found: &mut impl FnMut(Range<usize>, &'static str)) {
        let Some(regex) = self.regex.get_or_init(|| Regex::new(&self.source).ok()) else { return };
        let haystack = if self.haystack == Haystack::Lowercase { lower } else { text };
        for caps in regex.captures_iter(haystack) {
            let name = match self.take {
                Take::Named => named_key(&caps),
                _ => caps.get(1).map(|key| key.as_str()),
            };
            let secret = match self.take {
                Take::Whole | Take::WholeRandom => caps.get(0),
                Take::Group | Take::GroupRandom | Take::GroupValue | Take::Prose | Take::GroupMixed => caps.get(1),
                Take::Assignment => assignment_value(&caps),
                Take::Named => named_value(&caps),
                Take::Element => caps.get(2),
            };
            let Some(secret) = secret else { continue };
            let kind = match self.take {
                Take::Assignment | Take::Named | Take::Element if name.is_some_and(names_password) => PASSWORD,
                _ => self.kind,
            };
            let value = secret.as_str();
            let keep = match self.take {
                Take::Whole | Take::Group => true,
                Take::WholeRandom | Take::GroupRandom => looks_random(value),
                Take::GroupValue | Take::Assignment => !is_placeholder(value),
                Take::Named => name.is_some_and(|name| is_secret_key(name, value)) && !is_placeholder(value),
                Take::Element => {
                    caps.get(1).map(|open| open.as_str()) == caps.get(3).map(|close| close.as_str())
                        && name.is_some_and(|name| is_secret_key(local_name(name), value))
                        && !is_placeholder(value)
                }
                Take::Prose => !is_placeholder(value) && !describes_a_secret(value),
                Take::GroupMixed => mixes_cases_and_digits(value),
            };
            if keep {
                found(secret.range(), kind);
            }
        }
    }
}

fn assignment_value<'t>(caps: &Captures<'t>) -> Option<regex::Match<'t>> {
    caps.get(2).or_else(|| caps.get(3)).or_else(|| caps.get(4))
}

/// Random tokens mix digits and letters; words and branch names (`sk-learn-notes-for-monday`) do not.
fn looks_random(token: &str) -> bool {
    token.bytes().any(|b| b.is_ascii_digit()) && token.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Values that stand for a secret without being one: references, templates, empty or null values.
fn is_placeholder(value: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    value.is_empty()
        || value.starts_with(['$', '{', '<', '%', '='])
        || lower.starts_with("[redacted")
        || value.chars().all(|c| c == '*' || c == 'x' || c == 'X' || c == '.')
        || matches!(lower.as_str(), "null" | "none" | "nil" | "true" | "false" | "undefined" | "required" | "optional")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        for (kind, haystack, triggers, source, _) in sources() {
            assert!(Regex::new(&source).is_ok(), "{kind}: {source}");
            if haystack == Haystack::Lowercase {
                assert_eq!(source.replace("A-Z", "").to_ascii_lowercase(), source.replace("A-Z", ""), "{kind}");
            }
            assert!(!triggers.is_empty() && triggers.iter().all(|t| *t == t.to_ascii_lowercase()), "{kind}");
        }
    }

    #[test]
    fn the_trigger_set_compiles_and_finds_overlapping_triggers() {
        assert!(TRIGGERS.is_some());
        let hits = triggered("x sk-ant-abc");
        let kinds: Vec<&str> = PATTERNS.iter().zip(hits).filter(|(_, hit)| *hit).map(|(p, _)| p.kind).collect();
        assert!(kinds.contains(&"anthropic") && kinds.contains(&"openai") && kinds.contains(&"twilio"), "{kinds:?}");
        assert!(triggered("plain words only").iter().all(|hit| !hit));
    }

    #[test]
    fn placeholders_are_not_secrets() {
        for value in ["", "$DB_PASSWORD", "${PASS}", "{{ .Values.pw }}", "<your-password>", "null", "None", "****"] {
            assert!(is_placeholder(value), "{value}");
        }
        assert!(!is_placeholder("hunter2"));
        assert!(looks_random("abc123") && !looks_random("learn-notes") && !looks_random("123456"));
    }
}
