//! `opsai [OPTIONS] <TASK>...`: one agent turn from the command line, rendered on stderr with the
//! answer on stdout (or JSON lines, or only the answer). Exit codes follow DESIGN §3.

use crate::agent::Agent;
use crate::cli::RunArgs;
use crate::config::Config;
use crate::context::{EnvContext, PendingContext};
use crate::home::Paths;
use crate::runner::conversation::{Conversation, Origin};
use crate::runner::{self, Approvals, Parts};
use crate::tools::Interrupts;
use crate::tools::{Offer, Registry, RunState};
use crate::ui::render::Renderer;

use super::common::{self, render_style, turn_exit_code};
use super::drive::drive;
use super::stop::Stop;

pub fn run(paths: &Paths, args: &RunArgs) -> anyhow::Result<u8> {
    // The slow probes (git status) overlap the rest of start-up; they get a few ms at most.
    let context = EnvContext::start(&common::context_input(paths.cache_dir()));
    let config = runner::load_config(paths, &common::overrides(args))?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    runtime.block_on(turn(paths, args, config, context))
}

async fn turn(paths: &Paths, args: &RunArgs, config: Config, context: PendingContext) -> anyhow::Result<u8> {
    let task = args.task.join(" ");
    let mut parts = Parts::build(paths, config, Approvals::Terminal)?;
    let interrupts = Interrupts::default();
    let mut context = context.finish();
    let mut cwd = std::env::current_dir()?;
    let mut environment = context.render();
    if let Some(host) = &args.ssh_host {
        match parts.set_host(paths, Some(host)).await {
            Ok(Some(remote)) => {
                environment = runner::remote_environment(host, &remote, parts.remote_sandbox.as_ref());
                cwd = remote.cwd.clone();
                context = remote;
            }
            Ok(None) => {}
            Err(err) => {
                common::warn(&err.to_string());
                return Ok(1);
            }
        }
    }
    let fleet_only = args.fleet.options.only_for_a_fleet();
    if args.fleet.hosts.is_none() && fleet_only {
        common::warn("--inventory, --hosts-file and --serial choose and run a fleet; give --hosts PATTERN too");
        return Ok(2);
    }
    if let Some(pattern) = &args.fleet.hosts {
        match super::fleet::select(paths, &parts.config, &args.fleet.options, pattern) {
            Ok(fleet) => {
                environment = format!("{environment}{}", fleet.environment());
                if !args.json && !args.quiet {
                    common::note(&format!("working on {} (`{pattern}`)", fleet.label()));
                }
                // Each host starts in its login directory.
                cwd = std::path::PathBuf::from(".");
                parts.fleet = Some(fleet);
            }
            Err(message) => {
                common::warn(&message);
                return Ok(1);
            }
        }
    }
    if let Some(pattern) = &args.fleet.contexts {
        match super::contexts::select(pattern, &parts.config.kube) {
            Ok(contexts) => {
                environment.push_str(&super::contexts::environment(&contexts));
                if !args.json && !args.quiet {
                    common::note(&format!("kube tools on {} contexts: {}", contexts.len(), contexts.join(", ")));
                }
                parts.kube_contexts = contexts;
            }
            Err(message) => {
                common::warn(&message);
                return Ok(1);
            }
        }
    }
    let store = match runner::session_store(paths, parts.redactor.clone()) {
        Ok(store) => Some(store),
        Err(err) => {
            common::warn(&format!("this run is not saved: {err}"));
            None
        }
    };
    let mut conversation = Conversation::new(store.as_ref());
    let mut history = Vec::new();
    let cwd_text = cwd.to_string_lossy().into_owned();
    if args.session.is_some() || args.continue_last {
        let resumed = conversation
            .chosen(args.session, args.continue_last, &cwd_text)
            .and_then(|id| id.map(|id| conversation.resume(id)).transpose());
        match resumed {
            Ok(Some((_, messages))) => history = messages,
            Ok(None) => {}
            Err(err) => {
                common::warn(&err.to_string());
                return Ok(1);
            }
        }
    }
    let origin = Origin { cwd: cwd_text, host: context.hostname.clone(), model: parts.config.llm.model.clone() };
    conversation.begin(&task, &origin);
    let mut agent = Agent {
        model: &parts.model,
        recorder: Some(&conversation),
        services: parts.services(parts.mode(args.yes, args.dry_run), conversation.label(), &interrupts),
        tools: Registry::agent(parts.tools_config(Offer::for_context(&context))),
        settings: crate::agent::LoopSettings {
            outputs_shown: !args.quiet,
            ..parts.settings(&parts.config.llm.model, &environment)
        },
        state: RunState { cwd, ..RunState::default() },
    };
    let style = render_style(args.json, args.quiet, true);
    // `-q` into a pipe or a file gets the answer byte for byte (docs/policy.md "What you see is what runs");
    // on a terminal it is sanitized, as every model-written string is.
    let raw_answer = !std::io::IsTerminal::is_terminal(&std::io::stdout());
    let mut renderer = Renderer::new(style, std::io::stdout(), std::io::stderr()).with_raw_answer(raw_answer);
    if !raw_answer {
        // A person reads the answer on a terminal: Markdown a block at a time, as in the REPL.
        renderer = renderer.with_markdown(common::stdout_width());
    }
    let renderer = std::sync::Mutex::new(renderer);
    // Registered before anything is shown, so a Ctrl-C is never the default "kill" instead.
    let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    // SIGTERM/SIGHUP end the turn like Ctrl-C does (see `modes::stop`); exit 128+n.
    let stop = Stop::install()?;
    stop.during(interrupts.turn.clone());
    let outcome = drive(&mut agent, &mut history, &task, &renderer, &mut sigint).await;
    stop.idle();
    let refused = agent.state.refused_without_terminal;
    drop(agent);
    conversation.end_turn();
    if let Some(warning) = conversation.take_warning() {
        common::warn(&warning);
    }
    if let Some(code) = stop.code() {
        return Ok(code);
    }
    // No model and none chosen: a server on its usual local port is named with how to use it.
    if matches!(outcome, Err(crate::agent::AgentError::Model(crate::llm::LlmError::Connect { .. })))
        && super::startup::nothing_configured(&parts.config)
    {
        let candidates = super::startup::discover::candidates();
        if let Some(server) = super::startup::discover::local_servers(&candidates).await.first() {
            common::warn(&super::startup::how_to_use(server));
        }
    }
    Ok(turn_exit_code(&outcome, refused, interrupts.turn.is_cancelled()))
}
