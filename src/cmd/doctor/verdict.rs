//! The doctor's last line: one verdict a newcomer can act on (issue 23). Ready, or no model
//! reachable with the one command that fixes it (and, with nothing configured, the local server
//! found on its usual port), or which later step to look at.

use crate::config::Config;
use crate::llm::transport::{OLLAMA_DEFAULT_URL, mask_credentials};
use crate::modes::startup::{self, discover};

/// The steps before any HTTP: when one fails, nothing answers at the URL.
const UNREACHABLE: &[&str] = &["URL", "proxy", "DNS", "TCP"];

pub(super) async fn verdict(config: &Config, first_failure: Option<&str>) -> String {
    let llm = &config.llm;
    let url = mask_credentials(&llm.base_url);
    let model = crate::ui::display::line(&llm.model);
    let url = crate::ui::display::line(&url);
    match first_failure {
        None => format!("Verdict: ready — opsai can use {model} at {url}."),
        Some(step) if UNREACHABLE.contains(&step) => {
            let fix = if llm.base_url.trim_end_matches('/') == OLLAMA_DEFAULT_URL {
                "start it: `ollama serve` (or choose another model: `opsai config set-llm`)"
            } else {
                "start that server or correct the URL: `opsai config set-llm`"
            };
            let mut line = format!("Verdict: no model — nothing answers at {url}; {fix}.");
            if startup::nothing_configured(config)
                && let Some(server) = discover::local_servers(&discover::candidates()).await.first()
            {
                line.push_str(&format!("\nopsai: {}", crate::ui::display::command(&startup::how_to_use(server))));
            }
            line
        }
        Some(step) => format!("Verdict: {url} answers, but the {step} check failed: the fix is under it."),
    }
}
