//! `$OPSAI_HOME/config.json` (DESIGN §4): the typed schema with defaults, first-run creation,
//! env overrides, atomic saves that keep unknown keys, `config show`/`path`, and the `set-llm`
//! wizard.
//!
//! Loading never rewrites the file. A file that is not valid JSON is an error naming its path, line
//! and column; a bad value is an error naming its key. Env overrides (`OPSAI_BASE_URL`,
//! `OPSAI_MODEL`, `OPSAI_API_KEY`, `OPENAI_API_KEY`) change the loaded values only and are undone
//! when the config is saved.

pub(crate) mod file;
pub mod key_source;
pub mod keys;
mod schema;
pub mod scripted;
mod show;
pub mod wizard;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::policy::{PolicyConfig, RuleError};

pub use key_source::KeySource;
pub use schema::{
    AgentConfig, AuditConfig, ExecConfig, FilesConfig, KubeConfig, LlmConfig, SafetyConfig, SandboxLimits,
    SandboxSetting, SshConfig, ToolMode, check_base_url, expand_path,
};
pub use show::{mask_key, show, write_path};

/// The config file's name inside `$OPSAI_HOME`.
pub(crate) const FILE_NAME: &str = "config.json";

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    #[error("{path}:{line}:{column}: not valid JSON ({message}); fix the file or move it away to start from defaults")]
    Syntax { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{path}: {rule}; fix or remove that rule")]
    Rule { path: PathBuf, rule: RuleError },
    #[error("{path}: `{key}` {message}; fix it, or remove `{key}` to use the default")]
    Invalid { path: PathBuf, key: String, message: String },
    #[error("{var} {message}; fix or unset {var}")]
    Env { var: &'static str, message: String },
    #[error("cannot write {path}: {error}")]
    Write { path: PathBuf, error: std::io::Error },
    #[error(
        "`opsai config set-llm` is interactive and needs a terminal; run it in one, or set \
         OPSAI_BASE_URL, OPSAI_MODEL and OPSAI_API_KEY, or edit the config file (`opsai config path`)"
    )]
    NoTerminal,
    #[error("the set-llm prompt failed: {0}")]
    Prompt(std::io::Error),
    #[error("cannot get the API key from {from}: {message}")]
    ApiKey { from: String, message: String },
    #[error("{0}")]
    Key(String),
}

/// Reads the user's allow/deny rules. A missing file means no rules; the file is never written here
/// and only the `safety` section is looked at.
pub(crate) fn load_policy(path: &Path) -> Result<PolicyConfig, ConfigError> {
    let Some(raw) = file::read_json(path)? else {
        return Ok(PolicyConfig::default());
    };
    let safety = raw.get("safety").cloned().unwrap_or(Value::Null);
    PolicyConfig::from_json(&safety).map_err(|rule| ConfigError::Rule { path: path.to_owned(), rule })
}

/// The LLM values that env variables and `--model`/`--base-url` may override.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmField {
    BaseUrl,
    Model,
    ApiKey,
}

impl LlmField {
    pub fn key(self) -> &'static str {
        match self {
            LlmField::BaseUrl => "llm.base_url",
            LlmField::Model => "llm.model",
            LlmField::ApiKey => "llm.api_key",
        }
    }
}

/// A value that does not come from the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    pub field: LlmField,
    /// Where it came from: `OPSAI_MODEL`, `--model`, ….
    pub source: String,
    file_value: Option<String>,
    value: String,
}

/// The whole configuration. Sections are public; the file's original JSON (for unknown keys) and
/// the overrides are kept aside so [`Config::save`] writes back what the user wrote plus changes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Config {
    pub llm: LlmConfig,
    pub safety: SafetyConfig,
    pub audit: AuditConfig,
    pub agent: AgentConfig,
    pub exec: ExecConfig,
    pub files: FilesConfig,
    pub kube: KubeConfig,
    pub ssh: SshConfig,
    #[serde(skip)]
    raw: Map<String, Value>,
    #[serde(skip)]
    overrides: Vec<Override>,
}

impl Config {
    /// Loads `<opsai_home>/config.json`; on first run creates it with the defaults (the directory
    /// 0700, the file 0600, written atomically). Returns the config and the file's path. Env
    /// overrides are not applied here: see [`Config::apply_env`].
    pub(crate) fn load_or_create(opsai_home: &Path) -> Result<(Config, PathBuf), ConfigError> {
        let path = opsai_home.join(FILE_NAME);
        match file::read_json(&path)? {
            Some(raw) => Ok((Self::from_value(raw, &path)?, path)),
            None => {
                let config = Config::default();
                file::create_dir_private(opsai_home)
                    .map_err(|error| ConfigError::Write { path: path.clone(), error })?;
                let text = config.to_json_text().map_err(|error| file::write_error(&path, error))?;
                if file::write_new(&path, &text)? {
                    return Ok((config, path));
                }
                // Another opsai created it meanwhile: use that one.
                let raw = file::read_json(&path)?.unwrap_or(Value::Null);
                Ok((Self::from_value(raw, &path)?, path))
            }
        }
    }

    /// Loads `<opsai_home>/config.json` without ever creating or writing it: defaults when it is missing.
    pub fn load(opsai_home: &Path) -> Result<Config, ConfigError> {
        let path = opsai_home.join(FILE_NAME);
        match file::read_json(&path)? {
            Some(raw) => Self::from_value(raw, &path),
            None => Ok(Config::default()),
        }
    }

    /// The user's own `files.forbidden` entries, which the sandbox makes unreadable too (the default
    /// entries are system directories that read-only commands need).
    pub(crate) fn sandbox_forbidden(&self, opsai_home: &Path, user_home: Option<&Path>) -> Vec<PathBuf> {
        let defaults = schema::default_forbidden();
        self.files
            .forbidden
            .iter()
            .filter(|entry| !defaults.contains(entry))
            .map(|entry| expand_path(entry, opsai_home, user_home))
            .collect()
    }

    #[cfg(test)]
    /// Parses and checks the text of a config file; `path` is only used in errors.
    pub(crate) fn from_json_text(text: &str, path: &Path) -> Result<Config, ConfigError> {
        Self::from_value(file::parse(text, path)?, path)
    }

    fn from_value(raw: Value, path: &Path) -> Result<Config, ConfigError> {
        let invalid =
            |key: &str, message: String| ConfigError::Invalid { path: path.to_owned(), key: key.to_owned(), message };
        let Value::Object(raw) = raw else {
            return Err(invalid("(top level)", "must be a JSON object such as {\"llm\": {…}}".to_owned()));
        };
        let safety_value = raw.get("safety").cloned().unwrap_or(Value::Null);
        PolicyConfig::from_json(&safety_value).map_err(|rule| ConfigError::Rule { path: path.to_owned(), rule })?;
        let config = Config {
            llm: file::section(&raw, "llm").map_err(|(k, m)| invalid(&k, m))?,
            safety: file::section(&raw, "safety").map_err(|(k, m)| invalid(&k, m))?,
            audit: file::section(&raw, "audit").map_err(|(k, m)| invalid(&k, m))?,
            agent: file::section(&raw, "agent").map_err(|(k, m)| invalid(&k, m))?,
            exec: file::section(&raw, "exec").map_err(|(k, m)| invalid(&k, m))?,
            files: file::section(&raw, "files").map_err(|(k, m)| invalid(&k, m))?,
            kube: file::section(&raw, "kube").map_err(|(k, m)| invalid(&k, m))?,
            ssh: file::section(&raw, "ssh").map_err(|(k, m)| invalid(&k, m))?,
            raw,
            overrides: Vec::new(),
        };
        schema::validate_sections(&config.llm, &config.audit, &config.agent, &config.exec, &config.files)
            .and_then(|()| config.safety.sandbox_limits.validate())
            .map_err(|(key, message)| invalid(key, message))?;
        Ok(config)
    }

    /// Applies `OPSAI_BASE_URL`, `OPSAI_MODEL` and `OPSAI_API_KEY` (empty values are ignored).
    /// `OPENAI_API_KEY` is a fallback only: used when no key is set otherwise and the endpoint is
    /// `api.openai.com`, so an OpenAI key is never sent to another provider.
    pub(crate) fn apply_env(&mut self, lookup: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        let get = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        if let Some(url) = get("OPSAI_BASE_URL") {
            let url = url.trim().trim_end_matches('/').to_owned();
            check_base_url(&url).map_err(|message| ConfigError::Env { var: "OPSAI_BASE_URL", message })?;
            self.set_override(LlmField::BaseUrl, url, "OPSAI_BASE_URL");
        }
        if let Some(model) = get("OPSAI_MODEL") {
            self.set_override(LlmField::Model, model.trim().to_owned(), "OPSAI_MODEL");
        }
        if let Some(key) = get("OPSAI_API_KEY") {
            self.set_override(LlmField::ApiKey, key.trim().to_owned(), "OPSAI_API_KEY");
        } else if let Some(key) = get("OPENAI_API_KEY")
            // Any key the file names (in clear, a variable, a command, the keyring) comes first.
            && self.llm.file_key_source() == KeySource::None
            && is_openai(&self.llm.base_url)
        {
            self.set_override(LlmField::ApiKey, key.trim().to_owned(), "OPENAI_API_KEY");
        }
        Ok(())
    }

    /// [`Config::apply_env`] with the process environment.
    pub(crate) fn apply_process_env(&mut self) -> Result<(), ConfigError> {
        self.apply_env(|name| std::env::var(name).ok())
    }

    /// Sets an LLM value that must not be saved (env variable, `--model`, `--base-url`); `source`
    /// is shown by `config show`. A later [`Config::save`] writes the file's value back unless the
    /// field was changed again in between.
    pub(crate) fn set_override(&mut self, field: LlmField, value: String, source: &str) {
        let previous = self.llm_field(field);
        self.set_llm_field(field, Some(value.clone()));
        match self.overrides.iter_mut().find(|o| o.field == field) {
            Some(existing) => {
                existing.source = source.to_owned();
                existing.value = value;
            }
            None => self.overrides.push(Override { field, source: source.to_owned(), file_value: previous, value }),
        }
    }

    /// Whether this run's endpoint is another server than the file's (scheme, host and port differ).
    pub(crate) fn endpoint_moved(&self) -> bool {
        self.overrides.iter().any(|o| {
            o.field == LlmField::BaseUrl && o.file_value.as_deref().is_some_and(|file| !same_server(file, &o.value))
        })
    }

    /// The values that do not come from the file, in the order they were applied.
    pub fn overrides(&self) -> &[Override] {
        &self.overrides
    }

    /// The user's allow/deny rules (already checked when the file was loaded).
    pub fn policy(&self) -> Result<PolicyConfig, RuleError> {
        let safety = serde_json::json!({ "allow": self.safety.allow, "deny": self.safety.deny });
        PolicyConfig::from_json(&safety)
    }

    /// Where the audit log goes: `audit.log_path` (a relative one under `state_dir`), else
    /// `<state_dir>/audit.log`.
    pub(crate) fn audit_log_path(&self, state_dir: &Path, user_home: Option<&Path>) -> PathBuf {
        match &self.audit.log_path {
            Some(raw) => expand_path(raw, state_dir, user_home),
            None => state_dir.join("audit.log"),
        }
    }

    /// Writes the config to `path` atomically (temp file + rename, mode 0600), keeping the keys
    /// opsai does not know and the file's own values for overridden fields, after copying the
    /// previous file to `config.json.bak`.
    pub fn save(&self, path: &Path) -> Result<(), ConfigError> {
        let text = self.to_json_text().map_err(|error| file::write_error(path, error))?;
        file::backup(path)?;
        file::write_replace(path, &text)
    }

    /// The JSON that [`Config::save`] writes.
    pub(crate) fn to_json_text(&self) -> serde_json::Result<String> {
        let mut merged = Value::Object(self.raw.clone());
        let typed = self.as_file_value()?;
        // Fields left out when unset would survive the merge from the old file: drop them there.
        if let (Some(old), Some(new)) =
            (merged.get_mut("llm").and_then(Value::as_object_mut), typed.get("llm").and_then(Value::as_object))
        {
            for field in ["api_key_env", "api_key_cmd", "api_key_keyring", "ca_file"] {
                if !new.contains_key(field) {
                    old.remove(field);
                }
            }
        }
        file::merge(&mut merged, typed);
        let mut text = serde_json::to_string_pretty(&merged)?;
        text.push('\n');
        Ok(text)
    }

    /// The typed values as they belong in the file: overrides that were not changed since are
    /// replaced by the file's own values.
    fn as_file_value(&self) -> serde_json::Result<Value> {
        let mut config = self.clone();
        for o in &self.overrides {
            if config.llm_field(o.field).as_deref() == Some(o.value.as_str()) {
                config.set_llm_field(o.field, o.file_value.clone());
            }
        }
        serde_json::to_value(&config)
    }

    fn llm_field(&self, field: LlmField) -> Option<String> {
        match field {
            LlmField::BaseUrl => Some(self.llm.base_url.clone()),
            LlmField::Model => Some(self.llm.model.clone()),
            LlmField::ApiKey => self.llm.api_key.clone(),
        }
    }

    fn set_llm_field(&mut self, field: LlmField, value: Option<String>) {
        match (field, value) {
            (LlmField::BaseUrl, Some(value)) => self.llm.base_url = value,
            (LlmField::Model, Some(value)) => self.llm.model = value,
            (LlmField::ApiKey, value) => self.llm.api_key = value,
            (LlmField::BaseUrl | LlmField::Model, None) => {}
        }
    }
}

/// Whether two endpoint URLs name the same server: the URL standard's origin (scheme, host, port,
/// a scheme's default port spelled or not); text that is no URL matches only itself.
pub(crate) fn same_server(a: &str, b: &str) -> bool {
    match (reqwest::Url::parse(a.trim()), reqwest::Url::parse(b.trim())) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => a.trim() == b.trim(),
    }
}

fn is_openai(base_url: &str) -> bool {
    let host = base_url.split("://").nth(1).unwrap_or("").split(['/', ':']).next().unwrap_or("");
    host.eq_ignore_ascii_case("api.openai.com")
}

#[cfg(test)]
mod tests;
