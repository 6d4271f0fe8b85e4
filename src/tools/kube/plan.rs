//! One tool call → the kubectl argv it would run, plus what the blacklist needs to judge it (the
//! verb, the kinds read, the namespace). Building never consults the blacklist except for the
//! namespaces an all-namespaces read must leave out, which are written into the argv itself.

use serde_json::Value;

use super::Kube;
use super::values::{
    ALL_NAMESPACES, canonical_kind, event_kind, field_selector, label, label_selector, required, split_kind, subdomain,
    text,
};
use crate::config::KubeConfig;

/// Seconds each call may take: kubectl's own request timeout and the run's.
pub const TIMEOUT_S: u64 = 30;
/// Log lines when the model does not say.
pub(crate) const DEFAULT_TAIL: u64 = 100;
/// The most log lines one call may ask for; more is cut to this.
pub(crate) const MAX_TAIL: u64 = 1000;
/// The namespace read when the model names none. Explicit, rather than the kubeconfig context's,
/// because opsai cannot see the context's namespace and could not check it against the blacklist.
pub(crate) const DEFAULT_NAMESPACE: &str = "default";

/// Where a read looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Namespace(String),
    /// `--all-namespaces`, with the forbidden namespaces excluded by a field selector.
    All,
    /// Cluster-scoped resources (nodes).
    Cluster,
}

/// What one call would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub argv: Vec<String>,
    /// kubectl's verb (`get`, `logs`, `describe`).
    pub verb: &'static str,
    /// Every resource kind the call reads or asks about, canonical (`pod`, `secret`).
    pub kinds: Vec<String>,
    pub scope: Scope,
}

/// The plan for one call, or what is wrong with the arguments (for the model to fix).
pub fn build(tool: Kube, args: &Value, config: &KubeConfig) -> Result<Plan, String> {
    if !args.is_object() && !args.is_null() {
        return Err(format!("arguments must be a JSON object, got {args}"));
    }
    let mut plan = match tool {
        Kube::ListPods => {
            let scope = scope(args, true)?;
            let mut argv = words(&["get", "pods"]);
            push_scope(&mut argv, &scope, None, config);
            if let Some(selector) = text(args, "selector")? {
                argv.extend(["-l".into(), label_selector(&selector)?]);
            }
            argv.extend(words(&["-o", "wide"]));
            Plan { argv, verb: "get", kinds: vec!["pod".into()], scope }
        }
        Kube::PodLogs => {
            let name = subdomain("name", &pod_name(&required(args, "name")?)?)?;
            let scope = scope(args, false)?;
            let mut argv = vec!["logs".into(), name];
            push_scope(&mut argv, &scope, None, config);
            if let Some(container) = text(args, "container")? {
                argv.extend(["-c".into(), label("container", &container)?]);
            }
            argv.push(format!("--tail={}", tail(args)?));
            if previous(args)? {
                argv.push("--previous".into());
            }
            Plan { argv, verb: "logs", kinds: vec!["pod".into()], scope }
        }
        Kube::DescribePod => {
            let name = subdomain("name", &pod_name(&required(args, "name")?)?)?;
            let scope = scope(args, false)?;
            let mut argv = vec!["describe".into(), "pod".into(), name];
            push_scope(&mut argv, &scope, None, config);
            Plan { argv, verb: "describe", kinds: vec!["pod".into()], scope }
        }
        Kube::DeploymentStatus => match text(args, "name")? {
            // One deployment: describe shows its conditions, replica sets and recent events.
            Some(name) => {
                let name = subdomain("name", &name)?;
                let scope = scope(args, false)?;
                let mut argv = vec!["describe".into(), "deployment".into(), name];
                push_scope(&mut argv, &scope, None, config);
                Plan { argv, verb: "describe", kinds: vec!["deployment".into()], scope }
            }
            None => {
                let scope = scope(args, true)?;
                let mut argv = words(&["get", "deployments"]);
                push_scope(&mut argv, &scope, None, config);
                argv.extend(words(&["-o", "wide"]));
                Plan { argv, verb: "get", kinds: vec!["deployment".into()], scope }
            }
        },
        Kube::Events => events(args, config)?,
        Kube::ConfigMap => {
            let asked = required(args, "name")?;
            let (kind, name) = split_kind(&asked);
            let kind = kind.unwrap_or_else(|| "configmap".into());
            let forbidden = config.forbidden_resources.iter().any(|r| canonical_kind(r) == kind);
            if kind != "configmap" && !forbidden {
                return Err(format!("get_configmap reads ConfigMaps only, not a {kind}"));
            }
            let name = subdomain("name", name)?;
            let scope = scope(args, false)?;
            // A forbidden kind keeps its own word, so the refusal shows (and audits) what was asked for.
            let mut argv = vec!["get".into(), kind.clone(), name];
            push_scope(&mut argv, &scope, None, config);
            argv.extend(words(&["-o", "yaml"]));
            Plan { argv, verb: "get", kinds: vec![kind], scope }
        }
        Kube::NodeStatus => match text(args, "name")? {
            // Not `describe node`: its pod table lists every namespace's pods, forbidden ones included.
            Some(name) => {
                let name = subdomain("name", &name)?;
                let argv = vec!["get".into(), "node".into(), name, "-o".into(), format!("jsonpath={NODE_TEMPLATE}")];
                Plan { argv, verb: "get", kinds: vec!["node".into()], scope: Scope::Cluster }
            }
            None => Plan {
                argv: words(&["get", "nodes", "-o", "wide"]),
                verb: "get",
                kinds: vec!["node".into()],
                scope: Scope::Cluster,
            },
        },
    };
    plan.argv.insert(0, "kubectl".into());
    plan.argv.push(format!("--request-timeout={TIMEOUT_S}s"));
    Ok(plan)
}

impl Plan {
    /// Talks to kube context `context`: `--context=NAME` right after `kubectl`, before the verb.
    pub fn in_context(&mut self, context: &str) {
        let at = usize::from(self.argv.first().is_some_and(|word| word == "kubectl"));
        self.argv.insert(at, format!("--context={context}"));
    }
}

/// A named node's status: conditions, capacity, taints, versions.
const NODE_TEMPLATE: &str = concat!(
    r#"{.metadata.name}{"\n"}"#,
    r#"unschedulable: {.spec.unschedulable}{"\n"}"#,
    r#"taints: {.spec.taints}{"\n"}"#,
    r#"capacity: {.status.capacity}{"\n"}"#,
    r#"allocatable: {.status.allocatable}{"\n"}"#,
    r#"kubelet: {.status.nodeInfo.kubeletVersion}  os: {.status.nodeInfo.osImage}{"\n"}"#,
    r#"{range .status.conditions[*]}{.type}={.status} {.reason}: {.message}{"\n"}{end}"#,
);

fn events(args: &Value, config: &KubeConfig) -> Result<Plan, String> {
    let scope = scope(args, true)?;
    let mut kinds = vec!["event".to_owned()];
    let mut selectors = Vec::new();
    if let Some(object) = text(args, "for_object")? {
        let (kind, name) = split_kind(&object);
        if let Some(kind) = kind {
            let Some(event_kind) = event_kind(&kind) else {
                return Err(format!(
                    "`for_object` has an unknown kind {kind:?}; write e.g. pod/NAME or deployment/NAME"
                ));
            };
            selectors.push(format!("involvedObject.kind={event_kind}"));
            kinds.push(kind);
        }
        selectors.push(format!("involvedObject.name={}", subdomain("for_object", name)?));
    }
    if let Some(selector) = text(args, "field_selector")? {
        let selector = field_selector(&selector)?;
        // `involvedObject.kind=Secret`: events about a forbidden kind count as reading that kind.
        for term in selector.split(',') {
            if let Some((key, value)) = term.split_once('=')
                && !key.ends_with('!')
                && key.to_ascii_lowercase().ends_with("kind")
            {
                kinds.push(canonical_kind(value.trim_start_matches('=')));
            }
        }
        selectors.push(selector);
    }
    let mut argv = words(&["get", "events"]);
    push_scope(&mut argv, &scope, Some(selectors.join(",")).filter(|s| !s.is_empty()), config);
    argv.push("--sort-by=.metadata.creationTimestamp".into());
    Ok(Plan { argv, verb: "get", kinds, scope })
}

/// `-n NS`, or `--all-namespaces` with a field selector that leaves out the forbidden namespaces
/// (the API server filters, so their rows never reach opsai); `selector` is the call's own.
fn push_scope(argv: &mut Vec<String>, scope: &Scope, selector: Option<String>, config: &KubeConfig) {
    let mut selectors: Vec<String> = selector.into_iter().collect();
    match scope {
        Scope::Namespace(namespace) => argv.extend(["-n".into(), namespace.clone()]),
        Scope::All => {
            argv.push("--all-namespaces".into());
            // A configured entry that is not a valid namespace name can match no namespace.
            let excluded = config.forbidden_namespaces.iter().filter_map(|ns| label("", &ns.to_ascii_lowercase()).ok());
            selectors.extend(excluded.map(|ns| format!("metadata.namespace!={ns}")));
        }
        Scope::Cluster => {}
    }
    if !selectors.is_empty() {
        argv.extend(["--field-selector".into(), selectors.join(",")]);
    }
}

/// `namespace`: a name, absent (→ `default`), or `all`/`*` where `all_allowed`.
fn scope(args: &Value, all_allowed: bool) -> Result<Scope, String> {
    match text(args, "namespace")? {
        None => Ok(Scope::Namespace(DEFAULT_NAMESPACE.into())),
        Some(ns) if ALL_NAMESPACES.contains(&ns.to_ascii_lowercase().as_str()) => {
            if all_allowed {
                Ok(Scope::All)
            } else {
                Err("`namespace` must name one namespace for this tool, not all of them".into())
            }
        }
        Some(ns) => Ok(Scope::Namespace(label("namespace", &ns)?)),
    }
}

/// A pod name, also accepted as `pod/NAME`.
fn pod_name(value: &str) -> Result<String, String> {
    match split_kind(value) {
        (None, name) => Ok(name.to_owned()),
        (Some(kind), name) if kind == "pod" => Ok(name.to_owned()),
        (Some(kind), _) => Err(format!("`name` must be a pod's name, got a {kind} ({value:?})")),
    }
}

fn tail(args: &Value) -> Result<u64, String> {
    match args.get("tail") {
        None | Some(Value::Null) => Ok(DEFAULT_TAIL),
        Some(value) => match value.as_u64() {
            Some(n) if n >= 1 => Ok(n.min(MAX_TAIL)),
            _ => Err(format!("`tail` must be a number of lines from 1 to {MAX_TAIL}, got {value}")),
        },
    }
}

fn previous(args: &Value) -> Result<bool, String> {
    match args.get("previous") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(other) => Err(format!("`previous` must be true or false, got {other}")),
    }
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}
