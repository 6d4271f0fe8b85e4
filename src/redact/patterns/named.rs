//! Rules driven by a name that looks secret, whatever the syntax around it, and the checks their
//! matches pass; also credentials with no name at all (`.pgpass` lines, a bare AWS secret key).

use regex::Captures;

use super::{Source, VALUE};

/// Lowercase parts of secret-looking names ([`super::is_secret_name`]): one is in every match of
/// the name-driven rules.
const NAME_TRIGGERS: &[&str] = &[
    "key", "token", "secret", "pass", "pwd", "pw", "dsn", "cred", "private", "auth", "session", "cookie", "api", "sig",
    "bearer", "jwt", "otp", "pin",
];

/// Rules driven by a name that looks secret, whatever the syntax around it: shell and env files,
/// YAML, JSON, INI, PHP `define()`, XML elements and .NET `key=… value=…` settings, prose; and
/// credentials with no name at all (`.pgpass` lines, a bare AWS secret key).
pub(super) fn sources() -> Vec<Source> {
    use super::Haystack::*;
    use super::Take::*;
    const NAME: &str = r"([A-Za-z_][A-Za-z0-9_.-]*)";
    vec![
        // `"api_secret": "x"`, `'DB_PASSWORD' => 'x'`, `define('DB_PASSWORD', 'x')`.
        ("secret", Text, NAME_TRIGGERS, format!(r#"(?:"{NAME}"|'{NAME}')[ \t]*(?:=>|[:=,])[ \t]*{VALUE}"#), Named),
        // `DB_PASS=x`, `export X_TOKEN=x`, `MY_PW: x`, `Pwd=x;` in a connection string.
        (
            "secret",
            Text,
            NAME_TRIGGERS,
            format!(r#"(?:^|[^A-Za-z0-9_.$"'-]){NAME}[ \t]*(?:=>|[:=])[ \t]*{VALUE}"#),
            Named,
        ),
        // .NET settings: `<add key="DbPassword" value="x"/>`.
        (
            "secret",
            Text,
            NAME_TRIGGERS,
            format!(r#"(?:key|name)=["']{NAME}["'][ \t]+value=(?:"([^"\r\n]*)"|'([^'\r\n]*)'|([^ \t\r\n"'/>]+))"#),
            Named,
        ),
        (
            "secret",
            Text,
            NAME_TRIGGERS,
            concat!(
                r"<([A-Za-z_][A-Za-z0-9_.:-]*)(?:[ \t][^<>\r\n]*)?>[ \t]*([^<>\r\n]*[^<> \t\r\n])[ \t]*",
                r"</([A-Za-z_][A-Za-z0-9_.:-]*)>"
            )
            .into(),
            Element,
        ),
        (
            "password",
            Lowercase,
            &["pass", "pw", "pin", "token", "secret", "key"],
            concat!(
                r#"(?-u:\b)(?:password|passwd|passphrase|passcode|pw|pwd|pin|pin code|token|secret|"#,
                r#"api[ _-]?key|access key|secret key)(?:[ \t]+(?:for|of|on)[ \t]+[^ \t\r\n]{1,64})?"#,
                r#"(?:[ \t]+(?:is|was)[ \t]+|[ \t]*[=:][ \t]+)(?:now[ \t]+|still[ \t]+)?"#,
                r#"["'`]?"#,
                r#"([^ \t\r\n"'`,;]+)"#
            )
            .into(),
            Prose,
        ),
        // `.pgpass`: `host:port:database:user:password` (a `:` or `\` in a field is escaped).
        (
            "password",
            Text,
            &[":"],
            concat!(
                r"(?m)^(?:\*|[A-Za-z0-9_.-]*[A-Za-z.][A-Za-z0-9_.-]*):(?:[0-9]{2,5}|\*):(?:[^:\s\\]|\\.)+:",
                r"(?:[^:\s\\]|\\.)+:((?:[^:\s\\]|\\.)+)[ \t]*\r?$"
            )
            .into(),
            Group,
        ),
        // An AWS secret access key on its own line (a credentials dump, `terraform output`), or after its key id.
        (
            "aws-secret-key",
            Text,
            &["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
            r#"(?m)^[ \t]*["']?([A-Za-z0-9/+]{40})["']?,?[ \t]*\r?$"#.into(),
            GroupMixed,
        ),
        (
            "aws-secret-key",
            Text,
            &["akia", "asia"],
            r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}[^A-Za-z0-9/+\r\n]{1,40}?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"
                .into(),
            GroupMixed,
        ),
    ]
}

/// The name of a [`Take::Named`] match: the first of its name groups that matched (quoted twice, or bare).
pub(super) fn named_key<'t>(caps: &Captures<'t>) -> Option<&'t str> {
    (1..caps.len()).filter_map(|group| caps.get(group)).next().map(|name| name.as_str())
}

/// The value of a [`Take::Named`] match: the first group after the name's that matched.
pub(super) fn named_value<'t>(caps: &Captures<'t>) -> Option<regex::Match<'t>> {
    let name = (1..caps.len()).find(|&group| caps.get(group).is_some())?;
    let groups = caps.len();
    // The name groups come first (one or three), then the value's three.
    ((groups - 3).max(name + 1)..groups).filter_map(|group| caps.get(group)).next()
}

/// A name that says its value is a password (`DB_PASS`, `MYSQL_PWD`, `X_PW`) rather than a token.
pub(super) fn names_password(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.contains("PASS")
        || upper.split(|c: char| !c.is_ascii_alphanumeric()).any(|word| matches!(word, "PW" | "PWD"))
        || upper.ends_with("PWD")
}

/// Names too common alone to mean a secret in text (`key: app` in a YAML selector, `session: 3`);
/// with another word they count (`SSH_KEY`, `session_token`).
const TOO_COMMON_ALONE: &[&str] = &[
    "KEY", "KEYS", "SESSION", "AUTH", "PIN", "SIG", "API", "SIGNATURE", "COOKIE", "PRIVATE", "OTP", "CRED", "KEYID",
    "KEY_ID",
];

/// Whether `NAME` with this value is a secret: the name looks secret; `PWD` and `OLDPWD` are the
/// shell's directories (a path), anywhere else `pwd` is a password (`"pwd": "x"`, ODBC `PWD=x`).
pub(super) fn is_secret_key(name: &str, value: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if upper == "PWD" || upper == "OLDPWD" {
        return !value.starts_with(['/', '~']);
    }
    // Counts (`prompt_tokens: 35`); a PIN or a one-time code is digits, and so may a password be.
    let digits_only = value.bytes().all(|b| b.is_ascii_digit());
    if digits_only && !["PIN", "OTP", "PASS", "PW", "CODE"].iter().any(|word| upper.contains(word)) {
        return false;
    }
    // `Authorization: Bearer x` is the authorization rule's (the scheme is not the secret).
    !upper.ends_with("AUTHORIZATION")
        && !TOO_COMMON_ALONE.contains(&upper.as_str())
        && crate::redact::is_secret_name(name)
}

/// `ns:Password` → `Password`.
pub(super) fn local_name(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

/// Words after "the password is" that say something about it rather than being it.
const DESCRIPTIONS: &[&str] = &[
    "a", "an", "the", "in", "on", "at", "not", "no", "too", "very", "also", "set", "wrong", "incorrect", "invalid",
    "correct", "right", "required", "missing", "empty", "blank", "unknown", "same", "different", "ok", "fine", "good",
    "bad", "weak", "strong", "short", "long", "secret", "hidden", "there", "here", "gone", "below", "above", "visible",
    "case", "of", "for", "from", "to", "my", "your", "our", "their", "his", "her", "its", "this", "that", "what",
    "which", "where", "still", "now", "only", "just", "being", "unset", "none", "valid", "saved",
];

/// Prose that describes a secret (`is wrong`, `is stored in vault`, `is being rotated`).
pub(super) fn describes_a_secret(value: &str) -> bool {
    let word = value.trim_end_matches(['.', '!', '?', ')']).to_ascii_lowercase();
    if word.bytes().any(|b| b.is_ascii_digit()) {
        return false;
    }
    word.is_empty()
        || word.starts_with(['/', '~'])
        || DESCRIPTIONS.contains(&word.as_str())
        || ["ed", "ing", "ly", "able", "ible"].iter().any(|end| word.ends_with(end))
}

/// Upper- and lower-case letters and a digit: random base64, not hex, words or paths.
pub(super) fn mixes_cases_and_digits(value: &str) -> bool {
    value.bytes().any(|b| b.is_ascii_uppercase())
        && value.bytes().any(|b| b.is_ascii_lowercase())
        && value.bytes().any(|b| b.is_ascii_digit())
        && !value.contains("//")
}
