//! 429 with and without `Retry-After`, bursts of 5xx that end and one that does not.

use std::time::Duration;

use super::*;

#[test]
fn a_429_with_retry_after_is_waited_out_and_the_task_finishes() {
    let env = TestEnv::new();
    let marker = "7301.11";
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run(&with_background_sleep(marker))),
        reply_rate_limited(Some(2)),
        reply_text("Done after the wait."),
    ]);
    let out = opsai(&env, &mock).arg("rate limited task").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done after the wait.\n");
    // The wait is announced, on stderr only, before it starts.
    let notice = "opsai: the model endpoint is busy (429); retrying in 2 s (attempt 2/3)\n";
    assert_eq!(stderr(&out).matches(notice).count(), 1, "{}", stderr(&out));
    assert_eq!(mock.chat_requests().len(), 3);
    let waited = gap(&mock, 1, 2);
    assert!(waited >= Duration::from_millis(1900), "Retry-After: 2 honoured, waited {waited:?}");
    mock.chat_requests()[2].assert_tool_calls_answered();
    assert_eq!(audit(&env).lines().count(), 1, "{}", audit(&env));
    assert_saved(&env, 4, &["rate limited task", &format!("started-{marker}"), "Done after the wait."]);
    assert_no_process_left(&format!("sleep {marker}"));
}

#[test]
fn a_huge_retry_after_is_capped() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_rate_limited(Some(3600)), reply_text("Answered within the cap.")]);
    opsai(&env, &mock).arg("x").assert().success().stdout("Answered within the cap.\n");
    let waited = gap(&mock, 0, 1);
    // The cap is 20 s (RetryPolicy::default); an hour would time the test out.
    assert!(waited < Duration::from_secs(60), "Retry-After: 3600 was capped, waited {waited:?}");
}

#[test]
fn a_429_without_retry_after_backs_off_and_recovers() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_rate_limited(None), reply_rate_limited(None), reply_text("Recovered.")]);
    let out = opsai(&env, &mock).arg("x").output().unwrap();
    assert_eq!(stdout(&out), "Recovered.\n", "{}", stderr(&out));
    let err = stderr(&out);
    let notices: Vec<&str> = err.lines().filter(|l| l.contains("retrying in")).collect();
    assert_eq!(notices.len(), 2, "{}", stderr(&out));
    assert!(notices[0].starts_with("opsai: the model endpoint is busy (429); retrying in 0."), "{notices:?}");
    assert!(notices[0].ends_with(" s (attempt 2/3)") && notices[1].ends_with(" s (attempt 3/3)"), "{notices:?}");
    assert_eq!(mock.chat_requests().len(), 3);
    // Equal jitter keeps at least half of the 500 ms first backoff.
    assert!(gap(&mock, 0, 1) >= Duration::from_millis(240), "backed off: {:?}", gap(&mock, 0, 1));
}

#[test]
fn rate_limiting_that_never_ends_gives_up_with_a_message() {
    let env = TestEnv::new();
    let marker = "7301.12";
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run(&with_background_sleep(marker))),
        reply_rate_limited(None),
        reply_rate_limited(None),
        reply_rate_limited(None),
    ]);
    let out = opsai(&env, &mock).arg("limited forever").output().unwrap();
    assert_model_failure(&out, &["rate limiting", "429", "3 attempts", "wait a minute and try again"]);
    assert_eq!(mock.chat_requests().len(), 4, "three attempts for the second step, no more");
    assert!(
        audit(&env)
            .contains(&format!("CMD: \"{}\" | RISK: safe | CONFIRMED: auto | EXIT: 0", with_background_sleep(marker)))
    );
    assert_saved(&env, 3, &["limited forever", &format!("started-{marker}")]);
    assert_no_process_left(&format!("sleep {marker}"));
}

#[test]
fn under_json_a_retry_is_an_event_line_and_stderr_stays_quiet() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_rate_limited(Some(1)), reply_text("Recovered.")]);
    let out = opsai(&env, &mock).args(["--json", "x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "stdout is the protocol; nothing else is printed");
    let events: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let retry = events.iter().find(|e| e["type"] == "retry").expect("a retry event");
    assert_eq!(
        *retry,
        json!({"type": "retry", "reason": "is busy (429)", "wait_ms": 1000, "attempt": 2, "max_attempts": 3})
    );
    assert_eq!(events.last().unwrap()["type"], "done", "{events:?}");
}

#[rstest::rstest]
#[case::internal_error(500)]
#[case::bad_gateway(502)]
#[case::unavailable(503)]
#[case::gateway_timeout(504)]
fn a_burst_of_server_errors_then_success(#[case] status: u16) {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("echo before-the-burst")),
        reply_status(status, "upstream is restarting"),
        reply_status(status, "upstream is restarting"),
        reply_text("Answered after the burst."),
    ]);
    let out = opsai(&env, &mock).arg("burst").output().unwrap();
    assert_eq!(stdout(&out), "Answered after the burst.\n", "{}", stderr(&out));
    let notice = format!("opsai: the model endpoint failed with HTTP {status}; retrying in ");
    let err = stderr(&out);
    let notices: Vec<&str> = err.lines().filter(|l| l.starts_with(&notice)).collect();
    assert_eq!(notices.len(), 2, "one notice per retry: {}", stderr(&out));
    assert!(notices[1].ends_with("(attempt 3/3)"), "{notices:?}");
    assert_eq!(mock.chat_requests().len(), 4);
    assert_eq!(audit(&env).lines().count(), 1);
    assert_saved(&env, 4, &["burst", "before-the-burst", "Answered after the burst."]);
}

#[test]
fn server_errors_that_never_end_stop_after_three_attempts() {
    let env = TestEnv::new();
    let marker = "7301.13";
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run(&with_background_sleep(marker))),
        reply_status(503, "Service Unavailable: model is loading"),
        reply_status(502, "Bad Gateway"),
        reply_status(503, "Service Unavailable: model is loading"),
    ]);
    let out = opsai(&env, &mock).arg("never recovers").output().unwrap();
    assert_model_failure(&out, &["HTTP 503", "model is loading", "try again shortly"]);
    assert_eq!(mock.unused_replies(), 0);
    assert_eq!(mock.chat_requests().len(), 4);
    assert_eq!(audit(&env).lines().count(), 1, "{}", audit(&env));
    assert_saved(&env, 3, &["never recovers", &format!("started-{marker}")]);
    assert_no_process_left(&format!("sleep {marker}"));
}
