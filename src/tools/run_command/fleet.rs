//! The execute and observe steps on a fleet (`--hosts`): the approved command goes to every host
//! through the fan-out — read-only at once, a change canary first with the person asked again
//! before the rest — then the person sees every group, the model the bounded grouped view, and
//! the audit log one line per host. The gate before this is the same one as everywhere.

use futures_util::future::BoxFuture;

use super::Call;
use super::assess::Planned;
use crate::approval::{ApprovalRequest, Approver};
use crate::fleet::fanout::{FleetRequest, FleetResult, Outcome, Plan, Proceed, RolloutHook, for_human, for_model};
use crate::protocol::{AgentEvent, Approval, Observation, ObservationStatus, Risk};
use crate::store::audit::Confirmed;
use crate::tools::Interrupts;
use crate::tools::fleet::FleetTarget;
use crate::tools::gate::Allowed;

pub(super) async fn run(call: &mut Call<'_>, planned: &Planned, allowed: Allowed, fleet: &FleetTarget) -> Observation {
    let services = call.services;
    let assessment = &planned.assessment;
    let request = FleetRequest {
        command: assessment.sanitized.clone(),
        cwd: planned.request(call.id, allowed).cwd,
        sandbox: allowed.sandbox(),
    };
    let plan = Plan::for_risk(assessment.risk, fleet.serial, fleet.max_fail);
    let hook = AskAfterCanary {
        approver: services.approver,
        interrupts: services.interrupts,
        // `-y` approved a Medium rollout up front; a yes at the prompt was for the canary only.
        up_front: allowed == Allowed::Flag,
        call_id: call.id,
        risk: assessment.risk,
        reasons: &assessment.reasons,
        rest: fleet.hosts.len().saturating_sub(1),
        redactor: services.redactor,
    };
    let started = std::time::Instant::now();
    let token = services.interrupts.command_started();
    let result = fleet.fanout.rollout(&fleet.hosts, &request, &plan, &hook, &token).await;
    services.interrupts.command_finished();
    let interrupted = token.is_cancelled();
    let redact = |text: &str| services.redactor.redact(text);
    for run in &result.runs {
        call.emit(AgentEvent::HostResult {
            id: call.id.into(),
            host: run.host.name.clone(),
            outcome: run.outcome.label().to_owned(),
            exit_code: run.exit_code(),
            output_bytes: run.output.total_bytes,
            duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
        });
    }
    call.emit(AgentEvent::Output { id: call.id.into(), chunk: for_human(&result, &redact) });
    let mut text = for_model(&result, &redact);
    if let Err(err) = audit(call, &result, allowed, assessment.risk) {
        let message = format!("no audit line was written for this command: {err}");
        call.emit(AgentEvent::Error { message: message.clone() });
        text.push_str(&format!("\n[ERROR]: {message}"));
    }
    let observation = Observation {
        call_id: call.id.into(),
        status: if interrupted { ObservationStatus::Interrupted } else { ObservationStatus::Ran },
        exit_code: common_exit(&result),
        text: call.observed(text),
        truncated_bytes: 0,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    };
    let bytes = result.runs.iter().map(|run| run.output.total_bytes).sum();
    super::observe::report(call, &observation, bytes);
    observation
}

/// The exit code every host that ran agrees on when all ran; else none.
fn common_exit(result: &FleetResult) -> Option<i32> {
    let mut codes = result.runs.iter().map(|run| run.exit_code());
    let first = codes.next()??;
    codes.all(|code| code == Some(first)).then_some(first)
}

/// One audit line per host: its exit and output, or why it never ran.
fn audit(
    call: &Call,
    result: &FleetResult,
    allowed: Allowed,
    risk: Risk,
) -> Result<(), crate::store::audit::AuditError> {
    let mut first_error = None;
    for (run, record) in result.runs.iter().zip(result.audit()) {
        // A host the rollout never reached was not run on anyone's yes: `no`, and why.
        let confirmed = match run.outcome {
            Outcome::NotRun(_) => Confirmed::No,
            _ => allowed.confirmed(),
        };
        let output = match run.outcome {
            Outcome::NotRun(skip) => skip.describe().to_owned(),
            _ if run.outcome.ran() => record.output,
            _ => format!("{}: {}", record.outcome, record.output),
        };
        if let Err(err) = call.audit_on(Some(record.host), risk, confirmed, record.exit, &output, &result.command)
            && first_error.is_none()
        {
            first_error = Some(err);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// After a good canary: the rest runs on `-y` (Medium), else only after a person's yes.
struct AskAfterCanary<'a> {
    approver: &'a dyn Approver,
    interrupts: &'a Interrupts,
    up_front: bool,
    call_id: &'a str,
    risk: Risk,
    reasons: &'a [String],
    rest: usize,
    redactor: &'a crate::redact::Redactor,
}

impl RolloutHook for AskAfterCanary<'_> {
    fn after_canary<'a>(&'a self, canary: &'a FleetResult) -> BoxFuture<'a, Proceed> {
        Box::pin(async move {
            if self.up_front && self.risk == Risk::Medium {
                return Proceed::Continue;
            }
            if !self.approver.interactive() {
                return Proceed::Stop;
            }
            let redact = |text: &str| self.redactor.redact(text);
            let request = ApprovalRequest {
                call_id: self.call_id.to_owned(),
                command: canary.command.clone(),
                display: None,
                risk: self.risk,
                reasons: self.reasons.to_vec(),
                why: Some("the canary host succeeded; run it on the rest?".into()),
                grant: None,
                host: Some(format!("the other {} host{}", self.rest, if self.rest == 1 { "" } else { "s" })),
                detail: Some(for_human(canary, &redact)),
            };
            match tokio::task::block_in_place(|| self.approver.ask(&request)) {
                Approval::Approved | Approval::ApprovedForSession => Proceed::Continue,
                Approval::Abort => {
                    if self.approver.interrupted() {
                        self.interrupts.interrupt();
                    }
                    Proceed::Stop
                }
                Approval::Denied | Approval::Edited(_) | Approval::Unanswered(_) => Proceed::Stop,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::NoApprover;
    use crate::fleet::Host;
    use crate::redact::Redactor;
    use crate::testing::ScriptedApprover;

    fn canary() -> FleetResult {
        let run = crate::fleet::fanout::HostRun::not_started(Host::named("web-1"), Outcome::Ran { exit_code: 0 }, "");
        FleetResult { command: "touch /srv/flag".into(), runs: vec![run] }
    }

    fn hook<'a>(
        approver: &'a dyn Approver,
        interrupts: &'a Interrupts,
        redactor: &'a Redactor,
        up_front: bool,
        risk: Risk,
    ) -> AskAfterCanary<'a> {
        AskAfterCanary { approver, interrupts, up_front, call_id: "c1", risk, reasons: &[], rest: 4, redactor }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn after_the_canary_yes_covers_medium_only_and_nobody_to_ask_stops() {
        let (interrupts, redactor) = (Interrupts::default(), Redactor::new(Vec::new()));
        let result = canary();
        let silent = ScriptedApprover::new([]);
        let proceed = hook(&silent, &interrupts, &redactor, true, Risk::Medium).after_canary(&result).await;
        assert_eq!(proceed, Proceed::Continue);
        assert!(silent.asked.lock().unwrap().is_empty(), "-y covers a Medium rollout");

        let asked = ScriptedApprover::new([Approval::Approved]);
        let proceed = hook(&asked, &interrupts, &redactor, true, Risk::High).after_canary(&result).await;
        assert_eq!(proceed, Proceed::Continue);
        let requests = asked.asked.lock().unwrap().clone();
        assert_eq!(requests.len(), 1, "High asks again whatever -y says");
        assert_eq!(requests[0].host.as_deref(), Some("the other 4 hosts"));
        assert!(requests[0].detail.as_deref().unwrap_or_default().contains("web-1"), "{:?}", requests[0].detail);

        let no = ScriptedApprover::new([Approval::Denied]);
        assert_eq!(hook(&no, &interrupts, &redactor, false, Risk::Medium).after_canary(&result).await, Proceed::Stop);
        assert_eq!(
            hook(&NoApprover, &interrupts, &redactor, false, Risk::Medium).after_canary(&result).await,
            Proceed::Stop
        );
    }
}
