//! Ansible's INI inventory format, read as its `ini` plugin reads it: `[group]`, `[group:vars]`,
//! `[group:children]`, hosts with ranges, `:port` and inline `key=value` vars.

use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::error::HostsError;
use super::inventory::Inventory;
use super::range;

static SECTION: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$").ok());
static GROUP_NAME: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^([^:\]\s]+)\s*(?:#.*)?$").ok());

enum State {
    Hosts,
    Vars,
    Children,
}

/// Reads `text` (the file at `path`) into `inventory`.
pub(crate) fn read(path: &Path, text: &str, inventory: &mut Inventory) -> Result<(), HostsError> {
    let fail = |line: usize, message: String| HostsError::Malformed { path: path.to_owned(), line, message };
    let (Some(section), Some(group_name)) = (SECTION.as_ref(), GROUP_NAME.as_ref()) else {
        return Err(fail(0, "internal error: the INI patterns did not compile".into()));
    };
    let mut group = "ungrouped".to_owned();
    let mut state = State::Hosts;
    // Groups named by `[g:vars]` or a `[p:children]` line that no `[g]`/`[g:children]` declares
    // (yet): an error at the end, as in Ansible, with the line that named them.
    // Groups that exist already (`all`, `ungrouped`, an earlier file's) count as declared.
    let mut declared: HashMap<String, bool> = inventory.group_names().into_iter().map(|name| (name, true)).collect();
    let mut pending: Vec<(String, usize, String)> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(caps) = section.captures(line) {
            group = caps.get(1).map_or("", |m| m.as_str()).to_owned();
            let kind = caps.get(2).map_or("hosts", |m| m.as_str());
            state = match kind {
                "hosts" => State::Hosts,
                "vars" => State::Vars,
                "children" => State::Children,
                other => {
                    return Err(fail(
                        number,
                        format!("section [{group}:{other}] has an unknown type `{other}` (hosts, vars or children)"),
                    ));
                }
            };
            inventory.group(&group);
            match state {
                State::Vars => {
                    if !declared.contains_key(&group) {
                        pending.push((
                            group.clone(),
                            number,
                            format!("section [{group}:vars] is for a group no section declares"),
                        ));
                    }
                }
                _ => {
                    declared.insert(group.clone(), true);
                }
            }
            continue;
        }
        if line.starts_with('[') && line.ends_with(']') {
            return Err(fail(
                number,
                format!("invalid section `{line}`: no spaces or other characters may follow the group name"),
            ));
        }
        match state {
            State::Hosts => {
                let tokens = split_words(line).map_err(|message| fail(number, message))?;
                let Some((first, assignments)) = tokens.split_first() else { continue };
                let (pattern, port) = range::split_port(first).map_err(|message| fail(number, message))?;
                let names = range::expand(&pattern).map_err(|message| fail(number, message))?;
                let mut vars = Vec::new();
                for token in assignments {
                    let Some((key, value)) = token.split_once('=') else {
                        return Err(fail(number, format!("expected a key=value host variable, got `{token}`")));
                    };
                    vars.push((key.to_owned(), parse_value(value)));
                }
                for name in names {
                    inventory.add_host(&group, &name);
                    if let Some(port) = port {
                        inventory.set_host_var(&name, "ansible_port", Value::from(port));
                    }
                    for (key, value) in &vars {
                        inventory.set_host_var(&name, key, value.clone());
                    }
                }
            }
            State::Vars => {
                let Some((key, value)) = line.split_once('=') else {
                    return Err(fail(number, format!("expected key=value in [{group}:vars], got `{line}`")));
                };
                inventory.set_group_var(&group, key.trim(), parse_value(value.trim()));
            }
            State::Children => {
                let Some(child) = group_name.captures(line).and_then(|caps| caps.get(1)) else {
                    return Err(fail(number, format!("`{line}` is not a group name")));
                };
                let child = child.as_str();
                if !declared.contains_key(child) {
                    pending.push((
                        child.to_owned(),
                        number,
                        format!("section [{group}:children] names the undeclared group {child}"),
                    ));
                }
                inventory.add_child(&group, child).map_err(|message| fail(number, message))?;
            }
        }
    }
    if let Some((_, line, message)) = pending.into_iter().find(|(name, _, _)| !declared.contains_key(name)) {
        return Err(fail(line, format!("{message}; add a [group] section for it")));
    }
    Ok(())
}

/// An INI value as Ansible's `literal_eval` reads it: numbers and booleans typed, quotes removed.
fn parse_value(text: &str) -> Value {
    if let Ok(number) = text.parse::<i64>() {
        return Value::from(number);
    }
    match text {
        "True" => return Value::Bool(true),
        "False" => return Value::Bool(false),
        _ => {}
    }
    for quote in ['"', '\''] {
        if text.len() >= 2 && text.starts_with(quote) && text.ends_with(quote) {
            return Value::String(text[1..text.len() - 1].to_owned());
        }
    }
    Value::String(text.to_owned())
}

/// POSIX shell words (Python's `shlex.split(line, comments=True)`): quotes, backslashes, and a
/// `#` that starts a word starting a comment.
fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("no closing quotation".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("no closing quotation".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("no closing quotation".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err("no escaped character".into()),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
#[path = "ini_tests.rs"]
mod tests;
