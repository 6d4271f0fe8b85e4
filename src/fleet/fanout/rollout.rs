//! Rolling a change out: one canary host first, then (after the caller's hook, where the approval
//! UI asks the person) the rest at once or in batches of `serial`, stopping once more hosts have
//! failed than `max_fail` allows (a count, or a percentage of all hosts like Ansible's
//! `max_fail_percentage`). A failed canary always stops: that is what a canary is for. Read-only
//! commands skip all this and go to every host at once.

use std::ops::Range;

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::outcome::{HostRun, Outcome, Skip};
use super::{Fanout, FleetRequest, FleetResult, Tally};
use crate::fleet::Host;
use crate::protocol::Risk;

/// How many failed hosts a rollout tolerates before it stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxFail {
    /// Stop when more than this many hosts have failed.
    Count(usize),
    /// Stop when more than this percentage of all the rollout's hosts have failed.
    Percent(u8),
}

impl MaxFail {
    /// `3` or `10%`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().strip_suffix('%') {
            Some(percent) => percent.trim().parse().ok().filter(|p| *p <= 100).map(MaxFail::Percent),
            None => text.trim().parse().ok().map(MaxFail::Count),
        }
    }

    pub fn exceeded(self, failed: usize, total: usize) -> bool {
        match self {
            MaxFail::Count(count) => failed > count,
            MaxFail::Percent(percent) => failed * 100 > usize::from(percent) * total,
        }
    }
}

/// The order hosts run in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// One host first, alone.
    pub canary: bool,
    /// After the canary: batches of this many hosts; `None`: the rest at once.
    pub serial: Option<usize>,
    pub max_fail: MaxFail,
}

impl Plan {
    /// Every host at once, nothing stops early: for commands that change nothing.
    pub fn read_only() -> Self {
        Self { canary: false, serial: None, max_fail: MaxFail::Count(usize::MAX) }
    }

    /// Canary, then `serial` batches (or the rest at once), stopping past `max_fail`.
    pub fn change(serial: Option<usize>, max_fail: MaxFail) -> Self {
        Self { canary: true, serial: serial.filter(|n| *n > 0), max_fail }
    }

    /// The plan for a command of `risk` (the caller's assessment): Safe is read-only, anything
    /// above is a change.
    pub fn for_risk(risk: Risk, serial: Option<usize>, max_fail: MaxFail) -> Self {
        if risk == Risk::Safe { Self::read_only() } else { Self::change(serial, max_fail) }
    }

    /// The batches over `hosts` hosts, as index ranges in order.
    pub fn batches(&self, hosts: usize) -> Vec<Range<usize>> {
        let mut batches = Vec::new();
        let mut start = 0;
        if self.canary && hosts > 0 {
            batches.push(0..1);
            start = 1;
        }
        let size = self.serial.unwrap_or(usize::MAX).max(1);
        while start < hosts {
            let end = start.saturating_add(size).min(hosts);
            batches.push(start..end);
            start = end;
        }
        batches
    }
}

/// Whether the rollout goes on after the canary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proceed {
    Continue,
    Stop,
}

/// Where the caller steps in during a rollout.
pub trait RolloutHook: Send + Sync {
    /// The canary succeeded and hosts remain: show its result and ask. Not called when the canary
    /// failed (the rollout stops) or was the only host.
    fn after_canary<'a>(&'a self, canary: &'a FleetResult) -> BoxFuture<'a, Proceed>;

    /// A batch ended (`index` from 0; the canary is batch 0): for live progress.
    fn batch_done(&self, _index: usize, _runs: &[HostRun]) {}

    /// A host of batch `index` (its hosts: `hosts`) ended, however it ended: for live progress
    /// while the batch runs. Called from the batch's tasks as they end, so it must not block.
    fn host_done(&self, _index: usize, _hosts: &[Host], _tally: Tally) {}
}

/// A hook that never asks: the rollout goes on after a good canary (`-y`, tests).
pub struct NoQuestions;

impl RolloutHook for NoQuestions {
    fn after_canary<'a>(&'a self, _canary: &'a FleetResult) -> BoxFuture<'a, Proceed> {
        Box::pin(async { Proceed::Continue })
    }
}

impl Fanout {
    /// Runs `request` on `hosts` batch by batch as `plan` says. Hosts of batches not run are
    /// [`Outcome::NotRun`] with the reason.
    pub async fn rollout(
        &self,
        hosts: &[Host],
        request: &FleetRequest,
        plan: &Plan,
        hook: &dyn RolloutHook,
        cancel: &CancellationToken,
    ) -> FleetResult {
        let mut runs: Vec<HostRun> = Vec::with_capacity(hosts.len());
        let mut stop: Option<Skip> = None;
        for (index, batch) in plan.batches(hosts.len()).into_iter().enumerate() {
            let Some(batch_hosts) = hosts.get(batch) else { break };
            if stop.is_none() && cancel.is_cancelled() {
                stop = Some(Skip::Cancelled);
            }
            if let Some(skip) = stop {
                runs.extend(
                    batch_hosts.iter().map(|host| HostRun::not_started(host.clone(), Outcome::NotRun(skip), "")),
                );
                continue;
            }
            let progress = |tally: Tally| hook.host_done(index, batch_hosts, tally);
            let done = self.run_batch(batch_hosts, request, cancel, &progress).await;
            hook.batch_done(index, &done);
            runs.extend(done);
            let failed = runs.iter().filter(|run| run.outcome.failed()).count();
            let more = runs.len() < hosts.len();
            if cancel.is_cancelled() {
                stop = Some(Skip::Cancelled);
            } else if plan.canary && index == 0 {
                if failed > 0 {
                    stop = Some(Skip::CanaryFailed);
                } else if more {
                    let canary = FleetResult { command: request.command.clone(), runs: runs.clone() };
                    let proceed = tokio::select! {
                        proceed = hook.after_canary(&canary) => proceed,
                        () = cancel.cancelled() => Proceed::Stop,
                    };
                    if proceed == Proceed::Stop {
                        stop = Some(if cancel.is_cancelled() { Skip::Cancelled } else { Skip::Declined });
                    }
                }
            } else if plan.max_fail.exceeded(failed, hosts.len()) {
                stop = Some(Skip::MaxFail);
            }
        }
        FleetResult { command: request.command.clone(), runs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::single_range_in_vec_init, reason = "a list of batches that holds one")]
    fn batches_are_canary_then_serial() {
        assert_eq!(Plan::read_only().batches(5), [0..5]);
        assert_eq!(Plan::change(None, MaxFail::Count(0)).batches(5), [0..1, 1..5]);
        assert_eq!(Plan::change(Some(2), MaxFail::Count(0)).batches(6), [0..1, 1..3, 3..5, 5..6]);
        assert_eq!(Plan::change(Some(2), MaxFail::Count(0)).batches(1), [0..1]);
        assert!(Plan::change(Some(0), MaxFail::Count(0)).batches(0).is_empty());
        assert_eq!(Plan::for_risk(Risk::Safe, Some(2), MaxFail::Count(0)), Plan::read_only());
        assert!(Plan::for_risk(Risk::Medium, None, MaxFail::Count(0)).canary);
    }

    #[test]
    fn max_fail_is_a_count_or_a_percentage_of_all_hosts() {
        assert_eq!(MaxFail::parse("2"), Some(MaxFail::Count(2)));
        assert_eq!(MaxFail::parse("25%"), Some(MaxFail::Percent(25)));
        assert_eq!(MaxFail::parse("250%"), None);
        assert_eq!(MaxFail::parse("x"), None);
        assert!(!MaxFail::Count(1).exceeded(1, 10) && MaxFail::Count(1).exceeded(2, 10));
        // Like Ansible: stop when *more than* the percentage failed.
        assert!(!MaxFail::Percent(20).exceeded(2, 10) && MaxFail::Percent(20).exceeded(3, 10));
        assert!(MaxFail::Percent(0).exceeded(1, 200));
    }
}
