//! `opsai widget`: one Ctrl-G request (DESIGN §9; reference/shell-integration.md §1).
//!
//! The shell sends its line in `OPSAI_BUFFER` (and the cursor, shell, version, last status and
//! keymap in `OPSAI_*` variables), the last history lines on stdin. One agent turn in widget mode
//! follows: only Safe probes run, at most [`PROBE_LIMIT`], never asking anyone; the turn ends with
//! `propose_command`, or with a plain answer that is only a command. The proposal is sanitized and
//! assessed like every command, and audited as `widget.propose_command` with `CONFIRMED: proposed`
//! (the user's Enter is the approval).
//!
//! The contract with the shell scripts:
//! - exit 0: stdout is exactly the new buffer (no trailing newline unless stdout is a terminal);
//! - exit 130: cancelled (Ctrl-C or Esc on the terminal, SIGINT, SIGTERM, SIGHUP): stdout empty;
//! - any other exit: stdout is one message line (1: no command; 2: configuration; 3: the user's
//!   policy denies the proposal).
//!
//! Nothing else is ever written to stdout or stderr: the spinner and the risk warning go to
//! `/dev/tty` (see [`tty`]), errors and diagnostics to `$OPSAI_HOME/widget.log` (see [`log`]).
//!
//! Fast by construction: no subprocess describes the machine (files and `PATH` only, no
//! `git status`, no Docker refresh), no fixed sleeps, one current-thread runtime, and TLS is only
//! set up for `https://` endpoints (`runner::model_client`).

pub mod answer;
pub mod log;
pub mod request;
mod trial;
pub mod tty;
mod turn;

use std::io::{IsTerminal, Read, Write};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cli::WidgetArgs;
use crate::context::{ContextInput, EnvContext};
use crate::home::Paths;
use crate::redact::Redactor;
use crate::runner::{self, Approvals, LlmOverrides, Parts};
use log::WidgetLog;
use request::{Plan, WidgetInput};

/// Safe probes a widget turn may run.
pub(crate) const PROBE_LIMIT: u32 = 3;
/// Model round trips per widget turn at most (probes, a refusal or two, the proposal).
pub(crate) const MAX_ITERATIONS: u32 = 6;
/// The longest one probe may run: the user is waiting at the prompt.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the history on stdin may take to arrive.
const HISTORY_WAIT: Duration = Duration::from_millis(250);
/// Bytes of stdin read at most.
const HISTORY_BYTES: u64 = 256 * 1024;
/// The message line's length without a terminal to measure.
pub(crate) const MESSAGE_CHARS: usize = 200;
/// The audit log's SESSION for widget requests.
pub(crate) const SESSION: &str = "widget";

/// How the request ended, for the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Response {
    /// Exit 0: the new buffer.
    Replace(String),
    /// A message line and its exit code.
    Fail(String, u8),
    /// Exit 130, nothing printed.
    Cancelled,
}

pub fn run(paths: &Paths, args: &WidgetArgs) -> anyhow::Result<u8> {
    let started = Instant::now();
    let history = read_history();
    let redactor = Arc::new(Redactor::from_process_env());
    let log = Arc::new(WidgetLog::new(paths.state_dir(), redactor.clone()));
    install_panic_hook(log.clone());
    let response = std::panic::catch_unwind(AssertUnwindSafe(|| respond(paths, args, &redactor, &log, history)))
        .unwrap_or_else(|_| {
            tty::restore();
            Response::Fail(format!("opsai: internal error; details in {}", log.path().display()), 1)
        });
    let (code, detail) = match &response {
        Response::Replace(_) => (0, "replaced".to_owned()),
        Response::Fail(message, code) => (*code, format!("failed with {code}: {message}")),
        Response::Cancelled => (130, "cancelled".to_owned()),
    };
    log.write(&format!(
        "{} ms, shell {}, keymap {}: {detail}",
        started.elapsed().as_millis(),
        args.shell.as_deref().unwrap_or("?"),
        args.keymap.as_deref().unwrap_or("?"),
    ));
    let text = match response {
        Response::Replace(buffer) => buffer,
        Response::Fail(message, _) => message,
        Response::Cancelled => String::new(),
    };
    let mut stdout = std::io::stdout().lock();
    let newline = if std::io::stdout().is_terminal() && !text.is_empty() { "\n" } else { "" };
    // A shell that stopped listening is no reason for another exit code.
    let _ = write!(stdout, "{text}{newline}").and_then(|()| stdout.flush());
    Ok(code)
}

/// The history lines on stdin, read on a thread while the rest starts; `None` when stdin is a
/// terminal (run by hand) or history is off.
fn read_history() -> Option<std::sync::mpsc::Receiver<String>> {
    if history_off() || std::io::stdin().is_terminal() {
        return None;
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("history".to_owned()).spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::stdin().lock().take(HISTORY_BYTES).read_to_end(&mut bytes);
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    spawned.ok().map(|_| receiver)
}

/// `OPSAI_NO_HISTORY` set to anything but empty or `0`.
fn history_off() -> bool {
    std::env::var_os("OPSAI_NO_HISTORY").is_some_and(|value| !value.is_empty() && value != "0")
}

/// The default hook prints on stderr (which is /dev/null); this one logs, erases the spinner and
/// restores the terminal, so even a bug leaves the shell usable.
fn install_panic_hook(log: Arc<WidgetLog>) {
    std::panic::set_hook(Box::new(move |info| {
        tty::emergency_cleanup();
        log.write(&format!("panic: {info}"));
    }));
}

fn respond(
    paths: &Paths,
    args: &WidgetArgs,
    redactor: &Arc<Redactor>,
    log: &WidgetLog,
    history: Option<std::sync::mpsc::Receiver<String>>,
) -> Response {
    let raw_history = history.and_then(|answer| answer.recv_timeout(HISTORY_WAIT).ok()).unwrap_or_default();
    let input = WidgetInput {
        buffer: args.buffer.clone().unwrap_or_default(),
        cursor: args.cursor,
        status: args.status,
        history: request::history_lines(&raw_history),
        history_off: history_off(),
    };
    let prepared = match request::plan(&input) {
        Plan::Ask(prepared) => prepared,
        Plan::Hint(hint) => return Response::Fail(hint, 1),
    };
    let overrides = LlmOverrides { model: args.model.clone(), base_url: None };
    let config = match runner::load_config(paths, &overrides) {
        Ok(config) => config,
        Err(err) => return Response::Fail(one_line(&format!("opsai: {err:#}")), crate::exit::code_for(&err)),
    };
    // Fails only on the user's policy rules or the model's endpoint: configuration to fix.
    let parts = match Parts::build(paths, config, Approvals::Nobody) {
        Ok(parts) => parts,
        Err(err) => return Response::Fail(one_line(&format!("opsai: {err:#}")), 2),
    };
    let environment = environment(paths, args, &prepared.notes);
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => return Response::Fail(one_line(&format!("opsai: cannot start: {err}")), 1),
    };
    let turn = turn::Turn {
        parts: &parts,
        log,
        task: redactor.redact(&prepared.task),
        environment: redactor.redact(&environment),
        shell: args.shell.clone().filter(|shell| !shell.is_empty()),
    };
    let response = runtime.block_on(turn.converse());
    // A probe's reader may still be blocked; nothing is left to wait for.
    runtime.shutdown_background();
    response
}

/// The environment layer: the machine (files and `PATH` only), the allowlisted variables, and the
/// widget's notes (cursor, last status, history).
fn environment(paths: &Paths, args: &WidgetArgs, notes: &str) -> String {
    let mut input = ContextInput::from_process(paths.cache_dir());
    input.probe_budget = Duration::ZERO;
    input.refresh_docker = false;
    input.shell = args.shell.as_deref().filter(|shell| !shell.is_empty()).map(|shell| {
        match args.shell_version.as_deref().filter(|version| !version.is_empty()) {
            Some(version) => format!("{shell} {version}"),
            None => shell.to_owned(),
        }
    });
    input.extra = request::allowed_env(|name| std::env::var(name).ok());
    let mut text = EnvContext::collect(&input).render_for_widget();
    text.push_str(notes);
    text
}

/// `text` on one line.
fn one_line(text: &str) -> String {
    answer::message_line(&text.replace(['\n', '\r'], " "), MESSAGE_CHARS * 2)
}
