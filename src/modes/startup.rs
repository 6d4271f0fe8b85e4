//! Before the first task: is the configured model reachable? The REPL's banner (and `opsai
//! doctor`'s verdict) says so at once with the one command that fixes it, instead of the first
//! task failing. The check is a TCP connection to the endpoint (or its proxy) within [`WITHIN`],
//! started while the REPL gets ready, so it delays the prompt by at most that. It sends no HTTP
//! request: a request is the model server's business, a connection is enough to know whether
//! anything listens.
//!
//! With nothing configured (the default `llm` settings, no `OPSAI_*` variable, no flag) and
//! nothing at the default, the usual local servers are looked for ([`discover`]) and the one
//! found is offered.

pub(crate) mod discover;

use std::time::Duration;

use crate::config::{Config, LlmConfig};
use crate::llm::probe::{self, Route};
use crate::llm::transport::{OLLAMA_DEFAULT_URL, mask_credentials};
use discover::LocalServer;

/// How long the start check may take: the prompt waits for it at most this long.
pub(crate) const WITHIN: Duration = Duration::from_secs(1);

/// What the start check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Findings {
    /// Why no model is reachable, with the command that fixes it; `None` when one is.
    pub unreachable: Option<String>,
    /// Local model servers answering on their usual ports (looked for only with nothing configured
    /// and nothing reachable).
    pub found: Vec<LocalServer>,
}

/// True when the person chose no model: the settings are the defaults and no variable or flag
/// overrides them. Only then are other servers looked for.
pub(crate) fn nothing_configured(config: &Config) -> bool {
    config.overrides().is_empty() && config.llm == LlmConfig::default()
}

/// The check, and the search for local servers when `look_around` and nothing answers.
pub(crate) async fn check(base_url: &str, look_around: bool) -> Findings {
    // The search runs beside the check, so both fit in the same second.
    let search =
        async { if look_around { discover::local_servers(&discover::candidates()).await } else { Vec::new() } };
    let (unreachable, found) = tokio::join!(reach(base_url), search);
    let found = if unreachable.is_some() { found } else { Vec::new() };
    Findings { unreachable, found }
}

/// `None` when something accepts a connection at `base_url` (or its proxy) within [`WITHIN`];
/// else one line saying so and what to do.
pub(crate) async fn reach(base_url: &str) -> Option<String> {
    let shown = mask_credentials(base_url);
    let route = match Route::new(base_url, |name| std::env::var(name).ok()) {
        Ok(route) => route,
        Err(err) => return Some(format!("no model: {err}; fix it with `opsai config set-llm`")),
    };
    let (host, port) = route.first_hop.clone();
    let attempt = async {
        let addrs = probe::resolve(&host, port).await?;
        probe::connect(&addrs).await.map(|_| ())
    };
    let why = match tokio::time::timeout(WITHIN, attempt).await {
        Ok(Ok(())) => return None,
        Ok(Err(why)) => why,
        Err(_) => format!("no connection within {} s", WITHIN.as_secs()),
    };
    Some(match &route.proxy {
        Some(proxy) => {
            format!("no model: cannot reach {shown} through the proxy {proxy} ({why}); `opsai doctor` checks each step")
        }
        None if base_url.trim_end_matches('/') == OLLAMA_DEFAULT_URL => format!(
            "no model: nothing answers at {shown} (Ollama's default). Start it: `ollama serve` \
             (or choose another model: `opsai config set-llm`)"
        ),
        None => format!(
            "no model: nothing answers at {shown} ({why}). Start that server, or choose another model: \
             `opsai config set-llm`"
        ),
    })
}

/// What to say about a server found while nothing is configured, for a person who cannot be
/// asked (no terminal) or said no: how to use it.
pub(crate) fn how_to_use(server: &LocalServer) -> String {
    format!(
        "found {} at {} (model {}); to use it: `opsai config set-llm`, or OPSAI_BASE_URL={} OPSAI_MODEL={}",
        server.name, server.base_url, server.model, server.base_url, server.model
    )
}

/// Asks on the terminal whether to use `server`; only `y` or `yes` says yes.
pub(crate) fn offered(server: &LocalServer) -> bool {
    use std::io::Write;
    let question = format!(
        "opsai: no model is configured; found {} at {} with the model {}. Use it (saved in config.json)? [y/N] ",
        server.name, server.base_url, server.model
    );
    let mut err = std::io::stderr().lock();
    if err.write_all(crate::ui::display::command(&question).as_bytes()).and_then(|()| err.flush()).is_err() {
        return false;
    }
    drop(err);
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Saves `server` as the model in the config file, atomically (the file's other keys kept, the
/// previous file copied to `config.json.bak`).
pub(crate) fn adopt(paths: &crate::home::Paths, server: &LocalServer) -> Result<(), crate::config::ConfigError> {
    let mut config = Config::load(&paths.home)?;
    config.llm.base_url = server.base_url.clone();
    config.llm.model = server.model.clone();
    config.save(&paths.config_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listening_endpoint_passes_and_a_closed_one_names_the_fix() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let open = format!("http://{}/v1", listener.local_addr().unwrap());
        assert_eq!(reach(&open).await, None);
        drop(listener);
        let closed = reach(&open).await.unwrap_or_default();
        assert!(closed.starts_with(&format!("no model: nothing answers at {open} (")), "{closed}");
        assert!(closed.ends_with("choose another model: `opsai config set-llm`"), "{closed}");
        let bad = reach("not a url").await.unwrap_or_default();
        assert!(bad.starts_with("no model: ") && bad.contains("opsai config set-llm"), "{bad}");
    }

    #[test]
    fn only_the_default_settings_without_overrides_are_nothing_configured() {
        let mut config = Config::default();
        assert!(nothing_configured(&config));
        config.llm.model = "llama3.2:3b".into();
        assert!(!nothing_configured(&config));
        let mut config = Config::default();
        config.set_override(crate::config::LlmField::BaseUrl, "http://127.0.0.1:1234/v1".into(), "OPSAI_BASE_URL");
        assert!(!nothing_configured(&config));
    }
}
