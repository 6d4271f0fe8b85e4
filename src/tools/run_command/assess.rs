//! The assess step: the arguments checked, the command line sanitized and rated by the policy, and
//! the `tool_call` event.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{Call, Caller, route};
use crate::policy::{self, PolicyConfig};
use crate::protocol::{Assessment, CommandRequest, Observation, SandboxProfile};
use crate::tools::gate::{Allowed, AutoRun};
use crate::tools::{invalid_arguments, optional_string, string_arg};

/// A command ready for the gate, and what it needs to run once allowed.
pub(super) struct Planned {
    /// The line as written (the model's, or the user's edit), before sanitizing.
    pub typed: String,
    pub assessment: Assessment,
    pub why: Option<String>,
    pub auto: AutoRun,
    pub cwd: PathBuf,
    pub timeout: Duration,
    /// A model-written line, whose sandbox follows from what it is (`route`).
    pub routed: bool,
    /// On a fleet, the hosts found unreachable before the prompt (named in it; not run).
    pub unreached: Vec<crate::fleet::fanout::HostRun>,
    /// What the prompt adds under the command (a fleet's reachability).
    pub note: Option<String>,
}

impl Planned {
    /// The user edited the command at the prompt: rated again, and a model-written line's sandbox
    /// chosen again for what it now is.
    pub(crate) fn reassess(&mut self, typed: String, policy: &PolicyConfig) {
        self.assessment = policy::assess(&typed, policy);
        self.typed = typed;
        if self.routed {
            self.auto.profile = route::profile_for(&self.assessment);
        }
    }

    /// What the executor runs: the sanitized line, sandboxed unless someone approved it.
    pub fn request(&self, id: &str, allowed: Allowed) -> CommandRequest {
        CommandRequest {
            call_id: id.into(),
            command: self.assessment.sanitized.clone(),
            cwd: self.cwd.clone(),
            timeout: self.timeout,
            why: self.why.clone(),
            sandbox: allowed.sandbox(),
        }
    }
}

/// Checks `args` and rates the command; an observation for the model when the arguments are wrong.
pub(super) fn assess(call: &mut Call, args: &Value, cwd: &Path) -> Result<Planned, Observation> {
    let services = call.services;
    let typed = string_arg(args, "command").map_err(|message| invalid_arguments(call.id, message))?.to_owned();
    // Only ever adds a prompt: `false` takes the command out of the no-questions path.
    let refused = args.get("sandbox").and_then(Value::as_bool) == Some(false);
    // Model-written lines get the strict sandbox, unless one is exactly what opsai's own tools would
    // run (`route`); those tools build their argv from checked values and keep the network and
    // credentials they need.
    let routed = call.caller.tool == Caller::RUN_COMMAND.tool;
    // A tool may ask for a shorter limit than `exec.timeout_s` (the Kubernetes tools: 30 s), never a longer one.
    let timeout = args
        .get("timeout_s")
        .and_then(Value::as_u64)
        .filter(|&seconds| seconds > 0)
        .map_or(services.exec_timeout, |seconds| Duration::from_secs(seconds).min(services.exec_timeout));
    // On an ssh host or a fleet, `~` is the host's home: it is left for the remote shell.
    let remote = services.host.is_some() || services.fleet.is_some();
    let cwd = match optional_string(args, "cwd") {
        Some(dir) => resolve(cwd, &dir, remote),
        None => cwd.to_owned(),
    };
    let assessment = policy::assess(&typed, services.policy);
    let profile = if routed { route::profile_for(&assessment) } else { SandboxProfile::Tool };
    call.announce(args.clone(), &assessment);
    Ok(Planned {
        typed,
        assessment,
        why: optional_string(args, "why"),
        auto: AutoRun { profile, refused },
        cwd,
        timeout,
        routed,
        unreached: Vec::new(),
        note: None,
    })
}

/// `dir` from `base`: absolute as it is, relative under `base`, `~` this machine's home, or with
/// `remote` left as `~` for the remote shell to expand (`exec::ssh::remote_dir`).
fn resolve(base: &Path, dir: &str, remote: bool) -> PathBuf {
    let expanded = match dir.strip_prefix("~") {
        Some(_) if remote => return PathBuf::from(dir),
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default().join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(dir),
    };
    if expanded.is_absolute() { expanded } else { base.join(expanded) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tilde_is_this_homes_here_and_left_to_the_remote_shell_elsewhere() {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        assert_eq!(resolve(Path::new("/srv"), "~/x", false), home.join("x"));
        assert_eq!(resolve(Path::new("."), "~/x", true), PathBuf::from("~/x"));
        assert_eq!(resolve(Path::new("."), "~", true), PathBuf::from("~"));
        assert_eq!(resolve(Path::new("."), "logs", true), PathBuf::from("./logs"));
        assert_eq!(resolve(Path::new("/srv"), "/etc", true), PathBuf::from("/etc"));
    }
}
