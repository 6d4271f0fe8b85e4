//! How tool calls travel to and from one endpoint and model (`llm.tool_mode`): as the API's
//! structured `tools`/`tool_calls`, or as text the model writes (and opsai reads back).
//!
//! `auto` starts from what works everywhere and learns from what the endpoint actually does,
//! remembered per endpoint and model in `$OPSAI_HOME/cache/tool_mode.json`:
//! - the agent and explain start native; a reply that wrote a call out as text although the
//!   schemas were sent (a server whose chat template does not map the model's calls) switches
//!   them, and the widget, to text from the next request on;
//! - the widget starts with text: it asks for the command line itself and sends no schemas. Its
//!   answer is one command, which every model can write as text; offered `run_command` and
//!   `propose_command`, a small model (Qwen2.5-Coder-1.5B through llama.cpp) answered with the
//!   command run as a probe and then prose (issue 22). `native` gives it the probes back.
//!
//! Nothing is probed behind the user's back: learning costs no request.

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

/// Which conversation asks: every mode's calls, or the widget's proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    Calls,
    Widget,
}

impl Purpose {
    /// How `auto` starts before anything is learned. A model whose name says it is small (under
    /// [`SMALL_MODEL_BILLIONS`]) gets text for the agent too: offered the schemas,
    /// Qwen2.5-Coder-1.5B called the file and `cli` tools with made-up arguments and ran no
    /// command on 12 of 12 NL2SH-ALFA tasks, while a command in a ```sh block is what it writes
    /// best (bench/BENCHMARKS.md, "The agent with a small model").
    pub fn untold(self, model: &str) -> ToolCalls {
        match self {
            Purpose::Calls if !is_small(model) => ToolCalls::Native,
            Purpose::Calls | Purpose::Widget => ToolCalls::Text,
        }
    }
}

/// Below this many parameters (billions, as the model's name gives them) a model is small.
pub const SMALL_MODEL_BILLIONS: f64 = 7.0;

/// A size in the model's name (`qwen2.5:1.5b`, `qwen2.5-coder-1.5b-instruct-q4_k_m`,
/// `smollm2:135m`), in billions of parameters; `None` when the name gives none (`gpt-4o`) or is
/// a mixture (`8x7b`).
pub fn parameters_billions(model: &str) -> Option<f64> {
    static SIZE: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)(?:^|[^a-z0-9.])(\d{1,4}(?:\.\d{1,3})?)([bm])(?:[^a-z0-9]|$)").ok()
    });
    // A letter before the digits is no size (`8x7b`: the `7` follows `x`).
    let caps = SIZE.as_ref()?.captures(model)?;
    let number: f64 = caps.get(1)?.as_str().parse().ok()?;
    Some(if caps.get(2)?.as_str().eq_ignore_ascii_case("m") { number / 1000.0 } else { number })
}

fn is_small(model: &str) -> bool {
    parameters_billions(model).is_some_and(|billions| billions < SMALL_MODEL_BILLIONS)
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
    if entries.get(&key(base_url, model)) == Some(&found) {
        return Ok(());
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_remembered_per_endpoint_and_model() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache").join(CACHE_FILE);
        let url = "http://127.0.0.1:8081/v1";
        assert_eq!(cached(&cache, url, "qwen"), None);
        remember(&cache, "http://127.0.0.1:8081/v1/", "qwen", ToolCalls::Text).unwrap();
        remember(&cache, url, "llama", ToolCalls::Native).unwrap();
        assert_eq!(cached(&cache, url, "qwen"), Some(ToolCalls::Text));
        assert_eq!(cached(&cache, url, "llama"), Some(ToolCalls::Native));
        assert_eq!(cached(&cache, "http://other:8081/v1", "qwen"), None);
        std::fs::write(&cache, "{not json").unwrap();
        assert_eq!(cached(&cache, url, "qwen"), None, "a broken cache is no answer");
    }

    #[test]
    fn the_widget_starts_with_text_and_the_rest_native_unless_the_model_is_small() {
        for model in ["qwen2.5:7b", "gpt-4o", "llama3.1:70b", "mixtral:8x7b", "local", ""] {
            assert_eq!(Purpose::Widget.untold(model), ToolCalls::Text, "{model}");
            assert_eq!(Purpose::Calls.untold(model), ToolCalls::Native, "{model}");
        }
        for model in
            ["qwen2.5-coder-1.5b-instruct-q4_k_m", "qwen2.5:1.5b", "llama3.2:3b", "smollm2:135m", "Phi-3.5-mini-3.8B"]
        {
            assert_eq!(Purpose::Calls.untold(model), ToolCalls::Text, "{model}");
        }
    }

    #[test]
    fn sizes_are_read_from_model_names() {
        let cases = [
            ("qwen2.5-coder-1.5b-instruct-q4_k_m", Some(1.5)),
            ("qwen2.5:7b", Some(7.0)),
            ("Qwen/Qwen2.5-Coder-32B-Instruct", Some(32.0)),
            ("smollm2:135m", Some(0.135)),
            ("mixtral:8x7b", None),
            ("gpt-4o-mini", None),
            ("qwen2.5", None),
            ("llama-3-8b-instruct.Q4_K_M.gguf", Some(8.0)),
        ];
        for (model, expected) in cases {
            assert_eq!(parameters_billions(model), expected, "{model}");
        }
    }
}
