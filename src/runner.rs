//! What every agent entry point builds once (model client, executor, approver, audit log, redactor,
//! policy) and [`drive`], which runs one turn with the renderer, the spinner and Ctrl-C routing.
//! One-shot runs and the REPL share both, so a turn behaves the same wherever it starts.

pub mod conversation;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::signal::unix::Signal;

use crate::agent::{Agent, AgentError, Interrupts, LoopSettings};
use crate::app::Paths;
use crate::approval::{Approver, NoApprover, TerminalApprover};
use crate::cli::RunArgs;
use crate::config::{Config, LlmField};
use crate::exec::Executor;
use crate::exec::fs::{FileSystem, LocalFs};
use crate::exec::pty::PtyExecutor;
use crate::llm::openai::OpenAiClient;
use crate::policy::PolicyConfig;
use crate::protocol::{AgentEvent, ChatMessage, TurnOutcome};
use crate::redact::Redactor;
use crate::store::audit::AuditLog;
use crate::store::backups::Backups;
use crate::tools::{RunMode, Services};
use crate::ui::render::Renderer;

/// The configuration with the environment and the command line's `--model`/`--base-url` applied.
pub fn load_config(paths: &Paths, args: &RunArgs) -> anyhow::Result<Config> {
    let (mut config, _) = Config::load_or_create(&paths.home)?;
    config.apply_process_env()?;
    if let Some(model) = &args.model {
        config.set_override(LlmField::Model, model.clone(), "--model");
    }
    if let Some(url) = &args.base_url {
        config.set_override(LlmField::BaseUrl, url.trim_end_matches('/').to_owned(), "--base-url");
    }
    Ok(config)
}

/// The audit log as configured.
pub fn audit_log(config: &Config, paths: &Paths, redactor: Arc<Redactor>) -> AuditLog {
    AuditLog::new(
        config.audit_log_path(&paths.home, paths.user_home.as_deref()),
        config.audit.max_log_size_mb,
        u64::from(config.audit.retain_days),
        redactor,
    )
}

/// The real implementation of every seam a turn uses.
pub struct Parts {
    pub config: Config,
    pub redactor: Arc<Redactor>,
    pub audit: AuditLog,
    pub policy: PolicyConfig,
    pub model: OpenAiClient,
    /// Runs commands here, or on `host` through ssh.
    pub executor: Box<dyn Executor>,
    /// Files here, or on `host` through ssh.
    pub files: Box<dyn FileSystem>,
    pub backups: Backups,
    /// `--ssh-host`/`/host`: where commands and files are; `None` is this machine.
    pub host: Option<String>,
    pub approver: Box<dyn Approver>,
}

impl Parts {
    pub fn build(paths: &Paths, config: Config) -> anyhow::Result<Self> {
        let redactor = Arc::new(Redactor::from_process_env());
        let audit = audit_log(&config, paths, redactor.clone());
        let policy = config.policy()?;
        let model = OpenAiClient::new(
            config.llm.base_url.clone(),
            config.llm.api_key.clone(),
            Duration::from_secs(config.llm.timeout),
        )?;
        let executor = Box::new(PtyExecutor::new().with_capture(config.exec.capture_head, config.exec.capture_tail));
        let backups = Backups::new(paths.home.join("backups"));
        // OPSAI_NONINTERACTIVE=1 behaves as if there were no terminal: it can only take approvals away.
        let forced_off = std::env::var_os("OPSAI_NONINTERACTIVE").is_some_and(|v| !v.is_empty() && v != "0");
        let terminal = if forced_off { None } else { TerminalApprover::open() };
        let approver: Box<dyn Approver> = match terminal {
            Some(terminal) => Box::new(terminal),
            None => Box::new(NoApprover),
        };
        Ok(Self {
            config,
            redactor,
            audit,
            policy,
            model,
            executor,
            files: Box::new(LocalFs),
            backups,
            host: None,
            approver,
        })
    }

    /// The services of one turn; `interrupts` is fresh per turn (a cancelled turn stays cancelled).
    pub fn services<'a>(&'a self, mode: RunMode, session: String, interrupts: &'a Interrupts) -> Services<'a> {
        Services {
            executor: self.executor.as_ref(),
            approver: self.approver.as_ref(),
            audit: &self.audit,
            redactor: &self.redactor,
            policy: &self.policy,
            mode,
            session,
            exec_timeout: Duration::from_secs(self.config.exec.timeout_s),
            interrupts,
            files: self.files.as_ref(),
            backups: &self.backups,
            files_config: &self.config.files,
            kube_config: &self.config.kube,
            host: self.host.as_deref(),
        }
    }

    /// The run mode the configuration and these flags give.
    pub fn mode(&self, approve_medium: bool, dry_run: bool) -> RunMode {
        RunMode { auto_approve_safe: self.config.safety.auto_approve_safe, approve_medium, dry_run, probe_limit: None }
    }

    /// Loop settings for `model`, with the environment context (redacted: it leaves the machine).
    pub fn settings(&self, model: &str, environment: &str) -> LoopSettings {
        LoopSettings {
            model: model.to_owned(),
            max_iterations: self.config.agent.max_iterations,
            max_tokens: Some(self.config.llm.max_tokens),
            environment: self.redactor.redact(environment),
            prompt: crate::agent::prompt::PromptMode::Agent,
        }
    }
}

/// Runs one turn to its end: events to the renderer, a spinner while the model thinks, and each
/// Ctrl-C routed to the running command or, when none runs, to the turn.
pub async fn drive<O: Write + Send, E: Write + Send>(
    agent: &mut Agent<'_>,
    history: &mut Vec<ChatMessage>,
    task: &str,
    renderer: &Mutex<Renderer<O, E>>,
    sigint: &mut Signal,
) -> Result<TurnOutcome, AgentError> {
    // A Ctrl-C delivered while no turn ran (between prompts) must not cancel this one.
    while sigint.recv().now_or_never().flatten().is_some() {}
    let mut on_event = |event: AgentEvent| {
        if let Ok(mut renderer) = renderer.lock() {
            let _ = renderer.handle(&event);
            if matches!(event, AgentEvent::ToolResult { .. }) {
                renderer.waiting();
            }
        }
    };
    if let Ok(mut renderer) = renderer.lock() {
        renderer.waiting();
    }
    let interrupts = agent.services.interrupts;
    let ctrl_c = async {
        while sigint.recv().await.is_some() {
            interrupts.interrupt();
        }
        std::future::pending::<()>().await;
    };
    let spinner = async {
        let mut ticks = tokio::time::interval(Duration::from_millis(120));
        loop {
            ticks.tick().await;
            if let Ok(mut renderer) = renderer.lock() {
                renderer.tick();
            }
        }
    };
    tokio::select! {
        outcome = agent.run_turn(history, task, &mut on_event) => outcome,
        () = ctrl_c => Ok(TurnOutcome::Aborted),
        () = spinner => Ok(TurnOutcome::Aborted),
    }
}
