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
mod object;
mod request;
mod target;

use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::Mutex;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::agent::prompt::PromptMode;
use crate::cli::ExplainArgs;
use crate::context::EnvContext;
use crate::home::Paths;
use crate::policy::PolicyConfig;
use crate::runner::{self, Approvals, LlmOverrides, Parts};
use crate::tools::Interrupts;
use crate::tools::{Registry, RunState};
use crate::ui::render::Renderer;

use super::common::{self, render_style, turn_exit_code, warn};
use super::drive::drive;

use answer::{command_view, render as render_answer};
use excerpt::{DEFAULT_KEEP_CHARS, excerpt};
use input::{RawInput, read_bounded};

/// Raw bytes kept from each end of piped input, from which the excerpt's lines are chosen.
pub(crate) const RAW_WINDOW: usize = 256 * 1024;

/// What the audit log and the session label call these turns.
const SESSION_LABEL: &str = "explain";

pub fn run(paths: &Paths, args: &ExplainArgs) -> anyhow::Result<u8> {
    let text = args.text.join(" ");
    match read_piped().context("reading the piped input")? {
        Piped::Quit => Ok(130),
        Piped::Input(raw) => explain_piped(paths, args, &raw, &text),
        Piped::Nothing if text.trim().is_empty() => {
            warn(
                "nothing to explain: pipe output into it (`journalctl -u nginx | opsai explain`) or give a \
                 command (`opsai explain 'tar -xzvf a.tgz'`)",
            );
            Ok(2)
        }
        Piped::Nothing => explain_argument(paths, args, text.trim()),
    }
}

/// What stdin brought.
enum Piped {
    Input(RawInput),
    /// A terminal, a closed stdin, or an empty input.
    Nothing,
    /// Ctrl-C twice while reading: exit 130.
    Quit,
}

/// Stdin read to its end when it is not a terminal.
fn read_piped() -> std::io::Result<Piped> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(Piped::Nothing);
    }
    // A closed stdin is no input.
    let Ok(fd) = stdin.as_fd().try_clone_to_owned() else { return Ok(Piped::Nothing) };
    let file = std::fs::File::from(fd);
    input::widen_pipe(&file);
    Ok(match read_until_eof(file)? {
        Some(raw) if !raw.is_empty() => Piped::Input(raw),
        Some(_) => Piped::Nothing,
        None => Piped::Quit,
    })
}

/// Reads on a thread while the main thread watches Ctrl-C. In `kubectl logs -f pod | opsai explain`
/// one Ctrl-C ends the writer too (same process group), so its pipe reaches EOF and what was read is
/// explained; a second Ctrl-C (a writer that ignores it) quits: `None` (the reading thread, still
/// blocked, ends with the process).
fn read_until_eof(mut file: std::fs::File) -> std::io::Result<Option<RawInput>> {
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
                    return result.unwrap_or_else(|_| Err(std::io::Error::other("the reading thread stopped"))).map(Some);
                }
                _ = sigint.recv() => {
                    if pressed {
                        return Ok(None);
                    }
                    pressed = true;
                    warn("Ctrl-C: explaining what was read once the input ends (Ctrl-C again to quit)");
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
    use object::{IfUnknown, object_request};
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
    write!(out, "{}", command_view(text, &assessment, crate::term::stdout_color()))?;
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
    let context = EnvContext::start(&common::context_input(paths.cache_dir()));
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
                    warn("Ctrl-C: stopping the probes");
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
        let style = render_style(false, args.quiet, true);
        // The answer streams a Markdown block at a time, each suggested command with its risk badge.
        let width = common::stdout_width();
        let (policy, color) = (parts.policy.clone(), crate::term::stdout_color());
        let blocks = Box::new(move |block: &str| render_answer(block, &policy, color, width));
        let renderer = Mutex::new(
            Renderer::new(style, std::io::stdout(), std::io::stderr())
                .with_raw_answer(!std::io::stdout().is_terminal())
                .with_blocks(blocks, color, width),
        );
        let mut sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let mut history = Vec::new();
        let outcome = drive(&mut agent, &mut history, &task, &renderer, &mut sigint).await;
        let refused = agent.state.refused_without_terminal;
        drop(agent);
        Ok(turn_exit_code(&outcome, refused, interrupts.turn.is_cancelled()))
    })
}
