//! The plain data types that cross module boundaries (DESIGN §2), defined once.
//!
//! This module imports nothing from the crate: every other module may depend on it, and it on none.

use serde::{Deserialize, Serialize};

/// How dangerous a command is. Ordered, so the risk of a compound command is the maximum of its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Known read-only program with read-only arguments: may run without asking.
    Safe,
    /// Changes state, but locally and recoverably; also every unknown program.
    /// The default, so anything unclassified fails closed.
    #[default]
    Medium,
    /// Destructive, irreversible, system-wide or exfiltrating.
    High,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Medium => "medium",
            Risk::High => "high",
        }
    }
}

impl std::fmt::Display for Risk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happens to a command before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Runs without a prompt (Safe, or allowed by a user rule).
    Allow,
    /// Needs an explicit human yes; High asks with a typed confirmation. The default: fail closed.
    #[default]
    Ask,
    /// Never runs: a user deny rule matched.
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The policy's verdict on one command line, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assessment {
    /// The maximum risk over every part of the command.
    pub risk: Risk,
    pub decision: Decision,
    /// One line per non-Safe part, naming it: `rm -rf ~: recursive delete`.
    pub reasons: Vec<String>,
    /// Exactly what would run: the input after sanitization.
    pub sanitized: String,
    /// True when sanitization removed anything (escape sequences, bidi or zero-width characters).
    pub changed_by_sanitizer: bool,
    /// The argv of every simple command found, after unquoting and unwrapping, in source order.
    pub commands: Vec<Vec<String>>,
}

/// A tool call from the model, after stream assembly or text-form repair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model sent them, parsed; a string when they were not valid JSON.
    pub arguments: serde_json::Value,
}

/// One chat-completions message (seed 003 §2.2): system, user, assistant (+ tool calls), tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        Self { role: Role::System, content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self { role: Role::User, content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self { role: Role::Assistant, content: content.into(), tool_calls, tool_call_id: None }
    }
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self { role: Role::Tool, content: content.into(), tool_calls: Vec::new(), tool_call_id: Some(call_id.into()) }
    }
}

/// A tool the model may call: name, description and JSON-schema parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// Token counts reported by the provider, when it reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// A command the agent wants to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRequest {
    pub call_id: String,
    /// Exactly what runs: the sanitized command the user was shown.
    pub command: String,
    pub cwd: std::path::PathBuf,
    pub timeout: std::time::Duration,
    /// The model's stated reason, shown at approval.
    pub why: Option<String>,
    /// The OS sandbox it runs in; `None`: unsandboxed (a human said yes, or a remote host).
    pub sandbox: Option<SandboxProfile>,
}

/// Which OS sandbox a command that runs without a human yes gets (docs/sandbox.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxProfile {
    /// Model-written lines and probes: read-only filesystem without the secret paths, no network,
    /// secret-looking environment variables removed.
    Strict,
    /// opsai's own read-only tools (kube, container, structured) whose argv opsai builds: read-only
    /// filesystem, but the network, the kube/docker/cloud credentials and the environment they need.
    Tool,
}

impl SandboxProfile {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxProfile::Strict => "strict",
            SandboxProfile::Tool => "tool",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "strict" => Some(SandboxProfile::Strict),
            "tool" => Some(SandboxProfile::Tool),
            _ => None,
        }
    }
}

/// The human's answer to an approval request. `Denied` is the default, so a dropped prompt fails closed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Approval {
    Approved,
    ApprovedForSession,
    Edited(String),
    #[default]
    Denied,
    Abort,
    /// Nobody answered (the browser's approval timeout): a refusal by the rules, not a person's
    /// no; the text says why ("no operator answered within 300 s").
    Unanswered(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservationStatus {
    Ran,
    DeniedByPolicy,
    DeniedByUser,
    InvalidArguments,
    TimedOut,
    Interrupted,
}

/// What the model learns from one tool call. Every tool call gets exactly one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    pub call_id: String,
    pub status: ObservationStatus,
    pub exit_code: Option<i32>,
    /// Bounded, ANSI-stripped, secret-redacted text for the model.
    pub text: String,
    pub truncated_bytes: u64,
    pub duration_ms: u64,
}

/// How a tool call was decided: the `approval` event's `decision` (`"approved_for_session"`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Nobody was asked: Safe, a widget probe, or Medium under `-y` / `/yes on`.
    Auto,
    Approved,
    ApprovedForSession,
    /// The user said no.
    Denied,
    /// By the policy (a deny rule, an unwritable audit log, the widget's probe rules, a blacklist,
    /// a path check) or because no terminal could ask.
    Refused,
    DryRun,
    /// `q` or Ctrl-C at the prompt: the turn ends.
    Abort,
}

/// See [`AgentEvent::Progress`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyProgress {
    /// The model writes a native tool call: the reply holds calls, its text is a thought.
    WritingCall,
    /// Reply text is held back as a possible tool call written as text (not decided yet).
    HoldingText,
    /// The reply finished without tool calls and nothing of it is held back: the `answer_delta`s
    /// so far are the answer (the `answer` event follows once the stream has closed).
    AnswerComplete,
    /// A command runs on a fleet: how far its current batch has got, as its hosts end (for the
    /// person only: never the model's, never a `--json` line).
    Hosts(HostsProgress),
}

/// See [`ReplyProgress::Hosts`]: `web-[01:16]: 12/16 done, 1 failed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostsProgress {
    /// The batch's hosts, compacted (`web-[01:16]`).
    pub hosts: String,
    pub done: usize,
    pub failed: usize,
    pub total: usize,
}

/// Everything the UI sees of a turn; also the `--json` line format (`{"type": "tool_call", …}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// Streamed reasoning or text before a tool call.
    Thought {
        text: String,
    },
    ToolCall {
        id: String,
        tool: String,
        args: serde_json::Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        risk: Option<Risk>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasons: Vec<String>,
    },
    /// How a tool call was decided.
    Approval {
        id: String,
        decision: ApprovalDecision,
        command: String,
        /// `approved_for_session` without asking: the earlier `[a]` grant that covers it (`git commit`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grant: Option<String>,
    },
    /// Live command output.
    Output {
        id: String,
        chunk: String,
    },
    /// One host's end of a command run on a fleet (`--hosts`), one per host in inventory order,
    /// before the grouped `output` and the `tool_result` (which holds the model's grouped view).
    HostResult {
        id: String,
        host: String,
        /// `ran`, `unreachable`, `host-key`, `auth-failed`, `timed-out`, `cancelled`, `not-run`, …
        outcome: String,
        exit_code: Option<i32>,
        output_bytes: u64,
        duration_ms: u64,
    },
    ToolResult {
        id: String,
        status: ObservationStatus,
        exit_code: Option<i32>,
        output: String,
        truncated_bytes: u64,
        /// What the command printed, in bytes (for the other tools: their text's size). Not
        /// `output`'s length: that holds the model's header line (`exit 0 · 12 ms`) too.
        #[serde(default)]
        output_bytes: u64,
        duration_ms: u64,
    },
    /// A piece of the reply text as it streams (text that may be a tool call written as text is
    /// held back). Provisional: when the reply ends without a tool call, `answer` follows with the
    /// whole text; when tool calls follow, the pieces since the last model request were a thought,
    /// and `thought` follows with the whole text.
    AnswerDelta {
        text: String,
    },
    /// Where the reply being written stands, for the screen: the spinner's stage, and when `-q`
    /// may write the streamed text. Never a `--json` line (serializing it is an error; the JSON
    /// renderer skips it), so the `--json` contract is unchanged.
    #[serde(skip)]
    Progress {
        stage: ReplyProgress,
    },
    /// The whole answer, once the reply has ended.
    Answer {
        text: String,
    },
    Error {
        message: String,
    },
    /// The model endpoint failed in a way that is retried (429, 5xx, a dropped connection): what
    /// happened, and that attempt `attempt` of `max_attempts` follows in `wait_ms`.
    Retry {
        reason: String,
        wait_ms: u64,
        attempt: u32,
        max_attempts: u32,
    },
    Done {
        iterations: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    Answer(String),
    Proposed { command: String, assessment: Assessment },
    Aborted,
    StepLimit,
}

/// The names a family's tools had before they were folded into it, which the registry still
/// answers to; `llm::text_calls` recognizes them in a model's text when the family is offered.
/// Here, with the other shared data, because both the tools and the model client need it.
pub(crate) fn former_tool_names(family: &str) -> &'static [&'static str] {
    match family {
        "cli" => &["find", "grep", "wget", "ps", "ss", "lsof"],
        "file" => &["read_file", "write_file", "edit_file"],
        "container" => &["list_containers", "inspect_container", "container_logs", "restart_container"],
        "kube" => &[
            "list_pods", "get_pod_logs", "describe_pod", "get_deployment_status", "get_events", "get_configmap",
            "get_node_status",
        ],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_decisions_keep_their_json_names() {
        let all = [
            (ApprovalDecision::Auto, "auto"),
            (ApprovalDecision::Approved, "approved"),
            (ApprovalDecision::ApprovedForSession, "approved_for_session"),
            (ApprovalDecision::Denied, "denied"),
            (ApprovalDecision::Refused, "refused"),
            (ApprovalDecision::DryRun, "dry_run"),
            (ApprovalDecision::Abort, "abort"),
        ];
        for (decision, name) in all {
            let event = AgentEvent::Approval { id: "c1".into(), decision, command: "ls".into(), grant: None };
            let line = serde_json::to_string(&event).unwrap();
            assert_eq!(line, format!(r#"{{"type":"approval","id":"c1","decision":"{name}","command":"ls"}}"#));
            assert_eq!(serde_json::from_str::<AgentEvent>(&line).unwrap(), event);
        }
        let covered = AgentEvent::Approval {
            id: "c2".into(),
            decision: ApprovalDecision::ApprovedForSession,
            command: "git commit -m x".into(),
            grant: Some("git commit".into()),
        };
        let line = serde_json::to_string(&covered).unwrap();
        assert!(line.ends_with(r#""command":"git commit -m x","grant":"git commit"}"#), "{line}");
        assert_eq!(serde_json::from_str::<AgentEvent>(&line).unwrap(), covered);
    }
}
