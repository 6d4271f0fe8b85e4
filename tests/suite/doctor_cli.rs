//! `opsai doctor` through the real binary: every step against the mock, and each kind of failure
//! reported at its step with its fix.

use std::time::Duration;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

/// Generous: a loaded 2-core machine runs many of these at once.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// `opsai doctor` against `base_url`; (exit code, stdout).
fn doctor(env: &TestEnv, base_url: &str) -> (Option<i32>, String) {
    let out = env.cmd().env("OPSAI_BASE_URL", base_url).arg("doctor").timeout(RUN_LIMIT).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code(), stdout)
}

/// The line of step `name`, which must start with `mark`.
fn step<'a>(stdout: &'a str, mark: &str, name: &str) -> &'a str {
    let line = stdout
        .lines()
        .find(|line| line.split_whitespace().nth(1) == Some(name.split(' ').next().unwrap_or(name)))
        .unwrap_or_else(|| panic!("no {name} step:\n{stdout}"));
    assert!(line.starts_with(&format!("{mark} {name}")), "{name} should be {mark}:\n{stdout}");
    line
}

#[test]
fn a_working_endpoint_passes_every_step_with_a_native_tool_call() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_models(&["llama3.2:3b", "qwen2.5:7b"]),
        reply_text("I am ready to help."),
        reply_tool_call("call_7", "report_status", json!({"status": "ok"})),
    ]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.starts_with(&format!("Checking {} for model qwen2.5:7b (no API key).\n", mock.base_url())));
    step(&stdout, "✓", "proxy");
    step(&stdout, "✓", "DNS");
    assert!(step(&stdout, "✓", "TCP").contains(&mock.addr().to_string()), "{stdout}");
    step(&stdout, "–", "TLS");
    step(&stdout, "✓", "HTTP");
    assert!(step(&stdout, "✓", "models").contains("qwen2.5:7b is listed (2 in all)"), "{stdout}");
    assert!(step(&stdout, "✓", "chat").contains("I am ready to help."), "{stdout}");
    assert!(step(&stdout, "✓", "tool call").contains("native: report_status({\"status\":\"ok\"})"), "{stdout}");
    let speed = step(&stdout, "✓", "speed");
    assert!(speed.contains("first token after") && speed.contains("tokens/s"), "{stdout}");
    assert!(stdout.ends_with("All checks passed.\n"), "{stdout}");
    assert!(!stdout.contains("fix:"), "{stdout}");

    let chats = mock.chat_requests();
    assert_eq!(chats.len(), 2, "one chat, one tool call");
    assert_eq!(chats[0].json()["stream"], true);
    assert_eq!(chats[1].tool_names(), ["report_status"]);
}

#[test]
fn text_form_tool_calls_pass_and_an_unlisted_model_that_answers_is_a_warning() {
    let env = TestEnv::new();
    let call = r#"<tool_call>{"name": "report_status", "arguments": {"status": "ok"}}</tool_call>"#;
    let mock = MockLlm::start([reply_models(&["SmolLM2-135M-Instruct.gguf"]), reply_text("Ready."), reply_text(call)]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(0), "{stdout}");
    assert!(step(&stdout, "✓", "tool call").contains("in text form"), "{stdout}");
    let models = step(&stdout, "!", "models");
    assert!(models.contains("not listed, but the endpoint answered for it"), "{stdout}");
    assert!(stdout.ends_with("All checks passed (1 warning).\n"), "{stdout}");
}

#[test]
fn an_unreachable_port_fails_at_tcp_with_its_fix() {
    let env = TestEnv::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let (code, stdout) = doctor(&env, &format!("http://{addr}/v1"));
    assert_eq!(code, Some(1), "{stdout}");
    step(&stdout, "✓", "DNS");
    assert!(step(&stdout, "✗", "TCP").contains(&format!("cannot connect to {addr}")), "{stdout}");
    assert!(stdout.contains(&format!("  fix: nothing accepts connections on {addr}: start the model server")));
    step(&stdout, "–", "chat");
    assert!(stdout.ends_with("1 check failed: the fix is under it.\n"), "{stdout}");
}

#[test]
fn a_bad_hostname_fails_at_dns() {
    let env = TestEnv::new();
    // `.invalid` never resolves (RFC 2606).
    let (code, stdout) = doctor(&env, "http://opsai-doctor-test.invalid:8000/v1");
    assert_eq!(code, Some(1), "{stdout}");
    assert!(step(&stdout, "✗", "DNS").contains("opsai-doctor-test.invalid does not resolve"), "{stdout}");
    assert!(stdout.contains("  fix: check the host name in llm.base_url"), "{stdout}");
    step(&stdout, "–", "TCP");
}

#[test]
fn a_model_the_endpoint_does_not_list_is_named_with_the_listed_ones() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_models(&["llama3.2:3b", "mistral:7b"]), reply_model_not_found("qwen2.5:7b")]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(1), "{stdout}");
    let models = step(&stdout, "✗", "models");
    assert!(models.contains("qwen2.5:7b is not listed (listed: llama3.2:3b, mistral:7b)"), "{stdout}");
    assert!(stdout.contains("  fix: use a listed model: `opsai config set-llm`, --model or OPSAI_MODEL"), "{stdout}");
    assert!(step(&stdout, "✗", "chat").contains("qwen2.5:7b"), "{stdout}");
    step(&stdout, "–", "tool call");
}

#[test]
fn a_401_names_the_api_key() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_unauthorized()]);
    let (code, stdout) = doctor(&env, &mock.base_url());
    assert_eq!(code, Some(1), "{stdout}");
    step(&stdout, "✓", "TCP");
    assert!(step(&stdout, "✗", "HTTP").contains("401"), "{stdout}");
    assert!(stdout.contains("  fix: the API key is missing or wrong: set it with `opsai config set-llm`"), "{stdout}");
    step(&stdout, "–", "chat");
    assert_eq!(mock.requests().len(), 1, "not retried, nothing after it");
}
