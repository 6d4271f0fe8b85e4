//! helm and terraform: listing releases and reading charts is read-only; terraform reads only its
//! version and formatting, since everything else loads the project's provider plugins and backend.

use super::by_subcommand;
use super::options::{Operands, Options};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

pub(crate) fn helm<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.has_long("--kubeconfig") {
        return Verdict::medium("--kubeconfig names a config whose exec credential plugins are programs").into();
    }
    let verdict = helm_rules(inv);
    if verdict.risk != crate::protocol::Risk::Safe {
        return verdict.into();
    }
    HELM_READ.check(inv).into()
}

/// Options of helm's read-only commands (list, status, get, history, show, template, search…).
/// `template --output-dir` (writes files) and `--post-renderer` (runs a program) are left out.
static HELM_READ: Options = Options {
    short: "aAdhoqrn:l:m:",
    long: &[
        "all",
        "all-namespaces",
        "namespace=",
        "kube-context=",
        "output=",
        "short",
        "date",
        "reverse",
        "max=",
        "offset=",
        "filter=",
        "selector=",
        "deployed",
        "failed",
        "pending",
        "superseded",
        "uninstalled",
        "uninstalling",
        "no-headers",
        "time-format=",
        "revision=",
        "show-desc",
        "show-resources",
        "version=",
        "versions",
        "devel",
        "regexp",
        "values=",
        "set=",
        "set-string=",
        "set-file=",
        "set-json=",
        "show-only=",
        "include-crds",
        "skip-crds",
        "skip-tests",
        "release-name",
        "name-template=",
        "api-versions=",
        "kube-version=",
        "is-upgrade",
        "validate",
        "debug",
        "repo=",
        "template=",
        "jsonpath=",
        "col-width=",
        "fail-on-no-result",
        "max-col-width=",
        "strict",
        "quiet",
        "with-subcharts",
        "keyring=",
        "verify",
        "username=",
        "password=",
        "insecure-skip-tls-verify",
        "plain-http",
        "pass-credentials",
        "ca-file=",
        "cert-file=",
        "key-file=",
        "dependency-update",
        "no-hooks",
        "burst-limit=",
        "qps=",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

fn helm_rules(inv: &Invocation) -> Verdict {
    let Some((index, sub)) = inv.subcommand(&["-n", "--namespace", "--kube-context", "--kubeconfig"]) else {
        return Verdict::SAFE;
    };
    let second = inv.after(index).subcommand(&[]).map(|(_, s)| s).unwrap_or("");
    if sub == "get" && matches!(second, "values" | "all" | "manifest") {
        return Verdict::medium("can show secret values of a release");
    }
    if matches!(sub, "repo" | "plugin" | "dependency" | "dep") && matches!(second, "list" | "ls") {
        return Verdict::SAFE;
    }
    const SAFE: &[&str] =
        &["list", "ls", "status", "get", "history", "show", "inspect", "template", "search", "version", "env", "lint"];
    const HIGH: &[(&[&str], &str)] = &[(&["uninstall", "delete", "del", "un"], "removes a release")];
    by_subcommand(sub, SAFE, HIGH, "changes a release or chart")
}

pub fn terraform<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let verdict = terraform_rules(inv);
    if verdict.risk != crate::protocol::Risk::Safe {
        return verdict.into();
    }
    TERRAFORM_READ.check(inv).into()
}

/// Options of terraform's reading commands (show, output, state list/show/pull, validate, fmt
/// -check, graph, providers, version). `fmt -write` is left out.
static TERRAFORM_READ: Options = Options {
    short: "",
    long: &[],
    words: &[
        "json", "no-color", "raw", "state=", "check", "diff", "recursive", "list=", "type=", "plan=", "draw-cycles",
        "module-depth=", "chdir=", "var=", "var-file=", "lock=", "lock-timeout=", "id=", "help", "version", "backend=",
        "test-directory=", "show-sensitive",
    ],
    numeric: false,
    operands: Operands::Any,
};

fn terraform_rules(inv: &Invocation) -> Verdict {
    let Some((index, sub)) = inv.subcommand(&[]) else {
        return Verdict::SAFE;
    };
    let rest = inv.after(index);
    let second = rest.subcommand(&[]).map(|(_, s)| s).unwrap_or("");
    if sub == "destroy" || sub == "apply" && rest.has_word(&["-destroy"]) {
        return Verdict::high("destroys infrastructure");
    }
    if sub == "state" && matches!(second, "rm" | "push" | "replace-provider")
        || sub == "force-unlock"
        || sub == "workspace" && second == "delete"
    {
        return Verdict::high("rewrites infrastructure state");
    }
    // State and outputs hold secrets in plain text; these forms print them unredacted.
    let plain = rest.has_word(&["-json", "-raw"]);
    if sub == "state" && second == "pull" || matches!(sub, "output" | "show") && plain {
        return Verdict::high("prints terraform state or outputs, secrets included, in plain text");
    }
    if sub == "fmt" && (rest.has_word(&["-check"]) || rest.has_word(&["-diff"])) {
        return Verdict::SAFE;
    }
    // Everything else loads the project: provider plugins (programs) from `.terraform`, the
    // backend, and the CLI config's `credentials_helper`.
    const LOADS: &[&str] = &["validate", "show", "output", "providers", "graph", "state", "workspace", "console"];
    if LOADS.contains(&sub) {
        return Verdict::medium(
            "loads the project's provider plugins or backend (programs and credentials helpers the configuration names)",
        );
    }
    by_subcommand(sub, &["version", "-version"], &[], "changes infrastructure or its state")
}
