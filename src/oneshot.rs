//! `opsai [OPTIONS] <TASK>...`: one agent turn from the command line, rendered on stderr with the
//! answer on stdout (or JSON lines, or only the answer). Exit codes follow DESIGN §3.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::{Agent, Interrupts, LoopSettings};
use crate::app::Paths;
use crate::approval::{Approver, NoApprover, TerminalApprover};
use crate::cli::RunArgs;
use crate::config::{Config, LlmField};
use crate::context::{ContextInput, EnvContext, PendingContext};
use crate::exec::pty::PtyExecutor;
use crate::llm::openai::OpenAiClient;
use crate::protocol::TurnOutcome;
use crate::redact::Redactor;
use crate::store::audit::AuditLog;
use crate::tools::{Registry, RunMode, RunState, Services};
use crate::ui::render::{Renderer, Style};

/// How long the first request may wait for slow probes (`git status` in a big repository): the
/// model is better served by an answer now than by knowing whether the tree is dirty.
const PROBE_BUDGET: Duration = Duration::from_millis(1);

/// The audit log as configured.
pub fn audit_log(config: &Config, paths: &Paths) -> AuditLog {
    AuditLog::new(
        config.audit_log_path(&paths.home, paths.user_home.as_deref()),
        config.audit.max_log_size_mb,
        u64::from(config.audit.retain_days),
        Arc::new(Redactor::from_process_env()),
    )
}

pub fn run(paths: &Paths, args: &RunArgs) -> anyhow::Result<u8> {
    // The slow probes (git status) overlap the rest of start-up; they get a few ms at most.
    let mut input = ContextInput::from_process(&paths.home);
    input.probe_budget = PROBE_BUDGET;
    let context = EnvContext::start(&input);
    let (mut config, _) = Config::load_or_create(&paths.home)?;
    config.apply_process_env()?;
    if let Some(model) = &args.model {
        config.set_override(LlmField::Model, model.clone(), "--model");
    }
    if let Some(url) = &args.base_url {
        config.set_override(LlmField::BaseUrl, url.trim_end_matches('/').to_owned(), "--base-url");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    runtime.block_on(turn(paths, args, config, context))
}

async fn turn(paths: &Paths, args: &RunArgs, config: Config, context: PendingContext) -> anyhow::Result<u8> {
    let task = args.task.join(" ");
    let redactor = Redactor::from_process_env();
    let audit = audit_log(&config, paths);
    let policy = config.policy()?;
    let model = OpenAiClient::new(
        config.llm.base_url.clone(),
        config.llm.api_key.clone(),
        Duration::from_secs(config.llm.timeout),
    )?;
    let executor = PtyExecutor::new().with_capture(config.exec.capture_head, config.exec.capture_tail);
    // OPSAI_NONINTERACTIVE=1 behaves as if there were no terminal: it can only take approvals away.
    let forced_off = std::env::var_os("OPSAI_NONINTERACTIVE").is_some_and(|v| !v.is_empty() && v != "0");
    let terminal = if forced_off { None } else { TerminalApprover::open() };
    let approver: &dyn Approver = match &terminal {
        Some(terminal) => terminal,
        None => &NoApprover,
    };
    let interrupts = Interrupts::default();
    let context = context.finish();
    let mut agent = Agent {
        model: &model,
        services: Services {
            executor: &executor,
            approver,
            audit: &audit,
            redactor: &redactor,
            policy: &policy,
            mode: RunMode {
                auto_approve_safe: config.safety.auto_approve_safe,
                approve_medium: args.yes,
                dry_run: args.dry_run,
            },
            session: format!("s{}", std::process::id()),
            exec_timeout: Duration::from_secs(config.exec.timeout_s),
            interrupts: &interrupts,
        },
        tools: Registry::agent(),
        settings: LoopSettings {
            model: config.llm.model.clone(),
            max_iterations: config.agent.max_iterations,
            max_tokens: Some(config.llm.max_tokens),
            environment: redactor.redact(&context.render()),
        },
        state: RunState { cwd: std::env::current_dir()?, ..RunState::default() },
    };
    let style = if args.json {
        Style::Json
    } else if args.quiet {
        Style::Quiet
    } else {
        let terminal = crate::app::stderr_is_terminal();
        Style::Human { color: terminal && std::env::var_os("NO_COLOR").is_none(), spinner: terminal }
    };
    let renderer = std::sync::Mutex::new(Renderer::new(style, std::io::stdout(), std::io::stderr()));
    let mut on_event = |event: crate::protocol::AgentEvent| {
        if let Ok(mut renderer) = renderer.lock() {
            let _ = renderer.handle(&event);
            if matches!(event, crate::protocol::AgentEvent::ToolResult { .. }) {
                renderer.waiting();
            }
        }
    };
    // Registered before anything is shown, so a Ctrl-C is never the default "kill" instead.
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    if let Ok(mut renderer) = renderer.lock() {
        renderer.waiting();
    }
    let ctrl_c = {
        let interrupts = &interrupts;
        async move {
            while sigint.recv().await.is_some() {
                interrupts.interrupt();
            }
            std::future::pending::<()>().await;
        }
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
    let mut history = Vec::new();
    let outcome = tokio::select! {
        outcome = agent.run_turn(&mut history, &task, &mut on_event) => outcome,
        () = ctrl_c => unreachable_turn(),
        () = spinner => unreachable_turn(),
    };
    let refused = agent.state.refused_without_terminal;
    Ok(match outcome {
        Ok(TurnOutcome::Answer(_)) | Ok(TurnOutcome::Proposed { .. }) if refused => 3,
        Ok(TurnOutcome::Answer(_)) | Ok(TurnOutcome::Proposed { .. }) => 0,
        Ok(TurnOutcome::Aborted) if interrupts.turn.is_cancelled() => 130,
        Ok(TurnOutcome::Aborted) => 1,
        Ok(TurnOutcome::StepLimit) => 1,
        // The error was already shown as an `error` event.
        Err(_) => 1,
    })
}

/// The Ctrl-C and spinner loops never finish on their own.
fn unreachable_turn() -> Result<TurnOutcome, crate::agent::AgentError> {
    Ok(TurnOutcome::Aborted)
}
