//! One widget turn: the agent loop in widget mode with the spinner, Ctrl-C/Esc and signals
//! cancelling it, then the shell's response from how it ended (the proposal assessed, audited and
//! checked against the user's deny rules; a plain answer read as a command or a message).

use std::sync::Mutex;
use std::time::Duration;

use super::answer::{self, Answer};
use super::log::WidgetLog;
use super::trial;
use super::{MAX_ITERATIONS, MESSAGE_CHARS, PROBE_LIMIT, PROBE_TIMEOUT, Response, SESSION, tty};
use crate::agent::check::{self, is_program};
use crate::agent::prompt::{PromptMode, WIDGET_REPLY_FORM};
use crate::agent::{Agent, AgentError, LoopSettings};
use crate::llm::LlmError;
use crate::policy;
use crate::protocol::{AgentEvent, Assessment, ChatMessage, Decision, Risk, TurnOutcome};
use crate::runner::Parts;
use crate::store::audit::{AuditRecord, Confirmed};
use crate::tools::Interrupts;
use crate::tools::{Registry, RunMode, RunState};

/// After a cancel, how long the turn may take to stop its probe before the widget exits anyway.
const CANCEL_GRACE: Duration = Duration::from_secs(1);
/// Answers asked for at most: the first, and one more when the first is not a usable command.
const CANDIDATES: u32 = 2;
/// Ranks of a flawed answer (lower is kept when neither candidate is clean): see
/// [`check::Problem::rank`] for commands.
const PROSE_RANK: u8 = 8;
/// A Safe candidate that failed when tried: still a command, maybe right where the user runs it.
const TRIAL_RANK: u8 = 1;
const FAILED_RANK: u8 = 9;
/// The follow-up to prose, or to a reply that looped or ran out of tokens.
fn only_the_command() -> String {
    format!("Reply with the {WIDGET_REPLY_FORM}, no explanation.")
}

/// Why a candidate is not used as it is.
struct Flaw {
    /// Lower is better when neither candidate is clean.
    rank: u8,
    /// What the model is told for its next candidate.
    feedback: String,
    /// Whether another candidate may fix it.
    retry: bool,
}

/// A proposal ends the turn with its call unanswered; the next request needs an answer to every
/// call (strict servers reject the history otherwise): the reason it was not used.
fn answer_open_calls(history: &mut Vec<ChatMessage>, why: &str) {
    let answered: Vec<String> = history.iter().filter_map(|message| message.tool_call_id.clone()).collect();
    let open: Vec<String> = history
        .iter()
        .flat_map(|message| message.tool_calls.iter().map(|call| call.id.clone()))
        .filter(|id| !answered.contains(id))
        .collect();
    for id in open {
        history.push(ChatMessage::tool(id, format!("not used: {why}")));
    }
}

/// One widget turn with everything it needs.
pub(super) struct Turn<'a> {
    /// Built with no approver: only Safe probes run.
    pub parts: &'a Parts,
    pub log: &'a WidgetLog,
    /// The user message, redacted.
    pub task: String,
    /// The environment layer, redacted.
    pub environment: String,
    /// The user's shell as the widget reports it (`bash 5.2`), whose parser checks a candidate.
    pub shell: Option<String>,
}

/// How the agent turn ended.
enum Ended {
    Turn(Result<TurnOutcome, AgentError>),
    Cancelled,
}

impl Turn<'_> {
    pub(crate) async fn converse(self) -> Response {
        // Handlers first: from here on SIGINT/SIGTERM/SIGHUP cancel instead of killing the process,
        // so the terminal is always restored.
        let mut signals = Signals::register();
        // Raw mode without a key reader would leave Ctrl-C dead: then no terminal at all (the
        // signal keys stay on and SIGINT cancels).
        let (tty, mut keys) = match tty::Tty::open().map(|tty| (tty.keys(), tty)) {
            Some((Ok(keys), tty)) => (Some(tty), Some(keys)),
            _ => (None, None),
        };
        let spinner = Mutex::new(tty.as_ref().and_then(tty::Tty::spinner));
        let width = tty.as_ref().and_then(tty::Tty::width);
        let show = |text: &str| {
            if let Ok(mut spinner) = spinner.lock()
                && let Some(spinner) = spinner.as_mut()
            {
                spinner.show(text);
            }
        };
        show("opsai");
        let ended = self.agent_turn(&mut signals, keys.as_mut(), &spinner, &show).await;
        if let Ok(mut spinner) = spinner.lock()
            && let Some(spinner) = spinner.as_mut()
        {
            spinner.erase();
        }
        let (response, warning) = self.respond_to(ended, width.map_or(MESSAGE_CHARS, |w| w.saturating_sub(1)));
        if let (Some(tty), Some(warning)) = (&tty, warning) {
            tty.warn(&warning);
        }
        // The key thread stops reading before the terminal gets its line editing back.
        drop(keys);
        drop(tty);
        response
    }

    async fn agent_turn(
        &self,
        signals: &mut Signals,
        keys: Option<&mut tty::Keys>,
        spinner: &Mutex<Option<tty::Spinner>>,
        show: &(dyn Fn(&str) + Sync),
    ) -> Ended {
        let interrupts = Interrupts::default();
        let parts = self.parts;
        let mode = RunMode { probe_limit: Some(PROBE_LIMIT), ..parts.mode(false, false) };
        let mut services = parts.services(mode, SESSION.to_owned(), &interrupts);
        services.exec_timeout = services.exec_timeout.min(PROBE_TIMEOUT);
        let cwd = std::env::current_dir()
            .ok()
            .or_else(|| std::env::var_os("PWD").map(Into::into))
            .unwrap_or_else(|| ".".into());
        let mut agent = Agent {
            model: &parts.model,
            recorder: None,
            services,
            tools: Registry::widget(),
            settings: LoopSettings {
                model: parts.config.llm.model.clone(),
                max_iterations: MAX_ITERATIONS.min(parts.config.agent.max_iterations.max(1)),
                max_tokens: Some(parts.config.llm.widget_max_tokens),
                environment: self.environment.clone(),
                prompt: PromptMode::Widget,
                outputs_shown: false,
            },
            state: RunState { cwd, ..RunState::default() },
        };
        let mut on_event = |event: AgentEvent| match event {
            // Only a probe that will run is worth showing; a refused one is answered at once.
            AgentEvent::ToolCall { tool, command: Some(command), risk: Some(Risk::Safe), .. }
                if tool == "run_command" =>
            {
                show(&command);
            }
            AgentEvent::ToolResult { .. } => show("opsai"),
            _ => {}
        };
        let turn = self.candidates(&mut agent, &mut on_event);
        tokio::pin!(turn);
        let spin = async {
            let mut ticks = tokio::time::interval(tty::FRAME_INTERVAL);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                if let Ok(mut spinner) = spinner.lock()
                    && let Some(spinner) = spinner.as_mut()
                {
                    spinner.tick();
                }
            }
        };
        let cancel = async {
            match keys {
                Some(keys) => tokio::select! {
                    () = keys.cancelled() => "a key",
                    name = signals.any() => name,
                },
                None => signals.any().await,
            }
        };
        let why = tokio::select! {
            outcome = &mut turn => return Ended::Turn(outcome),
            why = cancel => why,
            () = spin => "the spinner",
        };
        self.log.write(&format!("cancelled by {why}"));
        interrupts.turn.cancel();
        // Let a running probe be stopped (its process group killed) before the process exits.
        let _ = tokio::time::timeout(CANCEL_GRACE, &mut turn).await;
        Ended::Cancelled
    }

    /// At most [`CANDIDATES`] answers: one that is not a usable command line (a bare path,
    /// alternatives, a syntax error, prose, a loop the repetition guard stopped) is sent back with
    /// what is wrong, once; when the second is no better, the first stands.
    async fn candidates(
        &self,
        agent: &mut Agent<'_>,
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Result<TurnOutcome, AgentError> {
        let mut history = Vec::new();
        let mut message = self.task.clone();
        let mut best: Option<(u8, Result<TurnOutcome, AgentError>)> = None;
        for attempt in 1..=CANDIDATES {
            let outcome = agent.run_turn(&mut history, &message, &mut *on_event).await;
            let flaw = match self.flaw(&outcome) {
                None => self.tried(agent, &outcome, &mut *on_event).await,
                flaw => flaw,
            };
            let Some(flaw) = flaw else {
                // A second candidate that failed outright (the endpoint went away) leaves the first.
                return match (outcome, best) {
                    (Err(_), Some((_, first))) => first,
                    (outcome, _) => outcome,
                };
            };
            self.log.write(&format!("candidate {attempt} not used as it is: {}", flaw.feedback));
            let feedback = flaw.feedback.clone();
            if best.as_ref().is_none_or(|(rank, _)| flaw.rank < *rank) {
                best = Some((flaw.rank, outcome));
            }
            if !flaw.retry {
                break;
            }
            answer_open_calls(&mut history, &feedback);
            message = feedback;
        }
        match best {
            Some((_, outcome)) => outcome,
            None => Ok(TurnOutcome::StepLimit),
        }
    }

    /// A Safe candidate run once to check it (see [`trial`]): what went wrong, when it failed in a
    /// way that says the command is wrong.
    async fn tried(
        &self,
        agent: &mut Agent<'_>,
        outcome: &Result<TurnOutcome, AgentError>,
        on_event: &mut (dyn FnMut(AgentEvent) + Send),
    ) -> Option<Flaw> {
        if !trial::applies_to(self.shell.as_deref()) {
            return None;
        }
        let (command, risk) = match outcome {
            Ok(TurnOutcome::Proposed { assessment, .. }) => (assessment.sanitized.clone(), assessment.risk),
            Ok(TurnOutcome::Answer(text)) => match answer::classify(text, is_program) {
                Answer::Command(command) => {
                    let risk = policy::assess(&command, &self.parts.policy).risk;
                    (command, risk)
                }
                Answer::Prose(_) => return None,
            },
            _ => return None,
        };
        let feedback = trial::run(agent, &command, risk, &self.task, on_event).await?;
        Some(Flaw { rank: TRIAL_RANK, feedback, retry: true })
    }

    /// What is wrong with how a turn ended, if anything a second candidate could fix.
    fn flaw(&self, outcome: &Result<TurnOutcome, AgentError>) -> Option<Flaw> {
        let shell = self.shell.as_deref();
        let command_flaw = |command: &str| {
            check::review(command, shell, &is_program).map(|problem| Flaw {
                rank: problem.rank(),
                feedback: problem.feedback(),
                retry: true,
            })
        };
        match outcome {
            Ok(TurnOutcome::Proposed { assessment, .. }) => command_flaw(&assessment.sanitized),
            Ok(TurnOutcome::Answer(text)) => match answer::classify(text, is_program) {
                Answer::Command(command) => command_flaw(&command),
                Answer::Prose(_) => Some(Flaw { rank: PROSE_RANK, feedback: only_the_command(), retry: true }),
            },
            Err(AgentError::Model(LlmError::Repeating { .. } | LlmError::Incomplete(_))) => {
                Some(Flaw { rank: FAILED_RANK, feedback: only_the_command(), retry: true })
            }
            Ok(TurnOutcome::Aborted | TurnOutcome::StepLimit) | Err(_) => None,
        }
    }

    /// The shell's response and the warning to show, from how the turn ended.
    fn respond_to(&self, ended: Ended, width: usize) -> (Response, Option<String>) {
        let outcome = match ended {
            Ended::Cancelled => return (Response::Cancelled, None),
            Ended::Turn(Err(AgentError::Model(err))) => {
                return (Response::Fail(answer::message_line(&format!("opsai: {err}"), width), 1), None);
            }
            Ended::Turn(Ok(outcome)) => outcome,
        };
        let assessment = match outcome {
            TurnOutcome::Proposed { assessment, .. } => assessment,
            TurnOutcome::Answer(text) => match answer::classify(&text, is_program) {
                Answer::Command(command) => policy::assess(&command, &self.parts.policy),
                Answer::Prose(text) if text.trim().is_empty() => {
                    return (Response::Fail("opsai: the model gave an empty answer".to_owned(), 1), None);
                }
                Answer::Prose(text) => {
                    return (Response::Fail(answer::message_line(&format!("opsai: {text}"), width), 1), None);
                }
            },
            TurnOutcome::Aborted => {
                return (
                    Response::Fail("opsai: the request stopped before a command was proposed".to_owned(), 1),
                    None,
                );
            }
            TurnOutcome::StepLimit => {
                let message = "opsai: the model did not propose a command; try rewording the request";
                return (Response::Fail(message.to_owned(), 1), None);
            }
        };
        self.proposal(assessment, width)
    }

    /// A proposed command: audited, refused when the user's policy denies it, else the new buffer.
    fn proposal(&self, assessment: Assessment, width: usize) -> (Response, Option<String>) {
        let command = assessment.sanitized.trim_end().to_owned();
        if command.trim().is_empty() {
            return (Response::Fail("opsai: the model proposed an empty command".to_owned(), 1), None);
        }
        if check::is_bare_path(&command) {
            let message = format!("opsai: the model answered with a path, not a command: {command}; try rewording");
            return (Response::Fail(answer::message_line(&message, width), 1), None);
        }
        let denied = assessment.decision == Decision::Deny;
        let record = AuditRecord {
            session: SESSION.to_owned(),
            input: self.task.clone(),
            tool: "widget.propose_command".to_owned(),
            host: None,
            user: None,
            approver: None,
            command: command.clone(),
            risk: assessment.risk,
            confirmed: if denied { Confirmed::No } else { Confirmed::Proposed },
            exit: None,
            output: if denied {
                format!("refused by the user's policy: {}", assessment.reasons.join("; "))
            } else {
                "put on the shell's line; runs only if the user presses Enter".to_owned()
            },
        };
        if let Err(err) = self.parts.audit.append(&record) {
            self.log.write(&format!("audit: {err}"));
        }
        if denied {
            let message = format!("opsai: your policy denies `{command}`: {}", assessment.reasons.join("; "));
            return (Response::Fail(answer::message_line(&message, width), 3), None);
        }
        let warning = if assessment.risk > Risk::Safe { answer::warning_line(&assessment, width) } else { None };
        (Response::Replace(command), warning)
    }
}

/// SIGINT, SIGTERM and SIGHUP, each cancelling the request like Ctrl-C.
struct Signals {
    interrupt: Option<tokio::signal::unix::Signal>,
    terminate: Option<tokio::signal::unix::Signal>,
    hangup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn register() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        Self {
            interrupt: signal(SignalKind::interrupt()).ok(),
            terminate: signal(SignalKind::terminate()).ok(),
            hangup: signal(SignalKind::hangup()).ok(),
        }
    }

    /// Resolves with the signal's name when one arrives.
    async fn any(&mut self) -> &'static str {
        async fn next(signal: &mut Option<tokio::signal::unix::Signal>) {
            let received = match signal {
                Some(signal) => signal.recv().await.is_some(),
                None => false,
            };
            if !received {
                std::future::pending::<()>().await;
            }
        }
        tokio::select! {
            () = next(&mut self.interrupt) => "SIGINT",
            () = next(&mut self.terminate) => "SIGTERM",
            () = next(&mut self.hangup) => "SIGHUP",
        }
    }
}
