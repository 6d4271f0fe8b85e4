//! How tool calls travel to and from one endpoint and model (`llm.tool_mode`): as the API's
//! structured `tools`/`tool_calls`, or as text the model writes (and opsai reads back).
//!
//! `auto` learns from what the endpoint actually does and remembers it per endpoint and model in
//! `$OPSAI_HOME/cache/tool_mode.json`, so the next process takes the path that works:
//! - a reply that wrote a call out as text although the schemas were sent natively (a server whose
//!   chat template does not map the model's calls) makes every mode use text calls;
//! - a widget turn offered `propose_command` natively that answered with the command as text
//!   instead (small models do) makes the widget ask for the command as text, without schemas;
//!
//! Nothing is probed behind the user's back: learning costs no request. Until something is
//! learned, calls are native (what every endpoint that takes `tools` understands).

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
    /// Learn from the replies; remember in this file (`None`: in memory only).
    Auto(Option<PathBuf>),
}

/// Which conversation a finding is about: every mode's calls, or the widget's proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Calls,
    Widget,
}

impl Default for ToolSetting {
    fn default() -> Self {
        ToolSetting::Fixed(ToolCalls::Native)
    }
}

/// The cache file's name under `$OPSAI_HOME/cache/`.
pub const CACHE_FILE: &str = "tool_mode.json";

/// The key an endpoint and model are remembered under.
fn key(base_url: &str, model: &str, purpose: Purpose) -> String {
    let base = format!("{} {model}", base_url.trim_end_matches('/'));
    match purpose {
        Purpose::Calls => base,
        Purpose::Widget => format!("{base} (widget)"),
    }
}

/// What the cache remembers for `base_url` and `model`: for the widget, its own finding first,
/// then what holds for every mode.
pub fn cached(cache: &Path, base_url: &str, model: &str, purpose: Purpose) -> Option<ToolCalls> {
    let entries = read(cache);
    let calls = entries.get(&key(base_url, model, Purpose::Calls)).copied();
    match purpose {
        Purpose::Calls => calls,
        Purpose::Widget => entries.get(&key(base_url, model, Purpose::Widget)).copied().or(calls),
    }
}

fn read(cache: &Path) -> BTreeMap<String, ToolCalls> {
    std::fs::read_to_string(cache).ok().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
}

/// Remembers `found` for `base_url` and `model`, keeping the other entries; written whole to a
/// temporary file and renamed, so a reader never sees half of it.
pub fn remember(cache: &Path, base_url: &str, model: &str, purpose: Purpose, found: ToolCalls) -> std::io::Result<()> {
    let dir = cache.parent().unwrap_or(Path::new("."));
    match DirBuilder::new().recursive(true).mode(0o700).create(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => return Err(err),
        _ => {}
    }
    let mut entries = read(cache);
    if entries.get(&key(base_url, model, purpose)) == Some(&found) {
        return Ok(());
    }
    entries.insert(key(base_url, model, purpose), found);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_remembered_per_endpoint_and_model() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache").join(CACHE_FILE);
        let url = "http://127.0.0.1:8081/v1";
        let (calls, widget) = (Purpose::Calls, Purpose::Widget);
        assert_eq!(cached(&cache, url, "qwen", calls), None);
        remember(&cache, "http://127.0.0.1:8081/v1/", "qwen", widget, ToolCalls::Text).unwrap();
        remember(&cache, url, "llama", calls, ToolCalls::Native).unwrap();
        assert_eq!(cached(&cache, url, "qwen", widget), Some(ToolCalls::Text));
        assert_eq!(cached(&cache, url, "qwen", calls), None, "the widget's finding is its own");
        assert_eq!(cached(&cache, url, "llama", calls), Some(ToolCalls::Native));
        assert_eq!(cached(&cache, url, "llama", widget), Some(ToolCalls::Native), "every mode's holds for the widget");
        assert_eq!(cached(&cache, "http://other:8081/v1", "qwen", widget), None);
        std::fs::write(&cache, "{not json").unwrap();
        assert_eq!(cached(&cache, url, "qwen", widget), None, "a broken cache is no answer");
    }
}
