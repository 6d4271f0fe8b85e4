//! Issue 15: what a small local model (llama.cpp's llama-server, Ollama) does to a conversation —
//! broken tool-call arguments, requests a strict server rejects, answers cut by the token limit,
//! error objects after HTTP 200, a model stuck repeating itself, a slow prompt read — through the
//! real binary against the mock, which rejects a history with invalid arguments as llama.cpp does.

use std::time::{Duration, Instant};

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

// ---- finish_reason and errors after HTTP 200 -----------------------------------------------------

#[test]
fn an_answer_cut_at_max_tokens_is_shown_and_reported() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"max_tokens": 50}}"#);
    let mock = MockLlm::start([reply_text_cut_at_length("The disk is 42% full and the biggest")]);
    let out = opsai(&env, &mock).arg("disk?").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "The disk is 42% full and the biggest\n");
    let err = stderr(&out);
    assert!(
        err.contains("the answer was cut at llm.max_tokens = 50 tokens; raise llm.max_tokens in config.json"),
        "{err}"
    );
    assert_eq!(mock.chat_requests()[0].json()["max_tokens"], 50);
}

#[test]
fn a_tool_call_cut_at_max_tokens_runs_nothing_and_the_conversation_stays_valid() {
    let env = TestEnv::new();
    let target = env.user_home().join("never-created");
    let raw = format!("{{\"command\": \"touch {}", target.display());
    let mock = MockLlm::start([reply_raw_tool_call("c1", "run_command", &raw, "length"), reply_text("Shorter now.")]);
    let out = opsai(&env, &mock).arg("make it").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("the answer was cut at llm.max_tokens = 4096 tokens"), "{}", stderr(&out));
    assert!(!target.exists());
    assert_eq!(std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default(), "");
    // The follow-up carries the cut call as valid JSON with its error, so a strict server accepts it.
    let out = opsai(&env, &mock).args(["--continue", "try a shorter way"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let second = &mock.chat_requests()[1];
    second.assert_tool_calls_answered();
    assert_eq!(sent_arguments(second, "c1"), json!({"_raw": raw}));
    let observation = second.tool_result("c1").unwrap();
    assert!(observation.starts_with("[ERROR]: not run: the answer was cut at llm.max_tokens"), "{observation}");
}

#[test]
fn a_content_filter_stop_is_reported() {
    let env = TestEnv::new();
    let payloads =
        [chunk(json!({"role": "assistant", "content": "Here is"}), None), chunk(json!({}), Some("content_filter"))];
    let mock = MockLlm::start([reply_sse_events(&payloads)]);
    let out = opsai(&env, &mock).arg("anything").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("content filter stopped the answer"), "{}", stderr(&out));
}

#[test]
fn an_error_object_after_http_200_is_reported_with_its_message() {
    let env = TestEnv::new();
    let before = [chunk(json!({"role": "assistant", "content": "Let me "}), None)];
    let mock = MockLlm::start([reply_error_after(&before, "Failed to parse input at pos 12: <tool_call>")]);
    let out = opsai(&env, &mock).arg("anything").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("Failed to parse input at pos 12: <tool_call>"), "{}", stderr(&out));
}

#[test]
fn an_error_line_from_an_older_llama_cpp_is_reported_with_its_message() {
    let env = TestEnv::new();
    let before = [chunk(json!({"role": "assistant", "content": "Let me "}), None)];
    let mock = MockLlm::start([reply_error_line_after(&before, "Failed to parse input at pos 7")]);
    let out = opsai(&env, &mock).arg("anything").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("Failed to parse input at pos 7"), "{}", stderr(&out));
    assert_eq!(mock.chat_requests().len(), 1, "not retried");
}

#[test]
fn a_whole_tool_call_before_an_error_object_is_still_used() {
    let env = TestEnv::new();
    let whole = json!({"index": 0, "id": "c1", "type": "function",
                       "function": {"name": "run_command", "arguments": json!({"command": "echo salvaged", "why": "t"}).to_string()}});
    let cut = json!({"index": 1, "id": "c2", "type": "function", "function": {"name": "run_command", "arguments": "{\"comm"}});
    let before = [
        chunk(json!({"role": "assistant", "content": null}), None),
        chunk(json!({"tool_calls": [whole]}), None),
        chunk(json!({"tool_calls": [cut]}), None),
    ];
    let mock = MockLlm::start([reply_error_after(&before, "Failed to parse input"), reply_text("It said salvaged.")]);
    let out = opsai(&env, &mock).arg("echo it").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "It said salvaged.\n");
    let second = &mock.chat_requests()[1];
    second.assert_tool_calls_answered();
    assert!(second.tool_result("c1").unwrap().contains("salvaged"), "{:?}", second.tool_result("c1"));
}

#[test]
fn the_widget_asks_for_few_tokens_and_names_its_own_key_when_cut() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text_cut_at_length("I think the command")]);
    let out = env
        .cmd()
        .arg("widget")
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_SHELL", "zsh")
        .env("OPSAI_SHELL_VERSION", "5.9")
        .env("OPSAI_BUFFER", "list files by size")
        .timeout(RUN_LIMIT)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(mock.chat_requests()[0].json()["max_tokens"], 1024);
    assert!(
        stdout(&out).contains("llm.widget_max_tokens = 1024"),
        "stdout {:?} stderr {:?}",
        stdout(&out),
        stderr(&out)
    );
}

// ---- Degenerate output -------------------------------------------------------------------------

#[test]
fn a_model_repeating_one_chunk_is_stopped_with_a_message() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_repeating("The fix:\n", "# ", 200), reply_text("never asked for")]);
    let out = opsai(&env, &mock).arg("fix it").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("the model kept repeating \"# \" (128 times in a row) and was stopped"), "{err}");
    assert_eq!(mock.chat_requests().len(), 1, "not retried");
}

#[test]
fn a_model_repeating_one_line_is_stopped_too() {
    let env = TestEnv::new();
    let line: Vec<String> = ["Check", " the", " logs", ".\n"].map(String::from).to_vec();
    let deltas: Vec<String> = (0..60).flat_map(|_| line.clone()).collect();
    let mock = MockLlm::start([reply_text_deltas(&deltas)]);
    let out = opsai(&env, &mock).arg("what now").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("kept repeating \"Check the logs.\\n\" (32 times in a row)"), "{}", stderr(&out));
}

#[test]
fn a_long_table_with_dashes_streamed_token_by_token_is_printed_whole() {
    let env = TestEnv::new();
    let mut deltas: Vec<String> =
        ["|", " Name", " |", " Size", " |\n", "|", "------", "|", "------", "|\n"].map(String::from).to_vec();
    let mut expected = deltas.concat();
    for n in 0..150 {
        let row = ["|".to_owned(), " -".into(), " |".into(), format!(" {n}K"), " |\n".into()];
        expected.push_str(&row.concat());
        deltas.extend(row);
    }
    let mock = MockLlm::start([reply_text_deltas(&deltas)]);
    let out = opsai(&env, &mock).args(["-q", "sizes"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim_end(), expected.trim_end());
}

// ---- Timeouts for local models -----------------------------------------------------------------

#[test]
fn a_local_model_may_read_the_prompt_longer_than_the_idle_timeout() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"timeout": 1, "local_first_byte_timeout": 60}}"#);
    // The mock is on 127.0.0.1: a model on this machine, reading the prompt for 3 s.
    let mock = MockLlm::start([reply_text("Read the whole prompt.").delayed(Duration::from_secs(3))]);
    let out = opsai(&env, &mock).arg("long prompt").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Read the whole prompt.\n");
}

#[test]
fn once_tokens_flow_an_idle_gap_still_ends_at_llm_timeout() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"timeout": 1, "local_first_byte_timeout": 60}}"#);
    let mock = MockLlm::start([reply_hang_mid_stream("The log says ")]);
    let started = Instant::now();
    let out = opsai(&env, &mock).arg("stalls").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("did not answer within 1 s"), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30), "not the first-byte timeout: {:?}", started.elapsed());
}

#[test]
fn a_local_model_that_never_starts_is_reported_with_the_key_to_raise() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"timeout": 60, "local_first_byte_timeout": 1}}"#);
    let mock = MockLlm::start([reply_hang_before_head()]);
    let out = opsai(&env, &mock).arg("never starts").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("the model on this machine did not start answering within 1 s"), "{err}");
    assert!(err.contains("raise llm.local_first_byte_timeout"), "{err}");
}

/// Ctrl-C (SIGINT without a terminal) during the long first-byte wait and during a stalled stream:
/// the client's future is dropped at once, whatever the timeouts.
#[test]
fn ctrl_c_ends_the_wait_for_a_local_model_at_every_point() {
    for reply in [reply_hang_before_head(), reply_hang_mid_stream("Reading ")] {
        let env = TestEnv::new();
        env.write_config(r#"{"llm": {"timeout": 600, "local_first_byte_timeout": 600}}"#);
        let mock = MockLlm::start([reply]);
        let mut child = env
            .std_cmd()
            .arg("wait for it")
            .env("OPSAI_BASE_URL", mock.base_url())
            .env("OPSAI_NONINTERACTIVE", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + RUN_LIMIT;
        while mock.chat_requests().is_empty() {
            assert!(Instant::now() < deadline, "no request");
            std::thread::sleep(Duration::from_millis(20));
        }
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "Ctrl-C did not end the wait");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(130));
    }
}

// ---- The mock's llama.cpp shapes -----------------------------------------------------------------

/// The mock rejects a history with arguments that are not a JSON object, as llama.cpp does, and
/// uses up no scripted reply: every test above that passed sent none.
#[test]
fn the_mock_rejects_a_history_with_invalid_arguments_like_llama_cpp() {
    use std::io::{Read, Write};
    let mock = MockLlm::start([reply_text("kept for the next request")]);
    let call =
        json!({"id": "c1", "type": "function", "function": {"name": "run_command", "arguments": "{\"command\": \"ls"}});
    let body = json!({"model": "m", "stream": true, "messages": [
        {"role": "user", "content": "x"}, {"role": "assistant", "content": null, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "[ERROR]"}]})
    .to_string();
    let mut stream = std::net::TcpStream::connect(mock.addr()).unwrap();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(format!("{head}{body}").as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 500"), "{response}");
    assert!(response.contains("Failed to parse tool call arguments as JSON"), "{response}");
    assert_eq!(mock.unused_replies(), 1);
}

#[test]
fn llama_cpp_usage_chunks_with_empty_choices_are_counted() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text_deltas(&["Fine.".to_owned()])]);
    let out = opsai(&env, &mock).args(["--json", "status?"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let done = events.iter().find(|event| event["type"] == "done").expect("a done event");
    assert_eq!(done["usage"]["prompt_tokens"], 4400, "{done}");
    assert_eq!(done["usage"]["completion_tokens"], 12, "{done}");
}
