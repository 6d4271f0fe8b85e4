//! Hangs before the first byte and mid-stream, streams cut inside a tool call, invalid
//! arguments, unknown tools, bytes that are not UTF-8.

use std::time::{Duration, Instant};

use serde_json::json;

use super::*;

#[test]
fn a_hang_before_the_first_byte_after_a_command_ran_times_out() {
    let env = TestEnv::new();
    // The mock is on this machine: its first byte may take llm.local_first_byte_timeout.
    env.write_config(r#"{"llm": {"timeout": 2, "local_first_byte_timeout": 2}}"#);
    let marker = "7301.21";
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run(&with_background_sleep(marker))),
        reply_hang_before_head(),
        reply_text("never asked for: a timeout is not retried"),
    ]);
    let started = Instant::now();
    let out = opsai(&env, &mock).arg("hang before head").output().unwrap();
    assert_model_failure(&out, &["did not start answering within 2 s", "raise llm.local_first_byte_timeout"]);
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    assert_eq!(mock.unused_replies(), 1);
    assert_eq!(audit(&env).lines().count(), 1, "{}", audit(&env));
    assert_saved(&env, 3, &["hang before head", &format!("started-{marker}")]);
    assert_no_process_left(&format!("sleep {marker}"));
}

#[test]
fn a_hang_in_the_middle_of_a_stream_times_out() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"timeout": 2}}"#);
    let marker = "7301.22";
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run(&with_background_sleep(marker))),
        reply_hang_mid_stream("The background job printed "),
    ]);
    let out = opsai(&env, &mock).arg("hang mid stream").output().unwrap();
    assert_model_failure(&out, &["did not answer within 2 s", "raise llm.timeout"]);
    assert_eq!(audit(&env).lines().count(), 1, "{}", audit(&env));
    assert_saved(&env, 3, &["hang mid stream", &format!("started-{marker}")]);
    assert_no_process_left(&format!("sleep {marker}"));
}

#[test]
fn a_hang_inside_a_tool_call_runs_nothing() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"timeout": 2}}"#);
    let target = env.user_home().join("half-sent");
    let payloads = tool_call_cut_in_arguments("c1", run(&format!("touch {}", target.display())));
    let mock = MockLlm::start([reply_sse_events(&payloads).then_hang()]);
    let out = opsai(&env, &mock).arg("hang in a call").output().unwrap();
    assert_model_failure(&out, &["did not answer within 2 s", "raise llm.timeout"]);
    assert!(!target.exists());
    assert_eq!(audit(&env), "", "nothing ran, nothing audited");
    assert!(sessions(&env).is_empty(), "the model never replied: no conversation is kept");
}

// ---- Cut and malformed streams ------------------------------------------------------------------

#[test]
fn a_stream_cut_inside_a_tool_calls_arguments_runs_nothing() {
    let env = TestEnv::new();
    let target = env.user_home().join("cut-short");
    let arguments = run(&format!("touch {}", target.display()));
    // The connection drops mid-call three times: retried (nothing was shown), then given up.
    let cut = || reply_sse_events(&tool_call_cut_in_arguments("c1", arguments.clone())).then_abort();
    let mock = MockLlm::start([cut(), cut(), cut()]);
    let out = opsai(&env, &mock).arg("cut in a call").output().unwrap();
    assert_model_failure(&out, &["the connection broke mid-reply", "try again"]);
    assert!(!target.exists(), "half a call never runs");
    assert_eq!(audit(&env), "");
    assert!(sessions(&env).is_empty(), "the model never replied: no conversation is kept");
}

#[test]
fn a_stream_cut_inside_a_tool_call_then_a_whole_reply_recovers() {
    let env = TestEnv::new();
    let target = env.user_home().join("cut-short");
    let arguments = run(&format!("touch {}", target.display()));
    let mock = MockLlm::start([
        reply_sse_events(&tool_call_cut_in_arguments("c1", arguments)).then_abort(),
        reply_text("Second try answered."),
    ]);
    opsai(&env, &mock).arg("cut then fine").assert().success().stdout("Second try answered.\n");
    assert!(!target.exists());
    assert_eq!(mock.chat_requests().len(), 2);
}

#[test]
fn a_close_delimited_stream_ending_inside_the_arguments_is_an_observation_not_a_command() {
    let env = TestEnv::new();
    let target = env.user_home().join("cut-short");
    let arguments = run(&format!("touch {}", target.display()));
    // Without chunked framing the cut looks like a normal end of the body.
    let mock = MockLlm::start([
        reply_sse_events(&tool_call_cut_in_arguments("c1", arguments)).close_delimited(),
        reply_text("The call was cut; nothing ran."),
    ]);
    opsai(&env, &mock).arg("cut, close-delimited").assert().success().stdout("The call was cut; nothing ran.\n");
    assert!(!target.exists());
    let second = &mock.chat_requests()[1];
    second.assert_tool_calls_answered();
    let observation = second.tool_result("c1").unwrap();
    assert!(observation.starts_with("[ERROR]: "), "{observation}");
    assert_eq!(audit(&env), "");
}

#[test]
fn invalid_json_arguments_get_an_observation_and_the_model_recovers() {
    let env = TestEnv::new();
    let target = env.user_home().join("never-created");
    let raw = format!("{{\"command\": \"touch {}\", \"why\": ", target.display());
    let mock = MockLlm::start([
        reply_raw_tool_call("c1", "run_command", &raw, "tool_calls"),
        reply_tool_call("c2", "run_command", run("echo fixed-call")),
        reply_text("Recovered with a valid call."),
    ]);
    let out = opsai(&env, &mock).arg("bad json").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Recovered with a valid call.\n");
    // The user is told that the call was unusable and was not run, before the model's next try.
    let err = stderr(&out);
    let told = err.find("✗ [ERROR]: arguments must be a JSON object").unwrap_or_else(|| panic!("not told: {err}"));
    assert!(told < err.find("▶ run_command [SAFE]  echo fixed-call").unwrap(), "{err}");
    assert!(!target.exists(), "nothing from the invalid call ran");
    let second = &mock.chat_requests()[1];
    second.assert_tool_calls_answered();
    let observation = second.tool_result("c1").unwrap();
    assert!(observation.starts_with("[ERROR]: ") && observation.contains("JSON"), "{observation}");
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "only the valid call ran: {log}");
    assert!(log.contains("echo fixed-call"), "{log}");
    assert_saved(&env, 6, &["bad json", "fixed-call", "Recovered with a valid call."]);
}

#[test]
fn an_unknown_tool_gets_an_observation_and_the_model_recovers() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "format_disk", json!({"device": "/dev/sda"})),
        reply_text("That tool does not exist; nothing was done."),
    ]);
    let out = opsai(&env, &mock).arg("unknown tool").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "That tool does not exist; nothing was done.\n");
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("unknown tool `format_disk`") && observation.contains("run_command"), "{observation}");
    assert!(stderr(&out).contains("format_disk"), "the user sees the call: {}", stderr(&out));
    assert_eq!(audit(&env), "", "nothing ran");
    assert_saved(&env, 4, &["unknown tool", "format_disk", "nothing was done"]);
}

#[test]
fn non_utf8_bytes_in_the_stream_become_replacement_characters() {
    let env = TestEnv::new();
    // Latin-1 `é` and two bytes that are never UTF-8, inside the content of an otherwise fine stream.
    let mut body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"caf".to_vec();
    body.extend_from_slice(b"\xE9 \xFF\xFE ok\"}}]}\n\ndata: [DONE]\n\n");
    let mock = MockLlm::start([reply_sse_raw(body)]);
    let out = opsai(&env, &mock).arg("bad bytes").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "caf\u{FFFD} \u{FFFD}\u{FFFD} ok\n");
    assert_eq!(mock.chat_requests().len(), 1);
    assert_saved(&env, 2, &["bad bytes", "caf\u{FFFD}"]);
}
