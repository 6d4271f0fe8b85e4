//! What every agent entry point builds once (model client, executor, approver, audit log, redactor,
//! policy) and [`drive`], which runs one turn with the renderer, the spinner and Ctrl-C routing.
//! One-shot runs and the REPL share both, so a turn behaves the same wherever it starts.

pub mod conversation;
pub mod stop;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use tokio::signal::unix::Signal;

use crate::agent::{Agent, AgentError, LoopSettings};
use crate::approval::{Approver, NoApprover, TerminalApprover};
use crate::cli::RunArgs;
use crate::config::{Config, LlmField};
use crate::context::EnvContext;
use crate::exec::Executor;
use crate::exec::fs::{FileSystem, LocalFs};
use crate::exec::pty::PtyExecutor;
use crate::exec::ssh::{SshError, SshExecutor, SshFs, SshTransport};
use crate::home::Paths;
use crate::llm::openai::OpenAiClient;
use crate::policy::PolicyConfig;
use crate::protocol::{AgentEvent, ChatMessage, TurnOutcome};
use crate::redact::Redactor;
use crate::store::audit::AuditLog;
use crate::store::backups::Backups;
use crate::tools::Interrupts;
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

/// The prompt's environment layer for a host reached through ssh.
pub fn remote_environment(host: &str, context: &EnvContext) -> String {
    format!(
        "{}- Remote: every command and file tool runs on `{host}` over ssh, not on the user's own machine\n",
        context.render()
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
        let model = config.llm.client()?;
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

    /// Moves commands and files to `host` through ssh (`None`: back to this machine). Starts the
    /// master connection and collects the host's environment in one round trip; returns it for
    /// the prompt (its working directory is the remote login directory).
    pub async fn set_host(&mut self, paths: &Paths, host: Option<&str>) -> Result<Option<EnvContext>, SshError> {
        let local = PtyExecutor::new().with_capture(self.config.exec.capture_head, self.config.exec.capture_tail);
        let Some(host) = host else {
            self.executor = Box::new(local);
            self.files = Box::new(LocalFs);
            self.host = None;
            return Ok(None);
        };
        let ssh = &self.config.ssh;
        let transport =
            SshTransport::open(host, &paths.home.join("ssh"), ssh.control_persist_s, ssh.options.clone()).await?;
        let output = transport
            .call(&crate::context::remote::script(), None)
            .await
            .map_err(|error| SshError::Connect { host: host.to_owned(), message: error.to_string() })?;
        let context = crate::context::remote::parse(&String::from_utf8_lossy(&output.stdout));
        self.executor = Box::new(SshExecutor::new(transport.clone(), local));
        self.files = Box::new(SshFs::new(transport, context.home.clone()));
        self.host = Some(host.to_owned());
        Ok(Some(context))
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

/// A finished turn's exit code (DESIGN §3): 0 done, 3 a command was refused for want of a terminal
/// to confirm it, 130 interrupted (Ctrl-C), 1 the task or the model failed (an `error` event has
/// said why).
pub fn turn_exit_code(outcome: &Result<TurnOutcome, AgentError>, refused: bool, interrupted: bool) -> u8 {
    match outcome {
        Ok(TurnOutcome::Answer(_)) | Ok(TurnOutcome::Proposed { .. }) if refused => 3,
        Ok(TurnOutcome::Answer(_)) | Ok(TurnOutcome::Proposed { .. }) => 0,
        Ok(TurnOutcome::Aborted) if interrupted => 130,
        Ok(TurnOutcome::Aborted) | Ok(TurnOutcome::StepLimit) | Err(_) => 1,
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
