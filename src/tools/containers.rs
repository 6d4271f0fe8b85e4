//! Container tools (seed 000's container worker): `list_containers`, `inspect_container`,
//! `container_logs`, `restart_container`, through the docker CLI. Like the structured tools, opsai
//! builds the command line itself (a container name must look like one, so it can never be an option
//! or code) and runs it through `run_command`'s path, so the policy rates it (restart is Medium and
//! asks) and it is audited. No docker where the commands run is an observation for the model, not an
//! error: on this machine a missing `docker` on PATH answers at once; on an `--ssh-host`, a run that
//! ends with exit 127, or fails with the shell's "docker: command not found" as its first line, says so.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::family::Family;
use super::run_command::{self, Caller};
use super::{Tool, ToolContext, ToolEffect, invalid_arguments};
use crate::policy::quote_word;
use crate::protocol::{Observation, ObservationStatus, ToolSpec};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    List,
    Inspect,
    Logs,
    Restart,
}

impl Container {
    pub const ALL: [Container; 4] = [Container::List, Container::Inspect, Container::Logs, Container::Restart];

    /// Its `action` in the `container` family.
    fn action(self) -> &'static str {
        match self {
            Container::List => "list",
            Container::Inspect => "inspect",
            Container::Logs => "logs",
            Container::Restart => "restart",
        }
    }
}

/// The four tools as one `container` schema (`action`: list, inspect, logs, restart).
pub fn family() -> Family {
    Family::new(
        "container",
        "Docker: list (all: with stopped ones), inspect (name), logs (name, tail=50), restart (name).",
        json!({"name": {"type": "string"}, "all": {"type": "boolean"}, "tail": {"type": "integer"}}),
        Container::ALL.into_iter().map(|tool| (tool.action(), Arc::new(tool) as Arc<dyn Tool>)).collect(),
    )
}

/// Lines of logs when the model does not say.
const DEFAULT_TAIL: u64 = 50;
/// The most log lines one call may ask for.
const MAX_TAIL: u64 = 2000;

impl Tool for Container {
    fn name(&self) -> &'static str {
        match self {
            Container::List => "list_containers",
            Container::Inspect => "inspect_container",
            Container::Logs => "container_logs",
            Container::Restart => "restart_container",
        }
    }

    fn spec(&self) -> ToolSpec {
        let name = json!({"type": "string", "description": "The container's name or id."});
        let (description, parameters) = match self {
            Container::List => (
                "List Docker containers: name, image, status and ports.",
                json!({"type": "object", "properties": {
                    "all": {"type": "boolean", "description": "Include stopped containers."}
                }, "required": []}),
            ),
            Container::Inspect => (
                "Show a container's full configuration and state (docker inspect).",
                json!({"type": "object", "properties": {"name": name}, "required": ["name"]}),
            ),
            Container::Logs => (
                "Show the last lines of a container's logs.",
                json!({"type": "object", "properties": {
                    "name": name,
                    "tail": {"type": "integer", "description": "How many lines from the end (default 50)."}
                }, "required": ["name"]}),
            ),
            Container::Restart => (
                "Restart a container (changes the system: the user is asked first).",
                json!({"type": "object", "properties": {"name": name}, "required": ["name"]}),
            ),
        };
        ToolSpec { name: self.name().into(), description: description.into(), parameters }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(async move {
            let host = ctx.services.host.map(str::to_owned);
            let fleet = ctx.services.fleet.is_some();
            // The local fast path: remote commands are judged by their own result below.
            // On a fleet each host's own result says whether docker is there.
            if host.is_none() && !fleet && !docker_available() {
                return ToolEffect::Observe(invalid_arguments(
                    id,
                    "docker is not available on this machine (no `docker` on PATH); say so, or use other tools",
                ));
            }
            let argv = match build(*self, args) {
                Ok(argv) => argv,
                Err(message) => return ToolEffect::Observe(invalid_arguments(id, message)),
            };
            let command = argv.iter().map(|word| quote_word(word)).collect::<Vec<_>>().join(" ");
            let delegated = json!({"command": command, "why": format!("the {} tool", self.name())});
            match run_command::run(Caller { tool: self.name(), worker: "docker" }, id, &delegated, ctx).await {
                // A fleet's grouped view names the hosts where docker is missing.
                ToolEffect::Observe(observation) if fleet => ToolEffect::Observe(observation),
                ToolEffect::Observe(observation) => ToolEffect::Observe(docker_missing(observation, host.as_deref())),
                other => other,
            }
        })
    }
}

/// The docker argv for one call.
pub fn build(tool: Container, args: &Value) -> Result<Vec<String>, String> {
    let mut argv: Vec<String> = vec!["docker".into()];
    match tool {
        Container::List => {
            argv.push("ps".into());
            if args.get("all").and_then(Value::as_bool).unwrap_or(false) {
                argv.push("-a".into());
            }
            argv.extend(["--format".into(), "{{.Names}}\t{{.Image}}\t{{.Status}}\t{{.Ports}}".into()]);
        }
        Container::Inspect => argv.extend(["inspect".into(), container_name(args)?]),
        Container::Logs => {
            let tail = match args.get("tail") {
                None | Some(Value::Null) => DEFAULT_TAIL,
                Some(value) => value
                    .as_u64()
                    .filter(|&n| (1..=MAX_TAIL).contains(&n))
                    .ok_or(format!("`tail` must be a number from 1 to {MAX_TAIL}, got {value}"))?,
            };
            argv.extend(["logs".into(), "--tail".into(), tail.to_string(), container_name(args)?]);
        }
        Container::Restart => argv.extend(["restart".into(), container_name(args)?]),
    }
    Ok(argv)
}

/// Docker's own rule for names (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`), which ids also follow.
fn container_name(args: &Value) -> Result<String, String> {
    let name = args.get("name").and_then(Value::as_str).unwrap_or("").trim();
    let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        && name.len() <= 128;
    if valid { Ok(name.to_owned()) } else { Err(format!("`name` must be a container name or id, got {name:?}")) }
}

/// A run that shows the shell found no `docker` becomes the observation that docker is not
/// available on the host the command ran on: exit 127, or a failed run whose first line of output
/// is the shell saying the `docker` command itself was not found (`sh: 1: docker: not found`,
/// `bash: line 1: docker: command not found`). The same words anywhere else — a container's logs
/// quoting them, a run that succeeded — are output like any other.
fn docker_missing(observation: Observation, host: Option<&str>) -> Observation {
    if observation.status != ObservationStatus::Ran {
        return observation;
    }
    let failed = observation.exit_code != Some(0);
    if !(observation.exit_code == Some(127) || failed && shell_found_no_docker(&observation.text)) {
        return observation;
    }
    let place = host.map_or("this machine".to_owned(), |host| format!("`{host}`"));
    Observation {
        text: format!(
            "docker is not available on {place} (the shell there has no `docker` command: {}); say so, or use \
             other tools",
            observation.text.trim()
        ),
        ..observation
    }
}

/// Whether the first line of a run's output (after the `[ERROR]: exit 1 · 3 ms` outcome line the
/// observation starts with, if any) is a shell's "command not found" for `docker` itself.
fn shell_found_no_docker(text: &str) -> bool {
    let mut lines = text.lines();
    let mut first = lines.next().unwrap_or("");
    if first.starts_with("[ERROR]: ") {
        first = lines.next().unwrap_or("");
    }
    let first = first.trim().to_ascii_lowercase();
    ["docker: command not found", "docker: not found", "command not found: docker"]
        .iter()
        .any(|said| first.ends_with(said))
}

fn docker_available() -> bool {
    let path = std::env::var("PATH").unwrap_or_default();
    crate::context::probe::find_on_path("docker", &path).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PolicyConfig, assess};
    use crate::protocol::Risk;

    fn line(tool: Container, args: Value) -> String {
        build(tool, &args).unwrap().iter().map(|w| quote_word(w)).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn commands_and_their_risk() {
        let policy = PolicyConfig::default();
        let cases = [
            (
                Container::List,
                json!({"all": true}),
                "docker ps -a --format '{{.Names}}\t{{.Image}}\t{{.Status}}\t{{.Ports}}'",
                Risk::Safe,
            ),
            // The whole configuration includes the environment (issue 21): it asks.
            (Container::Inspect, json!({"name": "compoder-mongo"}), "docker inspect compoder-mongo", Risk::Medium),
            (Container::Logs, json!({"name": "web.1", "tail": 20}), "docker logs --tail 20 web.1", Risk::Safe),
            (Container::Logs, json!({"name": "web"}), "docker logs --tail 50 web", Risk::Safe),
            (Container::Restart, json!({"name": "web"}), "docker restart web", Risk::Medium),
        ];
        for (tool, args, expected, risk) in cases {
            let text = line(tool, args);
            assert_eq!(text, expected);
            assert_eq!(assess(&text, &policy).risk, risk, "{text}");
        }
    }

    /// A `run_command` observation of a run that exited with `exit_code` and printed `text`.
    fn ran(exit_code: Option<i32>, text: &str) -> Observation {
        Observation {
            call_id: "c".into(),
            status: ObservationStatus::Ran,
            exit_code,
            text: text.into(),
            truncated_bytes: 0,
            duration_ms: 1,
        }
    }

    #[test]
    fn exit_127_or_command_not_found_means_docker_is_missing_on_that_host() {
        let missing = docker_missing(ran(Some(127), "bash: line 1: docker: command not found"), Some("db1"));
        assert!(missing.text.starts_with("docker is not available on `db1`"), "{}", missing.text);
        assert_eq!(missing.exit_code, Some(127));
        let local = docker_missing(ran(Some(1), "sh: 1: docker: not found"), None);
        assert!(local.text.starts_with("docker is not available on this machine"), "{}", local.text);
        let daemon = ran(Some(1), "Cannot connect to the Docker daemon at unix:///var/run/docker.sock");
        assert_eq!(docker_missing(daemon.clone(), Some("db1")), daemon);
        // As the observation comes from run_command: the outcome line first, then the output.
        let failed = docker_missing(ran(Some(1), "[ERROR]: exit 1 · 3 ms\nzsh: command not found: docker"), None);
        assert!(failed.text.starts_with("docker is not available on this machine"), "{}", failed.text);
    }

    #[test]
    fn the_words_in_successful_output_or_later_lines_are_just_output() {
        for observation in [
            // container_logs of a container whose logs quote the shell's message.
            ran(Some(0), "exit 0 · 12 ms\nstarting\nsh: 1: docker: not found\nretrying"),
            ran(Some(0), "sh: 1: docker: not found"),
            ran(Some(0), "bash: docker: command not found"),
            // A failure whose first line is something else: docker ran, the words are further down.
            ran(Some(1), "[ERROR]: exit 1 · 3 ms\nError response from daemon: x\nsh: 1: docker: not found"),
            ran(Some(1), "[ERROR]: exit 1 · 3 ms\nlog line mentions docker: not found elsewhere: fine"),
        ] {
            assert_eq!(docker_missing(observation.clone(), Some("db1")), observation);
        }
    }

    #[test]
    fn a_name_is_never_an_option_or_code() {
        for bad in ["-f", "--all", "web; reboot", "$(id)", "", "a b", "../x"] {
            assert!(build(Container::Restart, &json!({"name": bad})).is_err(), "{bad:?}");
        }
        assert!(build(Container::Logs, &json!({"name": "web", "tail": 0})).is_err());
        assert!(build(Container::Logs, &json!({"name": "web", "tail": "all"})).is_err());
    }
}
