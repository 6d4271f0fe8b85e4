//! Composition root: where opsai's files live, and the glue from a parsed CLI to the modules that act.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Context;

use crate::cli::{AuditArgs, Cli, Command, ConfigCommand, PolicyCheckArgs, PolicyCommand, SessionsCommand};
use std::time::Duration;

use crate::config::wizard::SetLlmOutcome;
use crate::config::{self, ConfigError};
use crate::llm::openai::OpenAiClient;
use crate::llm::{ChatModel, LlmError};
use crate::policy;
use crate::ui::policy_view;

/// Where opsai keeps its state: `$OPSAI_HOME`, else `~/.opsai`.
#[derive(Debug, Clone)]
pub struct Paths {
    pub home: PathBuf,
    /// The user's home directory, for `~` in configured paths.
    pub user_home: Option<PathBuf>,
}

impl Paths {
    pub fn from_env() -> anyhow::Result<Self> {
        let user_home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        if let Some(home) = std::env::var_os("OPSAI_HOME").filter(|h| !h.is_empty()) {
            return Ok(Self { home: PathBuf::from(home), user_home });
        }
        let base = user_home
            .clone()
            .context("neither OPSAI_HOME nor HOME is set; set OPSAI_HOME to a directory opsai may use")?;
        Ok(Self { home: base.join(".opsai"), user_home })
    }

    pub fn config_file(&self) -> PathBuf {
        self.home.join("config.json")
    }
}

/// A run that ended with a specific exit code and nothing more to say.
#[derive(Debug, thiserror::Error)]
#[error("exit {0}")]
pub struct Exit(pub u8);

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
                OpenAiClient::new(llm.base_url.clone(), llm.api_key.clone(), Duration::from_secs(llm.timeout))
                    .map(|client| Box::new(client) as Box<dyn ChatModel>)
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
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
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

/// True when a person is at the terminal (for colors, spinners and prompts on stderr).
pub fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Exit code for an error that reached the binary's edge (DESIGN §3).
pub fn exit_code_for(err: &anyhow::Error) -> u8 {
    if let Some(Exit(code)) = err.downcast_ref::<Exit>() {
        return *code;
    }
    if err.chain().any(|cause| cause.downcast_ref::<ConfigError>().is_some()) {
        return 2;
    }
    1
}

/// A closed stdout (`opsai policy check x | head -0`) is not an error worth a message.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
