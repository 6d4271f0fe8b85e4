//! `run_command`, and every tool that builds a command line, in four steps: assess (arguments
//! checked, the line sanitized and rated) → gate (`tools::gate`: approved, refused or edited and
//! assessed again) → execute (in a PTY, in the OS sandbox when nobody said yes) → observe (bounded,
//! redacted observation, one audit line). What runs is exactly the sanitized command the user was shown.

mod assess;
mod execute;
mod fleet;
mod observe;
mod route;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use self::assess::Planned;
use super::gate::{self, Allowed, Proposal, Refusal, Verdict};
use super::{RunState, Services, Tool, ToolContext, ToolEffect};
use crate::protocol::{AgentEvent, ApprovalDecision, Assessment, Observation, ToolSpec};
use crate::store::audit::{AuditError, AuditRecord, Confirmed};

/// `probes`: the widget's schema, without `cwd` and `sandbox` (its probes are read-only and run
/// where the user is; the arguments are still accepted, only not advertised).
pub(crate) struct RunCommand {
    pub probes: bool,
}

impl RunCommand {
    pub(crate) const FULL: RunCommand = RunCommand { probes: false };
    pub(crate) const PROBES: RunCommand = RunCommand { probes: true };
}

impl Tool for RunCommand {
    fn name(&self) -> &'static str {
        "run_command"
    }

    fn spec(&self) -> ToolSpec {
        let mut properties = json!({"command": {"type": "string"}, "why": {"type": "string"}});
        if !self.probes {
            properties["cwd"] = json!({"type": "string"});
            properties["sandbox"] = json!({"type": "boolean", "description": "false: run outside the read-only sandbox (the user is asked)."});
        }
        ToolSpec {
            name: self.name().into(),
            description: "Run one bash command line; returns exit code and output.".into(),
            parameters: json!({"type": "object", "properties": properties, "required": ["command"]}),
        }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(run(Caller::RUN_COMMAND, id, args, ctx))
    }
}

/// The tool a command line comes from: its name in events, and in the audit log's TOOL field
/// (`worker.action`, as seed 000's log has it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Caller<'n> {
    pub tool: &'n str,
    pub worker: &'n str,
}

impl Caller<'_> {
    pub(crate) const RUN_COMMAND: Caller<'static> = Caller { tool: "run_command", worker: "shell" };
}

/// Runs `args.command` through the policy, the approval and the executor, on behalf of `caller`.
pub(super) async fn run(caller: Caller<'_>, id: &str, args: &Value, ctx: ToolContext<'_, '_>) -> ToolEffect {
    let ToolContext { services, state, events, input, .. } = ctx;
    let mut call = Call { caller, id, services, events, input, edited: None };
    let mut planned = match assess::assess(&mut call, args, &state.cwd) {
        Ok(planned) => planned,
        Err(invalid) => return ToolEffect::Observe(invalid),
    };
    // On a fleet, every host is connected to before the prompt, so the person answers knowing
    // which hosts cannot be reached (they are left out, each with its reason).
    if let Some(fleet) = services.fleet
        && fleet::will_ask(services, &planned)
    {
        let Some(unreached) = fleet::reach(services, fleet).await else {
            call.approval(ApprovalDecision::Abort, &planned.assessment);
            let _ = call.audit(&planned.assessment, Confirmed::No, None, "aborted by the user while connecting");
            return ToolEffect::Abort;
        };
        planned.note = Some(fleet::reach_note(fleet, &unreached));
        planned.unreached = unreached;
    }
    let allowed = match approve(&mut call, state, &mut planned) {
        Ok(allowed) => allowed,
        Err(effect) => return *effect,
    };
    if let Some(fleet) = services.fleet {
        return ToolEffect::Observe(fleet::run(&mut call, &planned, allowed, fleet).await);
    }
    let ran = execute::execute(&mut call, planned.request(id, allowed)).await;
    ToolEffect::Observe(observe::observe(&mut call, &planned.assessment, allowed, ran))
}

/// One call in progress: who makes it and where its events and audit line go.
struct Call<'c> {
    caller: Caller<'c>,
    id: &'c str,
    services: &'c Services<'c>,
    events: &'c mut (dyn FnMut(AgentEvent) + Send),
    /// The user's request, for the audit log.
    input: &'c str,
    /// Set when the user edited the command at the prompt, so the observation says what ran (and
    /// through it the history, the session store, `--json` and the web chat).
    edited: Option<Edit>,
}

/// How the edit note starts, up to the command that ran; [`EDITED_SENT`] follows that command.
const EDITED: &str = "[edited]: the user edited the command at the prompt; what follows is for `";
const EDITED_SENT: &str = "`, not for the command you sent: `";

/// The command an observation says ran instead of the model's (redacted), when the user edited it.
pub(crate) fn edited_command(observation: &str) -> Option<&str> {
    // The note is always the second line: a command's output cannot pose as one.
    let line = observation.lines().nth(1)?.strip_prefix(EDITED)?;
    line.split_once(EDITED_SENT).map(|(now, _)| now)
}

/// The command the model sent and the one the user's edit made of it (both sanitized).
struct Edit {
    sent: String,
    now: String,
}

impl Call<'_> {
    /// `text` for the model with the edit note under its first line (the outcome, or why it was
    /// refused, stays first) when the user rewrote the command.
    fn observed(&self, text: String) -> String {
        let Some(edit) = self.edited.as_ref().filter(|edit| edit.now != edit.sent) else { return text };
        // Each command redacted word by word, as everywhere a command is kept.
        let redactor = &self.services.redactor;
        let note = format!(
            "{EDITED}{}{EDITED_SENT}{}`",
            redactor.redact_command(&edit.now),
            redactor.redact_command(&edit.sent)
        );
        match text.split_once('\n') {
            Some((first, rest)) => format!("{first}\n{note}\n{rest}"),
            None => format!("{text}\n{note}"),
        }
    }

    fn emit(&mut self, event: AgentEvent) {
        (self.events)(event);
    }

    /// The `tool_call` event for `assessment`, with the arguments as given.
    fn announce(&mut self, args: Value, assessment: &Assessment) {
        self.emit(AgentEvent::ToolCall {
            id: self.id.to_owned(),
            tool: self.caller.tool.into(),
            args,
            command: Some(assessment.sanitized.clone()),
            risk: Some(assessment.risk),
            reasons: assessment.reasons.clone(),
        });
    }

    fn approval(&mut self, decision: ApprovalDecision, assessment: &Assessment) {
        self.emit(AgentEvent::Approval {
            id: self.id.into(),
            decision,
            command: assessment.sanitized.clone(),
            grant: None,
        });
    }

    /// An earlier `[a]` covered it: the event names the grant, so the screen can say so.
    fn covered(&mut self, assessment: &Assessment) {
        let event = AgentEvent::Approval {
            id: self.id.into(),
            decision: ApprovalDecision::ApprovedForSession,
            command: assessment.sanitized.clone(),
            grant: super::grant::grant_key(assessment),
        };
        self.emit(event);
    }

    /// The audit line for this call: one per host on a fleet (a refusal too, see
    /// [`super::fleet::audit_each`]).
    fn audit(
        &self,
        assessment: &Assessment,
        confirmed: Confirmed,
        exit: Option<i32>,
        output: &str,
    ) -> Result<(), AuditError> {
        let record = self.record(
            self.services.host.map(str::to_owned),
            assessment.risk,
            confirmed,
            exit,
            output,
            &assessment.sanitized,
        );
        super::fleet::audit_each(self.services, record)
    }

    /// The audit record of `command` on `host` (`None`: this machine).
    fn record(
        &self,
        host: Option<String>,
        risk: crate::protocol::Risk,
        confirmed: Confirmed,
        exit: Option<i32>,
        output: &str,
        command: &str,
    ) -> AuditRecord {
        AuditRecord {
            session: self.services.session.clone(),
            input: self.input.to_owned(),
            tool: format!("{}.{}", self.caller.worker, self.caller.tool),
            host,
            user: self.services.user.clone(),
            approver: self.services.approver.decided_by(),
            command: command.to_owned(),
            risk,
            confirmed,
            exit,
            output: output.to_owned(),
        }
    }
}

/// The gate step: asks `tools::gate` until it allows the command, refuses it or the turn is
/// aborted. An edited command is assessed and announced again, then decided anew.
fn approve(call: &mut Call, state: &mut RunState, planned: &mut Planned) -> Result<Allowed, Box<ToolEffect>> {
    loop {
        let mut proposal =
            Proposal::command(call.id, &planned.assessment, &planned.typed, planned.why.as_deref(), planned.auto);
        proposal.note = planned.note.clone();
        proposal.edited = call.edited.is_some();
        match gate::decide(call.services, state, &proposal) {
            Verdict::Run(Allowed::Covered) => {
                call.covered(&planned.assessment);
                return Ok(Allowed::Covered);
            }
            Verdict::Run(allowed) => {
                call.approval(allowed.decision(), &planned.assessment);
                return Ok(allowed);
            }
            Verdict::Refuse(refusal) => {
                return Err(Box::new(ToolEffect::Observe(refused(call, &planned.assessment, refusal))));
            }
            Verdict::Abort => {
                call.approval(ApprovalDecision::Abort, &planned.assessment);
                let _ = call.audit(&planned.assessment, Confirmed::No, None, "aborted by the user");
                return Err(Box::new(ToolEffect::Abort));
            }
            Verdict::Edited(typed) => {
                let before = planned.assessment.sanitized.clone();
                planned.reassess(typed, call.services.policy);
                call.announce(json!({"command": planned.typed}), &planned.assessment);
                let now = planned.assessment.sanitized.clone();
                match &mut call.edited {
                    Some(edit) => edit.now = now,
                    None => call.edited = Some(Edit { sent: before, now }),
                }
            }
        }
    }
}

/// A refused command: the `approval` event, the audit line (written before the model hears back;
/// a failing log is reported to it), the `tool_result` event and the observation.
fn refused(call: &mut Call, assessment: &Assessment, refusal: Refusal) -> Observation {
    call.approval(refusal.decision, assessment);
    let confirmed = refusal.confirmed();
    let Refusal { status, message, .. } = refusal;
    let message = match call.audit(assessment, confirmed, None, &message) {
        Ok(()) => message,
        Err(err) => format!("{message}\n[ERROR]: {err}"),
    };
    let message = call.observed(message);
    let observation = Observation {
        call_id: call.id.into(),
        status,
        exit_code: None,
        text: message,
        truncated_bytes: 0,
        duration_ms: 0,
    };
    observe::report(call, &observation, 0);
    observation
}
