//! Model-side fault injection (issue 8): the real binary against a mock model that rate-limits,
//! fails, hangs, cuts its stream, sends garbage or huge replies, loops, or lies about approvals.
//!
//! Every case checks the same contract: opsai stays usable, says on stderr what happened (and what
//! to do), exits with the DESIGN §3 code (1 for a model failure, 3 for a refusal without a
//! terminal), keeps every audit line and every stored message up to the fault, and leaves no
//! process behind. The client-level details (exact retry counts, idle timeouts, stream shapes) are
//! in `llm_client`; the happy paths are in `agent_cli`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::inspect::processes_with;
use crate::support::mock_llm::*;
use opsai::testing::wait_until;

mod huge;
mod lies_and_loops;
mod statuses;
mod streams;

/// Generous: a loaded 2-core machine runs many of these at once.
const RUN_LIMIT: Duration = Duration::from_secs(120);

fn opsai(env: &TestEnv, mock: &MockLlm) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url()).env("OPSAI_NONINTERACTIVE", "1").timeout(RUN_LIMIT);
    cmd
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `run_command` arguments.
fn run(command: &str) -> Value {
    json!({"command": command, "why": "test"})
}

/// A Safe command that starts a background `sleep` whose command line carries `marker` (a number
/// unique to the test), so a process left behind can be found.
fn with_background_sleep(marker: &str) -> String {
    format!("sleep {marker} & echo started-{marker}")
}

/// Nothing started by the run is still alive. The PTY executor kills the whole process group when
/// a command ends, so this holds at once; the short poll only absorbs the kernel's reaping.
fn assert_no_process_left(needle: &str) {
    let gone = wait_until(Duration::from_secs(10), || processes_with(needle).is_empty());
    assert!(gone, "processes left behind for {needle:?}: {:?}", processes_with(needle));
}

/// The saved conversations (`opsai sessions list --json`, one JSON object a line).
fn sessions(env: &TestEnv) -> Vec<Value> {
    let out = env.cmd().args(["sessions", "list", "--json"]).timeout(RUN_LIMIT).output().unwrap();
    assert!(out.status.success(), "sessions list: {}", stderr(&out));
    stdout(&out).lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `opsai sessions show ID` as text.
fn show(env: &TestEnv, id: i64) -> String {
    let out = env.cmd().args(["sessions", "show", &id.to_string()]).timeout(RUN_LIMIT).output().unwrap();
    assert!(out.status.success(), "sessions show: {}", stderr(&out));
    stdout(&out)
}

/// The one saved conversation: its message count and its text; each of `expected` must be in it.
fn assert_saved(env: &TestEnv, messages: i64, expected: &[&str]) {
    let rows = sessions(env);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["message_count"].as_i64(), Some(messages), "{rows:?}");
    let text = show(env, rows[0]["id"].as_i64().unwrap());
    for needle in expected {
        assert!(text.contains(needle), "{needle:?} missing from the saved conversation:\n{text}");
    }
}

/// Asserts the run failed as a model failure: exit 1, nothing on stdout, `needles` on stderr, no panic.
fn assert_model_failure(output: &std::process::Output, needles: &[&str]) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(1), "stderr: {err}");
    assert_eq!(stdout(output), "", "no answer on stdout");
    assert!(!err.contains("panicked"), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} missing from stderr: {err}");
    }
}

/// The gap between the arrival of request `a` and request `b` (0-based).
fn gap(mock: &MockLlm, a: usize, b: usize) -> Duration {
    let times = mock.arrival_times();
    times[b].duration_since(times[a])
}

/// A tool call's stream cut off after the first third of its arguments, as `payloads`.
fn tool_call_cut_in_arguments(id: &str, arguments: Value) -> Vec<String> {
    let payloads = openai_fragment_payloads("", &[call(id, "run_command", arguments)]);
    // role chunk, the call's first fragment (id, name, ""), then the first piece of the arguments.
    payloads[..3].to_vec()
}
