//! `analyze {target, type, commands?}` (seed 001): what an ops object is. Runs the type's template
//! (built-in, cached, or the `commands` the model gives for a new type, validated and cached) and
//! returns the collected report as the observation, for the model to summarise. Only commands that
//! assess Safe after substitution run, so nobody is asked; in `--dry-run` nothing runs.

use std::time::Instant;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolEffect, invalid_arguments, optional_string, string_arg};
use crate::analyze::collect::{COMMAND_TIMEOUT, Collector};
use crate::analyze::object::{Analysis, BUILTIN_TYPES, analyze, detect};
use crate::protocol::{AgentEvent, Observation, ObservationStatus, ToolSpec};

pub struct Analyze;

impl Tool for Analyze {
    fn name(&self) -> &'static str {
        "analyze"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().into(),
            description: format!(
                "Find out what an ops object is (a container, port, process, file, service, …) by running \
                 read-only inspection commands, and return their output. Built-in types: {}. For another \
                 type, give `commands`: read-only command templates with {{name}}, {{port}}, {{pid}} or \
                 {{path}} where the target goes; they are checked and cached for next time.",
                BUILTIN_TYPES.join(", ")
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "target": {"type": "string", "description": "The object: a container or service name, a port, a pid, a path."},
                    "type": {"type": "string", "description": "container, port, process, file, service, or another type (then give `commands`). Omit to detect container/service."},
                    "commands": {"type": "array", "items": {"type": "string"}, "description": "Only for a type without a template: read-only commands with placeholders."}
                },
                "required": ["target"]
            }),
        }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(run(id, args, ctx))
    }
}

async fn run(id: &str, args: &Value, ctx: ToolContext<'_, '_>) -> ToolEffect {
    let ToolContext { services, state, events, input } = ctx;
    let target = match string_arg(args, "target") {
        Ok(target) => target.trim().to_owned(),
        Err(message) => return ToolEffect::Observe(invalid_arguments(id, message)),
    };
    let generated: Option<Vec<String>> = args
        .get("commands")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_owned).collect());
    events(AgentEvent::ToolCall {
        id: id.to_owned(),
        tool: "analyze".into(),
        args: args.clone(),
        command: None,
        risk: Some(crate::protocol::Risk::Safe),
        reasons: Vec::new(),
    });
    let started = Instant::now();
    let text = if services.mode.dry_run {
        format!("dry run: `{target}` was not analyzed (nothing runs in --dry-run)")
    } else {
        let collector = Collector {
            executor: services.executor,
            redactor: services.redactor,
            audit: services.audit,
            session: services.session.clone(),
            input: input.to_owned(),
            cwd: state.cwd.clone(),
            timeout: COMMAND_TIMEOUT.min(services.exec_timeout),
            cancel: services.interrupts.turn.child_token(),
        };
        let kind = match optional_string(args, "type") {
            Some(kind) => Some(kind),
            None => detect(&collector, &target).await.map(str::to_owned),
        };
        match kind {
            None => format!(
                "`{target}` is not a container or systemd unit on this machine. Decide its type from the \
                 conversation and call analyze again with `type`, or ask the user what it is."
            ),
            Some(kind) => match crate::app::Paths::from_env() {
                Err(error) => format!("[ERROR]: cannot find $OPSAI_HOME: {error:#}"),
                Ok(paths) => {
                    let cache = crate::store::templates::default_path(&paths.home);
                    let analysis =
                        analyze(&collector, &cache, services.policy, &target, &kind, generated.as_deref()).await;
                    match analysis {
                        Analysis::Done { report, warnings } => {
                            let mut text = report.text(&target, &kind);
                            for warning in warnings {
                                text.push_str(&format!("warning: {warning}\n"));
                            }
                            text
                        }
                        Analysis::NeedsTemplate { warnings } => {
                            let mut text = format!(
                                "No template for type `{kind}` yet. Call analyze again with the same target and \
                             type and `commands`: 2-4 read-only shell commands that show what a {kind} is and \
                             its state, with {{name}}, {{port}}, {{pid}} or {{path}} where the target goes."
                            );
                            for warning in warnings {
                                text.push_str(&format!("\nwarning: {warning}"));
                            }
                            text
                        }
                    }
                }
            },
        }
    };
    let observation = Observation {
        call_id: id.into(),
        status: ObservationStatus::Ran,
        exit_code: None,
        text,
        truncated_bytes: 0,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    };
    events(AgentEvent::ToolResult {
        id: id.into(),
        status: observation.status,
        exit_code: None,
        output: observation.text.clone(),
        truncated_bytes: 0,
        duration_ms: observation.duration_ms,
    });
    ToolEffect::Observe(observation)
}
