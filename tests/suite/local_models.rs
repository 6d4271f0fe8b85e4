//! Issue 15: what a small local model (llama.cpp's llama-server, Ollama) does to a conversation —
//! broken tool-call arguments, requests a strict server rejects, answers cut by the token limit,
//! error objects after HTTP 200, a model stuck repeating itself, a slow prompt read — through the
//! real binary against the mock, which rejects a history with invalid arguments as llama.cpp does.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;

/// Generous: a loaded 2-core machine runs many of these at once.
const RUN_LIMIT: Duration = Duration::from_secs(120);

fn opsai(env: &TestEnv, mock: &MockLlm) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url()).env("OPSAI_NONINTERACTIVE", "1").timeout(RUN_LIMIT);
    cmd
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The arguments string of the assistant's call `id` in a recorded request.
fn sent_arguments(request: &RecordedRequest, id: &str) -> Value {
    let messages = request.messages();
    let calls = messages.iter().flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default());
    let call = calls.into_iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no call {id}"));
    serde_json::from_str(call["function"]["arguments"].as_str().expect("arguments string")).expect("valid JSON")
}

// ---- Conversations that survive ------------------------------------------------------------------

#[test]
fn broken_arguments_go_back_as_valid_json_and_the_conversation_goes_on() {
    let env = TestEnv::new();
    let target = env.user_home().join("never-created");
    let raw = format!("{{\"command\": \"touch {}\", \"why\": ", target.display());
    let mock = MockLlm::start([
        reply_raw_tool_call("c1", "run_command", &raw, "tool_calls"),
        reply_text("Recovered."),
        reply_text("Still talking."),
    ]);
    let out = opsai(&env, &mock).arg("bad json").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Recovered.\n");
    assert!(!target.exists(), "nothing from the broken call ran");
    // The strict mock answers 500 to a history with invalid arguments: these requests passed it.
    let second = &mock.chat_requests()[1];
    second.assert_tool_calls_answered();
    assert_eq!(sent_arguments(second, "c1"), json!({"_raw": raw}));
    let observation = second.tool_result("c1").unwrap();
    assert!(observation.starts_with("[ERROR]: arguments must be a JSON object"), "{observation}");
    assert!(observation.contains("not valid JSON") && observation.contains("Nothing ran"), "{observation}");
    // The stored conversation holds valid JSON too: a follow-up in a new process is accepted.
    let out = opsai(&env, &mock).args(["--continue", "and now?"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Still talking.\n");
    assert_eq!(sent_arguments(&mock.chat_requests()[2], "c1"), json!({"_raw": raw}));
}

#[test]
fn a_saved_conversation_with_broken_arguments_is_repaired_on_load() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo hi", "why": "test"})),
        reply_text("Said hi."),
        reply_text("Repaired and answered."),
    ]);
    opsai(&env, &mock).arg("say hi").assert().success().stdout("Said hi.\n");
    // What an earlier opsai stored: the call's arguments as the model's raw, cut-off text.
    let db = rusqlite::Connection::open(env.opsai_home().join("sessions.db")).unwrap();
    let changed = db
        .execute(
            "UPDATE messages SET tool_calls = json_set(tool_calls, '$[0].arguments', '{\"command\": \"ec') \
             WHERE tool_calls IS NOT NULL",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);
    let out = opsai(&env, &mock).args(["--continue", "again"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Repaired and answered.\n");
    let third = &mock.chat_requests()[2];
    third.assert_tool_calls_answered();
    assert_eq!(sent_arguments(third, "c1"), json!({"_raw": "{\"command\": \"ec"}));
}

#[test]
fn a_request_the_server_calls_invalid_is_not_retried_or_called_overloaded() {
    let env = TestEnv::new();
    let body = json!({"error": {"code": 500, "message": "Failed to parse tool call arguments as JSON: parse error",
                                "type": "server_error"}});
    let mock = MockLlm::start([reply_json(500, body), reply_text("never asked for")]);
    let out = opsai(&env, &mock).arg("anything").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("rejected the request as invalid (HTTP 500): Failed to parse tool call arguments"), "{err}");
    assert!(!err.contains("overloaded") && !err.contains("retrying"), "{err}");
    assert_eq!(mock.chat_requests().len(), 1, "not retried");
    assert_eq!(mock.unused_replies(), 1);
}
