//! The fleet a turn works on (`--hosts`, `/hosts`): the selected hosts, the fan-out that keeps one
//! ssh connection per host across the turn, and how changes roll out. `run_command` sends every
//! command to all of them ([`super::run_command`]); the file tools and `analyze` work on one
//! machine and refuse while a fleet is active ([`refuse_single_host`]).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{Services, Tool, ToolContext, ToolEffect};
use crate::fleet::Host;
use crate::fleet::fanout::group::host_list;
use crate::fleet::fanout::{Fanout, MaxFail};
use crate::protocol::{Observation, ObservationStatus, ToolSpec};
use crate::store::audit::{AuditError, AuditRecord};

/// Characters of the host list in an approval prompt and the prompt's environment layer.
const LIST_CHARS: usize = 400;

/// The hosts a fleet turn runs on and how.
pub struct FleetTarget {
    /// In inventory order; never empty (an empty selection is an error before the turn).
    pub hosts: Vec<Host>,
    pub fanout: Fanout,
    /// `--serial`: after the canary, batches of this many hosts.
    pub serial: Option<usize>,
    /// `--max-fail`.
    pub max_fail: MaxFail,
    /// The pattern that selected them, for `/hosts` and the prompt.
    pub pattern: String,
}

impl FleetTarget {
    pub fn names(&self) -> Vec<String> {
        self.hosts.iter().map(|host| host.name.clone()).collect()
    }

    /// `3 hosts: web-[1:3]`: the count and the names compacted, for prompts and the screen.
    pub fn label(&self) -> String {
        label(&self.hosts)
    }

    /// The prompt's environment layer for a fleet turn.
    pub fn environment(&self) -> String {
        format!(
            "- Fleet: every run_command runs on {} in parallel over ssh (selected by `{}`), not on the \
             user's own machine; the result comes grouped (identical outputs are one group, with its hosts). \
             Each host starts in its login directory. File tools and analyze are off: they work on one machine.\n",
            self.label(),
            self.pattern
        )
    }
}

/// Writes `record` as the audit lines of one call: on a fleet one line per selected host (its
/// `HOST`), whatever was decided, refusals included; else the one line as given.
///
/// Why per host for a refusal too: on a fleet the action is the command on a host (each host's run
/// is its own line, with its own exit), so a decision about the command is a decision about each
/// host, and every host's lines tell the whole story of what was asked and decided there, whether
/// the command came from run_command or a tool that builds one (kube).
pub(crate) fn audit_each(services: &Services, mut record: AuditRecord) -> Result<(), AuditError> {
    let Some(fleet) = services.fleet else { return services.audit.append(&record) };
    let mut result = Ok(());
    for host in &fleet.hosts {
        record.host = Some(host.name.clone());
        let line = services.audit.append(&record);
        result = result.and(line);
    }
    result
}

/// `3 hosts: web-[1:3]` for `hosts`.
pub fn label(hosts: &[Host]) -> String {
    let n = hosts.len();
    let names: Vec<String> = hosts.iter().map(|host| host.name.clone()).collect();
    format!("{n} host{}: {}", if n == 1 { "" } else { "s" }, host_list(&names, LIST_CHARS))
}

/// The observation of a file tool or `analyze` called while a fleet is active.
pub(crate) fn refuse_single_host(id: &str, tool: &str) -> Observation {
    Observation {
        call_id: id.to_owned(),
        status: ObservationStatus::DeniedByPolicy,
        exit_code: None,
        text: format!(
            "refused: {tool} works on one machine and this run works on a fleet (--hosts); use run_command, \
             which runs on every host, or ask the user to pick one machine with --ssh-host or /host"
        ),
        truncated_bytes: 0,
        duration_ms: 0,
    }
}

/// A tool that works on one machine (the file tools, `analyze`): refused while a fleet is active.
pub(crate) struct SingleHost(pub Arc<dyn Tool>);

impl Tool for SingleHost {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn spec(&self) -> ToolSpec {
        self.0.spec()
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        if ctx.services.fleet.is_none() {
            return self.0.call(id, args, ctx);
        }
        let observation = refuse_single_host(id, self.0.name());
        (ctx.events)(super::unran_result(&observation));
        Box::pin(async move { ToolEffect::Observe(observation) })
    }
}
