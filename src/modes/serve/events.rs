//! The SSE `data:` of each event (serve contract "SSE"): the `--json` line of an [`AgentEvent`] with
//! its `type` moved to `kind` and seed 002 §8.2's `type` added, plus the server's own events.

use serde_json::{Map, Value, json};

use crate::approval::ApprovalRequest;
use crate::protocol::{AgentEvent, Risk};

use super::screen;

/// The seed's `type` for an event kind.
fn seed_type(kind: &str) -> &'static str {
    match kind {
        "answer_delta" | "thought" | "answer" => "text",
        "tool_call" => "tool_call",
        "approval" => "approval",
        "output" | "tool_result" | "host_result" => "tool_result",
        "done" => "done",
        _ => "error",
    }
}

/// Whether `tool` is one of the Kubernetes tools (the family or a former name).
fn is_kube(tool: &str) -> bool {
    tool == "kube" || crate::protocol::former_tool_names("kube").contains(&tool)
}

/// The namespace a kube call reads: its `namespace` argument, or its kubectl line's `-n NS`
/// (`all` for `--all-namespaces`); `None` for cluster-wide reads (nodes).
fn namespace(args: &Value) -> Option<String> {
    if let Some(namespace) = args.get("namespace").and_then(Value::as_str) {
        return Some(namespace.to_owned());
    }
    let command = args.get("command").and_then(Value::as_str)?;
    let unquote = |word: &str| word.trim_matches(['\'', '"']).to_owned();
    let mut words = command.split_whitespace();
    while let Some(word) = words.next() {
        match word {
            "-n" | "--namespace" => return words.next().map(unquote),
            "--all-namespaces" | "-A" => return Some("all".to_owned()),
            _ => {}
        }
        // `--namespace=NS`, `-n=NS` and `-nNS`, as kubectl takes them.
        let joined = word
            .strip_prefix("--namespace=")
            .or_else(|| word.strip_prefix("-n="))
            .or_else(|| word.strip_prefix("-n").filter(|rest| !rest.is_empty() && !rest.starts_with('-')));
        if let Some(namespace) = joined.map(unquote).filter(|ns| !ns.is_empty()) {
            return Some(namespace);
        }
    }
    None
}

/// Where a conversation's tools work, named on its tool calls.
#[derive(Debug, Default)]
pub struct Place {
    /// The kube context of its kube tools.
    pub cluster: Option<String>,
    /// Its host set: the pattern, or once a turn has read it, what it selected (`3 hosts: web-[1:3]`).
    pub hosts: Option<String>,
}

/// The event as SSE data; `None` for what is never sent (`progress`). A kube call names the
/// conversation's cluster; a command on a host set names the hosts it runs on.
pub fn data(event: &AgentEvent, place: &Place) -> Option<Value> {
    if matches!(event, AgentEvent::Progress { .. }) {
        return None;
    }
    let Ok(Value::Object(mut object)) = serde_json::to_value(event) else { return None };
    let kind = object.remove("type").and_then(|k| k.as_str().map(str::to_owned)).unwrap_or_default();
    let mut out = Map::new();
    out.insert("type".into(), seed_type(&kind).into());
    out.insert("kind".into(), kind.into());
    match event {
        AgentEvent::AnswerDelta { text } | AgentEvent::Thought { text } | AgentEvent::Answer { text } => {
            out.insert("content".into(), text.clone().into());
        }
        AgentEvent::ToolCall { tool, args, .. } => {
            out.insert("tool".into(), tool.clone().into());
            out.insert("params".into(), args.to_string().into());
            if is_kube(tool) {
                out.insert("cluster".into(), place.cluster.as_deref().map_or(Value::Null, Value::from));
                out.insert("namespace".into(), namespace(args).map_or(Value::Null, Value::from));
            } else if tool == "run_command"
                && let Some(hosts) = &place.hosts
            {
                out.insert("hosts".into(), hosts.as_str().into());
            }
        }
        AgentEvent::ToolResult { output, .. } => {
            out.insert("content".into(), output.clone().into());
        }
        AgentEvent::Retry { reason, .. } => {
            out.insert("recoverable".into(), true.into());
            out.insert("content".into(), reason.clone().into());
        }
        AgentEvent::Error { message } => {
            out.insert("content".into(), message.clone().into());
        }
        _ => {}
    }
    for (key, value) in object {
        out.entry(key).or_insert(value);
    }
    let mut out = Value::Object(out);
    if matches!(
        event,
        AgentEvent::AnswerDelta { .. }
            | AgentEvent::Thought { .. }
            | AgentEvent::Answer { .. }
            | AgentEvent::ToolCall { .. }
            | AgentEvent::Retry { .. }
            | AgentEvent::Error { .. }
    ) {
        screen::model_text(&mut out);
    }
    Some(out)
}

/// The first event of every chat stream.
pub fn start(conversation: i64) -> Value {
    json!({"type": "text", "kind": "start", "conversation_id": conversation})
}

/// A turn that could not run, said on its stream.
pub fn error(content: &str) -> Value {
    json!({"type": "error", "kind": "error", "content": content})
}

/// The `done` the server adds when the loop ended without one.
pub fn done() -> Value {
    json!({"type": "done", "kind": "done"})
}

/// An approval an operator is asked for in the browser: `command` is what runs (sanitized, as
/// shown by [`super::turn::Turn::shown`]), `display` the line as written with hidden characters
/// made visible (when sanitizing changed it); an answer names `conversation_id` and `command`.
pub fn approval_request(
    id: &str,
    conversation: i64,
    command: &str,
    request: &ApprovalRequest,
    timeout_s: u64,
) -> Value {
    let visible = |text: &Option<String>| text.as_deref().map(|t| crate::ui::display::command(t).into_owned());
    json!({
        "type": "approval",
        "kind": "request",
        "id": id,
        "conversation_id": conversation,
        "command": command,
        "display": request.display,
        "risk": request.risk,
        "reasons": request.reasons,
        "why": visible(&request.why),
        "detail": visible(&request.detail),
        "host": request.host,
        "grant": request.grant,
        "confirm_word": (request.risk == Risk::High).then_some("yes"),
        "timeout_s": timeout_s,
    })
}

/// Nobody answered an approval in time: it counts as a refusal.
pub fn approval_timeout(id: &str) -> Value {
    json!({"type": "approval", "kind": "timeout", "id": id})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ObservationStatus, ReplyProgress};

    #[test]
    fn a_kubectl_lines_namespace_is_found_in_each_form() {
        let of = |command: &str| namespace(&json!({ "command": command }));
        for command in [
            "kubectl get pods -n prod",
            "kubectl get pods --namespace prod",
            "kubectl get pods -n=prod",
            "kubectl get pods --namespace=prod",
            "kubectl get pods -nprod",
            "kubectl get pods --namespace='prod'",
        ] {
            assert_eq!(of(command).as_deref(), Some("prod"), "{command}");
        }
        assert_eq!(of("kubectl get pods -A").as_deref(), Some("all"));
        assert_eq!(of("kubectl get nodes --no-headers"), None);
        assert_eq!(namespace(&json!({"namespace": "dev", "command": "x -n prod"})).as_deref(), Some("dev"));
    }

    #[test]
    fn each_event_gets_the_seed_type_and_keeps_its_kind() {
        let delta = data(&AgentEvent::AnswerDelta { text: "hi".into() }, &Place::default()).unwrap();
        assert_eq!(delta, json!({"type": "text", "kind": "answer_delta", "content": "hi", "text": "hi"}));
        let call = AgentEvent::ToolCall {
            id: "c1".into(),
            tool: "kube".into(),
            args: json!({"action": "pods", "namespace": "prod"}),
            command: None,
            risk: None,
            reasons: vec![],
        };
        let call = data(&call, &Place { cluster: Some("staging".into()), hosts: None }).unwrap();
        assert_eq!(call["type"], "tool_call");
        assert_eq!(call["params"], r#"{"action":"pods","namespace":"prod"}"#);
        assert_eq!((call["cluster"].as_str(), call["namespace"].as_str()), (Some("staging"), Some("prod")));
        let line = json!({"command": "kubectl --context=x get pods -n web -o wide"});
        assert_eq!(namespace(&line).as_deref(), Some("web"));
        assert_eq!(namespace(&json!({"command": "kubectl get nodes -o wide"})), None);
        let result = AgentEvent::ToolResult {
            id: "c1".into(),
            status: ObservationStatus::Ran,
            exit_code: Some(0),
            output: "ok".into(),
            truncated_bytes: 0,
            output_bytes: 2,
            duration_ms: 1,
        };
        let result = data(&result, &Place::default()).unwrap();
        assert_eq!((result["type"].as_str(), result["content"].as_str()), (Some("tool_result"), Some("ok")));
        assert_eq!(data(&AgentEvent::Done { iterations: 1, usage: None }, &Place::default()).unwrap()["type"], "done");
        assert!(data(&AgentEvent::Progress { stage: ReplyProgress::WritingCall }, &Place::default()).is_none());
    }

    #[test]
    fn a_command_on_a_host_set_names_its_hosts_and_each_host_result_is_a_tool_result() {
        let place = Place { cluster: Some("prod".into()), hosts: Some("3 hosts: web-[1:3]".into()) };
        let call = |tool: &str| AgentEvent::ToolCall {
            id: "c1".into(),
            tool: tool.into(),
            args: json!({"command": "df -h"}),
            command: Some("df -h".into()),
            risk: Some(Risk::Safe),
            reasons: vec![],
        };
        let run = data(&call("run_command"), &place).unwrap();
        assert_eq!((run["hosts"].as_str(), run.get("cluster")), (Some("3 hosts: web-[1:3]"), None));
        let here = data(&call("run_command"), &Place::default()).unwrap();
        assert!(here.get("hosts").is_none(), "on the server itself no hosts are named: {here}");
        let kube = data(&call("kube"), &place).unwrap();
        assert_eq!((kube["cluster"].as_str(), kube.get("hosts")), (Some("prod"), None), "kube tools use the cluster");
        let host = AgentEvent::HostResult {
            id: "c1".into(),
            host: "web-2".into(),
            outcome: "unreachable".into(),
            exit_code: None,
            output_bytes: 0,
            duration_ms: 3,
        };
        let host = data(&host, &place).unwrap();
        assert_eq!((host["type"].as_str(), host["kind"].as_str()), (Some("tool_result"), Some("host_result")));
        assert_eq!((host["host"].as_str(), host["outcome"].as_str()), (Some("web-2"), Some("unreachable")));
    }
}
