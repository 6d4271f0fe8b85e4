//! `--contexts PATTERN`: the kubeconfig contexts every kube tool call runs on (docs/remote.md),
//! read from kubectl before any model call, so a pattern that selects nothing costs no request.

use std::process::{Command, Stdio};

use crate::config::KubeConfig;
use crate::fleet::hosts::glob_matches;
use crate::tools::kube::context_refusal;

/// The contexts `pattern` (comma-separated globs, `prod-*,staging`) selects among kubectl's, in
/// kubeconfig order; or what to tell the user.
pub(crate) fn select(pattern: &str, kube: &KubeConfig) -> Result<Vec<String>, String> {
    let terms: Vec<&str> = pattern.split(',').map(str::trim).filter(|term| !term.is_empty()).collect();
    if terms.is_empty() {
        return Err("--contexts needs a pattern: context names or globs, comma-separated (`prod-*`)".to_owned());
    }
    let output =
        Command::new("kubectl").args(["config", "get-contexts", "-o", "name"]).stdin(Stdio::null()).output().map_err(
            |err| format!("--contexts lists the kubeconfig's contexts with kubectl, which did not start: {err}"),
        )?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("no message");
        return Err(format!("`kubectl config get-contexts` failed ({}): {}", output.status, printable(first)));
    }
    let known: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    let chosen: Vec<String> =
        known.iter().filter(|context| terms.iter().any(|term| glob_matches(term, context))).cloned().collect();
    if chosen.is_empty() {
        let names: Vec<String> = known.iter().map(|name| printable(name)).collect();
        let names = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
        return Err(format!(
            "`{}` selects no kube context (kubectl knows: {names}); check the pattern",
            printable(pattern)
        ));
    }
    // A name kubectl would misread, or one outside `kube.contexts`, stops the run before it starts.
    if let Some(reason) = chosen.iter().find_map(|context| context_refusal(context, kube)) {
        return Err(format!("--contexts: {reason}"));
    }
    Ok(chosen)
}

/// The environment layer's line: the model learns that one kube call answers for every context.
pub(crate) fn environment(contexts: &[String]) -> String {
    if contexts.is_empty() {
        return String::new();
    }
    format!(
        "- Kubernetes: every kube tool call runs on each of {} contexts ({}) and the results come back grouped\n",
        contexts.len(),
        contexts.join(", ")
    )
}

/// `text` without control or invisible characters (names come from the user's kubeconfig).
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control() && !crate::policy::is_invisible(*c)).take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_told_which_contexts_answer() {
        assert_eq!(environment(&[]), "");
        let line = environment(&["prod-eu".into(), "prod-us".into()]);
        assert!(line.contains("each of 2 contexts (prod-eu, prod-us)"), "{line}");
        assert_eq!(printable("a\u{1b}[31mb\u{202e}c"), "a[31mbc");
    }
}
