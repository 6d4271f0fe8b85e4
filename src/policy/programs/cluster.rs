//! Containers and clusters: inspection is read-only; changes are Medium; deleting data, forcing,
//! pruning and reading Secrets are High. Commands run inside a container or pod are assessed too,
//! and are at least Medium.

use super::cluster_tables::{DOCKER_READ, KUBE_READ};
use super::kube_output::{dumps_environment, resource_words};
use super::options::{Operands, Options};
use super::{by_subcommand, skip_options};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Nested, Outcome, Verdict};

const DOCKER_GLOBAL: &[&str] =
    &["-H", "--host", "--context", "-c", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey"];

/// docker's read-only commands (alone or after a management group: `docker container ls`).
const DOCKER_SAFE: &[&str] = &[
    "ps", "ls", "list", "logs", "inspect", "images", "version", "info", "stats", "top", "port", "history", "diff",
    "events", "search", "df", "show", "--version", "-v",
];

/// Management commands with a second word (`docker container ls`).
const DOCKER_GROUPS: &[&str] = &[
    "container", "image", "network", "volume", "system", "context", "builder", "buildx", "plugin", "secret", "service",
    "stack", "node", "swarm", "config", "manifest", "trust", "compose",
];

pub fn docker<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let Some((index, first)) = inv.subcommand(DOCKER_GLOBAL) else {
        let known: Vec<&str> = DOCKER_GROUPS.iter().chain(DOCKER_SAFE).copied().collect();
        if let Some(verdict) = super::value_where_subcommand_expected(inv.args, DOCKER_GLOBAL, &known) {
            return verdict.into();
        }
        return DOCKER_READ.check(inv).into();
    };
    let outcome = docker_sub(inv, index, first);
    if outcome.verdict.risk != crate::protocol::Risk::Safe || !outcome.nested.is_empty() {
        return outcome;
    }
    if inv.has_word(&["-H"]) || inv.has_long("--host") {
        return Verdict::medium("-H talks to the Docker daemon of another host").into();
    }
    if inv.has_long("--config") {
        return Verdict::medium("--config names a config whose credential helpers are programs").into();
    }
    // `docker compose …` options were checked against the compose table; only docker's own here.
    let checked = if first == "compose" { &inv.args[..index] } else { inv.args };
    DOCKER_READ.check(&Invocation { args: checked, ..*inv }).into()
}

fn docker_sub<'a>(inv: &Invocation<'a>, first_index: usize, first: &'a str) -> Outcome<'a> {
    let index = first_index;
    let (index, group, sub) = if DOCKER_GROUPS.contains(&first) {
        match inv.after(index).subcommand(&[]) {
            Some((i, second)) => (index + 1 + i, first, second),
            None => return Verdict::SAFE.into(),
        }
    } else {
        (index, "", first)
    };
    let rest = inv.after(index);
    if group == "compose" {
        let verdict = compose_verdict(sub, &rest);
        if verdict.risk != crate::protocol::Risk::Safe {
            return verdict.into();
        }
        // Everything after `compose`: its own options, the subcommand's, and the services.
        return COMPOSE_READ.check(&inv.after(first_index)).into();
    }
    if sub == "exec" {
        return exec_in_container(&rest);
    }

    if (sub == "rm" || sub == "remove" || sub == "rmi") && (rest.has_short('f') || rest.has_long("--force")) {
        return Verdict::high("force-removes containers or images").into();
    }
    if sub == "prune" {
        return Verdict::high("deletes all unused containers, images, networks or volumes").into();
    }
    if group == "volume" && (sub == "rm" || sub == "remove") {
        return Verdict::high("deletes volume data").into();
    }
    if matches!(group, "swarm" | "node" | "stack" | "service" | "secret") && matches!(sub, "rm" | "remove" | "leave") {
        return Verdict::high("removes cluster resources").into();
    }
    if matches!(sub, "run" | "create") {
        if let Some(reason) = host_access(&rest) {
            return Verdict::high(reason).into();
        }
        return Verdict::medium("starts a container").into();
    }
    if sub == "inspect"
        && !matches!(group, "network" | "volume" | "context" | "node")
        && let Some(why) = inspect_prints_environment(&rest)
    {
        return Verdict::medium(why).into();
    }
    by_subcommand(sub, DOCKER_SAFE, &[], "changes containers or images").into()
}

/// `docker inspect` prints a container's or image's whole configuration, environment included
/// (tokens often live there), unless `--format` picks fields outside it.
fn inspect_prints_environment(rest: &Invocation) -> Option<&'static str> {
    let Some(format) = rest.value_of(Some('f'), "--format") else {
        return Some("prints the whole configuration, the environment (where tokens often live) included");
    };
    // A bare `.` or `$` is the whole object (`{{json .}}`, `{{index . "Config"}}`, `{{$}}`).
    let bytes = format.as_bytes();
    let whole = bytes.iter().enumerate().any(|(i, &b)| {
        let next = bytes.get(i + 1).copied().unwrap_or(b' ');
        let prev = if i == 0 { b' ' } else { bytes[i - 1] };
        (b == b'.' && !(next.is_ascii_alphabetic() || next == b'_') && !prev.is_ascii_alphanumeric())
            || (b == b'$' && !(next.is_ascii_alphanumeric() || next == b'_'))
    });
    // `.Config` or `.Spec` as a whole (not one field of it, like `.Config.Image`).
    let whole_part = ["Config", "Spec"]
        .iter()
        .any(|part| format.match_indices(part).any(|(at, _)| !format[at + part.len()..].starts_with('.')));
    (whole || whole_part || format.contains("Env"))
        .then_some("its --format prints the configuration or the environment, where tokens often live")
}

/// `--privileged`, the host's root or Docker socket mounted, or the host's namespaces shared.
fn host_access(inv: &Invocation) -> Option<&'static str> {
    let texts: Vec<&str> = inv.texts().collect();
    let host_namespace = texts.windows(2).any(|pair| {
        matches!(pair[0], "--pid" | "--ipc" | "--userns" | "--uts" | "--net" | "--network" | "--cgroupns")
            && pair[1] == "host"
    });
    // A host device, any added capability or a lifted confinement reaches the host too.
    let loosened = texts.iter().any(|t| {
        let key = t.split_once('=').map_or(*t, |(k, _)| k);
        matches!(key, "--device" | "--cap-add" | "--security-opt" | "--device-cgroup-rule")
    });
    if inv.has_long("--privileged")
        || host_namespace
        || loosened
        || inv.has_word(&[
            "--pid=host", "--ipc=host", "--userns=host", "--uts=host", "--net=host", "--network=host",
            "--cgroupns=host", "--cap-add=ALL", "--cap-add=SYS_ADMIN",
        ])
    {
        return Some("runs a container with full access to the host");
    }
    let mounts_root = texts.iter().enumerate().any(|(i, t)| {
        let value = match *t {
            "-v" | "--volume" | "--mount" => texts.get(i + 1).copied().unwrap_or(""),
            t => t
                .strip_prefix("--volume=")
                .or_else(|| t.strip_prefix("-v"))
                .or_else(|| t.strip_prefix("--mount="))
                .unwrap_or(""),
        };
        value.starts_with("/:")
            || value.contains("source=/,")
            || value.contains("docker.sock")
            || value.starts_with("/etc:")
    });
    if mounts_root {
        return Some("mounts the host's root, /etc or Docker socket into a container");
    }
    let binds_host = texts.iter().enumerate().any(|(i, t)| {
        let value = match *t {
            "-v" | "--volume" | "--mount" => texts.get(i + 1).copied().unwrap_or(""),
            t => t
                .strip_prefix("--volume=")
                .or_else(|| t.strip_prefix("--mount="))
                .or_else(|| t.strip_prefix("-v").filter(|v| !v.is_empty()))
                .unwrap_or(""),
        };
        value.starts_with(['/', '.', '~', '$']) || value.contains("type=bind") || value.contains("source=/")
    });
    binds_host.then_some("mounts a host directory into a container (it can change the host's files)")
}

fn exec_in_container<'a>(rest: &Invocation<'a>) -> Outcome<'a> {
    let start =
        skip_options(rest.args, &["-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"]);
    let container = rest.args.get(start).map(|w| w.text.as_str()).unwrap_or("?");
    let command = rest.args.get(start + 1..).unwrap_or(&[]);
    let verdict = Verdict::medium(format!("runs a command inside container {container}"));
    if command.is_empty() {
        return verdict.into();
    }
    Outcome::from(verdict).then(Nested::Exec { words: command, bulk: false })
}

pub(crate) fn compose<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let verdict = match inv.subcommand(&["-f", "--file", "-p", "--project-name", "--env-file", "--profile"]) {
        Some((index, sub)) => compose_verdict(sub, &inv.after(index)),
        None => Verdict::SAFE,
    };
    if verdict.risk != crate::protocol::Risk::Safe {
        return verdict.into();
    }
    COMPOSE_READ.check(inv).into()
}

/// Options of `docker compose` read-only commands (ps, logs, config, ls, images, top…).
static COMPOSE_READ: Options = Options {
    short: "aqtf:n:p:",
    long: &[
        "file=", "project-name=", "env-file=", "profile=", "project-directory=", "all", "quiet", "services", "format=",
        "filter=", "status=", "follow", "tail=", "timestamps", "since=", "until=", "no-color", "no-log-prefix",
        "no-trunc", "volumes", "images", "profiles", "hash=", "resolve-image-digests", "no-interpolate",
        "no-normalize", "no-consistency", "no-path-resolution", "output=", "ansi=", "progress=", "dry-run",
        "variables", "environment", "index=", "orphans",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

fn compose_verdict(sub: &str, rest: &Invocation) -> Verdict {
    if sub == "down" && (rest.has_short('v') || rest.has_long("--volumes")) {
        return Verdict::high("deletes the project's volumes");
    }
    // `config` prints the resolved file, every value from `.env` interpolated; its listing forms
    // print names only.
    let names_only = ["--services", "--volumes", "--images", "--profiles", "--networks", "-q", "--quiet"];
    if sub == "config" && !rest.texts().any(|t| names_only.contains(&t)) {
        return Verdict::medium(
            "prints the resolved compose file, with the values interpolated from .env and the environment",
        );
    }
    by_subcommand(
        sub,
        &["ps", "logs", "config", "ls", "images", "top", "version", "port", "events"],
        &[],
        "changes the compose project",
    )
}

const KUBE_GLOBAL: &[&str] = &[
    "-n",
    "--namespace",
    "--context",
    "--cluster",
    "--kubeconfig",
    "-s",
    "--server",
    "--user",
    "--token",
    "--as",
    "--as-group",
    "--request-timeout",
    "-v",
    "--cache-dir",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--tls-server-name",
];

/// Global options that send the request, and the credentials with it, to a server or as an
/// identity the command line chooses rather than the current context.
pub(crate) const KUBE_ELSEWHERE: &[&str] = &[
    "-s",
    "--server",
    "--as",
    "--as-group",
    "--as-uid",
    "--token",
    "--user",
    "--cluster",
    "--username",
    "--password",
    "--certificate-authority",
    "--client-certificate",
    "--client-key",
    "--tls-server-name",
    "--insecure-skip-tls-verify",
];

/// A Secret named as a resource in any spelling (`secret/x`, `pods,secrets`, `secrets.v1.`,
/// `Secret.v1.core`) or in a raw API path (`--raw=/api/v1/namespaces/x/secrets`).
fn mentions_secrets(inv: &Invocation) -> bool {
    let named = |text: &str| {
        text.split([',', '/', '=']).any(|part| {
            let kind = part.split('.').next().unwrap_or(part);
            matches!(kind.to_ascii_lowercase().as_str(), "secret" | "secrets")
        })
    };
    inv.positionals().iter().any(|w| named(&w.text)) || inv.texts().any(|t| t.starts_with("--raw=") && named(t))
}

pub fn kubectl<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if let Some(config) = inv.value_of(None, "--kubeconfig") {
        let verdict = if super::is_stdin(config) {
            Verdict::high("a kubeconfig from stdin: its exec credential plugin runs whatever it names")
        } else {
            Verdict::medium("--kubeconfig names a config whose exec credential plugins are programs")
        };
        return verdict.into();
    }
    let elsewhere = inv.texts().take_while(|t| *t != "--").find(|t| {
        let key = t.split_once('=').map_or(*t, |(k, _)| k);
        KUBE_ELSEWHERE.contains(&key) || key.starts_with("-s") && key.len() > 2 && !key.starts_with("--")
    });
    if let Some(option) = elsewhere {
        return Verdict::medium(format!(
            "{option} sends the request and credentials to another server or as another identity than the current context"
        ))
        .into();
    }
    let outcome = kubectl_rules(inv);
    if outcome.verdict.risk != crate::protocol::Risk::Safe || !outcome.nested.is_empty() {
        return outcome;
    }
    KUBE_READ.check(inv).into()
}

fn kubectl_rules<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let Some((index, sub)) = inv.subcommand(KUBE_GLOBAL) else {
        return Verdict::SAFE.into();
    };
    let rest = inv.after(index);
    let second = rest.subcommand(KUBE_GLOBAL).map(|(_, s)| s).unwrap_or("");
    if sub == "exec" {
        let command = rest.args.iter().position(|w| w.text == "--").map(|p| &rest.args[p + 1..]).unwrap_or(&[]);
        let verdict = Verdict::medium("runs a command inside a pod");
        if command.is_empty() {
            return verdict.into();
        }
        return Outcome::from(verdict).then(Nested::Exec { words: command, bulk: false });
    }
    // `kubectl get "$kind"`, `kubectl get sec*`: the kind is only known at run time.
    if matches!(sub, "get" | "describe")
        && let Some(word) = resource_words(&rest).into_iter().find(|w| w.dynamic || w.glob)
    {
        return Verdict::medium(format!(
            "the resource ({}) is only known at run time, and it could be Secrets",
            word.text
        ))
        .into();
    }
    if mentions_secrets(&rest) {
        let output = rest.value_of(Some('o'), "--output").unwrap_or("");
        if sub == "get" && (!output.is_empty() && output != "name" && output != "wide" || rest.has_long("--raw")) {
            return Verdict::high("reveals cluster Secrets (their values would reach the model provider)").into();
        }
        if matches!(sub, "get" | "describe") {
            return Verdict::medium("lists Secrets").into();
        }
    }
    if sub == "get"
        && let Some(why) = dumps_environment(&rest)
    {
        return Verdict::medium(why).into();
    }
    if sub == "config" {
        if second == "view" && !rest.has_long("--raw") && !rest.has_long("--flatten") {
            return Verdict::SAFE.into();
        }
        if second == "view" {
            return Verdict::high("shows cluster credentials").into();
        }
        if matches!(second, "get-contexts" | "current-context" | "get-clusters" | "get-users") {
            return Verdict::SAFE.into();
        }
        return Verdict::medium("changes the kubeconfig").into();
    }
    if sub == "rollout" && matches!(second, "status" | "history")
        || sub == "auth" && matches!(second, "can-i" | "whoami")
    {
        return Verdict::SAFE.into();
    }
    const SAFE: &[&str] = &[
        "get", "describe", "logs", "top", "explain", "api-resources", "api-versions", "version", "cluster-info",
        "events", "diff", "wait",
    ];
    const HIGH: &[(&[&str], &str)] = &[(&["delete", "drain"], "deletes or evicts cluster resources")];
    if sub == "replace" && rest.has_long("--force") || sub == "apply" && rest.has_long("--prune") {
        return Verdict::high("deletes cluster resources it replaces or prunes").into();
    }
    let verdict = by_subcommand(sub, SAFE, HIGH, "changes the cluster");
    let namespace = inv.value_of(Some('n'), "--namespace").unwrap_or("");
    if verdict.risk == crate::protocol::Risk::Medium
        && matches!(namespace, "kube-system" | "kube-public" | "kube-node-lease")
    {
        return Verdict::high(format!("changes the {namespace} namespace")).into();
    }
    verdict.into()
}
