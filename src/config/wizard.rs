//! `opsai config set-llm`: choose a provider, confirm its URL, give a key, pick a model, test the
//! connection (list the models, then a one-token chat) and save only when it works or the user
//! explicitly says to save anyway.
//!
//! The questions go through [`Prompter`] (dialoguer on a terminal in [`TermPrompter`], scripted
//! answers in tests) and the connection test through `&dyn ChatModel`, built by a [`Connect`]
//! closure, so the whole flow runs in unit tests without a terminal or a network.

mod terminal;
#[cfg(test)]
mod tests;

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Config, ConfigError, KeySource, LlmConfig, check_base_url, mask_key};
use crate::llm::{ChatModel, ChatRequest, LlmError, ModelDelta};
use crate::protocol::ChatMessage;

pub(crate) use terminal::set_llm;

/// The questions the wizard asks. Every method may fail with an I/O error; `Interrupted` means the
/// user pressed Ctrl-C.
pub trait Prompter: Send {
    /// One of `items`; returns its index.
    fn select(&mut self, prompt: &str, items: &[String], default: usize) -> io::Result<usize>;
    /// A line of text. `default` (may be empty) is shown beside the prompt, not as editable text:
    /// typing replaces it, and Enter alone answers it (or "" when there is none).
    fn input(&mut self, prompt: &str, default: &str) -> io::Result<String>;
    /// A hidden line (API keys); may be empty. Reports nothing about it: the wizard says what
    /// became of the key, so nothing typed never shows as `********`.
    fn password(&mut self, prompt: &str) -> io::Result<String>;
    fn confirm(&mut self, prompt: &str, default: bool) -> io::Result<bool>;
    /// A status line (`✓ …`, `✗ …`).
    fn note(&mut self, line: &str) -> io::Result<()>;
}

/// Builds a client for a candidate configuration (the real one is `crate::llm::openai`).
pub type Connect<'a> = &'a (dyn Fn(&LlmConfig) -> Result<Box<dyn ChatModel>, LlmError> + Sync);

/// Whether a provider needs an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyNeed {
    None,
    Required,
    Optional,
}

/// A provider the wizard offers, with its OpenAI-compatible endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Provider {
    pub name: &'static str,
    /// Empty for "custom": the user types it.
    pub base_url: &'static str,
    /// Suggested when the endpoint cannot list its models.
    pub default_model: &'static str,
    pub key: KeyNeed,
}

pub(crate) const PROVIDERS: &[Provider] = &[
    Provider {
        name: "Ollama (local, no key)",
        base_url: "http://localhost:11434/v1",
        default_model: "qwen2.5:7b",
        key: KeyNeed::None,
    },
    Provider {
        name: "OpenAI",
        base_url: "https://api.openai.com/v1",
        default_model: "gpt-4o-mini",
        key: KeyNeed::Required,
    },
    Provider {
        name: "DeepSeek",
        base_url: "https://api.deepseek.com/v1",
        default_model: "deepseek-chat",
        key: KeyNeed::Required,
    },
    Provider {
        name: "Google Gemini (OpenAI-compatible endpoint)",
        base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
        default_model: "gemini-2.5-flash",
        key: KeyNeed::Required,
    },
    Provider {
        name: "Anthropic Claude (OpenAI-compatible endpoint)",
        base_url: "https://api.anthropic.com/v1",
        default_model: "claude-sonnet-4-5",
        key: KeyNeed::Required,
    },
    Provider { name: "Custom OpenAI-compatible endpoint", base_url: "", default_model: "", key: KeyNeed::Optional },
];

/// What the wizard decided.
// Made once per `set-llm`: boxing the config would only add noise where it is built and matched.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WizardOutcome {
    /// Save this; `verified` is false when the user chose "save anyway" after a failed test.
    Save { llm: LlmConfig, verified: bool },
    /// The test failed and the user declined to save.
    Discard,
}

/// What `set-llm` did, for the exit code: `Saved` → 0, `NotSaved` → 1, `Cancelled` → 130.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SetLlmOutcome {
    Saved { path: PathBuf, verified: bool },
    NotSaved,
    Cancelled,
}

/// The interactive flow, without the file: starts from `current` and returns what to save.
pub async fn run(prompter: &mut dyn Prompter, current: &LlmConfig, connect: Connect<'_>) -> io::Result<WizardOutcome> {
    prompter.note(&format!("Current model: {} at {}", current.model, current.base_url))?;
    let current_url = current.base_url.trim_end_matches('/');
    let names: Vec<String> = PROVIDERS.iter().map(|p| p.name.to_owned()).collect();
    let custom = PROVIDERS.len() - 1;
    let preselect = PROVIDERS.iter().position(|p| p.base_url == current_url).unwrap_or(custom);
    let provider = PROVIDERS[prompter.select("LLM provider", &names, preselect)?.min(custom)];

    let default_url = if provider.base_url.is_empty() { current_url } else { provider.base_url };
    let base_url = ask_url(prompter, default_url)?;
    let same_endpoint = base_url == current_url;
    let kept_key = if same_endpoint { current.api_key.as_deref() } else { None };
    // A variable, command or keyring entry for this endpoint is kept as it is: the wizard asks
    // only for a clear key, and the flags change the source.
    let source = current.file_key_source();
    let kept_source =
        same_endpoint && matches!(source, KeySource::Env(_) | KeySource::Command(_) | KeySource::Keyring(_));
    let api_key = if kept_source {
        prompter.note(&format!(
            "✓ API key: kept from {source} (`opsai config set-llm --help` shows how to change its source)"
        ))?;
        None
    } else {
        ask_key(prompter, provider, kept_key)?
    };
    let model =
        if same_endpoint || provider.default_model.is_empty() { &current.model } else { provider.default_model };
    let mut llm = LlmConfig { base_url, model: model.to_owned(), api_key, ..current.clone() };
    if !kept_source {
        llm.api_key_env = None;
        llm.api_key_cmd = None;
        llm.api_key_keyring = None;
    }

    let client = connect(&llm);
    let listed = match &client {
        Ok(client) => list_models(client.as_ref(), llm.timeout).await,
        Err(err) => Listed::Fatal(reason(err)),
    };
    let models = match &listed {
        Listed::Models(models) => {
            prompter.note(&format!("✓ {} answers and lists {} models", llm.base_url, models.len()))?;
            models.as_slice()
        }
        Listed::Unavailable(why) => {
            prompter.note(&format!("! could not list the models ({why}); type the model name"))?;
            &[]
        }
        Listed::Fatal(why) => {
            prompter.note(&format!("✗ {why}"))?;
            &[]
        }
    };
    llm.model = ask_model(prompter, models, &llm.model)?;

    let check = match (&client, listed) {
        (_, Listed::Fatal(why)) => Err(why),
        (Ok(client), _) => one_token_chat(client.as_ref(), &llm).await,
        (Err(err), _) => Err(reason(err)),
    };
    match check {
        Ok(()) => {
            prompter.note(&format!("✓ {} answered: the connection works", llm.model))?;
            Ok(WizardOutcome::Save { llm, verified: true })
        }
        Err(why) => {
            prompter.note(&format!("✗ connection test failed: {why}"))?;
            prompter.note(&format!(
                "  Check the Base URL ({}), that the server is running and reachable from here, the API \
                 key, and the model name ({}).",
                llm.base_url, llm.model
            ))?;
            prompter.note(&format!(
                "  `opsai doctor --base-url {} --model {}` checks it step by step (DNS, TCP, TLS, HTTP, the \
                 model list, a chat, a tool call) and says what to fix for each failure.",
                llm.base_url, llm.model
            ))?;
            if prompter.confirm("Save this configuration anyway?", false)? {
                Ok(WizardOutcome::Save { llm, verified: false })
            } else {
                prompter.note("Nothing saved.")?;
                Ok(WizardOutcome::Discard)
            }
        }
    }
}

/// `set-llm` with a given prompter: load (or create) the config, run the flow, save on `Save`.
pub(crate) async fn set_llm_with(
    prompter: &mut dyn Prompter,
    opsai_home: &Path,
    connect: Connect<'_>,
) -> Result<SetLlmOutcome, ConfigError> {
    let (mut config, path) = Config::load_or_create(opsai_home)?;
    let outcome = match run(prompter, &config.llm, connect).await {
        Ok(outcome) => outcome,
        Err(err) if err.kind() == io::ErrorKind::Interrupted => return Ok(SetLlmOutcome::Cancelled),
        Err(err) => return Err(ConfigError::Prompt(err)),
    };
    let WizardOutcome::Save { llm, verified } = outcome else {
        return Ok(SetLlmOutcome::NotSaved);
    };
    config.llm = llm;
    config.save(&path)?;
    let _ = prompter.note(&format!("✓ Configuration saved to {}", path.display()));
    Ok(SetLlmOutcome::Saved { path, verified })
}

/// Enter alone keeps `default`; a typed URL replaces it (never appended to it) and is checked.
fn ask_url(prompter: &mut dyn Prompter, default: &str) -> io::Result<String> {
    loop {
        let answer = prompter.input("Base URL", default)?;
        let answer = if answer.trim().is_empty() { default } else { answer.as_str() };
        let typed = answer.trim();
        let mut url = typed.trim_end_matches('/');
        if let Some(base) = url.strip_suffix("/chat/completions") {
            url = base;
        }
        // What was typed is checked first, so `http://` is reported as typed, not as `http:`.
        match check_base_url(typed).and_then(|()| check_base_url(url)) {
            Ok(()) => return Ok(url.to_owned()),
            Err(why) => prompter.note(&format!("✗ {why}"))?,
        }
    }
}

fn ask_key(prompter: &mut dyn Prompter, provider: Provider, kept: Option<&str>) -> io::Result<Option<String>> {
    if provider.key == KeyNeed::None {
        return Ok(None);
    }
    let enter = match (kept, provider.key) {
        (Some(key), _) => format!("Enter keeps {}", mask_key(key)),
        (None, KeyNeed::Optional) => "Enter for none".to_owned(),
        (None, _) => "required".to_owned(),
    };
    let prompt = format!("API key (hidden; {enter})");
    loop {
        let answer = prompter.password(&prompt)?;
        let answer = answer.trim();
        match (answer.is_empty(), kept, provider.key) {
            (false, _, _) => {
                prompter.note(&format!("✓ API key: the one typed ({} characters)", answer.chars().count()))?;
                return Ok(Some(answer.to_owned()));
            }
            (true, Some(key), _) => {
                prompter.note(&format!("✓ API key: kept {}", mask_key(key)))?;
                return Ok(Some(key.to_owned()));
            }
            (true, None, KeyNeed::Optional) => {
                prompter.note("✓ API key: none")?;
                return Ok(None);
            }
            (true, None, _) => prompter.note(&format!("✗ {} needs an API key", provider.name))?,
        }
    }
}

fn ask_model(prompter: &mut dyn Prompter, models: &[String], preferred: &str) -> io::Result<String> {
    let chat_models: Vec<&String> = models.iter().filter(|m| is_chat_model(m)).collect();
    let models: Vec<&String> = if chat_models.is_empty() { models.iter().collect() } else { chat_models };
    if !models.is_empty() {
        let mut items: Vec<String> = models.iter().map(|m| (*m).clone()).collect();
        items.push("Other (type a name)".to_owned());
        let suffix = format!("/{preferred}");
        let default = models
            .iter()
            .position(|m| *m == preferred)
            .or_else(|| models.iter().position(|m| m.ends_with(&suffix)))
            .unwrap_or(0);
        let chosen = prompter.select("Model", &items, default)?;
        if let Some(model) = models.get(chosen) {
            return Ok((*model).clone());
        }
    }
    loop {
        let answer = prompter.input("Model", preferred)?;
        let answer = if answer.trim().is_empty() { preferred } else { answer.trim() };
        if !answer.is_empty() {
            return Ok(answer.to_owned());
        }
    }
}

/// Leaves out what cannot chat (embeddings, speech, images, moderation) from the choices.
fn is_chat_model(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !["embed", "tts", "whisper", "dall-e", "moderation", "transcribe", "imagen"].iter().any(|m| name.contains(m))
}

enum Listed {
    Models(Vec<String>),
    /// Listing failed in a way that says nothing about chat (some endpoints have no `/models`).
    Unavailable(String),
    /// The endpoint is unreachable or refuses the key: chatting would fail the same way.
    Fatal(String),
}

async fn list_models(client: &dyn ChatModel, timeout_s: u64) -> Listed {
    match tokio::time::timeout(Duration::from_secs(timeout_s.max(1)), client.list_models()).await {
        Err(_) => Listed::Fatal(LlmError::Timeout { seconds: timeout_s }.to_string()),
        Ok(Ok(mut models)) => {
            models.sort();
            models.dedup();
            Listed::Models(models)
        }
        Ok(Err(
            err @ (LlmError::Connect { .. }
            | LlmError::Tls { .. }
            | LlmError::Proxy { .. }
            | LlmError::Unauthorized { .. }
            | LlmError::Timeout { .. }),
        )) => Listed::Fatal(reason(&err)),
        Ok(Err(err)) => Listed::Unavailable(reason(&err)),
    }
}

/// The cheapest real request: one user message, `max_tokens: 1`, no tools.
pub(crate) async fn one_token_chat(client: &dyn ChatModel, llm: &LlmConfig) -> Result<(), String> {
    let request = ChatRequest {
        model: llm.model.clone(),
        messages: vec![ChatMessage::user("Reply with the single word OK.")],
        tools: Vec::new(),
        max_tokens: Some(1),
    };
    let mut ignore = |_: ModelDelta| {};
    let reply = client.complete(&request, &mut ignore);
    match tokio::time::timeout(Duration::from_secs(llm.timeout.max(1)), reply).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(err)) => Err(reason(&err)),
        Err(_) => Err(LlmError::Timeout { seconds: llm.timeout }.to_string()),
    }
}

/// What went wrong, for the wizard: the errors whose message elsewhere ends "… with `opsai config
/// set-llm`" are worded here without it — the user is already in that command, and the advice
/// after a failed test says what to check instead.
pub(crate) fn reason(err: &LlmError) -> String {
    match err {
        LlmError::Connect { url, .. } => format!("cannot connect to {url}"),
        LlmError::Unauthorized { status } => format!("the endpoint rejected the API key ({status})"),
        LlmError::InvalidUrl { url, reason } => format!("`{url}` is not a usable http(s) URL: {reason}"),
        other => other.to_string(),
    }
}
