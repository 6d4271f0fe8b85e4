//! The file tools (seed 004): `read_file`, `write_file`, `edit_file`, offered as one `file` schema.
//!
//! Every call: arguments checked → path resolved and checked (`paths`) → risk from the command
//! policy → approval (writes are at least Medium and show a unified diff) → for writes, the old
//! content backed up (`store::backups`) BEFORE the file is replaced atomically (`FileSystem::replace`)
//! → one audit line (`TOOL: file.read_file`, …) → one observation. Text work is in `text`.

mod paths;
mod read;
mod text;
mod write;

use std::sync::Arc;

use serde_json::{Value, json};

use super::family::Family;
use super::gate::{self, Allowed, Proposal, Refusal, Verdict};
use super::{RunState, Services, Tool, ToolContext, ToolEffect};
use crate::config::FilesConfig;
use crate::protocol::{AgentEvent, ApprovalDecision, Observation, ObservationStatus, Risk};
use crate::store::audit::{AuditRecord, Confirmed};
use crate::store::backups::Backups;

/// The file tools as one `file` schema (`action`: read, write, edit), with their limits and allowed
/// places (`files.*`) and where they keep the previous content of what they change.
pub fn family(config: FilesConfig, backups: Backups) -> Family {
    let settings = Arc::new(Settings { config, backups });
    let text = || json!({"type": "string"});
    let number = || json!({"type": "integer"});
    Family::new(
        "file",
        "Text files: read (path, start_line, end_line; long files are cut in the middle), write (path, content, \
         mode), edit (path, search, replace, regex, expected_count: the exact `search` must occur that often, \
         default 1; regex `replace` may use $1).",
        json!({
            "path": text(),
            "start_line": number(),
            "end_line": number(),
            "content": text(),
            "mode": {"type": "string", "enum": ["overwrite", "append"]},
            "search": text(),
            "replace": text(),
            "regex": {"type": "boolean"},
            "expected_count": number()
        }),
        vec![
            ("read", Arc::new(read::ReadFile(settings.clone())) as Arc<dyn Tool>),
            ("write", Arc::new(write::WriteFile(settings.clone()))),
            ("edit", Arc::new(write::EditFile(settings))),
        ],
    )
}

/// What the file tools are given when the registry is built.
#[derive(Debug)]
struct Settings {
    config: FilesConfig,
    backups: Backups,
}

/// The audit log's worker for these tools: `file.read_file`.
const WORKER: &str = "file";
/// Diff lines shown in an approval prompt or as live output; the rest is counted.
const SHOWN_DIFF_LINES: usize = 120;

/// One call in progress: who it is, for the events, the audit line and the observation.
struct Call<'c> {
    id: &'c str,
    tool: &'static str,
    ctx: ToolContext<'c, 'c>,
    /// What the user sees and the audit log records: `edit_file ~/test/a.sh`.
    summary: String,
    risk: Risk,
}

impl<'c> Call<'c> {
    fn new(id: &'c str, tool: &'static str, ctx: ToolContext<'c, 'c>, summary: String, risk: Risk) -> Self {
        Self { id, tool, ctx, summary, risk }
    }

    /// The `tool_call` event: the summary stands in for the command, so a 5 MB `content` is not drawn.
    fn announce(&mut self, args: &Value, reasons: &[String]) {
        let event = AgentEvent::ToolCall {
            id: self.id.to_owned(),
            tool: self.tool.into(),
            args: args.clone(),
            command: Some(self.summary.clone()),
            risk: Some(self.risk),
            reasons: reasons.to_vec(),
        };
        (self.ctx.events)(event);
    }

    /// Live text under the tool call (the diff of a change nobody was asked about).
    fn show(&mut self, text: &str) {
        let clean = crate::policy::sanitize(text);
        let mut text = if clean.changed() { clean.display } else { clean.text };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        (self.ctx.events)(AgentEvent::Output { id: self.id.to_owned(), chunk: text });
    }

    fn approval_event(&mut self, decision: ApprovalDecision) {
        let event = AgentEvent::Approval { id: self.id.into(), decision, command: self.summary.clone(), grant: None };
        (self.ctx.events)(event);
    }

    /// The audit line, then the `tool_result` event and the observation. A failing audit log is
    /// reported to the model, as for commands.
    fn finish(
        &mut self,
        status: ObservationStatus,
        exit: Option<i32>,
        confirmed: Confirmed,
        text: String,
    ) -> ToolEffect {
        let services = self.ctx.services;
        let first_line = text.lines().next().unwrap_or("").to_owned();
        let record = AuditRecord {
            session: services.session.clone(),
            input: self.ctx.input.to_owned(),
            tool: format!("{WORKER}.{}", self.tool),
            host: services.host.map(str::to_owned),
            user: services.user.clone(),
            approver: services.approver.decided_by(),
            command: self.summary.clone(),
            risk: self.risk,
            confirmed,
            exit,
            output: first_line,
        };
        let text = match services.audit.append(&record) {
            Ok(()) => text,
            Err(err) => format!("{text}\n[ERROR]: {err}"),
        };
        (self.ctx.events)(AgentEvent::ToolResult {
            id: self.id.into(),
            status,
            exit_code: exit,
            output: text.clone(),
            truncated_bytes: 0,
            output_bytes: text.len() as u64,
            duration_ms: 0,
        });
        ToolEffect::Observe(Observation {
            call_id: self.id.into(),
            status,
            exit_code: exit,
            text,
            truncated_bytes: 0,
            duration_ms: 0,
        })
    }

    /// A refusal or failure before anything was done.
    fn refuse(&mut self, refusal: Refusal) -> ToolEffect {
        self.approval_event(refusal.decision);
        let confirmed = refusal.confirmed();
        self.finish(refusal.status, None, confirmed, refusal.message)
    }

    /// An I/O failure while doing what was allowed.
    fn failed(&mut self, confirmed: Confirmed, message: String) -> ToolEffect {
        self.finish(ObservationStatus::Ran, None, confirmed, format!("[ERROR]: {message}"))
    }

    /// Runs the approval gate and reports a refusal; `Ok` says how it was allowed.
    fn approve(&mut self, reasons: &[String], detail: Option<String>) -> Result<Allowed, Box<ToolEffect>> {
        let proposal = Proposal::file(self.id, &self.summary, self.risk, reasons, detail);
        match gate::decide(self.ctx.services, self.ctx.state, &proposal) {
            Verdict::Run(allowed) => {
                self.approval_event(allowed.decision());
                Ok(allowed)
            }
            Verdict::Refuse(refusal) => Err(Box::new(self.refuse(refusal))),
            // A change is not edited at the prompt: what the user typed goes back to the model.
            Verdict::Edited(text) => {
                let mut refusal = gate::declined("this change");
                refusal.message = format!("{} and wrote instead: {text}", refusal.message);
                Err(Box::new(self.refuse(refusal)))
            }
            Verdict::Abort => {
                self.approval_event(ApprovalDecision::Abort);
                let _ = self.finish(ObservationStatus::DeniedByUser, None, Confirmed::No, "aborted by the user".into());
                Err(Box::new(ToolEffect::Abort))
            }
        }
    }
}

/// The path checks for this call's machine, rules and working directory.
fn guard<'g>(services: &'g Services, settings: &'g Settings, state: &'g RunState) -> paths::Guard<'g> {
    paths::Guard { fs: services.files, config: &settings.config, policy: services.policy, cwd: &state.cwd }
}

/// `files.max_size_mb` in bytes.
fn size_limit(settings: &Settings) -> u64 {
    settings.config.max_size_mb.saturating_mul(1024 * 1024)
}

/// An optional non-negative integer argument; models send `"3"` as often as `3`.
fn optional_count(args: &Value, name: &str) -> Result<Option<usize>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| format!("`{name}` must be a whole number ≥ 0, got {n}")),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => {
            s.trim().parse().map(Some).map_err(|_| format!("`{name}` must be a whole number, got \"{s}\""))
        }
        Some(other) => Err(format!("`{name}` must be a whole number, got {other}")),
    }
}

/// An optional boolean argument (`true`, `"true"`).
fn optional_bool(args: &Value, name: &str) -> Result<bool, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") || s.is_empty() => Ok(false),
        Some(other) => Err(format!("`{name}` must be true or false, got {other}")),
    }
}

/// A string argument that may be empty (file content, a replacement).
fn text_arg<'v>(args: &'v Value, name: &str) -> Result<&'v str, String> {
    match args.get(name) {
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(format!("`{name}` must be a string, got {other}")),
        None => Err(format!("missing required argument `{name}`")),
    }
}

#[cfg(test)]
mod tests;
