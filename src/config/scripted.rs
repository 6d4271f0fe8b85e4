//! `opsai config set-llm` with flags: nothing is asked and no terminal is needed, so provisioning
//! scripts can point opsai at a model. The connection is tested only with `--check` (a script
//! may configure a server that is not up yet); without it nothing goes over the network.

use std::io::{self, BufRead, IsTerminal, Write};
use std::path::PathBuf;

use super::key_source::{keyring_account_for, keyring_store, process_env};
use super::wizard::{Connect, one_token_chat, reason};
use super::{Config, ConfigError, LlmConfig, check_base_url, file};
use crate::home::Paths;

/// The `set-llm` flags as given (the command line's own type stays in the command floor).
#[derive(Debug, Clone, Default)]
pub struct LlmFlags {
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub api_key_cmd: Option<String>,
    pub api_key_keyring: bool,
    pub no_api_key: bool,
    pub check: bool,
}

/// What a scripted `set-llm` did, for the exit code: saved → 0, the `--check` failed → 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scripted {
    Saved(PathBuf),
    CheckFailed,
}

/// Applies the flags to the current `llm` section, checks it like a load would, optionally tests
/// it, and saves. Lines for the user go to `notes` (stderr).
pub async fn set_llm(
    paths: &Paths,
    args: &LlmFlags,
    connect: Connect<'_>,
    notes: &mut dyn Write,
) -> Result<Scripted, ConfigError> {
    let (mut config, path) = Config::load_or_create(&paths.home)?;
    let mut llm = config.llm.clone();
    if let Some(url) = &args.base_url {
        let url = url.trim().trim_end_matches('/');
        let url = url.strip_suffix("/chat/completions").unwrap_or(url);
        check_base_url(url).map_err(|message| ConfigError::Key(format!("--base-url: {message}")))?;
        llm.base_url = url.to_owned();
    }
    if let Some(model) = &args.model {
        llm.model = model.trim().to_owned();
    }
    let endpoint_changed = llm.base_url != config.llm.base_url;
    let had_key = llm.file_key_source() != super::KeySource::None;
    let key_flag = args.api_key_env.is_some() || args.api_key_cmd.is_some() || args.api_key_keyring || args.no_api_key;
    if key_flag || endpoint_changed {
        // A key belongs to its endpoint: a new endpoint without a key flag gets none rather than
        // the old provider's.
        clear_key_sources(&mut llm);
        if !key_flag && had_key {
            let _ = writeln!(
                notes,
                "note: the API key setting was for {}; it is cleared — give --api-key-env, --api-key-cmd or \
                 --api-key-keyring for {}",
                config.llm.base_url, llm.base_url
            );
        }
    }
    llm.api_key_env = args.api_key_env.as_ref().map(|var| var.trim().to_owned());
    llm.api_key_cmd = args.api_key_cmd.clone();
    let mut keyring_key = None;
    if args.api_key_keyring {
        let account = keyring_account_for(&llm.base_url);
        keyring_key = Some((account.clone(), read_key_from_stdin()?));
        llm.api_key_keyring = Some(account);
    }
    if !key_flag && !endpoint_changed {
        llm.api_key = config.llm.api_key.clone();
        llm.api_key_env.clone_from(&config.llm.api_key_env);
        llm.api_key_cmd.clone_from(&config.llm.api_key_cmd);
        llm.api_key_keyring.clone_from(&config.llm.api_key_keyring);
    }
    config.llm = llm;
    // Checked as the next load will check it, with the same messages.
    let text = config.to_json_text().map_err(|error| file::write_error(&path, error))?;
    Config::from_value(file::parse(&text, &path)?, &path)?;

    if args.check {
        let mut tested = config.llm.clone();
        if let Some((_, key)) = &keyring_key {
            tested.api_key = Some(key.clone());
        } else if let Some(key) = tested.fetch_indirect_key(&process_env)? {
            tested.api_key = Some(key);
        }
        let result = match connect(&tested) {
            Ok(client) => one_token_chat(client.as_ref(), &tested).await,
            Err(err) => Err(reason(&err)),
        };
        match result {
            Ok(()) => {
                let _ = writeln!(notes, "✓ {} answered at {}: the connection works", tested.model, tested.base_url);
            }
            Err(why) => {
                let _ = writeln!(notes, "✗ connection test failed: {why}; nothing saved");
                let _ = writeln!(
                    notes,
                    "  `opsai doctor --base-url {} --model {}` checks it step by step",
                    tested.base_url, tested.model
                );
                return Ok(Scripted::CheckFailed);
            }
        }
    }
    if let Some((account, key)) = &keyring_key {
        keyring_store(account, key)?;
        let _ = writeln!(notes, "✓ API key stored in the OS keyring (service opsai, account {account})");
    }
    config.save(&path)?;
    let _ = writeln!(notes, "✓ Configuration saved to {}", path.display());
    for var in ["OPSAI_BASE_URL", "OPSAI_MODEL", "OPSAI_API_KEY"] {
        if process_env(var).is_some() {
            let _ = writeln!(notes, "note: {var} is set in this shell and overrides the saved value");
        }
    }
    Ok(Scripted::Saved(path))
}

fn clear_key_sources(llm: &mut LlmConfig) {
    llm.api_key = None;
    llm.api_key_env = None;
    llm.api_key_cmd = None;
    llm.api_key_keyring = None;
}

/// The key for `--api-key-keyring`: a hidden prompt when stdin is a terminal, else stdin's first line.
fn read_key_from_stdin() -> Result<String, ConfigError> {
    let stdin = io::stdin();
    let key = if stdin.is_terminal() {
        dialoguer::Password::new()
            .with_prompt("API key to store in the keyring (hidden)")
            .allow_empty_password(true)
            .interact()
            .map_err(|err| ConfigError::Prompt(err.into()))?
    } else {
        let mut line = String::new();
        stdin.lock().read_line(&mut line).map_err(ConfigError::Prompt)?;
        line
    };
    let key = key.trim().to_owned();
    if key.is_empty() {
        return Err(ConfigError::Key(
            "--api-key-keyring reads the key from stdin, and it was empty: pipe it in, such as \
             `pass show openai | opsai config set-llm --api-key-keyring …`"
                .to_owned(),
        ));
    }
    Ok(key)
}
