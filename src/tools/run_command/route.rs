//! Which sandbox a model-written line gets (issue 21 §3). The strict profile has no sockets, so a
//! Safe `docker ps`, `kubectl get pods` or `systemctl status nginx` could only fail in it, and the
//! model had to ask again with `"sandbox": false` (a round trip and a prompt). Such a line gets the
//! `tool` profile that opsai's own container and kube tools run in — read-only, but with the
//! network, the docker socket, D-Bus and the kube/docker credentials — when it is exactly what those
//! tools would build: one command of plain literal words (no expansion, redirection, pipe or list,
//! so nothing else shares the grant), whose program is the daemon's client, rated Safe by the
//! policy, and without an option that points the client at another endpoint or identity (where the
//! credentials would go). Anything else stays strict.
//!
//! The grant is wider than "exactly one socket": Landlock cannot restrict a Unix-socket `connect`
//! by path before ABI 9, so the tool profile reaches every socket the user can open, as the
//! container and kube tools always have. What keeps it narrow is the line's shape above.

use crate::exec::ssh::sandbox::plain_words;
use crate::policy::KUBE_ELSEWHERE;
use crate::protocol::{Assessment, Risk, SandboxProfile};

/// A daemon's client, and the options (as typed, or as the `--name=` prefix) that choose where it
/// connects or as whom. kubectl's are the policy's own list plus the two it keeps Safe because they
/// pick one of the user's own configurations (the kube tools check a context against
/// `kube.contexts`; a line never picks one).
const CLIENTS: &[(&str, &[&[&str]])] = &[
    ("docker", &[&["-H", "--host", "--context", "-c", "--config", "--tls", "--tlscacert", "--tlscert", "--tlskey"]]),
    ("podman", &[&["--url", "--connection", "-c", "--identity", "--remote", "-r"]]),
    ("kubectl", &[KUBE_ELSEWHERE, &["--kubeconfig", "--context"]]),
    ("systemctl", &[&["-H", "--host", "-M", "--machine"]]),
];

/// The profile for a line the model wrote, as assessed.
pub(super) fn profile_for(assessment: &Assessment) -> SandboxProfile {
    if reaches_daemon(assessment) { SandboxProfile::Tool } else { SandboxProfile::Strict }
}

fn reaches_daemon(assessment: &Assessment) -> bool {
    let [argv] = assessment.commands.as_slice() else { return false };
    let Some((program, args)) = argv.split_first() else { return false };
    let Some((_, endpoint_options)) = CLIENTS.iter().find(|(client, _)| client == program) else { return false };
    if assessment.risk != Risk::Safe || plain_words(&assessment.sanitized).is_err() {
        return false;
    }
    // `--server=x`, `--server x`, and a short option with its value attached (`-Hx`, `-sx`).
    !args.iter().any(|arg| {
        endpoint_options.iter().copied().flatten().any(|option| {
            arg == option
                || arg.strip_prefix(option).is_some_and(|rest| rest.starts_with('=') || !option.starts_with("--"))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PolicyConfig, assess};

    fn profile(line: &str) -> SandboxProfile {
        profile_for(&assess(line, &PolicyConfig::default()))
    }

    #[test]
    fn a_plain_safe_daemon_client_line_gets_the_tool_profile() {
        for line in ["docker ps", "docker ps -a", "kubectl get pods -n web", "systemctl status nginx"] {
            assert_eq!(profile(line), SandboxProfile::Tool, "{line}");
        }
    }

    #[test]
    fn anything_else_stays_strict() {
        for line in [
            "ls -la",
            "docker ps | head",
            "docker ps --format '{{.Names}}'",
            "docker ps; id",
            "docker -H tcp://evil:2375 ps",
            "docker --host=tcp://evil ps",
            "kubectl get pods --server=https://evil.example",
            "kubectl get pods -s https://evil.example",
            "kubectl get pods --token abc",
            "kubectl --kubeconfig=/tmp/k get pods",
            "kubectl --context=prod get pods",
            "kubectl get pods --as=admin",
            "systemctl -H root@db status nginx",
            "docker rm web",
            "/usr/local/bin/docker ps",
        ] {
            assert_eq!(profile(line), SandboxProfile::Strict, "{line}");
        }
    }
}
