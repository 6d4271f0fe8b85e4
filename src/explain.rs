//! `opsai explain`: piped output, a command, or an ops object.
//!
//! - **Piped input** (stdin is not a terminal and not empty): read to EOF in bounded memory (`input`),
//!   cut to its first and last part and cleaned (`excerpt`), redacted, and sent as untrusted data
//!   between delimiters (`request`); TEXT is the user's question. The model may run read-only probes
//!   through `run_command` under the normal approval rules (anything else is asked on `/dev/tty`, and
//!   refused with no terminal).
//! - **A command** (TEXT, no piped input, and `target` says it is one): its parts and local risk are
//!   printed first (no model needed), then the model's explanation.
//! - **An object** (a port, pid, file, container or service): analyzed by `crate::analyze` (read-only
//!   commands from its template), and the model summarises the report. A bare word that is also a
//!   program (`nginx`, `sshd`) is an object when a container or systemd unit has that name, else a
//!   command (`target` documents the heuristic).
//! - **Ctrl-C** is watched from before the first probe: it cancels the probes (their process groups
//!   end) and opsai exits 130 once they have, leaving no child behind.
//!
//! Progress goes to stderr as in a one-shot run; stdout gets only the explanation, with every
//! command the model suggests shown after its risk badge (`answer`). Exit codes as one-shot (DESIGN §3).

mod answer;
mod excerpt;
mod input;
mod request;
mod target;

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::agent::prompt::PromptMode;
use crate::cli::ExplainArgs;
use crate::context::{ContextInput, EnvContext};
use crate::home::Paths;
use crate::policy::PolicyConfig;
use crate::protocol::TurnOutcome;
use crate::runner::{self, Approvals, LlmOverrides, Parts};
use crate::tools::Interrupts;
use crate::tools::{Registry, RunState};
use crate::ui::render::{Renderer, Style};

use answer::{command_view, render as render_answer};
use excerpt::{DEFAULT_KEEP_CHARS, excerpt};
use input::{RawInput, read_bounded};

/// Raw bytes kept from each end of piped input, from which the excerpt's lines are chosen.
pub const RAW_WINDOW: usize = 256 * 1024;

/// How long the first request may wait for slow environment probes (as in one-shot runs).
const PROBE_BUDGET: Duration = Duration::from_millis(1);

/// What the audit log and the session label call these turns.
const SESSION_LABEL: &str = "explain";

pub fn run(paths: &Paths, args: &ExplainArgs) -> anyhow::Result<u8> {
    let text = args.text.join(" ");
    match read_piped().context("reading the piped input")? {
        Some(raw) => explain_piped(paths, args, &raw, &text),
        None if text.trim().is_empty() => {
            say("nothing to explain: pipe output into it (`journalctl -u nginx | opsai explain`) or give a \
                 command (`opsai explain 'tar -xzvf a.tgz'`)");
            Ok(2)
        }
        None => explain_argument(paths, args, text.trim()),
    }
}

/// Stdin read to its end when it is not a terminal; `None` for a terminal or an empty input.
fn read_piped() -> std::io::Result<Option<RawInput>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    // A closed stdin is no input.
    let Ok(fd) = stdin.as_fd().try_clone_to_owned() else { return Ok(None) };
    let file = std::fs::File::from(fd);
    input::widen_pipe(&file);
    let raw = read_until_eof(file)?;
    Ok((!raw.is_empty()).then_some(raw))
}

/// Reads on a thread while the main thread watches Ctrl-C. In `kubectl logs -f pod | opsai explain`
/// one Ctrl-C ends the writer too (same process group), so its pipe reaches EOF and what was read is
/// explained; a second Ctrl-C (a writer that ignores it) quits with 130.
fn read_until_eof(mut file: std::fs::File) -> std::io::Result<RawInput> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let (done, mut read) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let _ = done.send(read_bounded(&mut file, RAW_WINDOW));
        });
        let mut pressed = false;
        loop {
            tokio::select! {
                result = &mut read => {
                    return result.unwrap_or_else(|_| Err(std::io::Error::other("the reading thread stopped")));
                }
                _ = sigint.recv() => {
                    if pressed {
                        std::process::exit(130);
                    }
                    pressed = true;
                    say("Ctrl-C: explaining what was read once the input ends (Ctrl-C again to quit)");
                }
            }
        }
    })
}

fn explain_piped(paths: &Paths, args: &ExplainArgs, raw: &RawInput, question: &str) -> anyhow::Result<u8> {
    let kept = excerpt(raw, DEFAULT_KEEP_CHARS);
    let task = request::piped(&kept, question, &request::nonce());
    explain_turn(paths, args, async |_: &Parts, _| Ok(task))
}

fn explain_argument(paths: &Paths, args: &ExplainArgs, text: &str) -> anyhow::Result<u8> {
    use crate::analyze::explain::{IfUnknown, object_request};
    let assessment = crate::policy::assess(text, &PolicyConfig::default());
    let exists = |path: &str| std::path::Path::new(path).exists();
    let lookup = target::Lookup { is_program: &target::is_known_program, exists: &exists };
    let quiet = args.quiet;
    match target::classify(text, &assessment, &lookup) {
        target::Target::Object(_) => explain_turn(paths, args, async |parts: &Parts, cancel| {
            let request = object_request(paths, parts, SESSION_LABEL, text, IfUnknown::Ask, quiet, cancel).await?;
            request.ok_or_else(|| anyhow::anyhow!("nothing to analyze in `{text}`"))
        }),
        target::Target::CommandOrObject => {
            explain_turn(paths, args, async |parts: &Parts, cancel| {
                match object_request(paths, parts, SESSION_LABEL, text, IfUnknown::Command, quiet, cancel).await? {
                    Some(request) => Ok(request),
                    None => explain_command(text, parts),
                }
            })
        }
        target::Target::Command => explain_turn(paths, args, async |parts: &Parts, _| explain_command(text, parts)),
    }
}

/// Prints the command's parts and local risk (no model needed: it is on screen even if the model is
/// unreachable) and returns the request for the model's explanation.
fn explain_command(text: &str, parts: &Parts) -> anyhow::Result<String> {
    let assessment = crate::policy::assess(text, &parts.policy);
    let mut out = std::io::stdout().lock();
    write!(out, "{}", command_view(text, &assessment, stdout_color()))?;
    writeln!(out)?;
    out.flush()?;
    Ok(request::command(&assessment))
}

/// One agent turn in explain mode. `prepare` returns the user message (printing anything that must
/// come first, running an object's template); Ctrl-C while it runs cancels its token, waits for the
/// probes to end, and exits 130.
fn explain_turn(
    paths: &Paths,
    args: &ExplainArgs,
    prepare: impl AsyncFnOnce(&Parts, CancellationToken) -> anyhow::Result<String>,
) -> anyhow::Result<u8> {
    let mut input = ContextInput::from_process(&paths.home);
    input.probe_budget = PROBE_BUDGET;
    let context = EnvContext::start(&input);
    let config = runner::load_config(paths, &LlmOverrides { model: args.model.clone(), base_url: None })?;
    let parts = Parts::build(paths, config, Approvals::Terminal)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    runtime.block_on(async {
        // Installed before any probe runs, so Ctrl-C never kills opsai with probes still running.
        let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let cancel = CancellationToken::new();
        let task = {
            let work = prepare(&parts, cancel.clone());
            tokio::pin!(work);
            tokio::select! {
                task = &mut work => task?,
                _ = sigint.recv() => {
                    cancel.cancel();
                    say("Ctrl-C: stopping the probes");
                    // The executor ends each probe's process group; opsai exits once they are gone.
                    let _ = work.await;
                    return Ok(130);
                }
            }
        };
        let interrupts = Interrupts::default();
        let context = context.finish();
        let mut settings = parts.settings(&parts.config.llm.model, &context.render());
        settings.prompt = PromptMode::Explain;
        let mut agent = Agent {
            model: &parts.model,
            recorder: None,
            services: parts.services(parts.mode(false, false), SESSION_LABEL.into(), &interrupts),
            tools: Registry::explain(),
            settings,
            state: RunState { cwd: std::env::current_dir()?, ..RunState::default() },
        };
        let style = if args.quiet {
            Style::Quiet
        } else {
            let terminal = crate::term::stderr_is_terminal();
            Style::Human { color: crate::term::stderr_color(), spinner: terminal }
        };
        // The answer is printed below, with risk badges: the renderer shows only the progress.
        let renderer = Mutex::new(Renderer::new(style, std::io::sink(), std::io::stderr()));
        let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let mut history = Vec::new();
        let outcome = runner::drive(&mut agent, &mut history, &task, &renderer, &mut sigint).await;
        let refused = agent.state.refused_without_terminal;
        drop(agent);
        if let Ok(TurnOutcome::Answer(text)) = &outcome {
            let width = dialoguer::console::Term::stdout().size_checked().map_or(80, |(_, cols)| usize::from(cols));
            let shown = render_answer(text, &parts.policy, stdout_color(), width);
            let mut out = std::io::stdout().lock();
            out.write_all(shown.as_bytes())?;
            out.flush()?;
        }
        Ok(match outcome {
            Ok(TurnOutcome::Answer(_)) | Ok(TurnOutcome::Proposed { .. }) if refused => 3,
            Ok(TurnOutcome::Answer(_)) | Ok(TurnOutcome::Proposed { .. }) => 0,
            Ok(TurnOutcome::Aborted) if interrupts.turn.is_cancelled() => 130,
            Ok(TurnOutcome::Aborted) | Ok(TurnOutcome::StepLimit) => 1,
            // The error was already shown as an `error` event.
            Err(_) => 1,
        })
    })
}

/// Markdown and badges in color only on a color terminal.
fn stdout_color() -> bool {
    crate::term::stdout_color()
}

fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "opsai: {text}");
}
