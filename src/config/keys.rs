//! `opsai config set|get|unset KEY`: the dotted keys of the schema, how a typed value is read for
//! each, and edits of the file that change only the key named (the user's other keys, unknown ones
//! included, stay as they are). Every edit is checked by loading the edited file exactly as a run
//! would, so a bad value is refused with the message the same value in the file would give.

use std::path::Path;

use serde_json::{Map, Value};

use super::{Config, ConfigError, KeySource, LlmField, file, mask_key};

/// How `config set` reads a value from the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Taken as it is, as a string (URLs, model names, commands, words like `native`).
    Text,
    /// JSON: numbers, `true`/`false`, `null`, lists (`'["-J","bastion"]'`); anything that is not
    /// JSON is passed on as a string, so the schema names what it expected.
    Json,
}

/// Every key `config set` accepts, with how its value is read. A unit test checks that every
/// field of the schema is here.
pub const KEYS: &[(&str, Kind)] = &[
    ("llm.base_url", Kind::Text),
    ("llm.model", Kind::Text),
    ("llm.api_key", Kind::Text),
    ("llm.api_key_env", Kind::Text),
    ("llm.api_key_cmd", Kind::Text),
    ("llm.api_key_keyring", Kind::Text),
    ("llm.timeout", Kind::Json),
    ("llm.local_first_byte_timeout", Kind::Json),
    ("llm.max_tokens", Kind::Json),
    ("llm.widget_max_tokens", Kind::Json),
    ("llm.ca_file", Kind::Text),
    ("llm.temperature", Kind::Json),
    ("llm.top_p", Kind::Json),
    ("llm.top_k", Kind::Json),
    ("llm.tool_mode", Kind::Text),
    ("safety.auto_approve_safe", Kind::Json),
    ("safety.allow", Kind::Json),
    ("safety.deny", Kind::Json),
    ("safety.sandbox", Kind::Text),
    ("safety.sandbox_limits.pids", Kind::Json),
    ("safety.sandbox_limits.memory_mb", Kind::Json),
    ("safety.sandbox_limits.cpu_s", Kind::Json),
    ("safety.sandbox_limits.file_size_mb", Kind::Json),
    ("audit.log_path", Kind::Text),
    ("audit.max_log_size_mb", Kind::Json),
    ("audit.retain_days", Kind::Json),
    ("agent.max_iterations", Kind::Json),
    ("exec.timeout_s", Kind::Json),
    ("exec.capture_head", Kind::Json),
    ("exec.capture_tail", Kind::Json),
    ("files.base_dirs", Kind::Json),
    ("files.max_size_mb", Kind::Json),
    ("files.forbidden", Kind::Json),
    ("files.write_extensions", Kind::Json),
    ("kube.forbidden_actions", Kind::Json),
    ("kube.forbidden_namespaces", Kind::Json),
    ("kube.forbidden_resources", Kind::Json),
    ("kube.contexts", Kind::Json),
    ("ssh.control_persist_s", Kind::Json),
    ("ssh.options", Kind::Json),
];

/// The key's kind, or an error naming the keys it may have meant.
pub fn check_key(key: &str) -> Result<Kind, String> {
    if let Some((_, kind)) = KEYS.iter().find(|(known, _)| *known == key) {
        return Ok(*kind);
    }
    let near = near_matches(key);
    let hint = if near.is_empty() {
        "`opsai config show` prints every key".to_owned()
    } else {
        format!("did you mean {}?", near.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "))
    };
    Err(format!("`{key}` is not a configuration key; {hint}"))
}

/// clap's reader of a KEY argument: refuses unknown keys with [`check_key`]'s message and offers
/// every key to shell completion.
#[derive(Debug, Clone, Copy)]
pub struct KeyParser;

impl clap::builder::TypedValueParser for KeyParser {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        let key = value.to_string_lossy();
        check_key(&key)
            .map(|_| key.into_owned())
            .map_err(|message| clap::Error::raw(clap::error::ErrorKind::InvalidValue, format!("{message}\n")))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(KEYS.iter().map(|(key, _)| clap::builder::PossibleValue::new(*key).hide(false))))
    }
}

/// Keys within a small edit distance, or sharing the last part (`model` → `llm.model`), or under
/// the section named (`exec` → `exec.timeout_s`, …); at most six.
fn near_matches(key: &str) -> Vec<&'static str> {
    let key = key.trim().to_ascii_lowercase();
    let last = key.rsplit('.').next().unwrap_or(&key).to_owned();
    let mut scored: Vec<(usize, &'static str)> = KEYS
        .iter()
        .filter_map(|(known, _)| {
            let known_last = known.rsplit('.').next().unwrap_or(known);
            let distance = strsim::levenshtein(&key, known);
            let score = if known_last == last || known.starts_with(&format!("{key}.")) {
                0
            } else if distance <= 3 || strsim::levenshtein(&last, known_last) <= 2 {
                distance
            } else {
                return None;
            };
            Some((score, *known))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(6).map(|(_, known)| known).collect()
}

/// The JSON value `config set KEY RAW` writes.
pub fn parse_value(kind: Kind, raw: &str) -> Value {
    match kind {
        Kind::Text => Value::String(raw.to_owned()),
        Kind::Json => serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.to_owned())),
    }
}

fn get_in<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(value, |value, part| value.get(part))
}

fn set_in(raw: &mut Map<String, Value>, key: &str, value: Value) {
    let mut parts: Vec<&str> = key.split('.').collect();
    let Some(leaf) = parts.pop() else { return };
    let mut object = raw;
    for part in parts {
        let slot = object.entry(part.to_owned()).or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            // Not an object (a hand-edited file): the section is rebuilt from this key.
            *slot = Value::Object(Map::new());
        }
        let Value::Object(inner) = slot else { return };
        object = inner;
    }
    object.insert(leaf.to_owned(), value);
}

fn remove_in(raw: &mut Map<String, Value>, key: &str) -> bool {
    let mut parts: Vec<&str> = key.split('.').collect();
    let Some(leaf) = parts.pop() else { return false };
    let mut object = raw;
    for part in parts {
        match object.get_mut(part) {
            Some(Value::Object(inner)) => object = inner,
            _ => return false,
        }
    }
    object.remove(leaf).is_some()
}

/// What `config set`/`unset` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    Saved,
    /// `unset` of a key the file does not hold: nothing written.
    NotInFile,
}

impl Config {
    /// `config set KEY RAW`: checks the key, reads the value by its kind, and saves the file with
    /// that one change only if the result loads cleanly.
    /// A new `llm.base_url` on another server drops the file's key settings (a key belongs to its
    /// endpoint); the names of the dropped keys are returned so the user is told.
    pub fn set_key(path: &Path, key: &str, raw: &str) -> Result<(Config, Vec<&'static str>), ConfigError> {
        let kind = check_key(key).map_err(ConfigError::Key)?;
        let value = parse_value(kind, raw);
        let mut dropped = Vec::new();
        let (config, _) = Self::edit(path, |file| {
            let old_url = file
                .get("llm")
                .and_then(|llm| llm.get("base_url"))
                .and_then(Value::as_str)
                .map_or_else(|| super::LlmConfig::default().base_url, str::to_owned);
            if key == LlmField::BaseUrl.key()
                && let Some(new_url) = value.as_str()
                && !super::same_server(&old_url, new_url)
                && let Some(Value::Object(llm)) = file.get_mut("llm")
            {
                for field in ["llm.api_key", "llm.api_key_env", "llm.api_key_cmd", "llm.api_key_keyring"] {
                    let name = field.trim_start_matches("llm.");
                    if llm.get(name).is_some_and(|v| !v.is_null()) {
                        llm.remove(name);
                        dropped.push(field);
                    }
                }
            }
            set_in(file, key, value);
            true
        })?;
        Ok((config, dropped))
    }

    /// `config unset KEY`: removes the key from the file (the default applies again).
    pub fn unset_key(path: &Path, key: &str) -> Result<Edit, ConfigError> {
        check_key(key).map_err(ConfigError::Key)?;
        let (_, edit) = Self::edit(path, |file| remove_in(file, key))?;
        Ok(edit)
    }

    /// Loads the file's JSON (the defaults as the first run writes them when there is none),
    /// applies `change`, checks the result as a load would, and writes it atomically after a backup.
    fn edit(path: &Path, change: impl FnOnce(&mut Map<String, Value>) -> bool) -> Result<(Config, Edit), ConfigError> {
        let current = match file::read_json(path)? {
            Some(value) => value,
            None => {
                let text = Config::default().to_json_text().map_err(|error| file::write_error(path, error))?;
                file::parse(&text, path)?
            }
        };
        // What the file holds now must load, or the edit would be blamed for an older problem.
        let before = Config::from_value(current.clone(), path)?;
        let Value::Object(mut raw) = current else { return Ok((before, Edit::NotInFile)) };
        if !change(&mut raw) {
            return Ok((before, Edit::NotInFile));
        }
        let config = Config::from_value(Value::Object(raw.clone()), path)?;
        let mut text = serde_json::to_string_pretty(&raw).map_err(|error| file::write_error(path, error))?;
        text.push('\n');
        if let Some(dir) = path.parent() {
            file::create_dir_private(dir).map_err(|error| ConfigError::Write { path: path.to_owned(), error })?;
        }
        file::backup(path)?;
        file::write_replace(path, text)?;
        Ok((config, Edit::Saved))
    }

    /// `config get KEY`: the effective value as it is printed (strings bare, the rest as JSON, the
    /// API key masked) and where it comes from.
    pub fn get_key(
        &self,
        key: &str,
        path: &Path,
        opsai_home: &Path,
        user_home: Option<&Path>,
    ) -> Result<(String, String), ConfigError> {
        check_key(key).map_err(ConfigError::Key)?;
        if key == LlmField::ApiKey.key() {
            let shown = self.llm.api_key.as_deref().map_or_else(|| "null".to_owned(), mask_key);
            let source = match self.key_source() {
                KeySource::File => format!("the config file {}", path.display()),
                other => other.to_string(),
            };
            return Ok((shown, source));
        }
        let mut effective = serde_json::to_value(self).map_err(|error| file::write_error(path, error))?;
        if let Some(audit) = effective.get_mut("audit").and_then(Value::as_object_mut) {
            let log = self.audit_log_path(opsai_home, user_home);
            audit.insert("log_path".to_owned(), Value::String(log.display().to_string()));
        }
        let value = get_in(&effective, key).cloned().unwrap_or(Value::Null);
        let shown = match value {
            Value::String(text) => text,
            other => other.to_string(),
        };
        let source = if let Some(o) = self.overrides().iter().find(|o| o.field.key() == key) {
            o.source.clone()
        } else if get_in(&Value::Object(self.raw.clone()), key).is_some_and(|v| !v.is_null()) {
            format!("the config file {}", path.display())
        } else {
            "the default".to_owned()
        };
        Ok((shown, source))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn leaves(value: &Value, prefix: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(fields) if !fields.is_empty() => {
                for (name, field) in fields {
                    let key = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
                    leaves(field, &key, out);
                }
            }
            _ => out.push(prefix.to_owned()),
        }
    }

    #[test]
    fn every_schema_field_is_a_key() {
        let mut config = Config::default();
        // The optional fields a default file leaves out, set so they serialize.
        config.llm.ca_file = Some("/ca.pem".to_owned());
        config.llm.api_key_env = Some("K".to_owned());
        config.llm.api_key_cmd = Some("k".to_owned());
        config.llm.api_key_keyring = Some("k".to_owned());
        let mut all = Vec::new();
        leaves(&serde_json::to_value(&config).unwrap(), "", &mut all);
        let known: Vec<&str> = KEYS.iter().map(|(key, _)| *key).collect();
        let missing: Vec<&String> = all.iter().filter(|key| !known.contains(&key.as_str())).collect();
        assert!(missing.is_empty(), "schema fields missing from KEYS: {missing:?}");
        assert_eq!(all.len(), KEYS.len(), "KEYS names a field the schema does not have");
    }

    #[test]
    fn unknown_keys_name_near_matches() {
        let err = check_key("model").unwrap_err();
        assert!(err.contains("`llm.model`"), "{err}");
        let err = check_key("exec.timeout").unwrap_err();
        assert!(err.contains("`exec.timeout_s`"), "{err}");
        let err = check_key("safety.sandbox_limits.memory").unwrap_err();
        assert!(err.contains("`safety.sandbox_limits.memory_mb`"), "{err}");
        let err = check_key("zzzzzzzzzz").unwrap_err();
        assert!(err.contains("opsai config show"), "{err}");
    }

    #[test]
    fn values_are_read_by_kind() {
        assert_eq!(parse_value(Kind::Json, "30"), Value::from(30));
        assert_eq!(parse_value(Kind::Json, "abc"), Value::from("abc"));
        assert_eq!(parse_value(Kind::Json, r#"["-J","b"]"#), serde_json::json!(["-J", "b"]));
        assert_eq!(parse_value(Kind::Text, "123"), Value::from("123"));
    }

    #[test]
    fn set_and_unset_touch_only_their_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, r#"{"mine": {"x": 1}, "exec": {"timeout_s": 5}}"#).unwrap();
        let (config, dropped) = Config::set_key(&path, "safety.sandbox_limits.memory_mb", "512").unwrap();
        assert_eq!(config.safety.sandbox_limits.memory_mb, 512);
        assert!(dropped.is_empty());
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            saved,
            serde_json::json!({"mine": {"x": 1}, "exec": {"timeout_s": 5}, "safety": {"sandbox_limits": {"memory_mb": 512}}})
        );
        assert_eq!(Config::unset_key(&path, "exec.timeout_s").unwrap(), Edit::Saved);
        assert_eq!(Config::unset_key(&path, "exec.timeout_s").unwrap(), Edit::NotInFile);
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(saved["exec"], serde_json::json!({}));
        let err = Config::set_key(&path, "exec.timeout_s", "0").unwrap_err().to_string();
        assert!(err.contains("`exec.timeout_s` must be at least 1, not 0"), "{err}");
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after, saved, "a refused value changes nothing");
    }

    #[test]
    fn a_base_url_on_another_server_drops_the_key_settings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        let file = r#"{"llm": {"base_url": "https://api.openai.com/v1", "api_key_cmd": "pass show openai"}}"#;
        std::fs::write(&path, file).unwrap();
        let (config, dropped) = Config::set_key(&path, "llm.base_url", "https://api.openai.com/v2").unwrap();
        assert!(dropped.is_empty(), "the same server keeps its key");
        assert_eq!(config.llm.api_key_cmd.as_deref(), Some("pass show openai"));
        let (config, dropped) = Config::set_key(&path, "llm.base_url", "http://127.0.0.1:9/v1").unwrap();
        assert_eq!(dropped, ["llm.api_key_cmd"]);
        assert_eq!(config.llm.api_key_cmd, None);
        let saved = std::fs::read_to_string(&path).unwrap();
        assert!(!saved.contains("api_key_cmd") && saved.contains("127.0.0.1:9"), "{saved}");
    }
}
