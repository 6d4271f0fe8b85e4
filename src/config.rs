//! `$OPSAI_HOME/config.json`. For now only the `safety` section (user policy rules) is read;
//! the rest of the schema arrives with the agent.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::policy::{PolicyConfig, RuleError};

#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {error}")]
    Read { path: PathBuf, error: std::io::Error },
    #[error("{path}:{line}:{column}: not valid JSON ({message}); fix the file or move it away to start from defaults")]
    Syntax { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{path}: {rule}; fix or remove that rule")]
    Rule { path: PathBuf, rule: RuleError },
}

/// Reads the user's allow/deny rules. A missing file means no rules; the file is never written here.
pub fn load_policy(path: &Path) -> Result<PolicyConfig, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Ok(PolicyConfig::default());
        }
        Err(error) => {
            return Err(ConfigError::Read { path: path.to_owned(), error });
        }
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|err| ConfigError::Syntax {
        path: path.to_owned(),
        line: err.line(),
        column: err.column(),
        message: err.to_string(),
    })?;
    let safety = value.get("safety").cloned().unwrap_or(serde_json::Value::Null);
    PolicyConfig::from_json(&safety).map_err(|rule| ConfigError::Rule { path: path.to_owned(), rule })
}
