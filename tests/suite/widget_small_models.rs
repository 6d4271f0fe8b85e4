//! Issue 22: the widget with small local models, through the real binary. A candidate that is not
//! a usable command line (a bare path, alternatives, a syntax error) gets one more try with what is
//! wrong; `llm.tool_mode` decides whether `propose_command` is offered or the command is asked for
//! as text, and `auto` learns it from how the model answered; sampling settings reach the request.

use serde_json::json;

use super::widget_cli::{Run, assert_message, assert_replaced, audit, propose, run, system_prompt, widget};
use crate::support::TestEnv;
use crate::support::mock_llm::*;

/// The last message of a request (the feedback a second candidate is asked with).
fn last_message(request: &RecordedRequest) -> String {
    let messages = request.messages();
    messages.last().and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned()
}

fn ask(env: &TestEnv, mock: &MockLlm, line: &str) -> Run {
    run(widget(env, mock).env("OPSAI_BUFFER", line).env("OPSAI_SHELL", "bash").env("OPSAI_SHELL_VERSION", "5.2"))
}

#[test]
fn a_bare_path_gets_a_second_candidate_and_only_the_command_is_used() {
    let env = TestEnv::new();
    let mock = MockLlm::start([propose("c1", "/home/root"), propose("c2", "echo \"$HOME\"")]);
    assert_replaced(&ask(&env, &mock, "print the current user's home directory"), "echo \"$HOME\"");
    let second = &mock.chat_requests()[1];
    second.assert_tool_calls_answered();
    assert!(second.tool_result("c1").is_some_and(|r| r.contains("only a path")), "{:?}", second.tool_result("c1"));
    assert!(
        last_message(second).contains("Reply with the corrected command line alone in a ```sh block"),
        "{}",
        last_message(second)
    );
    let log = audit(&env);
    assert_eq!(log.matches("widget.propose_command").count(), 1, "only the used candidate is proposed: {log}");
    assert!(!log.contains("/home/root"), "{log}");
}

#[test]
fn a_path_twice_is_a_message_never_the_new_line() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("/home/root"), reply_text("`/home/root`")]);
    let message = assert_message(&ask(&env, &mock, "print my home directory"), 1);
    assert!(message.contains("a path, not a command"), "{message}");
    assert_eq!(mock.chat_requests().len(), 2);
}

#[test]
fn alternatives_and_syntax_errors_are_sent_back_once() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("```sh\nls -l\nls -la\n```"), reply_text("ls -la")]);
    assert_replaced(&ask(&env, &mock, "list everything here"), "ls -la");
    let requests = mock.chat_requests();
    assert!(last_message(&requests[1]).contains("several commands"));
    // The second ask keeps the first's prefix byte for byte (the system message and the examples),
    // so a local server reads only what is new.
    let through_the_line = requests[0].messages().len();
    assert_eq!(requests[1].messages()[..through_the_line], requests[0].messages()[..]);
    if std::process::Command::new("bash").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "bash is missing under CI");
        eprintln!("skipped the syntax half: no bash");
        return;
    }
    let mock = MockLlm::start([reply_text("echo 'unclosed"), reply_text("echo 'closed'")]);
    assert_replaced(&ask(&env, &mock, "say closed"), "echo 'closed'");
    let feedback = last_message(&mock.chat_requests()[1]);
    assert!(feedback.contains("The shell cannot parse that") && feedback.contains("EOF"), "{feedback}");
    // The second candidate no better: the first stands (the user sees it and decides).
    let mock = MockLlm::start([reply_text("```\nls -l\nls -la\n```"), reply_text("echo 'still")]);
    assert_replaced(&ask(&env, &mock, "list"), "ls -l\nls -la");
}

/// A Safe candidate is tried once (a probe: sandboxed, audited); an error that says the command is
/// wrong goes back to the model, and the corrected command is what the line gets.
#[test]
fn a_safe_candidate_that_fails_when_tried_gets_a_second_candidate() {
    let env = TestEnv::new();
    std::fs::write(env.user_home().join("notes-4c1.txt"), "one\ntwo\n").unwrap();
    let mock = MockLlm::start([propose("c1", "head -n 1 notes-4c0.txt"), propose("c2", "head -n 1 notes-4c1.txt")]);
    assert_replaced(&ask(&env, &mock, "first line of my notes"), "head -n 1 notes-4c1.txt");
    let feedback = mock.chat_requests()[1].tool_result("c1").unwrap_or_default();
    assert!(feedback.contains("No such file") && feedback.contains("notes-4c0.txt"), "{feedback}");
    let log = audit(&env);
    assert!(log.contains("CMD: \"head -n 1 notes-4c0.txt\" | RISK: safe | CONFIRMED: auto"), "{log}");
    assert!(log.contains("CMD: \"head -n 1 notes-4c1.txt\" | RISK: safe | CONFIRMED: proposed"), "{log}");
    // Not Safe: never run to check, proposed as it is.
    let mock = MockLlm::start([propose("c1", "rm notes-4c0.txt")]);
    assert_replaced(&ask(&env, &mock, "delete the old notes"), "rm notes-4c0.txt");
    assert_eq!(mock.chat_requests().len(), 1);
}

#[test]
fn text_tool_mode_sends_no_schemas_and_asks_for_the_command_itself() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"tool_mode": "text", "temperature": 0, "top_p": 0.9, "top_k": 1}}"#);
    std::fs::write(env.user_home().join("notes.txt"), "one\ntwo\n").unwrap();
    let mock = MockLlm::start([reply_text("```sh\nhead -n 5 notes.txt\n```")]);
    assert_replaced(&ask(&env, &mock, "first 5 lines of notes.txt"), "head -n 5 notes.txt");
    let request = &mock.chat_requests()[0];
    assert!(request.json().get("tools").is_none(), "{}", request.json());
    assert_eq!((&request.json()["temperature"], &request.json()["top_p"]), (&json!(0.0), &json!(0.9)));
    assert_eq!(request.json()["top_k"], json!(1));
    let system = system_prompt(request);
    assert!(
        system.contains("Reply with the command line alone in a ```sh block.") && !system.contains("propose_command"),
        "{system}"
    );
    assert!(!system.contains("- Tools:") && !system.contains("- Docker:"), "no installed-program list: {system}");
}

/// `auto`: the widget asks for the command as text from its first request (no schemas, within the
/// widget's byte budget); `native` offers the probes and `propose_command`.
#[test]
fn the_widget_starts_with_text_calls_and_native_is_a_setting() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("```sh\ndu -sh .\n```")]);
    assert_replaced(&ask(&env, &mock, "disk usage here"), "du -sh .");
    let request = &mock.chat_requests()[0];
    assert!(request.json().get("tools").is_none(), "{}", request.json());
    assert!(request.json().get("temperature").is_none(), "nothing configured, nothing sent");
    let system = system_prompt(request);
    assert!(system.contains("Reply with the command line alone in a ```sh block."), "{system}");
    // Worked examples in the answer's form come between the system message and the line.
    let messages = request.messages();
    assert!(request.worked_examples(&["user", "assistant"]) >= 3);
    let line = messages.len() - 1;
    assert!(messages[1..line].iter().step_by(2).all(|m| !m["content"].as_str().unwrap_or_default().contains("```")));
    assert!(
        messages[2..line].iter().step_by(2).all(|m| m["content"].as_str().unwrap_or_default().starts_with("```sh\n"))
    );
    assert_eq!(last_message(request), "disk usage here");
    // The widget's budget holds for everything read before the line: the system message and the examples.
    let before_the_line: usize = messages[..line].iter().map(|m| m["content"].as_str().unwrap_or_default().len()).sum();
    assert!(before_the_line <= 3000, "{before_the_line} bytes before the line");
    env.write_config(r#"{"llm": {"tool_mode": "native"}}"#);
    let mock = MockLlm::start([propose("c1", "du -sh /srv")]);
    assert_replaced(&ask(&env, &mock, "disk usage of /srv"), "du -sh /srv");
    let request = &mock.chat_requests()[0];
    assert_eq!(request.tool_names(), ["run_command", "propose_command"]);
    assert!(system_prompt(request).contains("calling propose_command"));
    assert_eq!(request.messages().len(), 2, "no examples with native calls: {:?}", request.messages());
}

/// `auto` for the agent: native until a reply writes its call as text although the schemas were
/// sent; from the next run on the schemas stay home and the prompt asks for commands in ```sh
/// blocks (the other tools in the tagged form).
#[test]
fn the_agent_learns_text_calls_from_a_call_written_as_text() {
    let env = TestEnv::new();
    let text_call = "<tool_call>{\"name\": \"run_command\", \"arguments\": {\"command\": \"echo hi\"}}</tool_call>";
    let mock = MockLlm::start([reply_text(text_call), reply_text("Said hi."), reply_text("Done.")]);
    let opsai = |task: &str| {
        let mut cmd = env.cmd();
        cmd.env("OPSAI_BASE_URL", mock.base_url()).env("OPSAI_NONINTERACTIVE", "1").args(["-q", task]);
        cmd.timeout(std::time::Duration::from_secs(60)).assert().success();
    };
    opsai("say hi");
    opsai("again");
    let requests = mock.chat_requests();
    assert!(!requests[0].tool_names().is_empty());
    assert!(!system_prompt(&requests[0]).contains("<tool_call>"), "native: the schemas say how");
    assert!(requests[2].json().get("tools").is_none(), "learned: {}", requests[2].json());
    let learned = system_prompt(&requests[2]);
    assert!(learned.contains("Reply with the command line alone in a ```sh block"), "{learned}");
    assert!(learned.contains("<tool_call>{\"name\": \"analyze\""), "{learned}");
    let cache = std::fs::read_to_string(env.opsai_home().join("cache/tool_mode.json")).unwrap();
    assert!(cache.contains("\"text\""), "{cache}");
}

#[test]
fn sampling_settings_out_of_range_are_configuration_errors() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"temperature": 3}}"#);
    let mock = MockLlm::start([]);
    let message = assert_message(&ask(&env, &mock, "anything"), 2);
    assert!(message.contains("llm.temperature"), "{message}");
    assert!(mock.requests().is_empty());
}
