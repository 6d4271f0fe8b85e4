//! The one-shot agent on a real terminal: a person types `yes` to a High prompt, declines a Medium
//! one, and presses Ctrl-C while a command runs, while the model is thinking or answering, and at
//! the approval prompt.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::TestEnv;
use crate::support::inspect::{processes_with, stored_messages};
use crate::support::mock_llm::*;
use crate::support::pty::PtySession;
use opsai::testing::wait_until;

const LIMIT: Duration = Duration::from_secs(30);

fn start(env: &TestEnv, mock: &MockLlm, args: &[&str]) -> PtySession {
    PtySession::spawn(env!("CARGO_BIN_EXE_opsai"), args, &env.terminal_vars(&mock.base_url()), env.user_home())
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

#[test]
fn seed_000_cleanup_with_the_delete_confirmed_by_typing_yes() {
    let env = TestEnv::new();
    let logs = env.user_home().join("logs");
    std::fs::create_dir_all(logs.join("old")).unwrap();
    std::fs::write(logs.join("old/app.log.1"), "x".repeat(2048)).unwrap();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "du -sh logs/*", "why": "find what is big"})),
        reply_tool_call("c2", "run_command", json!({"command": "ls -la logs/old", "why": "check before deleting"})),
        reply_tool_call("c3", "run_command", json!({"command": "rm -rf logs/old", "why": "free the space"})),
        reply_text("Deleted logs/old."),
    ]);
    let mut session = start(&env, &mock, &["clean up old logs"]);
    session.expect("Type yes and Enter to run it", LIMIT);
    assert!(session.screen().contains("[HIGH] rm -rf logs/old"), "{}", session.screen());
    session.send("yes\r");
    session.expect("Deleted logs/old.", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    assert!(!logs.join("old").exists());
    let log = audit(&env);
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(log.contains("CMD: \"rm -rf logs/old\" | RISK: high | CONFIRMED: yes | EXIT: 0"), "{log}");
    mock.chat_requests()[3].assert_tool_calls_answered();
}

#[test]
fn declining_tells_the_model_and_it_adapts() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "touch marker.txt"})),
        reply_text("Understood, I did not create it."),
    ]);
    let mut session = start(&env, &mock, &["make a marker"]);
    session.expect("[n] no", LIMIT);
    session.send("n\r");
    session.expect("Understood", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    assert!(!env.user_home().join("marker.txt").exists());
    assert_eq!(mock.chat_requests()[1].tool_result("c1").as_deref(), Some("the user declined to run this command"));
}

#[test]
fn ctrl_c_interrupts_the_running_command_and_the_model_is_told() {
    let env = TestEnv::new();
    // A duration no other process uses, to find the `sleep` in /proc.
    let sleep = format!("sleep 1000.{}7", std::process::id());
    let command = format!("echo started; {sleep}; echo finished");
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": command})),
        reply_text("The command was interrupted."),
    ]);
    let started = Instant::now();
    let mut session = start(&env, &mock, &["wait a while"]);
    // Its output, not its display in the `▶` line.
    session.expect("│ started", LIMIT);
    assert!(wait_until(LIMIT, || !processes_with(&sleep).is_empty()), "the command never ran: {}", session.screen());
    session.send("\x03");
    session.expect("The command was interrupted.", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    assert!(started.elapsed() < Duration::from_secs(20), "the sleep was not interrupted");
    // Gone at once; the poll only absorbs the kernel's reaping.
    let gone = wait_until(Duration::from_secs(10), || processes_with(&sleep).is_empty());
    assert!(gone, "left behind: {:?}", processes_with(&sleep));
    assert!(session.screen().contains("✗ interrupted after "), "{}", session.screen());
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("interrupted"), "{observation}");
    assert!(!observation.contains("finished"));
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains(&format!("CMD: \"{command}\" | RISK: safe | CONFIRMED: auto | EXIT: 130")), "{log}");
    let stored = stored_messages(&env);
    let roles: Vec<&str> = stored.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "{stored:?}");
    assert!(stored[2].1.contains("interrupted") && stored[2].1.contains("started"), "{stored:?}");
    assert_eq!(stored[3].1, "The command was interrupted.");
}

#[test]
fn ctrl_c_while_the_answer_streams_cancels_with_130_and_keeps_no_half_answer() {
    let env = TestEnv::new();
    // Reasoning first (shown at once, so the test knows the stream is flowing), then half an
    // answer, then nothing: the Ctrl-C lands in the middle of the answer.
    let mock = MockLlm::start([reply_sse_events(&[
        chunk(json!({"role": "assistant", "reasoning_content": "Working it out."}), None),
        chunk(json!({"content": "The first half of the ans"}), None),
    ])
    .then_hang()]);
    let mut session = start(&env, &mock, &["explain something"]);
    session.expect("Working it out.", LIMIT);
    // The half answer is on screen before the Ctrl-C, so the check below does not race its chunk.
    session.expect("The first half", LIMIT);
    session.send("\x03");
    assert_eq!(session.wait(LIMIT), 130, "{}", session.screen());
    // The answer streams, so its first half was on screen as it arrived; it is not kept as an
    // answer: a new conversation the model never answered is not stored.
    assert!(session.screen().contains("The first half"), "{}", session.screen());
    assert_eq!(stored_messages(&env), []);
    assert_eq!(mock.chat_requests().len(), 1);
    assert_eq!(audit(&env), "");
}

#[test]
fn ctrl_c_while_the_model_is_thinking_cancels_with_130() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_hang_before_head()]);
    let mut session = start(&env, &mock, &["anything"]);
    session.expect("waiting for the model", LIMIT);
    session.send("\x03");
    assert_eq!(session.wait(LIMIT), 130);
}

#[test]
fn ctrl_c_at_the_approval_prompt_answers_at_once_and_exits_130() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", json!({"command": "touch never.txt"}))]);
    let mut session = start(&env, &mock, &["make a file"]);
    session.expect("[n] no", LIMIT);
    // A key that is no answer is ignored (with a hint); the Ctrl-C alone ends the prompt and the run.
    session.send("x");
    session.expect("one key, no Enter", LIMIT);
    session.send("\x03");
    assert_eq!(session.wait(LIMIT), 130);
    assert!(!env.user_home().join("never.txt").exists());
    assert!(audit(&env).contains("CONFIRMED: no"), "{}", audit(&env));
}

#[test]
fn a_one_shot_answer_on_a_colour_terminal_is_rendered_as_markdown() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("Run **du -sh** in `logs`.\n\n- then sort\n")]);
    let mut vars: Vec<(&str, String)> =
        env.terminal_vars(&mock.base_url()).into_iter().filter(|(name, _)| *name != "NO_COLOR").collect();
    vars.push(("TERM", "xterm-256color".to_owned()));
    let mut session = PtySession::spawn(env!("CARGO_BIN_EXE_opsai"), &["how big"], &vars, env.user_home());
    assert_eq!(session.wait(LIMIT), 0);
    // The raw bytes hold the plain preview written while the block streamed, then its erasure and
    // the block rendered: bold for `**…**`, a bullet for `-`.
    let screen = session.screen();
    assert!(screen.contains("\x1b[1mdu -sh\x1b[0m"), "the answer was not rendered as Markdown:\n{screen}");
    assert!(screen.contains("•"), "{screen}");
}

/// Issue 21 §6: after `[e]` edit the model hears what ran, not what it sent, and the saved
/// conversation and the audit log keep the same.
#[test]
fn an_edited_command_is_what_the_model_the_history_and_the_audit_log_hear_ran() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "touch wrong.txt"})),
        reply_text("Made the file."),
    ]);
    let mut session = start(&env, &mock, &["make a marker"]).answer_cursor_queries();
    session.expect("[e] edit", LIMIT);
    // `[e]` opens the command pre-filled, the cursor at its end (issue 23).
    session.send("e");
    session.expect("Ctrl-C goes back", LIMIT);
    session.send(&"\x7f".repeat("wrong.txt".len()));
    session.send("right.txt\r");
    session.expect("[MEDIUM] touch right.txt", LIMIT);
    session.send("y");
    session.expect("Made the file.", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    assert!(env.user_home().join("right.txt").exists() && !env.user_home().join("wrong.txt").exists());
    let told = mock.chat_requests()[1].tool_result("c1").unwrap_or_default();
    assert!(
        told.contains("what follows is for `touch right.txt`, not for the command you sent: `touch wrong.txt`"),
        "{told}"
    );
    let stored = stored_messages(&env);
    assert!(stored.iter().any(|(role, content)| role == "tool" && content == &told), "{stored:?}");
    assert!(audit(&env).contains("CMD: \"touch right.txt\""), "{}", audit(&env));
}
