//! The blacklist of seed 002 §5, checked before anything runs: forbidden kubectl actions, namespaces
//! and resource kinds (`kube.*` in the config). A match is a refusal the model hears as
//! `no permission: …`, so it can tell the user instead of trying around it.

use super::Kube;
use super::plan::{Plan, Scope};
use super::values::canonical_kind;
use crate::config::KubeConfig;

/// Why `plan` may not run, or `None` when it may.
pub fn refusal(tool: Kube, plan: &Plan, config: &KubeConfig) -> Option<String> {
    let forbidden_action = config.forbidden_actions.iter().find(|action| {
        let action = action.trim().to_ascii_lowercase();
        // The verb kubectl would run, or the tool itself (`get_pod_logs`), may be forbidden.
        action == plan.verb || action == tool_name(tool)
    });
    if let Some(action) = forbidden_action {
        return Some(format!(
            "the `{action}` action is forbidden for opsai's Kubernetes tools (kube.forbidden_actions); \
             tell the user, who can run kubectl themselves"
        ));
    }
    if let Scope::Namespace(namespace) = &plan.scope
        && let Some(forbidden) = config.forbidden_namespaces.iter().find(|ns| ns.trim().eq_ignore_ascii_case(namespace))
    {
        return Some(format!(
            "the `{forbidden}` namespace is off limits to opsai's Kubernetes tools (kube.forbidden_namespaces); \
             tell the user, who can look into it themselves"
        ));
    }
    let forbidden_kind =
        plan.kinds.iter().find(|kind| config.forbidden_resources.iter().any(|r| &canonical_kind(r) == *kind));
    if let Some(kind) = forbidden_kind {
        return Some(format!(
            "reading {kind} resources is forbidden for opsai's Kubernetes tools (kube.forbidden_resources): \
             their values must not reach the model; tell the user, who can read them themselves"
        ));
    }
    None
}

/// Why the tools may not talk to kube context `context`, or `None` when they may: its name must be
/// one word kubectl takes as it is, and in `kube.contexts` when that list is not empty.
pub fn context_refusal(context: &str, config: &KubeConfig) -> Option<String> {
    let safe = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | ':' | '/');
    if context.is_empty() || context.len() > 253 || context.starts_with('-') || !context.chars().all(safe) {
        return Some(format!(
            "{:?} is not a kube context name opsai uses (letters, digits and . _ - @ : / only); \
             nothing was run; tell the user",
            context.chars().take(80).collect::<String>()
        ));
    }
    if !config.contexts.is_empty() && !config.contexts.iter().any(|allowed| allowed.trim() == context) {
        return Some(format!(
            "the kube context `{context}` is not one opsai may use (kube.contexts: {}); nothing was run; \
             tell the user, who can add it to kube.contexts or pick another cluster",
            config.contexts.join(", ")
        ));
    }
    None
}

fn tool_name(tool: Kube) -> &'static str {
    tool.name()
}
