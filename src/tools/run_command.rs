//! `run_command`: sanitize → assess → approve → run in a PTY (in the OS sandbox when nobody said yes)
//! → bounded, redacted observation → one audit line. What runs is exactly the sanitized command the
//! user was shown.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::gate::{self, AutoRun, Proposal, Refusal, Verdict};
use super::{Tool, ToolContext, ToolEffect, invalid_arguments, optional_string, string_arg};
use crate::exec::output::{Captured, observation_text};
use crate::policy;
use crate::protocol::{
    AgentEvent, ApprovalDecision, Assessment, CommandRequest, Observation, ObservationStatus, SandboxProfile, ToolSpec,
};
use crate::store::audit::{AuditRecord, Confirmed};

pub struct RunCommand;

/// Added to the observation of a sandboxed command that failed, so the model re-proposes it for
/// approval instead of retrying it in the sandbox.
pub const SANDBOX_HINT: &str = "[sandbox]: this command ran in the read-only sandbox (no writes, no network, \
                                secret files unreadable); if it failed because of that, propose it again with \
                                \"sandbox\": false and the user will be asked";

impl Tool for RunCommand {
    fn name(&self) -> &'static str {
        "run_command"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().into(),
            description: "Run one bash command line on the user's machine and return its exit code and output. \
                          opsai checks its risk and asks the user before anything that is not read-only."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line to run with bash."},
                    "cwd": {"type": "string", "description": "Working directory (default: the current one)."},
                    "why": {"type": "string", "description": "A few words on why this command is needed."},
                    "sandbox": {"type": "boolean", "description": "Read-only commands run without asking in a \
                        sandbox (no writes, no network). false: run it outside the sandbox; the user is asked first."}
                },
                "required": ["command"]
            }),
        }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(run(Caller::RUN_COMMAND, id, args, ctx))
    }
}

/// The tool a command line comes from: its name in events, and in the audit log's TOOL field
/// (`worker.action`, as seed 000's log has it).
#[derive(Debug, Clone, Copy)]
pub(super) struct Caller<'n> {
    pub tool: &'n str,
    pub worker: &'n str,
}

impl Caller<'_> {
    pub const RUN_COMMAND: Caller<'static> = Caller { tool: "run_command", worker: "shell" };
}

/// Runs `args.command` through the policy, the approval and the executor, on behalf of `caller`.
pub(super) async fn run(caller: Caller<'_>, id: &str, args: &Value, ctx: ToolContext<'_, '_>) -> ToolEffect {
    let ToolContext { services, state, events, input, .. } = ctx;
    let command = match string_arg(args, "command") {
        Ok(command) => command.to_owned(),
        Err(message) => return ToolEffect::Observe(invalid_arguments(id, message)),
    };
    let why = optional_string(args, "why");
    // Only ever adds a prompt: `false` takes the command out of the no-questions path.
    let sandbox_refused = args.get("sandbox").and_then(Value::as_bool) == Some(false);
    // Model-written lines get the strict sandbox; opsai's own tools build their argv from checked
    // values and keep the network and credentials they need.
    let profile = if caller.tool == Caller::RUN_COMMAND.tool { SandboxProfile::Strict } else { SandboxProfile::Tool };
    // A tool may ask for a shorter limit than `exec.timeout_s` (the Kubernetes tools: 30 s), never a longer one.
    let timeout = args
        .get("timeout_s")
        .and_then(Value::as_u64)
        .filter(|&seconds| seconds > 0)
        .map_or(services.exec_timeout, |seconds| Duration::from_secs(seconds).min(services.exec_timeout));
    let cwd = match optional_string(args, "cwd") {
        Some(dir) => resolve(&state.cwd, &dir),
        None => state.cwd.clone(),
    };
    let mut assessment = policy::assess(&command, services.policy);
    events(AgentEvent::ToolCall {
        id: id.to_owned(),
        tool: caller.tool.into(),
        args: args.clone(),
        command: Some(assessment.sanitized.clone()),
        risk: Some(assessment.risk),
        reasons: assessment.reasons.clone(),
    });
    let audit = |assessment: &Assessment, confirmed: Confirmed, exit: Option<i32>, output: &str| AuditRecord {
        session: services.session.clone(),
        input: input.to_owned(),
        tool: format!("{}.{}", caller.worker, caller.tool),
        host: services.host.map(str::to_owned),
        command: assessment.sanitized.clone(),
        risk: assessment.risk,
        confirmed,
        exit,
        output: output.to_owned(),
    };
    let mut typed = command.clone();
    let allowed = loop {
        let auto = AutoRun { profile, refused: sandbox_refused };
        let verdict = gate::decide(services, state, &Proposal::command(&assessment, &typed, why.as_deref(), auto));
        match verdict {
            Verdict::Run(allowed) => break allowed,
            Verdict::Refuse(refusal) => {
                events(AgentEvent::Approval {
                    id: id.into(),
                    decision: refusal.decision,
                    command: assessment.sanitized.clone(),
                });
                let confirmed = refusal.confirmed();
                let Refusal { status, message, .. } = refusal;
                let record = audit(&assessment, confirmed, None, &message);
                // The audit line is written before the model hears back; a failing log is reported to it.
                let message = match services.audit.append(&record) {
                    Ok(()) => message,
                    Err(err) => format!("{message}\n[ERROR]: {err}"),
                };
                events(AgentEvent::ToolResult {
                    id: id.into(),
                    status,
                    exit_code: None,
                    output: message.clone(),
                    truncated_bytes: 0,
                    output_bytes: 0,
                    duration_ms: 0,
                });
                return ToolEffect::Observe(Observation {
                    call_id: id.into(),
                    status,
                    exit_code: None,
                    text: message,
                    truncated_bytes: 0,
                    duration_ms: 0,
                });
            }
            Verdict::Abort => {
                events(AgentEvent::Approval {
                    id: id.into(),
                    decision: ApprovalDecision::Abort,
                    command: assessment.sanitized.clone(),
                });
                let _ = services.audit.append(&audit(&assessment, Confirmed::No, None, "aborted by the user"));
                return ToolEffect::Abort;
            }
            Verdict::Edited(new) => {
                typed = new;
                assessment = policy::assess(&typed, services.policy);
                events(AgentEvent::ToolCall {
                    id: id.to_owned(),
                    tool: caller.tool.into(),
                    args: json!({"command": typed}),
                    command: Some(assessment.sanitized.clone()),
                    risk: Some(assessment.risk),
                    reasons: assessment.reasons.clone(),
                });
            }
        }
    };
    events(AgentEvent::Approval { id: id.into(), decision: allowed.decision(), command: assessment.sanitized.clone() });
    let sandbox = allowed.sandbox();
    let request =
        CommandRequest { call_id: id.into(), command: assessment.sanitized.clone(), cwd, timeout, why, sandbox };
    let started = Instant::now();
    let token = services.interrupts.command_started();
    let result = {
        let mut on_output = |chunk: &[u8]| {
            events(AgentEvent::Output { id: id.into(), chunk: String::from_utf8_lossy(chunk).into_owned() });
        };
        services.executor.run(&request, &mut on_output, token).await
    };
    services.interrupts.command_finished();
    let confirmed = allowed.confirmed();
    // What the command printed, for the summary line; the observation's text also holds its header.
    let output_bytes = result.as_ref().map_or(0, |result| result.output.total_bytes);
    let observation = match result {
        Ok(result) => {
            let output = scrub_cut_edges(result.output.map(|part| services.redactor.redact(part))).text();
            let status = if result.timed_out {
                ObservationStatus::TimedOut
            } else if result.interrupted {
                ObservationStatus::Interrupted
            } else {
                ObservationStatus::Ran
            };
            let mut text = observation_text(&result, &output);
            if sandbox.is_some() && result.exit_code != Some(0) && !result.interrupted && looks_denied(&output) {
                text.push_str(&format!("\n{SANDBOX_HINT}"));
            }
            if let Err(err) = services.audit.append(&audit(&assessment, confirmed, result.exit_code, &output)) {
                // Safe commands run without the check in `decide`, and a disk can fill while a command
                // runs: a missing line is said, to the model and to the user.
                let message = format!("no audit line was written for this command: {err}");
                events(AgentEvent::Error { message: message.clone() });
                text.push_str(&format!("\n[ERROR]: {message}"));
            }
            Observation {
                call_id: id.into(),
                status,
                exit_code: result.exit_code,
                text,
                truncated_bytes: result.output.truncated_bytes,
                duration_ms: u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX),
            }
        }
        Err(err) => {
            let message = format!("[ERROR]: {err}");
            let _ = services.audit.append(&audit(&assessment, confirmed, None, &message));
            Observation {
                call_id: id.into(),
                status: ObservationStatus::Ran,
                exit_code: None,
                text: message,
                truncated_bytes: 0,
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            }
        }
    };
    events(AgentEvent::ToolResult {
        id: id.into(),
        status: observation.status,
        exit_code: observation.exit_code,
        output: observation.text.clone(),
        truncated_bytes: observation.truncated_bytes,
        output_bytes,
        duration_ms: observation.duration_ms,
    });
    ToolEffect::Observe(observation)
}

/// Whether a failed command's output shows what the sandbox refuses (a file, a socket, `/proc`),
/// so that a `grep` that found nothing is not sent back for approval.
fn looks_denied(output: &str) -> bool {
    const MARKS: &[&str] = &[
        "permission denied",
        "operation not permitted",
        "read-only file system",
        "could not resolve",
        "temporary failure in name resolution",
        "name or service not known",
        "network is unreachable",
        "failed to connect",
        "mount -t proc",
        "cannot read table of mounted file systems",
        "opsai sandbox:",
        "eacces",
        "eperm",
    ];
    let lower = output.to_lowercase();
    MARKS.iter().any(|mark| lower.contains(mark))
}

/// The capture keeps a head and a tail; a secret cut in half at either edge no longer matches any
/// pattern, so a long token touching the cut is replaced whole. A head that ends in whitespace, or
/// a tail that starts with it, was cut between words.
fn scrub_cut_edges(mut captured: Captured) -> Captured {
    const MIN_TOKEN: usize = 12;
    const CUT: &str = "[REDACTED:cut]";
    if captured.truncated_bytes == 0 {
        return captured;
    }
    let head = &mut captured.head;
    let head_cut =
        head.rfind(char::is_whitespace).map_or(0, |i| i + head[i..].chars().next().map_or(1, char::len_utf8));
    if head.len() - head_cut >= MIN_TOKEN {
        head.replace_range(head_cut.., CUT);
    }
    let tail = &mut captured.tail;
    let tail_cut = tail.find(char::is_whitespace).unwrap_or(tail.len());
    if tail_cut >= MIN_TOKEN {
        tail.replace_range(..tail_cut, CUT);
    }
    captured
}

fn resolve(base: &Path, dir: &str) -> PathBuf {
    let expanded = match dir.strip_prefix("~") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default().join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(dir),
    };
    if expanded.is_absolute() { expanded } else { base.join(expanded) }
}

#[cfg(test)]
mod tests {
    use super::scrub_cut_edges;
    use crate::exec::output::Captured;

    #[test]
    fn the_sandbox_hint_follows_a_denial_not_any_failure() {
        use super::looks_denied;
        assert!(looks_denied("touch: cannot touch 'x': Permission denied"));
        assert!(looks_denied("PermissionError: [Errno 1] Operation not permitted"));
        assert!(looks_denied("curl: (6) Could not resolve host: example.com"));
        assert!(looks_denied("Error, do this: mount -t proc proc /proc"));
        assert!(!looks_denied(""));
        assert!(!looks_denied("grep: no match\n"));
        assert!(!looks_denied("error: pathspec 'x' did not match any file(s) known to git"));
    }

    fn cut(head: &str, truncated_bytes: u64, tail: &str) -> Captured {
        Captured { head: head.into(), tail: tail.into(), truncated_bytes, total_bytes: 0 }
    }

    #[test]
    fn tokens_cut_by_truncation_are_scrubbed() {
        let scrubbed = scrub_cut_edges(cut("ok line\nkey ghp_abcdefghij", 100, "klmnopqrstuv0123 tail\nshort\n"));
        assert_eq!(
            scrubbed.text(),
            "ok line\nkey [REDACTED:cut]\n... [100 bytes truncated] ...\n[REDACTED:cut] tail\nshort\n"
        );
        let plain = cut("a b", 5, "c d\n");
        assert_eq!(scrub_cut_edges(plain.clone()), plain);
        // Nothing was cut out of a token that ends a line or starts one.
        let whole_words = cut("key ghp_abcdefghij\n", 5, "\nklmnopqrstuv0123\n");
        assert_eq!(scrub_cut_edges(whole_words.clone()), whole_words);
        let kept = Captured::whole("ghp_abcdefghijklmnop");
        assert_eq!(scrub_cut_edges(kept.clone()), kept);
    }
}
