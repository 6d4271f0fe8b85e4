//! How tool calls travel to and from one endpoint and model (`llm.tool_mode`): as the API's
//! structured `tools`/`tool_calls`, or as text the model writes (and opsai reads back).
//!
//! `auto` asks the endpoint once: one request offering one tool and asking for a call
//! ([`super::probe::tool_call`]). A structured call back means native; a call written out as text,
//! or none at all, means text. A small model behind a server whose template does not map its calls
//! then gets a prompt it can follow instead of tool schemas it ignores. The answer is remembered
//! per endpoint and model in `$OPSAI_HOME/cache/tool_mode.json`, so only the first request ever
//! pays for the probe; a failed probe is not remembered (the next run asks again).

use std::collections::BTreeMap;
use std::fs::{DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The resolved way tool calls travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCalls {
    /// Schemas in `tools`, calls in `tool_calls`.
    Native,
    /// No schemas sent: the prompt says how to write a call, and opsai reads it from the text.
    Text,
}

/// What the client was told to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSetting {
    Fixed(ToolCalls),
    /// Probe once; remember the answer in this file (`None`: in memory only).
    Auto(Option<PathBuf>),
}

impl Default for ToolSetting {
    fn default() -> Self {
        ToolSetting::Fixed(ToolCalls::Native)
    }
}

/// The cache file's name under `$OPSAI_HOME/cache/`.
pub const CACHE_FILE: &str = "tool_mode.json";

/// The key an endpoint and model are remembered under.
fn key(base_url: &str, model: &str) -> String {
    format!("{} {model}", base_url.trim_end_matches('/'))
}

/// What the cache remembers for `base_url` and `model`.
pub fn cached(cache: &Path, base_url: &str, model: &str) -> Option<ToolCalls> {
    read(cache).get(&key(base_url, model)).copied()
}

fn read(cache: &Path) -> BTreeMap<String, ToolCalls> {
    std::fs::read_to_string(cache).ok().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
}

/// Remembers `found` for `base_url` and `model`, keeping the other entries; written whole to a
/// temporary file and renamed, so a reader never sees half of it.
pub fn remember(cache: &Path, base_url: &str, model: &str, found: ToolCalls) -> std::io::Result<()> {
    let dir = cache.parent().unwrap_or(Path::new("."));
    match DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => return Err(err),
        _ => {}
    }
    let mut entries = read(cache);
    entries.insert(key(base_url, model), found);
    let text = serde_json::to_string_pretty(&entries).map_err(std::io::Error::other)?;
    let temp = dir.join(format!(".{CACHE_FILE}.{}.tmp", std::process::id()));
    let written = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut file| file.write_all(text.as_bytes()).and_then(|()| file.sync_all()))
        .and_then(|()| std::fs::rename(&temp, cache));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// What a probe's answer means: a structured call is native; a call written as text, or no call,
/// is text.
pub(crate) fn from_check(check: &super::probe::ToolCheck) -> ToolCalls {
    match check.call {
        Some(_) if !check.text_form => ToolCalls::Native,
        _ => ToolCalls::Text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::probe::ToolCheck;
    use crate::protocol::ToolCall;

    #[test]
    fn answers_are_remembered_per_endpoint_and_model() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache").join(CACHE_FILE);
        assert_eq!(cached(&cache, "http://127.0.0.1:8081/v1", "qwen"), None);
        remember(&cache, "http://127.0.0.1:8081/v1/", "qwen", ToolCalls::Text).unwrap();
        remember(&cache, "http://127.0.0.1:8081/v1", "llama", ToolCalls::Native).unwrap();
        assert_eq!(cached(&cache, "http://127.0.0.1:8081/v1", "qwen"), Some(ToolCalls::Text));
        assert_eq!(cached(&cache, "http://127.0.0.1:8081/v1", "llama"), Some(ToolCalls::Native));
        assert_eq!(cached(&cache, "http://other:8081/v1", "qwen"), None);
        std::fs::write(&cache, "{not json").unwrap();
        assert_eq!(cached(&cache, "http://127.0.0.1:8081/v1", "qwen"), None, "a broken cache is no answer");
    }

    #[test]
    fn only_a_structured_call_is_native() {
        let call = ToolCall { id: "c".into(), name: "report_status".into(), arguments: serde_json::json!({}) };
        let check = |call: Option<ToolCall>, text_form| ToolCheck { call, text_form, text: String::new() };
        assert_eq!(from_check(&check(Some(call.clone()), false)), ToolCalls::Native);
        assert_eq!(from_check(&check(Some(call), true)), ToolCalls::Text);
        assert_eq!(from_check(&check(None, false)), ToolCalls::Text);
    }
}
