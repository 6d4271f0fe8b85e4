//! `opsai config path|show|set-llm`.

use std::io::Write;

use crate::cli::ConfigCommand;
use crate::config::{self, wizard::SetLlmOutcome};
use crate::home::Paths;
use crate::llm::{ChatModel, LlmError};

pub fn run(paths: &Paths, command: &ConfigCommand) -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    match command {
        ConfigCommand::Path => config::write_path(&paths.config_file(), &mut out)?,
        ConfigCommand::Show => {
            let (mut config, _) = config::Config::load_or_create(&paths.home)?;
            config.apply_process_env()?;
            config::show(&config, &paths.home, paths.user_home.as_deref(), &mut out, &mut std::io::stderr())?;
        }
        ConfigCommand::SetLlm => return set_llm(paths),
    }
    out.flush()?;
    Ok(0)
}

/// The wizard, its test request made with the client every mode uses.
fn set_llm(paths: &Paths) -> anyhow::Result<u8> {
    let connect = |llm: &config::LlmConfig| -> Result<Box<dyn ChatModel>, LlmError> {
        crate::runner::model_client(llm).map(|client| Box::new(client) as Box<dyn ChatModel>)
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let outcome = runtime.block_on(async {
        tokio::select! {
            outcome = config::wizard::set_llm(&paths.home, &connect) => outcome.map(Some),
            _ = tokio::signal::ctrl_c() => Ok(None),
        }
    })?;
    Ok(match outcome {
        Some(SetLlmOutcome::Saved { .. }) => 0,
        Some(SetLlmOutcome::NotSaved) => 1,
        Some(SetLlmOutcome::Cancelled) | None => 130,
    })
}
