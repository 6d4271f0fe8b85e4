//! Ansible's host pattern language, evaluated as Ansible evaluates it: the pattern is split into
//! terms (`,` or `:`), plain terms are united in order, then `&` terms intersect, then `!` terms
//! exclude. A term is a host or group name, a glob (`web-*`), a `~regex` (matched from the start of
//! the name) or any of those with a `[i]`/`[i:j]` subscript. `@group` is opsai's own: a group only.
//!
//! One difference, on purpose: a term that matches nothing is an error, where Ansible warns and goes
//! on (a mistyped `!prod` would otherwise widen the selection instead of narrowing it).

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::{Regex, RegexBuilder};

use super::inventory::Resolved;

/// Bounds a user regex's compiled size (the regex crate is linear-time; this bounds memory).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

static TERMS: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(?:[^\s:\[\]]|\[[^\]]*\])+").ok());
static SUBSCRIPT: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^(.+)\[(?:(-?[0-9]+)|([0-9]+)([:-])([0-9]*))\]$").ok());

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PatternError {
    /// The pattern cannot be read at all.
    Invalid(String),
    /// This term (as written) matches no host.
    Unmatched(String),
}

/// The indexes into `inventory.hosts` that `pattern` selects, in inventory order, each once.
pub(crate) fn evaluate(pattern: &str, inventory: &Resolved) -> Result<Vec<usize>, PatternError> {
    let terms = split(pattern)?;
    let (mut regular, mut narrowing): (Vec<&str>, Vec<&str>) =
        terms.iter().map(String::as_str).partition(|t| !t.starts_with(['&', '!']));
    if regular.is_empty() {
        regular.push("all");
    }
    // Ansible's order: every union first, then the intersections, then the exclusions.
    narrowing.sort_by_key(|term| term.starts_with('!'));
    let mut selected: Vec<usize> = Vec::new();
    let mut seen = HashSet::new();
    for term in regular {
        // Ansible's shortcut: a plain term that is exactly a host's name is that host (before
        // any group of the same name); a `&`/`!` term looks at groups first.
        let exact = inventory.hosts.iter().position(|h| h.name == term).map(|host| vec![host]);
        let found = match exact {
            Some(found) => found,
            None => matches(term, inventory)?,
        };
        for host in found {
            if seen.insert(host) {
                selected.push(host);
            }
        }
    }
    for term in narrowing {
        let these: HashSet<usize> = matches(&term[1..], inventory)?.into_iter().collect();
        if term.starts_with('&') {
            selected.retain(|host| these.contains(host));
        } else {
            selected.retain(|host| !these.contains(host));
        }
    }
    Ok(selected)
}

/// Ansible's `split_host_pattern`: commas if there are any; else one address (`host:port`, IPv6)
/// stays whole; else `:` and whitespace separate, keeping `[…]` whole.
pub(crate) fn split(pattern: &str) -> Result<Vec<String>, PatternError> {
    let terms: Vec<String> = if pattern.contains(',') {
        pattern.split(',').map(str::to_owned).collect()
    } else if is_address(pattern.trim()) {
        vec![pattern.to_owned()]
    } else {
        let Some(terms) = TERMS.as_ref() else { return Err(PatternError::Invalid("internal pattern error".into())) };
        terms.find_iter(pattern).map(|m| m.as_str().to_owned()).collect()
    };
    let terms: Vec<String> = terms.iter().map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).collect();
    if terms.is_empty() {
        return Err(PatternError::Invalid("it names no host or group".into()));
    }
    if let Some(bare) = terms.iter().find(|t| matches!(t.as_str(), "&" | "!" | "@" | "~" | "&@" | "!@")) {
        return Err(PatternError::Invalid(format!("`{bare}` must be followed by a name or pattern")));
    }
    Ok(terms)
}

/// `name:port`, `[v6]:port` or a bare IPv6 address: a colon that does not separate terms.
fn is_address(text: &str) -> bool {
    let hostish = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if let Some((name, port)) = text.rsplit_once(':')
        && hostish(name)
        && !port.is_empty()
        && port.chars().all(|c| c.is_ascii_digit())
    {
        return true;
    }
    let inner = text.strip_prefix('[').and_then(|t| t.split_once(']')).map_or(text, |(inner, _)| inner);
    inner.matches(':').count() >= 2 && inner.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
}

/// The hosts one term (without its `&`/`!`) matches, in the order Ansible gives them.
fn matches(term: &str, inventory: &Resolved) -> Result<Vec<usize>, PatternError> {
    let found = if let Some(groups) = term.strip_prefix('@') {
        let matcher = glob(groups, term)?;
        from_groups(inventory, &matcher)
    } else if let Some(regex) = term.strip_prefix('~') {
        let matcher = compile(&format!("^(?:{regex})"), term)?;
        let mut found = from_groups(inventory, &matcher);
        found.extend(from_hosts(inventory, &matcher));
        found
    } else {
        let (expr, subscript) = split_subscript(term);
        let matcher = glob(expr, term)?;
        let mut found = from_groups(inventory, &matcher);
        if found.is_empty() || expr.contains(['.', '?', '*', '[']) {
            found.extend(from_hosts(inventory, &matcher));
        }
        let mut seen = HashSet::new();
        found.retain(|host| seen.insert(*host));
        apply_subscript(found, subscript)
    };
    let mut seen = HashSet::new();
    let found: Vec<usize> = found.into_iter().filter(|host| seen.insert(*host)).collect();
    if found.is_empty() {
        return Err(PatternError::Unmatched(term.to_owned()));
    }
    Ok(found)
}

fn from_groups(inventory: &Resolved, matcher: &Regex) -> Vec<usize> {
    inventory
        .groups
        .iter()
        .filter(|(name, _)| matcher.is_match(name))
        .flat_map(|(_, hosts)| hosts.iter().copied())
        .collect()
}

fn from_hosts(inventory: &Resolved, matcher: &Regex) -> Vec<usize> {
    inventory.defined.iter().copied().filter(|&host| matcher.is_match(&inventory.hosts[host].name)).collect()
}

#[derive(Clone, Copy)]
enum Subscript {
    One(i64),
    Range(usize, Option<usize>),
}

fn split_subscript(term: &str) -> (&str, Option<Subscript>) {
    let Some(caps) = SUBSCRIPT.as_ref().and_then(|re| re.captures(term)) else { return (term, None) };
    let expr = caps.get(1).map_or(term, |m| m.as_str());
    if let Some(index) = caps.get(2).and_then(|m| m.as_str().parse().ok()) {
        return (expr, Some(Subscript::One(index)));
    }
    let start = caps.get(3).and_then(|m| m.as_str().parse().ok());
    let end = caps.get(5).map(|m| m.as_str()).filter(|s| !s.is_empty()).and_then(|s| s.parse().ok());
    match start {
        // Python's `if end:` treats `[i:0]` as `[i]`.
        Some(start) if end == Some(0) => (expr, i64::try_from(start).ok().map(Subscript::One)),
        Some(start) => (expr, Some(Subscript::Range(start, end))),
        None => (term, None),
    }
}

/// Python's list indexing and inclusive `[start:end]` slicing, as Ansible applies them.
fn apply_subscript(hosts: Vec<usize>, subscript: Option<Subscript>) -> Vec<usize> {
    let len = hosts.len();
    match subscript {
        None => hosts,
        Some(Subscript::One(index)) => {
            let at = if index < 0 { i64::try_from(len).unwrap_or(i64::MAX) + index } else { index };
            usize::try_from(at).ok().and_then(|at| hosts.get(at).copied()).into_iter().collect()
        }
        Some(Subscript::Range(start, end)) => {
            let end = end.map_or(len, |end| end.saturating_add(1).min(len));
            hosts.get(start.min(end)..end).map(<[usize]>::to_vec).unwrap_or_default()
        }
    }
}

fn compile(source: &str, term: &str) -> Result<Regex, PatternError> {
    RegexBuilder::new(source)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|error| PatternError::Invalid(format!("`{term}` is not a valid pattern: {error}")))
}

fn glob(pattern: &str, term: &str) -> Result<Regex, PatternError> {
    compile(&glob_to_regex(pattern), term)
}

/// Whether `name` matches the shell glob `pattern` (`*`, `?`, `[abc]`, `[!abc]`), whole.
pub(crate) fn glob_matches(pattern: &str, name: &str) -> bool {
    compile(&glob_to_regex(pattern), pattern).is_ok_and(|re| re.is_match(name))
}

/// Python's `fnmatch.translate`, for Rust's regex syntax.
fn glob_to_regex(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::from("^(?s:");
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '[' => {
                let mut j = i;
                if chars.get(j) == Some(&'!') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    out.push_str("\\[");
                    continue;
                }
                let mut class = String::from("[");
                for (k, &ch) in chars[i..j].iter().enumerate() {
                    match ch {
                        '!' if k == 0 => class.push('^'),
                        '^' if k == 0 => class.push_str("\\^"),
                        '\\' | '[' | ']' | '&' | '~' => {
                            class.push('\\');
                            class.push(ch);
                        }
                        _ => class.push(ch),
                    }
                }
                class.push(']');
                out.push_str(&class);
                i = j + 1;
            }
            other => out.push_str(&regex::escape(&other.to_string())),
        }
    }
    out.push_str(")$");
    out
}

#[cfg(test)]
#[path = "pattern_tests.rs"]
mod tests;
