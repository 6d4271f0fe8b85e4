//! Where the API key comes from: `OPSAI_API_KEY`, the clear `llm.api_key`, an environment variable
//! named by `llm.api_key_env`, a command (`llm.api_key_cmd`, run through `sh -c`), or an OS keyring
//! entry (`llm.api_key_keyring`, service [`KEYRING_SERVICE`]); `OPENAI_API_KEY` last, for
//! api.openai.com only. The file may name one source ([`LlmConfig::validate`] refuses two).
//!
//! Resolving runs the command or reads the keyring, so only what talks to the model resolves
//! (`runner::load_config`); `config show` and `config get` only say where the key would come from.

use std::fmt;
use std::process::Command;
use std::time::Duration;

use super::{Config, ConfigError, LlmConfig, LlmField};
use crate::context::probe::output_within;

/// The keyring service every opsai entry is stored under; the account is `llm.api_key_keyring`.
pub const KEYRING_SERVICE: &str = "opsai";

/// How long `llm.api_key_cmd` may run: long enough for a passphrase prompt (`pass`, `gpg`), short
/// enough that a hung command does not hang opsai.
pub const KEY_COMMAND_LIMIT: Duration = Duration::from_secs(30);

/// Where the key the model is sent comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// No key (a local server needs none).
    None,
    /// An environment override: `OPSAI_API_KEY` or `OPENAI_API_KEY`.
    Override(String),
    /// `llm.api_key` in the config file, in clear.
    File,
    /// `llm.api_key_env`: this variable.
    Env(String),
    /// `llm.api_key_cmd`: this command's output.
    Command(String),
    /// `llm.api_key_keyring`: this account of service `opsai`.
    Keyring(String),
}

impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::None => write!(f, "no API key is configured"),
            KeySource::Override(var) => write!(f, "the environment variable {var}"),
            KeySource::File => write!(f, "llm.api_key in the config file (in clear)"),
            KeySource::Env(var) => write!(f, "the environment variable {var} (llm.api_key_env)"),
            KeySource::Command(cmd) => write!(f, "the output of `{cmd}` (llm.api_key_cmd, run at start)"),
            KeySource::Keyring(account) => {
                write!(f, "the OS keyring, service {KEYRING_SERVICE}, account {account} (llm.api_key_keyring)")
            }
        }
    }
}

impl LlmConfig {
    /// The source the file names, ignoring environment overrides.
    pub fn file_key_source(&self) -> KeySource {
        if let Some(var) = &self.api_key_env {
            KeySource::Env(var.clone())
        } else if let Some(cmd) = &self.api_key_cmd {
            KeySource::Command(cmd.clone())
        } else if let Some(account) = &self.api_key_keyring {
            KeySource::Keyring(account.clone())
        } else if self.api_key.is_some() {
            KeySource::File
        } else {
            KeySource::None
        }
    }

    /// The key from `llm.api_key_env`, `llm.api_key_cmd` or `llm.api_key_keyring`; `Ok(None)` when
    /// the file names none of them (the clear `api_key`, if any, is already in place).
    pub(crate) fn fetch_indirect_key(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, ConfigError> {
        let source = self.file_key_source();
        let fail = |message: String| ConfigError::ApiKey { from: source.to_string(), message };
        let key = match &source {
            KeySource::None | KeySource::File | KeySource::Override(_) => return Ok(None),
            KeySource::Env(var) => lookup(var).ok_or_else(|| {
                fail(format!("{var} is not set in this environment; export it, or choose another source"))
            })?,
            KeySource::Command(cmd) => run_key_command(cmd).map_err(fail)?,
            KeySource::Keyring(account) => keyring_get(account).map_err(fail)?,
        };
        let key = key.trim().to_owned();
        if key.is_empty() {
            return Err(fail("it is empty".to_owned()));
        }
        Ok(Some(key))
    }
}

impl Config {
    /// Where the key comes from, overrides included.
    pub fn key_source(&self) -> KeySource {
        match self.overrides().iter().find(|o| o.field == LlmField::ApiKey) {
            Some(o) => KeySource::Override(o.source.clone()),
            None => self.llm.file_key_source(),
        }
    }

    /// Puts the key from the file's indirect source in place (an override, so it is never saved).
    /// `OPSAI_API_KEY` wins over every source in the file, as it wins over the clear key.
    pub(crate) fn resolve_api_key(&mut self, lookup: &dyn Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if matches!(self.key_source(), KeySource::Override(_)) {
            return Ok(());
        }
        if self.endpoint_moved() {
            // A key belongs to its endpoint: with the endpoint overridden for this run (`--base-url`,
            // OPSAI_BASE_URL) to another server, the file's key, whatever its source, stays home.
            self.llm.api_key = None;
            return Ok(());
        }
        if let Some(key) = self.llm.fetch_indirect_key(lookup)? {
            let source = self.llm.file_key_source().to_string();
            self.set_override(LlmField::ApiKey, key, &source);
        }
        Ok(())
    }
}

/// The process environment, empty values as unset.
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.trim().is_empty())
}

/// The first line `sh -c cmd` prints (`pass show` prints the password first, notes after it).
fn run_key_command(cmd: &str) -> Result<String, String> {
    let mut command = Command::new("sh");
    command.arg("-c").arg(cmd);
    let Some(output) = output_within(command, KEY_COMMAND_LIMIT) else {
        return Err(format!(
            "the command did not finish within {} s (or could not start); check it in a shell",
            KEY_COMMAND_LIMIT.as_secs()
        ));
    };
    if !output.success {
        let said: String = output.stderr.trim().lines().take(3).collect::<Vec<_>>().join(" / ");
        let said = if said.is_empty() { "it printed nothing on stderr".to_owned() } else { said };
        return Err(format!("the command failed: {said}"));
    }
    Ok(output.stdout.lines().next().unwrap_or("").to_owned())
}

fn keyring_get(account: &str) -> Result<String, String> {
    let entry = keyring::Entry::new(KEYRING_SERVICE, account);
    entry.and_then(|entry| entry.get_password()).map_err(|err| match err {
        // keyring reports every keyutils failure this way, a missing session keyring included.
        keyring::Error::NoEntry => "no key is stored there (or this process has no session keyring to find it \
                                    in); store one with `opsai config set-llm --api-key-keyring`, which reads it \
                                    from stdin"
            .to_owned(),
        other => format!("the keyring refused: {other}"),
    })
}

/// Stores `key` in the keyring entry of service `opsai` and this account.
pub(crate) fn keyring_store(account: &str, key: &str) -> Result<(), ConfigError> {
    keyring::Entry::new(KEYRING_SERVICE, account).and_then(|entry| entry.set_password(key)).map_err(|err| {
        ConfigError::ApiKey {
            from: KeySource::Keyring(account.to_owned()).to_string(),
            message: format!("the keyring refused: {err}"),
        }
    })
}

/// The keyring account `set-llm --api-key-keyring` uses for an endpoint: its host (and port), so
/// each provider keeps its own key.
pub fn keyring_account_for(base_url: &str) -> String {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|url| url.host_str().map(|host| (host.to_owned(), url.port())))
        .map_or_else(|| base_url.to_owned(), |(host, port)| port.map_or(host.clone(), |p| format!("{host}:{p}")))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_command_source_takes_the_first_line_and_reports_failures_with_stderr() {
        let llm = LlmConfig { api_key_cmd: Some("printf 'sk-cmd-key-1\\nnote\\n'".to_owned()), ..LlmConfig::default() };
        assert_eq!(llm.fetch_indirect_key(&no_env).unwrap().as_deref(), Some("sk-cmd-key-1"));
        let llm = LlmConfig { api_key_cmd: Some("echo nope >&2; exit 3".to_owned()), ..LlmConfig::default() };
        let err = llm.fetch_indirect_key(&no_env).unwrap_err().to_string();
        assert!(err.contains("the command failed: nope") && err.contains("echo nope"), "{err}");
        let llm = LlmConfig { api_key_cmd: Some("true".to_owned()), ..LlmConfig::default() };
        assert!(llm.fetch_indirect_key(&no_env).unwrap_err().to_string().contains("empty"));
    }

    #[test]
    fn the_env_source_names_the_missing_variable() {
        let llm = LlmConfig { api_key_env: Some("MY_KEY".to_owned()), ..LlmConfig::default() };
        let err = llm.fetch_indirect_key(&no_env).unwrap_err().to_string();
        assert!(err.contains("MY_KEY is not set"), "{err}");
        let found = llm.fetch_indirect_key(&|name| (name == "MY_KEY").then(|| " k-123 ".to_owned())).unwrap();
        assert_eq!(found.as_deref(), Some("k-123"));
    }

    #[test]
    fn opsai_api_key_wins_over_the_file_source() {
        let mut config = Config::default();
        config.llm.api_key_env = Some("MY_KEY".to_owned());
        config.apply_env(|name| (name == "OPSAI_API_KEY").then(|| "from-opsai-env".to_owned())).unwrap();
        config.resolve_api_key(&no_env).unwrap();
        assert_eq!(config.llm.api_key.as_deref(), Some("from-opsai-env"));
        assert_eq!(config.key_source(), KeySource::Override("OPSAI_API_KEY".to_owned()));
    }

    #[test]
    fn the_files_key_never_goes_to_an_endpoint_overridden_to_another_server() {
        let with_sources = || {
            let mut config = Config::default();
            config.llm.base_url = "https://api.openai.com/v1".to_owned();
            config
        };
        for set in [
            |c: &mut Config| c.llm.api_key = Some("sk-clear".to_owned()),
            |c: &mut Config| c.llm.api_key_env = Some("MY_KEY".to_owned()),
            |c: &mut Config| c.llm.api_key_cmd = Some("echo sk-cmd".to_owned()),
        ] {
            let mut config = with_sources();
            set(&mut config);
            config.set_override(LlmField::BaseUrl, "http://127.0.0.1:9/v1".to_owned(), "--base-url");
            config.resolve_api_key(&|_| Some("sk-env".to_owned())).unwrap();
            assert_eq!(config.llm.api_key, None, "another server gets no key of the file's");
            // The same server under another path keeps it.
            let mut config = with_sources();
            set(&mut config);
            config.set_override(LlmField::BaseUrl, "https://API.openai.com/v2".to_owned(), "OPSAI_BASE_URL");
            config.resolve_api_key(&|_| Some("sk-env".to_owned())).unwrap();
            assert!(config.llm.api_key.is_some(), "same scheme, host and port");
        }
    }

    #[test]
    fn a_resolved_key_is_never_saved() {
        let mut config = Config::default();
        config.llm.api_key_env = Some("MY_KEY".to_owned());
        config.resolve_api_key(&|_| Some("resolved-secret".to_owned())).unwrap();
        assert_eq!(config.llm.api_key.as_deref(), Some("resolved-secret"));
        let text = config.to_json_text().unwrap();
        assert!(!text.contains("resolved-secret") && text.contains("MY_KEY"), "{text}");
    }

    #[test]
    fn keyring_accounts_are_the_endpoint_host() {
        assert_eq!(keyring_account_for("https://api.openai.com/v1"), "api.openai.com");
        assert_eq!(keyring_account_for("http://127.0.0.1:8080/v1"), "127.0.0.1:8080");
    }
}
