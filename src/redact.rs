//! Secret detection and redaction, applied to everything that leaves the machine or is stored: the
//! environment context, observations, the audit log. Pure: reads no files, never prints.
//!
//! Two sources of knowledge: the *values* of environment variables whose names look secret
//! ([`is_secret_name`]), learned when a [`Redactor`] is built and found also when encoded or cut by
//! line breaks ([`learned`]), and the token shapes in [`patterns`] (provider API keys after gitleaks'
//! rules, JWTs, PEM private keys, `password=…`, `user:pass@` URLs, credentials in command arguments
//! such as `curl -u user:pass`, so the audit log and the session store never keep them).
//! Every secret becomes `[REDACTED:<kind>]`: `[REDACTED:github]`, `[REDACTED:password]`,
//! `[REDACTED:env:GITHUB_TOKEN]` (the variable's name is not secret and tells the model what was there).
//!
//! Redacting is idempotent: markers already in the text are left alone, so redacting twice (an
//! observation that is later written to the audit log) gives the same text as once. The cost is linear
//! in the text: each regex is a single pass, matches are merged once.

mod command;
mod encoded;
mod learned;
mod patterns;
#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// Parts of a word in a variable's name that mark its value as secret, in any spelling: `DB_PASS`,
/// `PGPASSWORD`, `MYSQL_PWD`, `SENTRY_DSN`, `GOOGLE_APPLICATION_CREDENTIALS`, `APIKEY`.
const SECRET_MARKERS: &[&str] =
    &["KEY", "TOKEN", "SECRET", "PASS", "PWD", "DSN", "CRED", "PRIVATE", "AUTH", "SESSION", "COOKIE"];

/// Whole words that mark a secret only on their own (`OPENAI_API`; not `RAPID` or `CAPITAL`).
const SECRET_WORDS: &[&str] = &["API", "SIG", "SIGNATURE", "BEARER", "JWT", "OTP", "PIN", "PW"];

/// Words that contain a marker but are not secret (`GIT_AUTHOR_NAME`, `XAUTHORITY`, `OPSAI_KEYMAP`).
const BENIGN_WORDS: &[&str] = &[
    "AUTHOR", "AUTHORS", "AUTHORITY", "XAUTHORITY", "KEYMAP", "KEYBOARD", "KEYTIMEOUT", "KEYRING", "LESSKEY",
    "LESSKEYIN", "MONKEY", "BYPASS", "COMPASS", "PASSENGER", "PASSTHROUGH", "PASSTHRU", "PASSIVE", "TOKENIZER",
    "TOKENIZERS", "CREDIT", "CREDITS", "SESSIONS", "ASKPASS",
];

/// Words that make a secret-looking name a setting *about* a secret: a limit, a lifetime, a kind, or
/// where it is (`MAX_TOKENS`, `SESSION_TIMEOUT`, `TOKEN_TYPE`, `SSH_KEY_PATH`, `AUTH_URL`). Their
/// values are numbers, words, paths and addresses, and a URL that carries a password is still caught
/// by the `url-password` pattern.
const QUALIFIER_WORDS: &[&str] = &[
    "MAX", "MIN", "LIMIT", "LIMITS", "COUNT", "NUM", "SIZE", "LEN", "LENGTH", "TTL", "TIMEOUT", "EXPIRY", "EXPIRES",
    "EXPIRATION", "LIFETIME", "TYPE", "KIND", "FORMAT", "MODE", "ENABLED", "DISABLED", "FILE", "PATH", "DIR", "URL",
    "HOST", "PORT", "ENDPOINT", "VERSION", "REGION", "SOCK", "NAME", "IP", "ADDR", "ADDRESS", "SUBNET", "CIDR",
    "DOMAIN", "USER", "USERNAME", "EMAIL", "ALGORITHM", "ALG", "ISSUER", "AUDIENCE", "SCOPE", "SCOPES", "REF",
];

/// Well-known variables whose names look secret but whose values are sockets, ids, directories or
/// desktop plumbing. (`GPG_AGENT_INFO` and `SSH_AGENT_PID` carry no marker word, so they are not secret either.)
const NOT_SECRET: &[&str] = &[
    "PWD", "OLDPWD", "SSH_AUTH_SOCK", "SESSION_MANAGER", "DESKTOP_SESSION", "GDMSESSION", "TERM_SESSION_ID",
    "ZELLIJ_SESSION_NAME", "TMUX_SESSION", "SCREEN_SESSION",
];

/// Prefixes of session-plumbing variables: `XDG_SESSION_ID`, `XDG_SESSION_TYPE`, `DBUS_SESSION_BUS_ADDRESS`.
const NOT_SECRET_PREFIXES: &[&str] = &["XDG_SESSION_", "DBUS_SESSION_"];

/// Learned values shorter than this are not redacted: too likely to occur by chance (`SESSION=1`).
const MIN_VALUE_CHARS: usize = 6;

/// Values that are settings, not secrets, whatever the variable is called (`AUTH_ENABLED=disabled`).
const NOT_SECRET_VALUES: &[&str] = &["enabled", "disabled", "required", "optional", "default", "unknown"];

/// The argument that holds a command line, in tool calls and events.
pub const COMMAND_KEY: &str = "command";

/// The marker of a base64 run that decodes to a secret.
const BASE64_KIND: &str = "base64";
/// The marker of a value in a Kubernetes Secret's `data:`.
const KUBERNETES_KIND: &str = "k8s-secret";

/// Passes after the first, at most: each only replaces text outside markers, so this is a bound, not a budget.
const MAX_EXTRA_PASSES: usize = 4;

/// True when an environment variable with this name holds a secret. The name is split into words at
/// every character that is not a letter or digit; it is secret when a word contains KEY, TOKEN,
/// SECRET, PASS, PWD, DSN, CRED, PRIVATE, AUTH, SESSION or COOKIE (any case) or is API, SIG, JWT…,
/// unless that word is a known benign one (`AUTHOR`, `KEYMAP`, `BYPASS`, `TOKENIZERS`), another word
/// says the value is a setting about a secret (`MAX_TOKENS`, `SESSION_TIMEOUT`, `KEY_PATH`), or
/// the name is well-known plumbing (`PWD`, `OLDPWD`, `SSH_AUTH_SOCK`, `XDG_SESSION_TYPE`).
pub(crate) fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NOT_SECRET.contains(&upper.as_str()) || NOT_SECRET_PREFIXES.iter().any(|prefix| upper.starts_with(prefix)) {
        return false;
    }
    let split = camel_words(name).to_ascii_uppercase();
    let words: Vec<&str> = split.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    if words.iter().any(|word| QUALIFIER_WORDS.contains(word)) {
        return false;
    }
    words
        .iter()
        .filter(|word| !BENIGN_WORDS.contains(word))
        .any(|word| SECRET_WORDS.contains(word) || SECRET_MARKERS.iter().any(|marker| word.contains(marker)))
}

/// `secretKeyRef` → `secret_Key_Ref`: a camelCase name's words are split like `SNAKE_CASE` ones,
/// so `secretName` and `SharedAccessKeyName` are settings *about* a secret.
fn camel_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            out.push('_');
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c);
    }
    out
}

/// A value worth learning: long enough not to occur by chance, and not a yes/no or mode word.
fn is_secret_value(value: &str) -> bool {
    value.chars().count() >= MIN_VALUE_CHARS
        && !NOT_SECRET_VALUES.iter().any(|word| value.eq_ignore_ascii_case(word))
        && !value.eq_ignore_ascii_case("true")
        && !value.eq_ignore_ascii_case("false")
}

/// A marker already in the text: `[REDACTED:github]`. Only kinds this redactor emits are kept as
/// they are, so a secret dressed up as a marker (`[REDACTED:ghp_…]`) is still found.
static MARKER: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\[REDACTED:([A-Za-z0-9_:.-]{1,80})\]").ok());

/// Finds secrets in text and replaces them with `[REDACTED:<kind>]`. Cheap to share (`Arc`); `Send + Sync`.
pub struct Redactor {
    /// Learned secret values and their encoded forms, each with the marker kind that replaces it.
    learned: learned::Learned,
    /// The `env:NAME` kinds this redactor emits.
    env_kinds: HashSet<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the values themselves.
        f.debug_struct("Redactor").field("learned_values", &self.learned.count()).finish()
    }
}

impl Default for Redactor {
    /// Token patterns only, no learned values.
    fn default() -> Self {
        Self::new(std::iter::empty())
    }
}

impl Redactor {
    /// Learns the values (at least 6 characters) of the secret-named variables in `env`; they are
    /// redacted wherever they appear, as `[REDACTED:env:NAME]`.
    pub fn new(env: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut learned: HashMap<String, String> = HashMap::new();
        let mut env_kinds = HashSet::new();
        for (name, value) in env {
            if !is_secret_name(&name) || !is_secret_value(&value) {
                continue;
            }
            let kind = env_kind(&name);
            env_kinds.insert(kind.clone());
            // Two variables with one value: the first name (in name order) wins, so output is stable.
            match learned.get_mut(&value) {
                Some(existing) if *existing <= kind => {}
                Some(existing) => *existing = kind,
                None => {
                    learned.insert(value, kind);
                }
            }
        }
        Self { learned: learned::Learned::new(learned.into_iter().collect()), env_kinds }
    }

    /// A redactor that knows the secrets in this process's environment (non-UTF-8 variables are skipped).
    pub(crate) fn from_process_env() -> Self {
        Self::new(
            std::env::vars_os().filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?))),
        )
    }

    /// [`Self::from_process_env`] that also knows the API key the model is sent, wherever it came
    /// from (the clear `llm.api_key`, a command, the keyring), as `[REDACTED:env:OPSAI_API_KEY]`.
    pub(crate) fn from_process_env_and_key(key: Option<&str>) -> Self {
        let env =
            std::env::vars_os().filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)));
        // Listed last: a variable that holds the same value keeps its own name.
        let key = key.map(|key| ("OPSAI_API_KEY".to_owned(), key.trim().to_owned()));
        Self::new(env.chain(key))
    }

    /// The text with every secret replaced by `[REDACTED:<kind>]`.
    pub fn redact(&self, text: &str) -> String {
        self.redact_in(text, false)
    }

    /// A command line with its secrets masked only inside shell words ([`command`]): every
    /// operator, separator, quote and command name stays as it is, so the redacted line still
    /// shows every command that runs. For the audit log, the session store and the web chat.
    pub fn redact_command(&self, command: &str) -> String {
        self.redact_in(command, true)
    }

    /// A tool call's arguments (or any JSON) with every string redacted, the value of each
    /// `command` key as a command line ([`Self::redact_command`]); keys, numbers and shape kept.
    pub fn redact_json(&self, value: &serde_json::Value) -> serde_json::Value {
        self.redact_json_under(value, false)
    }

    fn redact_json_under(&self, value: &serde_json::Value, command: bool) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(text) if command => Value::String(self.redact_command(text)),
            Value::String(text) => Value::String(self.redact(text)),
            Value::Array(items) => Value::Array(items.iter().map(|item| self.redact_json_under(item, false)).collect()),
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(key, field)| (key.clone(), self.redact_json_under(field, key == COMMAND_KEY)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn redact_in(&self, text: &str, words: bool) -> String {
        // A marker can complete a pattern's context (`…]Authorization: x` has a word boundary that
        // `valueAuthorization: x` had not), so passes repeat until nothing changes; usually one pass
        // finds nothing, or a second confirms the first.
        let Some(mut current) = self.redact_once(text, words) else { return text.to_owned() };
        for _ in 0..MAX_EXTRA_PASSES {
            match self.redact_once(&current, words) {
                Some(next) if next != current => current = next,
                _ => break,
            }
        }
        current
    }

    /// One pass; `None` when nothing was found. `words`: mask only inside a command's words.
    fn redact_once(&self, text: &str, words: bool) -> Option<String> {
        if text.is_empty() {
            return None;
        }
        let lower = text.to_ascii_lowercase();
        let mut spans = self.spans(text, &lower);
        self.find_hidden(text, &lower, &mut spans);
        if spans.is_empty() {
            return None;
        }
        let kept = self.markers(text);
        let mut spans = merge(clip(spans, &kept));
        if words {
            let ranges: Vec<Range<usize>> = spans.iter().map(|span| span.range.clone()).collect();
            let pieces = command::within(text, &ranges, &command::maskable(text));
            spans = pieces.into_iter().map(|(index, range)| Span { range, ..spans[index].clone() }).collect();
        }
        if spans.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(text.len() + spans.len() * 16);
        let mut at = 0;
        for span in &spans {
            out.push_str(&text[at..span.range.start]);
            out.push_str("[REDACTED:");
            out.push_str(&span.kind);
            out.push(']');
            at = span.range.end;
        }
        out.push_str(&text[at..]);
        Some(out)
    }

    /// What the patterns and the learned values find in `text` as it is.
    fn spans(&self, text: &str, lower: &str) -> Vec<Span> {
        let mut spans: Vec<Span> = Vec::new();
        let triggered = patterns::triggered(lower);
        for (rank, pattern) in patterns::PATTERNS.iter().enumerate().filter(|(rank, _)| triggered[*rank]) {
            pattern.find(text, lower, &mut |range, kind| spans.push(Span { range, kind: kind.into(), rank }));
        }
        self.find_values(text, &mut spans);
        spans
    }

    /// Secrets hidden from [`Self::spans`]: a base64 run whose decoded text holds a secret, a
    /// Kubernetes Secret's data values, a token cut by a line break.
    fn find_hidden(&self, text: &str, lower: &str, spans: &mut Vec<Span>) {
        let rank = usize::MAX;
        for (range, decoded) in encoded::base64_runs(text) {
            // A learned value's encoded form is already found, under its variable's name.
            let found = spans.iter().any(|span| span.range.start < range.end && range.start < span.range.end);
            if !found && !self.spans(&decoded, &decoded.to_ascii_lowercase()).is_empty() {
                spans.push(Span { range, kind: BASE64_KIND.into(), rank });
            }
        }
        if encoded::is_kubernetes_secret(lower) {
            for range in encoded::kubernetes_values(text) {
                spans.push(Span { range, kind: KUBERNETES_KIND.into(), rank });
            }
        }
        if let Some(joined) = encoded::Joined::new(text) {
            let joined_lower = joined.text.to_ascii_lowercase();
            let triggered = patterns::triggered(&joined_lower);
            let tokens = patterns::PATTERNS.iter().enumerate().filter(|(rank, p)| triggered[*rank] && p.is_token());
            // What each pattern finds in the text as it is: a token already whole before a break.
            let found: Vec<(usize, Range<usize>)> = spans.iter().map(|span| (span.rank, span.range.clone())).collect();
            for (rank, pattern) in tokens {
                pattern.find(&joined.text, &joined_lower, &mut |range, kind| {
                    let pieces = joined.original(range);
                    // One piece: found in the text as it is already.
                    if pieces.len() < 2 {
                        return;
                    }
                    // A token whole before the break (most patterns have no fixed length) goes on
                    // after it only with what reads as its tail: `ghp_…\nnot-inherited` keeps its
                    // second line, a long key wrapped mid-way does not.
                    let head = &pieces[0];
                    let whole_before =
                        found.iter().any(|(r, f)| *r == rank && f.start <= head.start && f.end == head.end);
                    let kept = pieces
                        .into_iter()
                        .enumerate()
                        .filter(|(n, piece)| *n == 0 || !whole_before || looks_like_tail(text, piece));
                    let kept: Vec<Range<usize>> = kept.map(|(_, piece)| piece).collect();
                    if kept.len() > 1 || !whole_before {
                        spans.extend(kept.into_iter().map(|range| Span { range, kind: kind.into(), rank }));
                    }
                });
            }
        }
    }

    fn find_values(&self, text: &str, spans: &mut Vec<Span>) {
        // A value this machine is known to hold names its variable, before any pattern's kind.
        let rank = 0;
        self.learned.find(text, &mut |range, kind| spans.push(Span { range, kind: kind.to_owned(), rank }));
    }

    /// Markers in `text` that this redactor could have written, in order: they are left as they are.
    fn markers(&self, text: &str) -> Vec<Range<usize>> {
        let Some(marker) = MARKER.as_ref() else { return Vec::new() };
        marker
            .captures_iter(text)
            .filter(|caps| caps.get(1).is_some_and(|kind| self.is_kind(kind.as_str())))
            .filter_map(|caps| caps.get(0).map(|whole| whole.range()))
            .collect()
    }

    fn is_kind(&self, kind: &str) -> bool {
        kind == "env"
            || kind == BASE64_KIND
            || kind == KUBERNETES_KIND
            || patterns::is_pattern_kind(kind)
            || self.env_kinds.contains(kind)
    }
}

/// `env:NAME`, or plain `env` when the name has characters a marker should not carry.
fn env_kind(name: &str) -> String {
    let plain = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain { format!("env:{name}") } else { "env".to_owned() }
}

/// One secret found in the text.
#[derive(Debug, Clone)]
struct Span {
    range: Range<usize>,
    kind: String,
    /// Pattern order (learned values share the first rank).
    rank: usize,
}

/// Whether `piece`, the text after a line break that a token's pattern would take as its tail,
/// reads as one: token material (letters and digits mixed, or too long for a word) or a whole line
/// of its own (a wrapped tail). `not` of `not-inherited`, `GOPATH` and `Done` are words.
fn looks_like_tail(text: &str, piece: &Range<usize>) -> bool {
    let tail = &text[piece.clone()];
    let mixed = tail.bytes().any(|b| b.is_ascii_digit()) && tail.bytes().any(|b| b.is_ascii_alphabetic());
    mixed || tail.len() >= 16 || fills_line(text, piece)
}

/// Whether `piece` is a whole line of `text` (between breaks, or the `\n` escapes of a JSON string).
fn fills_line(text: &str, piece: &Range<usize>) -> bool {
    let before = &text[..piece.start];
    let after = &text[piece.end..];
    let starts =
        before.is_empty() || before.ends_with(['\n', '\r']) || before.ends_with("\\n") || before.ends_with("\\r");
    let ends =
        after.is_empty() || after.starts_with(['\n', '\r']) || after.starts_with("\\n") || after.starts_with("\\r");
    starts && ends
}

/// Removes the parts of each span that lie inside a kept marker; what is left of a span stays a secret.
/// `kept` is sorted and disjoint, so this is a merge, not a product.
fn clip(spans: Vec<Span>, kept: &[Range<usize>]) -> Vec<Span> {
    if kept.is_empty() {
        return spans;
    }
    let mut out = Vec::with_capacity(spans.len());
    for span in spans {
        let mut start = span.range.start;
        let first = kept.partition_point(|marker| marker.end <= start);
        for marker in kept[first..].iter().take_while(|marker| marker.start < span.range.end) {
            if marker.start > start {
                out.push(Span { range: start..marker.start, ..span.clone() });
            }
            start = start.max(marker.end);
        }
        if start < span.range.end {
            out.push(Span { range: start..span.range.end, ..span });
        }
    }
    out
}

/// Sorts spans and merges overlapping ones; the earliest (then longest, then highest-priority) names the kind.
fn merge(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by(|a, b| {
        a.range.start.cmp(&b.range.start).then(b.range.end.cmp(&a.range.end)).then(a.rank.cmp(&b.rank))
    });
    let mut merged: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.range.start < last.range.end => last.range.end = last.range.end.max(span.range.end),
            _ => merged.push(span),
        }
    }
    merged
}
