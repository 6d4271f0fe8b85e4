//! Read-only Kubernetes tools (seed 002 §4.4–§5) through kubectl: `list_pods`, `get_pod_logs`,
//! `describe_pod`, `get_deployment_status`, `get_events`, `get_configmap`, `get_node_status`.
//!
//! opsai builds the argv itself from checked values (`values`), judges it against the `kube.*`
//! blacklist before anything runs (`blacklist`), and hands the quoted command line to
//! `run_command`'s path, so the policy rates it, the executor (PTY or SSH) runs it with a 30 s limit,
//! and the output reaching the model is bounded and redacted, with one audit line per call.

mod blacklist;
#[cfg(test)]
mod context_tests;
mod plan;
#[cfg(test)]
mod tests;
mod values;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::family::Family;
use super::run_command::{self, Caller};
use super::{Tool, ToolContext, ToolEffect, invalid_arguments};
use crate::config::KubeConfig;
use crate::policy::{self, quote_word};
use crate::protocol::{AgentEvent, ApprovalDecision, Observation, ObservationStatus, ToolSpec};
use crate::store::audit::{AuditRecord, Confirmed};

pub use blacklist::context_refusal;
pub use plan::{Plan, Scope, TIMEOUT_S, build};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kube {
    ListPods,
    PodLogs,
    DescribePod,
    DeploymentStatus,
    Events,
    ConfigMap,
    NodeStatus,
}

impl Kube {
    pub(crate) const ALL: [Kube; 7] = [
        Kube::ListPods,
        Kube::PodLogs,
        Kube::DescribePod,
        Kube::DeploymentStatus,
        Kube::Events,
        Kube::ConfigMap,
        Kube::NodeStatus,
    ];
}

/// The seven tools as one `kube` schema (`action`: pods, logs, describe, deployments, events,
/// configmap, nodes); the description says which arguments each takes. With a `context`, every
/// kubectl line talks to that kube context (`opsai serve`'s conversation's cluster); with
/// `contexts` (`--contexts`), every call runs once per context and the results come back grouped.
pub fn family(config: KubeConfig, context: Option<String>, contexts: Vec<String>) -> Family {
    let config = Arc::new(config);
    let context: Option<Arc<str>> = context.map(Into::into);
    let contexts: Arc<[String]> = contexts.into();
    let text = || json!({"type": "string"});
    Family::new(
        "kube",
        "Read-only kubectl: pods (namespace, selector), logs (name, namespace, container, tail, previous), \
         describe pod (name, namespace), deployments (name?, namespace), events (namespace, for_object, \
         field_selector), configmap (name, namespace), nodes (name?). namespace \"all\" = all. Refused: Secrets, \
         system namespaces, changes.",
        json!({
            "name": text(),
            "namespace": text(),
            "selector": text(),
            "container": text(),
            "tail": {"type": "integer"},
            "previous": {"type": "boolean"},
            "for_object": {"type": "string", "description": "pod/web-1"},
            "field_selector": text()
        }),
        Kube::ALL
            .into_iter()
            .map(|kind| {
                (
                    kind.action(),
                    Arc::new(KubeTool {
                        kind,
                        config: config.clone(),
                        context: context.clone(),
                        contexts: contexts.clone(),
                    }) as Arc<dyn Tool>,
                )
            })
            .collect(),
    )
}

/// One Kubernetes tool (a member of the `kube` family): its kind and the user's `kube.*` settings.
pub(crate) struct KubeTool {
    pub kind: Kube,
    config: Arc<KubeConfig>,
    /// `--context=NAME` on every line; `None` = kubectl's current context.
    context: Option<Arc<str>>,
    /// `--contexts`: each call runs once per context (see [`each_context`]).
    contexts: Arc<[String]>,
}

/// Told to the model with every tool, so it does not try what will be refused.
const READ_ONLY: &str = "Read-only (kubectl). Refused: Secrets, the kube-system, kube-public and kube-node-lease \
                         namespaces (or as configured), and any change to the cluster.";

impl Kube {
    /// Its `action` in the `kube` family.
    fn action(self) -> &'static str {
        match self {
            Kube::ListPods => "pods",
            Kube::PodLogs => "logs",
            Kube::DescribePod => "describe",
            Kube::DeploymentStatus => "deployments",
            Kube::Events => "events",
            Kube::ConfigMap => "configmap",
            Kube::NodeStatus => "nodes",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kube::ListPods => "list_pods",
            Kube::PodLogs => "get_pod_logs",
            Kube::DescribePod => "describe_pod",
            Kube::DeploymentStatus => "get_deployment_status",
            Kube::Events => "get_events",
            Kube::ConfigMap => "get_configmap",
            Kube::NodeStatus => "get_node_status",
        }
    }

    pub(crate) fn spec(self) -> ToolSpec {
        let namespace = json!({"type": "string", "description": "The namespace (default \"default\")."});
        let any_namespace = json!({"type": "string",
            "description": "The namespace (default \"default\"); \"all\" for every namespace opsai may read."});
        let name = |what: &str| json!({"type": "string", "description": what});
        let (description, parameters) = match self {
            Kube::ListPods => (
                "List Kubernetes pods with their status, restarts, age, IP and node.",
                json!({"type": "object", "properties": {
                    "namespace": any_namespace,
                    "selector": {"type": "string", "description": "Label selector, e.g. app=web."}
                }, "required": []}),
            ),
            Kube::PodLogs => (
                "Show the last lines of a pod's logs.",
                json!({"type": "object", "properties": {
                    "name": name("The pod's name."),
                    "namespace": namespace,
                    "container": name("The container, when the pod has several."),
                    "tail": {"type": "integer", "description": "Lines from the end (default 100, at most 1000)."},
                    "previous": {"type": "boolean", "description": "The previous (crashed) container's logs."}
                }, "required": ["name"]}),
            ),
            Kube::DescribePod => (
                "Describe a pod (kubectl describe pod): containers, state, conditions, recent events.",
                json!({"type": "object", "properties": {"name": name("The pod's name."), "namespace": namespace},
                    "required": ["name"]}),
            ),
            Kube::DeploymentStatus => (
                "Deployments' status: without a name, every deployment's ready/up-to-date/available replicas; \
                 with a name, that deployment described (conditions, replica sets, events).",
                json!({"type": "object", "properties": {
                    "name": name("One deployment's name (optional)."),
                    "namespace": any_namespace
                }, "required": []}),
            ),
            Kube::Events => (
                "Cluster events, oldest first, optionally only those about one object.",
                json!({"type": "object", "properties": {
                    "namespace": any_namespace,
                    "for_object": name("Only events about this object: kind/name (pod/web-1) or a name."),
                    "field_selector": name("A field selector, e.g. type=Warning or involvedObject.name=web-1.")
                }, "required": []}),
            ),
            Kube::ConfigMap => (
                "Show a ConfigMap's data (YAML). Secrets cannot be read.",
                json!({"type": "object", "properties": {"name": name("The ConfigMap's name."), "namespace": namespace},
                    "required": ["name"]}),
            ),
            Kube::NodeStatus => (
                "Nodes' status: without a name, every node (status, roles, version, IPs); with a name, that \
                 node's conditions, capacity and taints.",
                json!({"type": "object", "properties": {"name": name("One node's name (optional).")}, "required": []}),
            ),
        };
        ToolSpec { name: self.name().into(), description: format!("{description} {READ_ONLY}"), parameters }
    }
}

impl Tool for KubeTool {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn spec(&self) -> ToolSpec {
        self.kind.spec()
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(async move {
            let config = &self.config;
            let mut plan = match build(self.kind, args, config) {
                Ok(plan) => plan,
                Err(message) => return ToolEffect::Observe(invalid_arguments(id, message)),
            };
            if !self.contexts.is_empty() {
                return each_context(self, id, args, &plan, ctx).await;
            }
            let refused_context = self.context.as_deref().and_then(|context| {
                plan.in_context(context);
                context_refusal(context, config)
            });
            let command = plan.argv.iter().map(|word| quote_word(word)).collect::<Vec<_>>().join(" ");
            if let Some(reason) = refused_context.or_else(|| blacklist::refusal(self.kind, &plan, config)) {
                return refuse(self.kind, id, args, &command, &reason, ctx);
            }
            // Over SSH (or on a fleet) kubectl runs on the hosts, whose PATH only they know.
            if ctx.services.host.is_none() && ctx.services.fleet.is_none() && !kubectl_available() {
                return ToolEffect::Observe(invalid_arguments(
                    id,
                    "kubectl is not available on this machine (no `kubectl` on PATH); tell the user, or use other tools",
                ));
            }
            let delegated =
                json!({"command": command, "why": format!("the {} tool", self.name()), "timeout_s": TIMEOUT_S});
            run_command::run(Caller { tool: self.name(), worker: "kube" }, id, &delegated, ctx).await
        })
    }
}

/// `--contexts`: the call once per context, in order, each through the same path as a single call
/// (the blacklist, the context check, run_command's policy, approval, audit line and bounds), under
/// its own call id (`ID@CONTEXT`) so every run is its own event stream; the model gets one
/// observation with contexts whose output is the same grouped together.
async fn each_context(tool: &KubeTool, id: &str, args: &Value, plan: &Plan, ctx: ToolContext<'_, '_>) -> ToolEffect {
    let ToolContext { services, state, events, input, model } = ctx;
    let mut results: Vec<(String, Observation)> = Vec::new();
    for context in tool.contexts.iter() {
        let mut plan = plan.clone();
        plan.in_context(context);
        let run_id = format!("{id}@{context}");
        let command = plan.argv.iter().map(|word| quote_word(word)).collect::<Vec<_>>().join(" ");
        let ctx = ToolContext { services, state: &mut *state, events: &mut *events, input, model };
        let effect = match context_refusal(context, &tool.config)
            .or_else(|| blacklist::refusal(tool.kind, &plan, &tool.config))
        {
            Some(reason) => refuse(tool.kind, &run_id, args, &command, &reason, ctx),
            None => {
                let delegated =
                    json!({"command": command, "why": format!("the {} tool", tool.name()), "timeout_s": TIMEOUT_S});
                run_command::run(Caller { tool: tool.name(), worker: "kube" }, &run_id, &delegated, ctx).await
            }
        };
        match effect {
            ToolEffect::Observe(observation) => results.push((context.clone(), observation)),
            // A stop (Ctrl-C, a declined change) ends the whole call as it would end one.
            other => return other,
        }
    }
    ToolEffect::Observe(grouped(id, &results))
}

/// One observation for a call run on several contexts: the contexts with the same status and the
/// same result (its outcome line without the time it took, and its output) as one group, largest
/// first, each output as bounded as a single call's.
fn grouped(id: &str, results: &[(String, Observation)]) -> Observation {
    let mut groups: Vec<(Vec<&str>, ObservationStatus, std::borrow::Cow<'_, str>)> = Vec::new();
    for (context, observation) in results {
        let text = without_duration(&observation.text);
        match groups.iter_mut().find(|(_, status, seen)| *status == observation.status && *seen == text) {
            Some((names, _, _)) => names.push(context),
            None => groups.push((vec![context], observation.status, text)),
        }
    }
    groups.sort_by_key(|(names, _, _)| std::cmp::Reverse(names.len()));
    let mut text = format!("ran on {} kube contexts, {} distinct results", results.len(), groups.len());
    for (names, _, result) in &groups {
        let label = if names.len() == 1 { "context" } else { "contexts" };
        text.push_str(&format!("\n\n## {label} {}\n{result}", names.join(", ")));
    }
    // The call as a whole: the first context that did not run cleanly speaks for it.
    let worst = results
        .iter()
        .map(|(_, observation)| observation)
        .find(|o| o.status != ObservationStatus::Ran || o.exit_code != Some(0))
        .or_else(|| results.first().map(|(_, observation)| observation));
    Observation {
        call_id: id.into(),
        status: worst.map_or(ObservationStatus::Ran, |o| o.status),
        exit_code: worst.and_then(|o| o.exit_code),
        text,
        truncated_bytes: results.iter().map(|(_, o)| o.truncated_bytes).sum(),
        duration_ms: results.iter().map(|(_, o)| o.duration_ms).sum(),
    }
}

/// An observation's text without the run's duration at the end of its outcome line (`exit 0 · 35
/// ms`): two contexts that printed the same are the same result however long each took.
fn without_duration(text: &str) -> std::borrow::Cow<'_, str> {
    let (first, rest) = text.split_once('\n').map_or((text, None), |(first, rest)| (first, Some(rest)));
    let Some((head, tail)) = first.rsplit_once(" · ") else { return text.into() };
    let timed = tail.ends_with(" ms") || tail.ends_with(" s");
    if !timed || !tail.starts_with(|c: char| c.is_ascii_digit()) {
        return text.into();
    }
    match rest {
        Some(rest) => format!("{head}\n{rest}").into(),
        None => head.to_owned().into(),
    }
}

/// A blacklisted call: shown and audited like a policy refusal (CONFIRMED: no), never run.
fn refuse(tool: Kube, id: &str, args: &Value, command: &str, reason: &str, ctx: ToolContext<'_, '_>) -> ToolEffect {
    let ToolContext { services, events, input, .. } = ctx;
    let assessment = policy::assess(command, services.policy);
    let message = format!("no permission: {reason}");
    events(AgentEvent::ToolCall {
        id: id.into(),
        tool: tool.name().into(),
        args: args.clone(),
        command: Some(assessment.sanitized.clone()),
        risk: Some(assessment.risk),
        reasons: vec![message.clone()],
    });
    events(AgentEvent::Approval {
        id: id.into(),
        decision: ApprovalDecision::Refused,
        command: assessment.sanitized.clone(),
        grant: None,
    });
    let record = AuditRecord {
        session: services.session.clone(),
        input: input.to_owned(),
        tool: format!("kube.{}", tool.name()),
        host: services.host.map(str::to_owned),
        user: services.user.clone(),
        approver: None,
        command: assessment.sanitized.clone(),
        risk: assessment.risk,
        confirmed: Confirmed::No,
        exit: None,
        output: message.clone(),
    };
    // As in run_command: the lines are written before the model hears back (one per host on a
    // fleet, as a refused run_command's), and a failing log is reported.
    let text = match super::fleet::audit_each(services, record) {
        Ok(()) => message,
        Err(err) => format!("{message}\n[ERROR]: {err}"),
    };
    let observation = Observation {
        call_id: id.into(),
        status: ObservationStatus::DeniedByPolicy,
        exit_code: None,
        text,
        truncated_bytes: 0,
        duration_ms: 0,
    };
    events(super::unran_result(&observation));
    ToolEffect::Observe(observation)
}

fn kubectl_available() -> bool {
    let path = std::env::var("PATH").unwrap_or_default();
    crate::context::probe::find_on_path("kubectl", &path).is_some()
}
