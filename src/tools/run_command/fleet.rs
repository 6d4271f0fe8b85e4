//! The execute and observe steps on a fleet (`--hosts`): before a prompt, every host's connection
//! is made so the prompt can name the hosts that cannot be reached ([`reach`]); the approved
//! command goes to the reachable hosts through the fan-out — read-only at once, a change canary
//! first with the person asked again before the rest — with live progress for the person as hosts
//! end; then the person sees every group, the model the bounded grouped view, and the audit log
//! one line per host. The gate before this is the same one as everywhere.

use std::collections::HashSet;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use super::Call;
use super::assess::Planned;
use crate::approval::{ApprovalRequest, Approver};
use crate::fleet::Host;
use crate::fleet::fanout::group::host_list;
use crate::fleet::fanout::{
    FleetRequest, FleetResult, HostRun, Outcome, Plan, Proceed, RolloutHook, Tally, for_human, for_model,
};
use crate::protocol::{AgentEvent, Approval, HostsProgress, Observation, ObservationStatus, ReplyProgress, Risk};
use crate::store::audit::Confirmed;
use crate::tools::fleet::FleetTarget;
use crate::tools::gate::Allowed;
use crate::tools::{Interrupts, Services};

/// Hosts named one by one in the prompt's reachability note; the rest are counted.
const NOTE_HOSTS: usize = 10;
/// Characters of a batch's host list in a progress line.
const PROGRESS_CHARS: usize = 60;

/// Whether the gate will put `planned` before a person: only then is it worth connecting first.
pub(super) fn will_ask(services: &Services, planned: &Planned) -> bool {
    let (mode, risk) = (&services.mode, planned.assessment.risk);
    risk > Risk::Safe
        && planned.assessment.decision != crate::protocol::Decision::Deny
        && !mode.dry_run
        && mode.probe_limit.is_none()
        && !(risk == Risk::Medium && mode.approve_medium)
        && services.approver.interactive()
}

/// Connects to every host (in parallel, `forks` at a time, running nothing) and returns those that
/// cannot be reached, with why; `None` when a Ctrl-C came meanwhile.
pub(super) async fn reach(services: &Services<'_>, fleet: &FleetTarget) -> Option<Vec<HostRun>> {
    let token = services.interrupts.command_started();
    let unreached = fleet.fanout.connect(&fleet.hosts, &token).await;
    services.interrupts.command_finished();
    (!token.is_cancelled()).then_some(unreached)
}

/// What the prompt says about reachability: `35 of 37 hosts reachable; not run on:` and each
/// host that is not, with ssh's reason.
pub(super) fn reach_note(fleet: &FleetTarget, unreached: &[HostRun]) -> String {
    let total = fleet.hosts.len();
    if unreached.is_empty() {
        return format!("all {total} hosts reachable");
    }
    let reachable = total.saturating_sub(unreached.len());
    let mut note = format!("{reachable} of {total} hosts reachable; these will not run:");
    for run in unreached.iter().take(NOTE_HOSTS) {
        let why = if run.detail.is_empty() { run.outcome.describe() } else { run.detail.clone() };
        note.push_str(&format!("\n  {}: {}: {why}", run.host.name, run.outcome.label()));
    }
    if unreached.len() > NOTE_HOSTS {
        note.push_str(&format!("\n  and {} more", unreached.len() - NOTE_HOSTS));
    }
    note
}

pub(super) async fn run(call: &mut Call<'_>, planned: &Planned, allowed: Allowed, fleet: &FleetTarget) -> Observation {
    let services = call.services;
    let assessment = &planned.assessment;
    let request = FleetRequest {
        command: assessment.sanitized.clone(),
        cwd: planned.request(call.id, allowed).cwd,
        sandbox: allowed.sandbox(),
        timeout: Some(planned.timeout),
    };
    // Hosts found unreachable before the prompt are not tried again: the yes was for the rest.
    let unreached: HashSet<&str> = planned.unreached.iter().map(|run| run.host.name.as_str()).collect();
    let hosts: Vec<Host> = fleet.hosts.iter().filter(|host| !unreached.contains(host.name.as_str())).cloned().collect();
    let plan = Plan::for_risk(assessment.risk, fleet.serial, fleet.max_fail);
    let (progress_tx, mut progress) = mpsc::unbounded_channel();
    let hook = AskAfterCanary {
        approver: services.approver,
        interrupts: services.interrupts,
        // `-y` approved a Medium rollout up front; a yes at the prompt was for the canary only.
        up_front: allowed == Allowed::Flag,
        call_id: call.id,
        risk: assessment.risk,
        reasons: &assessment.reasons,
        rest: hosts.len().saturating_sub(1),
        redactor: services.redactor,
        progress: progress_tx,
    };
    let started = std::time::Instant::now();
    let token = services.interrupts.command_started();
    let rollout = fleet.fanout.rollout(&hosts, &request, &plan, &hook, &token);
    tokio::pin!(rollout);
    // Each host's end shows as progress while the others run (the person's only, as an event the
    // renderer shows on stderr; the model gets the grouped result alone).
    let result = loop {
        tokio::select! {
            result = &mut rollout => break result,
            Some(stage) = progress.recv() => call.emit(AgentEvent::Progress { stage }),
        }
    };
    // The last hosts' progress, sent as the rollout ended.
    while let Ok(stage) = progress.try_recv() {
        call.emit(AgentEvent::Progress { stage });
    }
    services.interrupts.command_finished();
    let interrupted = token.is_cancelled();
    let result = in_inventory_order(fleet, result, &planned.unreached);
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
    if let Err(err) = audit(call, &result, allowed, assessment.risk, &unreached) {
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

/// The rollout's runs and the hosts left out as unreachable, back in the fleet's order.
fn in_inventory_order(fleet: &FleetTarget, result: FleetResult, unreached: &[HostRun]) -> FleetResult {
    if unreached.is_empty() {
        return result;
    }
    let FleetResult { command, runs } = result;
    let mut all: Vec<HostRun> = runs.into_iter().chain(unreached.iter().cloned()).collect();
    let order = |run: &HostRun| fleet.hosts.iter().position(|host| host.name == run.host.name).unwrap_or(usize::MAX);
    all.sort_by_key(order);
    FleetResult { command, runs: all }
}

/// The exit code every host that ran agrees on when all ran; else none.
fn common_exit(result: &FleetResult) -> Option<i32> {
    let mut codes = result.runs.iter().map(|run| run.exit_code());
    let first = codes.next()??;
    codes.all(|code| code == Some(first)).then_some(first)
}

/// One audit line per host: its exit and output, or why it never ran. A host left out before the
/// prompt as unreachable ran on nobody's yes: `no`, and why.
fn audit(
    call: &Call,
    result: &FleetResult,
    allowed: Allowed,
    risk: Risk,
    unreached: &HashSet<&str>,
) -> Result<(), crate::store::audit::AuditError> {
    let mut first_error = None;
    for (run, record) in result.runs.iter().zip(result.audit()) {
        let before = unreached.contains(run.host.name.as_str());
        // A host the rollout never reached was not run on anyone's yes: `no`, and why.
        let confirmed = match run.outcome {
            Outcome::NotRun(_) => Confirmed::No,
            _ if before => Confirmed::No,
            _ => allowed.confirmed(),
        };
        let output = match run.outcome {
            Outcome::NotRun(skip) => skip.describe().to_owned(),
            _ if run.outcome.ran() => record.output,
            _ if before => format!("not run: {}: {}", record.outcome, record.output),
            _ => format!("{}: {}", record.outcome, record.output),
        };
        let line = call.record(Some(record.host), risk, confirmed, record.exit, &output, &result.command);
        if let Err(err) = call.services.audit.append(&line)
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
    /// Where each host's end goes as progress (drained by [`run`] while the rollout runs).
    progress: mpsc::UnboundedSender<ReplyProgress>,
}

impl RolloutHook for AskAfterCanary<'_> {
    fn host_done(&self, _index: usize, hosts: &[Host], tally: Tally) {
        let names: Vec<String> = hosts.iter().map(|host| host.name.clone()).collect();
        let Tally { done, failed, total } = tally;
        let hosts = host_list(&names, PROGRESS_CHARS);
        let _ = self.progress.send(ReplyProgress::Hosts(HostsProgress { hosts, done, failed, total }));
    }

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
        let progress = mpsc::unbounded_channel().0;
        AskAfterCanary {
            approver,
            interrupts,
            up_front,
            call_id: "c1",
            risk,
            reasons: &[],
            rest: 4,
            redactor,
            progress,
        }
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
