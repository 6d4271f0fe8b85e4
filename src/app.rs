//! Composition root: where opsai's files live, and the glue from a parsed CLI to the modules that act.

use std::io::Write;

use crate::cli::{AuditArgs, Cli, Command, ConfigCommand, PolicyCheckArgs, PolicyCommand, SessionsCommand};

use crate::config;
use crate::config::wizard::SetLlmOutcome;
use crate::home::Paths;
use crate::llm::{ChatModel, LlmError};
use crate::policy;
use crate::ui::policy_view;

/// Runs one CLI invocation and returns its exit code.
pub fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Some(Command::Policy(PolicyCommand::Check(args))) => policy_check(&args),
        Some(Command::Config(command)) => config_command(&command),
        Some(Command::Audit(args)) => audit_command(&args),
        Some(Command::Sessions(command)) => sessions_command(&command),
        Some(Command::Init(args)) => crate::init::run(&args),
        Some(Command::Widget(args)) => crate::widget::run(&Paths::from_env()?, &args),
        Some(Command::Completions(args)) => crate::init::completions(args.shell),
        Some(Command::Explain(args)) => crate::explain::run(&Paths::from_env()?, &args),
        Some(Command::Cache(command)) => crate::analyze::cache_command(&Paths::from_env()?, &command),
        Some(Command::Undo(args)) => crate::undo::run(&Paths::from_env()?, &args),
        Some(Command::Sandbox(args)) if args.status => crate::sandbox::status_command(),
        Some(Command::Sandbox(args)) => crate::sandbox::run_command(&args.command),
        None if cli.run.task.is_empty() => {
            if cli.run.json || cli.run.quiet {
                writeln!(std::io::stderr(), "opsai: --json and --quiet need a task: `opsai --json \"TASK\"`")?;
                return Ok(2);
            }
            crate::ui::repl::run(&Paths::from_env()?, &cli.run)
        }
        None => crate::oneshot::run(&Paths::from_env()?, &cli.run),
    }
}

fn policy_check(args: &PolicyCheckArgs) -> anyhow::Result<u8> {
    let paths = Paths::from_env()?;
    let rules = config::load_policy(&paths.config_file())?;
    let command = args.command.join(" ");
    let assessment = policy::assess(&command, &rules);
    let mut out = anstream::stdout().lock();
    if args.json {
        serde_json::to_writer(&mut out, &assessment)?;
        writeln!(out)?;
    } else {
        policy_view::write(&mut out, &command, &assessment)?;
    }
    out.flush()?;
    Ok(0)
}

fn config_command(command: &ConfigCommand) -> anyhow::Result<u8> {
    let paths = Paths::from_env()?;
    let mut out = std::io::stdout().lock();
    match command {
        ConfigCommand::Path => config::write_path(&paths.config_file(), &mut out)?,
        ConfigCommand::Show => {
            let (mut config, _) = config::Config::load_or_create(&paths.home)?;
            config.apply_process_env()?;
            config::show(&config, &paths.home, paths.user_home.as_deref(), &mut out, &mut std::io::stderr())?;
        }
        ConfigCommand::SetLlm => {
            let connect = |llm: &config::LlmConfig| -> Result<Box<dyn ChatModel>, LlmError> {
                llm.client().map(|client| Box::new(client) as Box<dyn ChatModel>)
            };
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let outcome = runtime.block_on(async {
                tokio::select! {
                    outcome = config::wizard::set_llm(&paths.home, &connect) => outcome.map(Some),
                    _ = tokio::signal::ctrl_c() => Ok(None),
                }
            })?;
            return Ok(match outcome {
                Some(SetLlmOutcome::Saved { .. }) => 0,
                Some(SetLlmOutcome::NotSaved) => 1,
                Some(SetLlmOutcome::Cancelled) | None => 130,
            });
        }
    }
    out.flush()?;
    Ok(0)
}

fn audit_command(args: &AuditArgs) -> anyhow::Result<u8> {
    let paths = Paths::from_env()?;
    let (config, _) = config::Config::load_or_create(&paths.home)?;
    let log =
        crate::runner::audit_log(&config, &paths, std::sync::Arc::new(crate::redact::Redactor::from_process_env()));
    let lines = match &args.grep {
        Some(pattern) => log.grep(pattern, args.tail)?,
        None => log.tail(args.tail)?,
    };
    let mut out = std::io::stdout().lock();
    for line in lines {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(0)
}

fn sessions_command(command: &SessionsCommand) -> anyhow::Result<u8> {
    use crate::store::sessions::{self, SessionError, SessionStore};
    use crate::ui::sessions_view;
    let paths = Paths::from_env()?;
    let redactor = std::sync::Arc::new(crate::redact::Redactor::from_process_env());
    let store = SessionStore::open(&paths.home.join("sessions.db"), redactor)?;
    let color = crate::term::stdout_color();
    let mut out = std::io::stdout().lock();
    match command {
        SessionsCommand::List { limit, json: true } => {
            for session in store.list(*limit)? {
                serde_json::to_writer(&mut out, &session)?;
                writeln!(out)?;
            }
        }
        SessionsCommand::List { limit, json: false } => {
            let now = jiff::Timestamp::now().as_millisecond();
            sessions_view::write_list(&mut out, &store.list(*limit)?, now, color)?;
        }
        SessionsCommand::Show { id } => {
            let Some(summary) = store.get(*id)? else {
                writeln!(std::io::stderr(), "opsai: {}", SessionError::NotFound(*id))?;
                return Ok(1);
            };
            sessions_view::write_show(&mut out, &summary, &store.messages(*id)?, color)?;
        }
        SessionsCommand::Delete { id } => {
            if !store.delete(*id)? {
                writeln!(std::io::stderr(), "opsai: {}", SessionError::NotFound(*id))?;
                return Ok(1);
            }
            writeln!(out, "deleted conversation {}", sessions::label(*id))?;
        }
    }
    out.flush()?;
    Ok(0)
}
