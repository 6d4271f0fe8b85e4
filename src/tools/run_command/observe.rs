//! The observe step: the command's output redacted (a secret cut by the capture replaced whole), the
//! observation for the model, one audit line and the `tool_result` event.

use super::Call;
use super::execute::Ran;
use crate::exec::output::{observation_text, scrub_cut_edges};
use crate::protocol::{AgentEvent, Assessment, Observation, ObservationStatus};
use crate::tools::gate::Allowed;

/// Added to the observation of a sandboxed command that failed, so the model re-proposes it for
/// approval instead of retrying it in the sandbox.
pub(crate) const SANDBOX_HINT: &str = "[sandbox]: this command ran in the read-only sandbox (no writes, no network, \
                                secret files unreadable); if it failed because of that, propose it again with \
                                \"sandbox\": false and the user will be asked";

pub(super) fn observe(call: &mut Call, assessment: &Assessment, allowed: Allowed, ran: Ran) -> Observation {
    let services = call.services;
    let confirmed = allowed.confirmed();
    // What the command printed, for the summary line; the observation's text also holds its header.
    let output_bytes = ran.result.as_ref().map_or(0, |result| result.output.total_bytes);
    let observation = match ran.result {
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
            if ran.sandboxed && result.exit_code != Some(0) && !result.interrupted && looks_denied(&output) {
                text.push_str(&format!("\n{SANDBOX_HINT}"));
            }
            let mut text = call.observed(text);
            if let Err(err) = call.audit(assessment, confirmed, result.exit_code, &output) {
                // Safe commands run without the gate's check, and a disk can fill while a command
                // runs: a missing line is said, to the model and to the user.
                let message = format!("no audit line was written for this command: {err}");
                call.emit(AgentEvent::Error { message: message.clone() });
                text.push_str(&format!("\n[ERROR]: {message}"));
            }
            Observation {
                call_id: call.id.into(),
                status,
                exit_code: result.exit_code,
                text,
                truncated_bytes: result.output.truncated_bytes,
                duration_ms: u64::try_from(result.duration.as_millis()).unwrap_or(u64::MAX),
            }
        }
        Err(err) => {
            let message = format!("[ERROR]: {err}");
            let _ = call.audit(assessment, confirmed, None, &message);
            Observation {
                call_id: call.id.into(),
                status: ObservationStatus::Ran,
                exit_code: None,
                text: call.observed(message),
                truncated_bytes: 0,
                duration_ms: u64::try_from(ran.elapsed.as_millis()).unwrap_or(u64::MAX),
            }
        }
    };
    report(call, &observation, output_bytes);
    observation
}

/// The `tool_result` event for `observation`.
pub(super) fn report(call: &mut Call, observation: &Observation, output_bytes: u64) {
    call.emit(AgentEvent::ToolResult {
        id: call.id.into(),
        status: observation.status,
        exit_code: observation.exit_code,
        output: observation.text.clone(),
        truncated_bytes: observation.truncated_bytes,
        output_bytes,
        duration_ms: observation.duration_ms,
    });
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
