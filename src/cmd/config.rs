//! `opsai config path|show|set|get|unset|set-llm`.

use std::io::Write;

use crate::cli::{ConfigCommand, SetLlmArgs};
use crate::config::keys::Edit;
use crate::config::scripted::{self, Scripted};
use crate::config::{self, Config, KeySource, LlmConfig, wizard::SetLlmOutcome};
use crate::home::Paths;
use crate::llm::{ChatModel, LlmError};

pub fn run(paths: &Paths, command: &ConfigCommand) -> anyhow::Result<u8> {
    let mut out = std::io::stdout().lock();
    let mut notes = std::io::stderr().lock();
    let file = paths.config_file();
    match command {
        ConfigCommand::Path(args) if args.all => write!(out, "{}", paths.describe())?,
        ConfigCommand::Path(_) => config::write_path(&file, &mut out)?,
        ConfigCommand::Show => {
            let (mut config, _) = Config::load_or_create(&paths.home)?;
            config.apply_process_env()?;
            config::show(&config, paths.state_dir(), paths.user_home.as_deref(), &mut out, &mut notes)?;
        }
        ConfigCommand::Set(args) => {
            let (config, dropped) = Config::set_key(&file, &args.key, &args.value)?;
            writeln!(notes, "✓ {} saved to {}", args.key, file.display())?;
            if !dropped.is_empty() {
                writeln!(
                    notes,
                    "note: {} removed: that key was for the old endpoint; give this one its own with \
                     `opsai config set-llm --api-key-env VAR` (or --api-key-cmd, --api-key-keyring)",
                    dropped.join(", ")
                )?;
            }
            note_overridden(&config, &args.key, &mut notes)?;
        }
        ConfigCommand::Unset(args) => match Config::unset_key(&file, &args.key)? {
            Edit::Saved => writeln!(notes, "✓ {} removed from {}; its default applies", args.key, file.display())?,
            Edit::NotInFile => writeln!(notes, "{} is not set in {}; nothing changed", args.key, file.display())?,
        },
        ConfigCommand::Get(args) => {
            // Reads only: `get` neither creates the file nor runs the key command.
            let mut config = Config::load(&paths.home)?;
            config.apply_process_env()?;
            let (value, source) = config.get_key(&args.key, &file, paths.state_dir(), paths.user_home.as_deref())?;
            writeln!(out, "{value}")?;
            writeln!(notes, "note: {} comes from {source}", args.key)?;
        }
        ConfigCommand::SetLlm(args) if args.scripted() => return set_llm_scripted(paths, args),
        ConfigCommand::SetLlm(_) => return set_llm(paths),
    }
    out.flush()?;
    Ok(0)
}

/// After `set`: says so when the environment hides the saved value in this shell.
fn note_overridden(config: &Config, key: &str, notes: &mut impl Write) -> std::io::Result<()> {
    let mut config = config.clone();
    if config.apply_process_env().is_err() {
        return Ok(());
    }
    if let Some(o) = config.overrides().iter().find(|o| o.field.key() == key) {
        writeln!(notes, "note: {} is set in this shell and overrides the saved value", o.source)?;
    }
    if key.starts_with("llm.api_key")
        && let KeySource::Override(var) = config.key_source()
    {
        writeln!(notes, "note: {var} is set in this shell and overrides every key source in the file")?;
    }
    Ok(())
}

/// The client for a candidate configuration, with its key from whichever source it names.
fn connect(llm: &LlmConfig) -> Result<Box<dyn ChatModel>, LlmError> {
    crate::runner::model_client(llm).map(|client| Box::new(client) as Box<dyn ChatModel>)
}

fn set_llm_scripted(paths: &Paths, args: &SetLlmArgs) -> anyhow::Result<u8> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut notes = std::io::stderr();
    let flags = scripted::LlmFlags {
        base_url: args.base_url.clone(),
        model: args.model.clone(),
        api_key_env: args.api_key_env.clone(),
        api_key_cmd: args.api_key_cmd.clone(),
        api_key_keyring: args.api_key_keyring,
        no_api_key: args.no_api_key,
        check: args.check,
    };
    let outcome = runtime.block_on(scripted::set_llm(paths, &flags, &connect, &mut notes))?;
    Ok(match outcome {
        Scripted::Saved(_) => 0,
        Scripted::CheckFailed => 1,
    })
}

/// The wizard, its test request made with the client every mode uses.
fn set_llm(paths: &Paths) -> anyhow::Result<u8> {
    let connect = |llm: &LlmConfig| -> Result<Box<dyn ChatModel>, LlmError> {
        // A source kept from the file (command, keyring, variable) is what the test must send.
        let mut llm = llm.clone();
        if llm.api_key.is_none()
            && let Ok(Some(key)) = llm.fetch_indirect_key(&config::key_source::process_env)
        {
            llm.api_key = Some(key);
        }
        connect(&llm)
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
