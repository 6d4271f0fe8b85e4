//! The ReAct loop (DESIGN §5): task → model → tool calls → observations → model → … → answer.
//!
//! `run_turn` only emits `AgentEvent`s and answers through the seams it is given (model, executor,
//! approver, audit); it never prints. Every tool call gets exactly one observation, linked by its id.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub(crate) mod check;
mod echo;
pub mod history;
mod holdback;
pub mod prompt;

use thiserror::Error;

use crate::llm::ModelRef;
use crate::llm::tool_mode::{Purpose, ToolCalls};
use crate::llm::{ChatModel, ChatRequest, LlmError, ModelDelta};
use crate::protocol::{AgentEvent, ChatMessage, ObservationStatus, ReplyProgress, TurnOutcome, Usage};
use crate::tools::{Registry, RunState, Services, ToolContext, ToolEffect, invalid_arguments};

/// Characters of history kept before the oldest observations are shortened.
const HISTORY_BUDGET_CHARS: usize = 60_000;
/// The config keys whose value is sent as `max_tokens`, named when a reply is cut by it.
const MAX_TOKENS: &str = "llm.max_tokens";
const WIDGET_MAX_TOKENS: &str = "llm.widget_max_tokens";
/// The same failing call this many times in a row ends the turn.
const REPEATED_FAILURES: u32 = 3;
/// A turn whose only reply was empty (the widget says it its own way), and what to do about it.
const NO_ANSWER: &str = "the model gave an empty reply, neither a command nor an answer";
const NO_ANSWER_ADVICE: &str =
    "ask again or reword the request (small models do this more often: a larger one may not)";
/// What the history keeps for such a turn, so the next request does not hold two user messages
/// in a row (some chat templates refuse them).
const NO_ANSWER_NOTE: &str = "(no answer)";
/// The second ask after a small model's unusable first reply.
const ASK_AGAIN: &str = "Do the task: reply with the command line that does it, alone in a ```sh block.";

#[derive(Debug, Error)]
pub enum AgentError {
    #[error(transparent)]
    Model(#[from] LlmError),
}

/// Settings for the loop itself.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    pub model: String,
    pub max_iterations: u32,
    pub max_tokens: Option<u32>,
    /// L3: the rendered environment context.
    pub environment: String,
    /// L1/L2: the agent's or the widget's role.
    pub prompt: prompt::PromptMode,
    /// The person sees each command's output as it runs, so an answer that recites it is stopped
    /// (`echo`). False under `-q`, where the answer is all they get.
    pub outputs_shown: bool,
}

/// Receives every message as it enters the conversation (the session store), so a crash or kill
/// loses at most the message in flight.
pub trait Recorder: Send + Sync {
    fn record(&self, message: &ChatMessage);
}

pub struct Agent<'a> {
    pub model: &'a dyn ChatModel,
    /// Where messages are persisted as they happen; `None` keeps the conversation in memory only.
    pub recorder: Option<&'a dyn Recorder>,
    pub services: Services<'a>,
    pub tools: Registry,
    pub settings: LoopSettings,
    pub state: RunState,
}

/// Where events go.
pub(crate) type EventSink<'e> = &'e mut (dyn FnMut(AgentEvent) + Send);

impl Agent<'_> {
    /// Runs one user request to its end. `history` holds earlier turns (without the system prompt)
    /// and receives this turn's messages.
    pub async fn run_turn(
        &mut self,
        history: &mut Vec<ChatMessage>,
        task: &str,
        events: EventSink<'_>,
    ) -> Result<TurnOutcome, AgentError> {
        let turn_start = history.len();
        // Everything the tools returned in this conversation that the model can still read (a
        // README read in an earlier task can steer this one): the gate's `from_output`.
        self.state.returned = tool_outputs(history).map(str::to_owned).collect();
        // A token pasted into the request is a secret too: it never leaves the machine (invariant 4).
        self.push(history, ChatMessage::user(self.services.redactor.redact(task)));
        let mut usage: Option<Usage> = None;
        let mut failures: (Option<String>, u32) = (None, 0);
        let mut commands_run: Vec<String> = Vec::new();
        // The one second ask a small model gets when its first reply is unusable (`ask_again`).
        let (mut ask_again, mut asked_again) = (None, false);
        // The bare command line the second ask was about, if that was why.
        let mut bare_first: Option<String> = None;
        for iteration in 1..=self.settings.max_iterations {
            history::fit(history, turn_start, HISTORY_BUDGET_CHARS);
            let (mut reply, recited) = match self.ask_model(history, turn_start, ask_again.take(), events).await {
                Ok(Some(reply)) => reply,
                Ok(None) => {
                    events(AgentEvent::Done { iterations: iteration, usage });
                    return Ok(TurnOutcome::Aborted);
                }
                Err(LlmError::Repeating { .. })
                    if self.may_ask_again(iteration, &history[turn_start..], &mut asked_again) =>
                {
                    ask_again = Some(self.asked_again("repeated itself", events));
                    continue;
                }
                Err(err) => {
                    events(AgentEvent::Error { message: with_advice(&err) });
                    return Err(err.into());
                }
            };
            if let Some(add) = reply.usage {
                let total = usage.get_or_insert_with(Usage::default);
                total.prompt_tokens += add.prompt_tokens;
                total.completion_tokens += add.completion_tokens;
            }
            let key = if self.settings.prompt == prompt::PromptMode::Widget { WIDGET_MAX_TOKENS } else { MAX_TOKENS };
            if let Some(problem) = reply.finish.problem(self.settings.max_tokens, key) {
                self.cut_short(history, reply, &problem, turn_start, events);
                events(AgentEvent::Error { message: problem.clone() });
                return Err(LlmError::Incomplete(problem).into());
            }
            // A reply stopped while reciting output is an answer, whatever its text holds.
            let mut not_a_command = None;
            if reply.tool_calls.is_empty() && !recited {
                // Asked for the block of a bare command line (only the reply right after the ask)
                // and given the same line again: that line is the command, through the same checks,
                // policy and approval as a block.
                if bare_first.take().is_some_and(|first| first == reply.content.trim()) {
                    reply.content = format!("```sh\n{}\n```", reply.content.trim());
                }
                not_a_command = self.command_in_block(&mut reply, &commands_run, &history[turn_start..]).await;
            }
            let text_only = reply.tool_calls.is_empty() && !recited;
            let blank = text_only && is_blank(&reply.content);
            let bare = text_only && !blank && check::is_bare_command(&reply.content);
            let unusable = if blank {
                Some("gave neither a command nor an answer")
            } else if bare {
                Some("wrote a command without its ```sh block")
            } else {
                None
            };
            if let Some(what) = unusable
                && self.may_ask_again(iteration, &history[turn_start..], &mut asked_again)
            {
                bare_first = bare.then(|| reply.content.trim().to_owned());
                ask_again = Some(self.asked_again(what, events));
                continue;
            }
            if blank && self.settings.prompt != prompt::PromptMode::Widget && no_call_yet(&history[turn_start..]) {
                // Nothing ran and nothing was said: an empty screen and exit 0 would read as done.
                let message = if reply.reasoning.trim().is_empty() {
                    format!("{NO_ANSWER}; {NO_ANSWER_ADVICE}")
                } else {
                    format!("the model only reasoned and gave no answer; {NO_ANSWER_ADVICE}")
                };
                events(AgentEvent::Error { message: message.clone() });
                self.push(history, ChatMessage::assistant(NO_ANSWER_NOTE.to_owned(), Vec::new()));
                return Err(LlmError::Incomplete(message).into());
            }
            if reply.tool_calls.is_empty() {
                events(AgentEvent::Answer { text: reply.content.clone() });
                self.push(history, ChatMessage::assistant(reply.content.clone(), Vec::new()));
                events(AgentEvent::Done { iterations: iteration, usage });
                return Ok(TurnOutcome::Answer(reply.content));
            }
            if !reply.content.trim().is_empty() {
                events(AgentEvent::Thought { text: reply.content.clone() });
            }
            unique_ids(&mut reply.tool_calls, &history[turn_start..]);
            // Broken arguments are stored as `{"_raw": …}` (valid JSON) and answered with an error.
            let mut unusable: Vec<Option<String>> =
                reply.tool_calls.iter_mut().map(history::unusable_arguments).collect();
            if let Some(problem) = not_a_command {
                unusable[0] = Some(problem);
            }
            self.push(history, self.remembered(&reply.content, &reply.tool_calls));
            for (index, call) in reply.tool_calls.iter().enumerate() {
                let effect = match self.tools.get(&call.name).filter(|_| unusable[index].is_none()) {
                    None => {
                        let names = self.tools.names().join(", ");
                        events(AgentEvent::ToolCall {
                            id: call.id.clone(),
                            tool: call.name.clone(),
                            args: call.arguments.clone(),
                            command: None,
                            risk: None,
                            reasons: Vec::new(),
                        });
                        let problem = unusable[index].take();
                        let message =
                            problem.unwrap_or_else(|| format!("unknown tool `{}`; the tools are: {names}", call.name));
                        ToolEffect::Observe(invalid_arguments(&call.id, message))
                    }
                    Some(tool) => {
                        let model = ModelRef { client: self.model, name: &self.settings.model };
                        let ctx = ToolContext {
                            services: &self.services,
                            state: &mut self.state,
                            events,
                            input: task,
                            model,
                        };
                        tool.call(&call.id, &call.arguments, ctx).await
                    }
                };
                match effect {
                    ToolEffect::Observe(observation) => {
                        let failed = observation.status != ObservationStatus::Ran || observation.exit_code != Some(0);
                        if matches!(observation.status, ObservationStatus::InvalidArguments) {
                            events(crate::tools::unran_result(&observation));
                        }
                        if observation.status == ObservationStatus::Ran {
                            // What ran: the user's edit when there was one, not what the model sent.
                            let sent = call.arguments.get("command").and_then(|c| c.as_str()).unwrap_or("");
                            let ran = crate::tools::run_command::edited_command(&observation.text).unwrap_or(sent);
                            commands_run.push(ran.into());
                        }
                        self.state.returned.push(observation.text.clone());
                        self.push(history, ChatMessage::tool(call.id.clone(), observation.text));
                        let signature = format!("{}{}", call.name, call.arguments);
                        failures = match (failed, failures) {
                            (false, _) => (None, 0),
                            (true, (Some(last), count)) if last == signature => (Some(last), count + 1),
                            (true, _) => (Some(signature), 1),
                        };
                    }
                    ToolEffect::Propose { command, assessment, .. } => {
                        // Remaining calls of this reply still need an observation each.
                        self.close_remaining(
                            history,
                            &reply.tool_calls[index + 1..],
                            "skipped: a command was proposed",
                        );
                        events(AgentEvent::Done { iterations: iteration, usage });
                        return Ok(TurnOutcome::Proposed { command, assessment });
                    }
                    ToolEffect::Abort => {
                        self.push(history, ChatMessage::tool(call.id.clone(), "aborted by the user"));
                        self.close_remaining(
                            history,
                            &reply.tool_calls[index + 1..],
                            "skipped: the user aborted the turn",
                        );
                        events(AgentEvent::Done { iterations: iteration, usage });
                        return Ok(TurnOutcome::Aborted);
                    }
                }
                if self.services.interrupts.turn.is_cancelled() {
                    self.close_remaining(history, &reply.tool_calls[index + 1..], "skipped: interrupted");
                    events(AgentEvent::Done { iterations: iteration, usage });
                    return Ok(TurnOutcome::Aborted);
                }
            }
            if failures.1 >= REPEATED_FAILURES {
                let text = format!(
                    "I stopped: the same call failed {REPEATED_FAILURES} times in a row ({}). \
                     Check the last error above, adjust the request, and try again.",
                    failures.0.as_deref().unwrap_or("")
                );
                // The task failed (exit 1): an error, not an answer; kept in the history so a
                // follow-up knows why the turn ended.
                events(AgentEvent::Error { message: text.clone() });
                self.push(history, ChatMessage::assistant(text, Vec::new()));
                events(AgentEvent::Done { iterations: iteration, usage });
                return Ok(TurnOutcome::StepLimit);
            }
        }
        let summary = if commands_run.is_empty() {
            format!("Stopped after {} steps without a final answer; no command ran.", self.settings.max_iterations)
        } else {
            format!(
                "Stopped after {} steps without a final answer. Commands that ran: {}",
                self.settings.max_iterations,
                commands_run.join("; ")
            )
        };
        let advice = format!(
            " Raise agent.max_iterations (now {}) in config.json, or ask for a smaller step.",
            self.settings.max_iterations
        );
        events(AgentEvent::Error { message: summary + &advice });
        events(AgentEvent::Done { iterations: self.settings.max_iterations, usage });
        Ok(TurnOutcome::StepLimit)
    }

    /// How this loop's calls travel: the agent with text calls reads a ```sh block as the command
    /// to run (its prompt says so).
    fn calls(&self) -> ToolCalls {
        let purpose = if self.settings.prompt == prompt::PromptMode::Widget { Purpose::Widget } else { Purpose::Calls };
        self.model.tool_calls(&self.settings.model, purpose)
    }

    /// The agent with text calls: its prompt says a ```sh block is a command to run.
    fn blocks_are_commands(&self, calls: ToolCalls) -> bool {
        self.settings.prompt == prompt::PromptMode::Agent && calls == ToolCalls::Text
    }

    /// Whether a small model's unusable first reply (a loop, an empty block, a bare command line)
    /// is asked for again: with text calls, once per turn, before any call. After a refusal the
    /// ask would push the model to retry what was refused (L0 rule 5). Nothing of that reply is kept.
    fn may_ask_again(&self, iteration: u32, turn: &[ChatMessage], asked_again: &mut bool) -> bool {
        let may = self.blocks_are_commands(self.calls())
            && no_call_yet(turn)
            && !*asked_again
            && iteration < self.settings.max_iterations;
        *asked_again |= may;
        may
    }

    /// Says the reply is being asked for again (what streamed of it is void, as after a retried
    /// request) and gives the request's last message.
    fn asked_again(&self, what: &str, events: EventSink<'_>) -> &'static str {
        events(AgentEvent::Retry { reason: what.to_owned(), wait_ms: 0, attempt: 2, max_attempts: 2 });
        ASK_AGAIN
    }

    /// The agent's recital guard for one request: the output of this turn's commands, as the model
    /// saw it. `None` for the widget and explain (they run no command whose output a person saw).
    fn echo_guard(&self, turn: &[ChatMessage]) -> Option<echo::EchoGuard> {
        // Text calls only: a native model's text before its call is a thought, and cutting it
        // would drop the call; a small model is the one that recites for minutes.
        if !self.blocks_are_commands(self.calls()) || !self.settings.outputs_shown {
            return None;
        }
        // Shell commands only: their output streamed to the person; a file read did not.
        let shown: std::collections::HashSet<&str> = turn
            .iter()
            .flat_map(|m| &m.tool_calls)
            .filter(|call| call.name == "run_command")
            .map(|call| call.id.as_str())
            .collect();
        echo::EchoGuard::new(
            turn.iter()
                .filter(|m| m.role == crate::protocol::Role::Tool)
                .filter(|m| m.tool_call_id.as_deref().is_some_and(|id| shown.contains(id)))
                .map(|m| m.content.as_str()),
        )
    }

    /// With text calls, the agent's reply that holds a command in a ```sh block runs it, unless it
    /// already ran in this turn: a small model that repeats the command it ran is done, and its
    /// reply is the answer (no loop). Nor when the block is a line of what a tool returned in this
    /// turn: asked for the tenth line of a script, a 1.5B model ran `sed -n 10p`, then wrote that
    /// line (`mkdir -p …`) back in a block, and it ran. Output is data, never a step (L0 rule 2; a
    /// file or log can say anything), so the reply is the answer, for the person to read and run
    /// if they want. A block that is no command at all (a bare path, only comments, text the shell
    /// cannot parse) becomes a call that is not run: the returned problem is its observation, so
    /// the model writes the command instead.
    async fn command_in_block(
        &self,
        reply: &mut crate::llm::ModelReply,
        commands_run: &[String],
        turn: &[ChatMessage],
    ) -> Option<String> {
        if !self.blocks_are_commands(self.calls()) || self.tools.get("run_command").is_none() {
            return None;
        }
        let (call, prose) = crate::llm::text_calls::command_block(&reply.content)?;
        let command = call.arguments.get("command").and_then(|c| c.as_str()).unwrap_or("");
        if commands_run.iter().any(|ran| ran.trim() == command) {
            return None;
        }
        // This turn's output only: read back right after it came, the line is an answer. A line
        // from an earlier task's output goes to the gate, which asks before it runs.
        if crate::tools::gate::is_in_output(command, tool_outputs(turn)) {
            reply.content.push_str(NOT_RUN_FROM_OUTPUT);
            return None;
        }
        let problem = self.not_a_command(command).await;
        reply.content = prose;
        reply.tool_calls.push(call);
        problem
    }

    /// Why `command` from a ```sh block is not a command line, judged here only: on a remote host
    /// or a fleet its paths and shell are not this machine's, and the command's own error says it.
    async fn not_a_command(&self, command: &str) -> Option<String> {
        if self.services.host.is_some() || self.services.fleet.is_some() {
            return None;
        }
        let problem = if check::is_bare_path(command) {
            check::Problem::Path
        } else if check::runs_nothing(command) {
            check::Problem::Nothing
        } else {
            // `bash -n` waits up to two seconds: off the runtime's own threads.
            let owned = command.to_owned();
            let error = tokio::task::spawn_blocking(move || check::syntax(&owned, Some("bash"))).await.ok()??;
            check::Problem::Syntax(error)
        };
        Some(format!("not run: {}", problem.feedback()))
    }

    /// The model's reply as the history keeps it and sends it back: its text and each call's
    /// arguments redacted (a command word by word), so a password the model wrote into a command
    /// (`curl -u admin:pw`) is not sent again with every later request. What runs is the call as
    /// the model sent it, approved as it was shown.
    fn remembered(&self, content: &str, calls: &[crate::protocol::ToolCall]) -> ChatMessage {
        let redactor = &self.services.redactor;
        let calls = calls
            .iter()
            .map(|call| crate::protocol::ToolCall { arguments: redactor.redact_json(&call.arguments), ..call.clone() })
            .collect();
        ChatMessage::assistant(redactor.redact(content), calls)
    }

    fn push(&self, history: &mut Vec<ChatMessage>, message: ChatMessage) {
        if let Some(recorder) = self.recorder {
            recorder.record(&message);
        }
        history.push(message);
    }

    /// A reply the model could not finish (token limit, content filter): the text so far is shown
    /// and kept; no call of it runs, each is answered with `problem`.
    fn cut_short(
        &self,
        history: &mut Vec<ChatMessage>,
        mut reply: crate::llm::ModelReply,
        problem: &str,
        turn_start: usize,
        events: EventSink<'_>,
    ) {
        if reply.tool_calls.is_empty() && !reply.content.trim().is_empty() {
            events(AgentEvent::Answer { text: reply.content.clone() });
        }
        unique_ids(&mut reply.tool_calls, &history[turn_start..]);
        for call in &mut reply.tool_calls {
            history::unusable_arguments(call);
        }
        self.push(history, self.remembered(&reply.content, &reply.tool_calls));
        self.close_remaining(history, &reply.tool_calls, &format!("[ERROR]: not run: {problem}"));
    }

    fn close_remaining(&self, history: &mut Vec<ChatMessage>, calls: &[crate::protocol::ToolCall], why: &str) {
        for call in calls {
            self.push(history, ChatMessage::tool(call.id.clone(), why));
        }
    }

    /// One model request, streamed; `None` when the turn was cancelled. A context-length error
    /// shortens older observations and retries once.
    async fn ask_model(
        &self,
        history: &mut [ChatMessage],
        turn_start: usize,
        ask_again: Option<&str>,
        events: EventSink<'_>,
    ) -> Result<Option<(crate::llm::ModelReply, bool)>, LlmError> {
        let mut retried = false;
        loop {
            let mut echo = self.echo_guard(&history[turn_start..]);
            let recital = tokio_util::sync::CancellationToken::new();
            // What went to the screen as `answer_delta`, so a stopped recital adds only the rest.
            let mut streamed = String::new();
            let calls = self.calls();
            let system = prompt::system_prompt(self.settings.prompt, calls, &self.settings.environment);
            let mut messages = vec![ChatMessage::system(system)];
            messages.extend(prompt::examples(self.settings.prompt, calls));
            messages.extend(history.iter().cloned());
            if self.blocks_are_commands(calls) {
                // Built for each request, never stored: the saved conversation, the web page's
                // replay and a later larger model keep the observation as it was.
                reshape_observations(&mut messages);
            }
            // Sent with this request only: the conversation (and the session store) keeps what the
            // person and the model said, not opsai's second ask.
            if let Some(ask) = ask_again {
                // Some chat templates refuse two user messages in a row: the ask joins the task.
                match messages.last_mut() {
                    Some(last) if last.role == crate::protocol::Role::User => {
                        last.content = format!("{}\n\n{ask}", last.content);
                    }
                    _ => messages.push(ChatMessage::user(ask)),
                }
            }
            let request = ChatRequest {
                model: self.settings.model.clone(),
                messages,
                tools: self.tools.specs(),
                max_tokens: self.settings.max_tokens,
            };
            // Reply text streams as `answer_delta`, except what may be a tool call written as text.
            // The names `text_calls` will recover a call by, so nothing it runs was shown first.
            let tool_names = if request.tools.is_empty() {
                Vec::new()
            } else {
                crate::llm::text_calls::callable_names(self.tools.names())
            };
            let shell_blocks = self.blocks_are_commands(calls);
            let mut holdback = holdback::HoldBack::new(tool_names.clone()).with_shell_blocks(shell_blocks);
            // The screen hears once per request that a call is being written, or text held back.
            let (mut writing_call, mut holding) = (false, false);
            let mut on_delta = |delta: ModelDelta| match delta {
                ModelDelta::Content(mut text) => {
                    if recital.is_cancelled() {
                        return;
                    }
                    if let Some(keep) = echo.as_mut().and_then(|guard| guard.push(&text)) {
                        text.truncate(keep);
                        recital.cancel();
                    }
                    let text = holdback.push(&text);
                    if !text.is_empty() {
                        streamed.push_str(&text);
                        events(AgentEvent::AnswerDelta { text });
                    } else if holdback.holding() && !std::mem::replace(&mut holding, true) {
                        events(AgentEvent::Progress { stage: ReplyProgress::HoldingText });
                    }
                }
                ModelDelta::ToolCallPiece => {
                    if !std::mem::replace(&mut writing_call, true) {
                        events(AgentEvent::Progress { stage: ReplyProgress::WritingCall });
                    }
                }
                // Held text may still be recovered as a call once the stream ends: not decided yet.
                // With ```sh blocks as calls the loop decides (a block, a bare command line asked for
                // again, or the answer): the `answer` event says it.
                ModelDelta::Finished { tool_calls: false } if !holdback.holding() && !shell_blocks => {
                    events(AgentEvent::Progress { stage: ReplyProgress::AnswerComplete });
                }
                ModelDelta::Finished { .. } => {}
                ModelDelta::Reasoning(text) => events(AgentEvent::Thought { text }),
                ModelDelta::Retry { reason, wait, attempt, max_attempts } => {
                    // The next attempt starts over: its call is announced again, and its text is
                    // judged from its own start (a text call there is held back, not streamed).
                    (writing_call, holding) = (false, false);
                    holdback = holdback::HoldBack::new(tool_names.clone()).with_shell_blocks(shell_blocks);
                    echo = self.echo_guard(&history[turn_start..]);
                    streamed.clear();
                    events(AgentEvent::Retry {
                        reason,
                        wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                        attempt,
                        max_attempts,
                    })
                }
            };
            let cancel = self.services.interrupts.turn.clone();
            let result = tokio::select! {
                result = self.model.complete(&request, &mut on_delta) => Some(result),
                () = cancel.cancelled() => return Ok(None),
                () = recital.cancelled() => None,
            };
            // The guard may stop the reply in the same poll its stream ends: a recital either way.
            if recital.is_cancelled()
                && let Some(guard) = echo.take()
            {
                let content = guard.stopped_reply();
                if let Some(rest) = content.strip_prefix(streamed.as_str()).filter(|rest| !rest.is_empty()) {
                    events(AgentEvent::AnswerDelta { text: rest.to_owned() });
                }
                let reply = crate::llm::ModelReply { content, ..Default::default() };
                return Ok(Some((reply, true)));
            }
            let Some(result) = result else { return Ok(None) };
            match result {
                Err(LlmError::ContextTooLong) if !retried => {
                    retried = true;
                    history::fit(history, turn_start, HISTORY_BUDGET_CHARS / 4);
                }
                Err(LlmError::Cancelled) => return Ok(None),
                other => return other.map(|reply| Some((reply, false))),
            }
        }
    }
}

/// What the tools returned in `messages`: every observation's text.
fn tool_outputs(messages: &[ChatMessage]) -> impl Iterator<Item = &str> {
    messages.iter().filter(|m| m.role == crate::protocol::Role::Tool).map(|m| m.content.as_str())
}

/// Said under a small model's answer whose ```sh block was a line of the output it was given, so
/// nobody takes the block for a step that ran.
const NOT_RUN_FROM_OUTPUT: &str = "\n\n(not run: that line is in the output above, and opsai does not run text from output; run it yourself if you mean to)";

/// A reply with nothing to read or run: empty, or only fences and a language tag (```` ```\nsh\n``` ````
/// from a small model that meant to open a block). `bash` alone, without a fence, is an answer.
fn is_blank(text: &str) -> bool {
    let filler = |word: &str| {
        let bare = word.trim_matches('`');
        bare.is_empty() || ["sh", "bash", "shell"].contains(&bare)
    };
    text.trim().is_empty() || (text.contains("```") && text.split_whitespace().all(filler))
}

/// Whether the turn so far (`turn`: its messages) made no tool call.
fn no_call_yet(turn: &[ChatMessage]) -> bool {
    turn.iter().all(|m| m.tool_calls.is_empty())
}

/// Every `run_command` observation as a small model (text calls) reads it: see [`after_run`].
fn reshape_observations(messages: &mut [ChatMessage]) {
    let commands: std::collections::HashSet<String> = messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .filter(|call| call.name == "run_command")
        .map(|call| call.id.clone())
        .collect();
    for message in messages {
        if message.role == crate::protocol::Role::Tool
            && message.tool_call_id.as_ref().is_some_and(|id| commands.contains(id))
        {
            message.content = after_run(&message.content);
        }
    }
}

/// A `run_command` observation (`text`) as a small model is told it. After a command the shell
/// could not run (exit 126: not executable, such as a directory; 127: not found) it otherwise
/// answers as if it had run. After a success it read the header back as its answer (`exit 0`;
/// `471` from `exit 0 · 471 ms` for "how many CPU cores"): the header goes, and the output is
/// followed by what to do with it. A refusal or other failure keeps its text.
fn after_run(text: &str) -> String {
    let (header, rest) = text.split_once('\n').unwrap_or((text, ""));
    let outcome = crate::exec::output::outcome_of(header);
    if let Err(Some(code @ (126 | 127))) = outcome {
        return format!(
            "{}\n[exit {code}: the shell could not run this command. If the task still needs one, reply with the \
             corrected {}.]",
            text.trim_end_matches('\n'),
            prompt::WIDGET_REPLY_FORM
        );
    }
    let next = format!(
        "[Answer the request from this output in a sentence or two; if it does not answer it, reply with the next {}.]",
        prompt::WIDGET_REPLY_FORM
    );
    if outcome.is_err() {
        return format!("{}\n{next}", text.trim_end_matches('\n'));
    }
    // The user's edit note stays first: the output is for the edited command.
    let (note, output) = if crate::tools::run_command::edited_command(text).is_some() {
        let (first, output) = rest.split_once('\n').unwrap_or((rest, ""));
        (Some(first), output)
    } else {
        (None, rest)
    };
    let note = note.map(|note| format!("{note}\n")).unwrap_or_default();
    if output.trim().is_empty() {
        return format!("{note}[It ran and printed nothing.] {next}");
    }
    format!("{note}{}\n{next}", output.trim_end_matches('\n'))
}

/// A model failure as the user sees it: what happened and, where the error does not say it
/// already, what to do.
fn with_advice(err: &LlmError) -> String {
    let advice = match err {
        LlmError::Timeout { .. } => {
            "check that the model server is up and not overloaded, or raise llm.timeout in config.json"
        }
        LlmError::FirstByteTimeout { .. } => {
            "it may still be reading a long prompt on the CPU: raise llm.local_first_byte_timeout in config.json, \
             or use a smaller model"
        }
        LlmError::RateLimited { .. } => "wait a minute and try again, or use another model (--model, --base-url)",
        LlmError::Http { status: 500..=599, .. } => {
            "the endpoint may be overloaded or restarting: try again shortly, or check its logs"
        }
        LlmError::Protocol(_) => "try again; if it keeps happening, check the endpoint with `opsai config show`",
        _ => return err.to_string(),
    };
    format!("{err}; {advice}")
}

/// Generated ids (`call_1`) repeat across replies; an observation must answer exactly one call, so
/// a repeated id gets a suffix before it enters the history.
fn unique_ids(calls: &mut [crate::protocol::ToolCall], earlier: &[ChatMessage]) {
    let mut seen: std::collections::HashSet<String> =
        earlier.iter().flat_map(|m| m.tool_calls.iter().map(|c| c.id.clone())).collect();
    for call in calls {
        let mut id = call.id.clone();
        let mut n = 2;
        while id.is_empty() || seen.contains(&id) {
            id = format!("{}_{n}", if call.id.is_empty() { "call" } else { &call.id });
            n += 1;
        }
        seen.insert(id.clone());
        call.id = id;
    }
}

#[cfg(test)]
mod tests;
