//! The `Agent >` REPL: a conversation, not a single shot. Each line is a task for the agent (the
//! conversation carries over), a slash command, a local `cd`, or `exit`. Turns run through the same
//! driver as one-shot runs; each message is saved as it happens when the session store works.
//!
//! With no terminal on stdin (`printf 'task\n' | opsai`), lines are read plainly, one task each,
//! and nothing is drawn but the turns themselves.

mod commands;
mod dirs;
mod editor;
mod hosts;
mod input;
mod saved;

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use crate::agent::Agent;
use crate::cli::RunArgs;
use crate::context::EnvContext;
use crate::home::Paths;
use crate::protocol::{ChatMessage, TurnOutcome};
use crate::runner::conversation::{Conversation, Origin};
use crate::runner::{self, Approvals, Parts};
use crate::store::sessions::SessionStore;
use crate::tools::Interrupts;
use crate::tools::{Offer, Registry, RunState};
use crate::ui::render::Renderer;

use super::common::{self, note, render_style, say, turn_exit_code, warn};
use super::drive::drive;
use super::startup::{self, offered};
use super::stop::Stop;
use commands::{Command, Line};
use dirs::display_dir;
use editor::AgentPrompt;
use input::{Input, Read};

/// Sessions `/sessions` lists.
const SESSIONS_SHOWN: usize = 20;

/// What the REPL keeps between turns.
struct Repl<'s> {
    paths: &'s Paths,
    parts: &'s mut Parts,
    store: Option<&'s SessionStore>,
    conversation: Conversation<'s>,
    history: Vec<ChatMessage>,
    prompt: AgentPrompt,
    state: RunState,
    environment: String,
    /// The tool families `environment` makes relevant.
    offer: Offer,
    hostname: String,
    color: bool,
    terminal: bool,
    /// A turn failed (the model, the step limit, Ctrl-C) / had a command refused: the piped REPL's
    /// exit code says so, as a one-shot run's would.
    failed: bool,
    refused: bool,
    /// `--inventory`, `--hosts-file`, `--forks`, …: how `/hosts` reads and runs a fleet.
    fleet_args: crate::cli::FleetArgs,
}

pub fn run(paths: &Paths, args: &RunArgs) -> anyhow::Result<u8> {
    let pending = EnvContext::start(&common::context_input(paths.cache_dir()));
    let config = runner::load_config(paths, &common::overrides(args))?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    // Is the model there? Checked while the REPL gets ready; the banner says (issue 23).
    let (url, look_around) = (config.llm.base_url.clone(), startup::nothing_configured(&config));
    let check = runtime.spawn(async move { startup::check(&url, look_around).await });
    let mut parts = Parts::build(paths, config, Approvals::Terminal)?;
    // Registered before the first prompt, so Ctrl-C during a turn never kills the REPL.
    let (mut sigint, stop) = {
        let _entered = runtime.enter();
        // SIGTERM/SIGHUP: a running turn ends as with Ctrl-C and its command's audit line is
        // written; at the prompt opsai leaves at once, terminal restored (`modes::stop`).
        (tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?, Stop::install()?)
    };
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let color = crate::term::stderr_color();
    let mut warnings = Vec::new();
    let store = match runner::session_store(paths, parts.redactor.clone()) {
        Ok(store) => Some(store),
        Err(err) => {
            warnings.push(format!("conversations are not saved this time: {err}"));
            None
        }
    };
    let mut input = if terminal {
        let (editor, warning) = editor::build(paths.history_file(), parts.redactor.clone(), color);
        warnings.extend(warning);
        Input::Editor(Box::new(editor))
    } else {
        Input::Plain(std::io::stdin().lock())
    };
    let findings = runtime.block_on(async { tokio::time::timeout(startup::WITHIN, check).await });
    let mut unreachable = None;
    if let Ok(Ok(findings)) = findings {
        unreachable = findings.unreachable;
        if let Some(server) = findings.found.first() {
            if terminal && offered(server) {
                match startup::adopt(paths, server) {
                    Ok(()) => {
                        let config = runner::load_config(paths, &common::overrides(args))?;
                        parts = Parts::build(paths, config, Approvals::Terminal)?;
                        unreachable = None;
                    }
                    Err(err) => warn(&format!("could not save the choice: {err}")),
                }
            } else {
                warnings.push(startup::how_to_use(server));
            }
        }
    }
    let cwd = std::env::current_dir()?;
    let context = pending.finish();
    let model = parts.config.llm.model.clone();
    let mut repl = Repl {
        paths,
        parts: &mut parts,
        store: store.as_ref(),
        conversation: Conversation::new(store.as_ref()),
        history: Vec::new(),
        prompt: AgentPrompt {
            model,
            cwd: display_dir(&cwd, paths.user_home.as_deref()),
            approve_medium: args.yes,
            dry_run: args.dry_run,
        },
        state: RunState { cwd, ..RunState::default() },
        environment: context.render(),
        offer: Offer::for_context(&context),
        hostname: context.hostname,
        color,
        terminal,
        failed: false,
        refused: false,
        fleet_args: args.fleet.clone(),
    };
    for warning in &warnings {
        warn(warning);
    }
    if terminal {
        repl.banner();
    }
    // On a terminal right under the banner; fed from a pipe, a script's log says it too.
    if let Some(line) = &unreachable {
        warn(line);
    }
    if let Some(host) = &args.ssh_host
        && !runtime.block_on(repl.host(Some(Some(host.clone()))))
    {
        return Ok(1);
    }
    if let Some(pattern) = &args.fleet.hosts
        && !runtime.block_on(repl.hosts(Some(Some(pattern.clone()))))
    {
        return Ok(1);
    }
    if let Some(pattern) = &args.fleet.contexts {
        match super::contexts::select(pattern, &repl.parts.config.kube) {
            Ok(contexts) => repl.parts.kube_contexts = contexts,
            Err(message) => {
                warn(&message);
                return Ok(1);
            }
        }
    }
    if (args.session.is_some() || args.continue_last) && !repl.resume(args.session) {
        return Ok(1);
    }
    loop {
        let line = match input.read(&repl.prompt) {
            Read::Line(line) => line,
            Read::Cleared => continue,
            Read::End => break,
        };
        if let Some(warning) = input.sync() {
            warn(&warning);
        }
        match commands::parse(&line) {
            Line::Empty => {}
            Line::Invalid(message) => warn(&message),
            Line::Command(Command::Exit) => break,
            Line::Command(Command::Host(host)) => {
                runtime.block_on(repl.host(host));
            }
            Line::Command(Command::Hosts(hosts)) => {
                runtime.block_on(repl.hosts(hosts));
            }
            Line::Command(Command::Undo) => runtime.block_on(repl.undo()),
            Line::Command(Command::Clear) => {
                if let Some(warning) = input.clear_screen() {
                    warn(&warning);
                }
            }
            Line::Command(command) => repl.command(command),
            Line::Task(task) => {
                runtime.block_on(repl.turn(&task, &mut sigint, &stop));
                if let Some(code) = stop.code() {
                    return Ok(code);
                }
            }
        }
    }
    Ok(repl.exit_code())
}

impl Repl<'_> {
    /// On a terminal a person saw every turn: 0. Fed from a pipe, a script learns that something
    /// went wrong: 1 when any turn failed, else 3 when any command was refused (docs/usage.md "The REPL").
    fn exit_code(&self) -> u8 {
        match (self.terminal, self.failed, self.refused) {
            (true, _, _) => 0,
            (false, true, _) => 1,
            (false, false, true) => 3,
            (false, false, false) => 0,
        }
    }

    fn err(&self) -> std::io::StderrLock<'static> {
        std::io::stderr().lock()
    }

    fn banner(&self) {
        let config = &self.parts.config;
        note(&format!(
            "opsai · {} at {} · /help for commands · Ctrl-D to leave",
            config.llm.model, config.llm.base_url
        ));
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::Help => say(&commands::help()),
            Command::New => {
                self.conversation.reset();
                self.history.clear();
                self.state.grants.clear();
                note("new conversation");
            }
            Command::Sessions => self.sessions(),
            Command::Resume(id) => {
                self.resume(Some(id));
            }
            Command::Model(None) => {
                note(&format!("model: {} at {}", self.prompt.model, self.parts.config.llm.base_url))
            }
            Command::Model(Some(name)) => {
                self.conversation.set_model(&name);
                note(&format!("model: {name} (for this session; `opsai config set-llm` saves a default)"));
                self.prompt.model = name;
            }
            Command::DryRun(value) => {
                self.prompt.dry_run = value.unwrap_or(!self.prompt.dry_run);
                let state = if self.prompt.dry_run { "on: commands are shown, not run" } else { "off" };
                note(&format!("dry-run {state}"));
            }
            Command::Yes(value) => {
                self.prompt.approve_medium = value.unwrap_or(!self.prompt.approve_medium);
                let state = if self.prompt.approve_medium {
                    "on: medium-risk commands run without asking in this session; high still asks"
                } else {
                    "off: medium-risk commands ask first"
                };
                note(&format!("yes {state}"));
            }
            Command::Cd(dir) => self.cd(&dir),
            // Needs the runtime: handled by the loop.
            Command::Host(_) | Command::Hosts(_) => {}
            Command::Config => self.config(),
            Command::Audit(lines) => self.audit(lines),
            // Needs the runtime (the file may be on an SSH host): handled by the loop.
            Command::Undo => {}
            // Needs the line editor: handled by the loop.
            Command::Clear => {}
            Command::Exit => {}
        }
    }

    /// `/undo`: the last change of this conversation, on the machine it was made on (this one or
    /// an SSH host, whichever commands run on now).
    async fn undo(&self) {
        let session = self.conversation.label();
        let parts = &*self.parts;
        let undo = crate::undo::Undo {
            backups: &parts.backups,
            audit: &parts.audit,
            ssh: &parts.config.ssh,
            control_dir: self.paths.ssh_control_dir(),
            force: false,
            input: "/undo",
        };
        match undo.last(Some(&session), parts.files.as_ref(), parts.host.as_deref()).await {
            Ok(done) => note(&done.to_string()),
            Err(err) => warn(&err.to_string()),
        }
    }

    fn config(&self) {
        let mut text = Vec::new();
        let home = self.paths.state_dir();
        let _ =
            crate::config::show(&self.parts.config, home, self.paths.user_home.as_deref(), &mut text, &mut Vec::new());
        let _ = self.err().write_all(&text);
    }

    fn audit(&self, lines: usize) {
        match self.parts.audit.tail(lines) {
            Ok(found) if found.is_empty() => note("the audit log is empty"),
            Ok(found) => say(&found.join("\n")),
            Err(err) => warn(&err.to_string()),
        }
    }

    async fn turn(&mut self, task: &str, sigint: &mut tokio::signal::unix::Signal, stop: &Stop) {
        let origin = Origin {
            cwd: self.state.cwd.to_string_lossy().into_owned(),
            host: self.hostname.clone(),
            model: self.prompt.model.clone(),
        };
        self.conversation.begin(task, &origin);
        let interrupts = Interrupts::default();
        let mode = self.parts.mode(self.prompt.approve_medium, self.prompt.dry_run);
        let mut agent = Agent {
            model: &self.parts.model,
            recorder: Some(&self.conversation),
            services: self.parts.services(mode, self.conversation.label(), &interrupts),
            tools: Registry::agent(self.parts.tools_config(self.offer)),
            settings: self.parts.settings(
                &self.prompt.model,
                &format!("{}{}", self.environment, super::contexts::environment(&self.parts.kube_contexts)),
            ),
            state: std::mem::take(&mut self.state),
        };
        let width = common::stdout_width();
        let style = render_style(false, false, self.terminal);
        let renderer = Mutex::new(Renderer::new(style, std::io::stdout(), std::io::stderr()).with_markdown(width));
        stop.during(interrupts.turn.clone());
        let outcome = drive(&mut agent, &mut self.history, task, &renderer, sigint).await;
        stop.idle();
        self.state = agent.state;
        if self.conversation.end_turn() {
            // The model never answered: what it would have seen is gone with the saved conversation.
            self.history.clear();
        }
        match turn_exit_code(&outcome, self.state.refused_without_terminal, interrupts.turn.is_cancelled()) {
            0 => {}
            3 => self.refused = true,
            _ => self.failed = true,
        }
        self.state.refused_without_terminal = false;
        if matches!(outcome, Ok(TurnOutcome::Aborted)) && interrupts.turn.is_cancelled() {
            note("interrupted; the conversation goes on");
        }
        if let Some(warning) = self.conversation.take_warning() {
            warn(&warning);
        }
    }
}
