//! The whole Ctrl-G path with nothing faked but the model: `opsai init <shell>` sourced in real
//! zsh, bash and fish (tmux), the real `opsai widget`, and the mock LLM on 127.0.0.1.

use opsai::testing::wait_until;
use rstest::rstest;
use serde_json::json;

use super::harness::{Setup, Sh, ShellTerm};
use crate::support::TestEnv;
use crate::support::mock_llm::*;

/// Sources the real `opsai init` script, with the widget pointed at `mock` and a private home.
fn start(sh: Sh, env: &TestEnv, mock: &MockLlm) -> Option<ShellTerm> {
    let out = env.cmd().args(["init", sh.name()]).output().unwrap();
    assert!(out.status.success());
    let setup = Setup {
        script: Some(String::from_utf8(out.stdout).unwrap()),
        env: vec![
            ("OPSAI_HOME", env.opsai_home().display().to_string()),
            ("OPSAI_BASE_URL", mock.base_url()),
            ("NO_COLOR", "1".to_owned()),
        ],
        ..Setup::default()
    };
    ShellTerm::start(sh, setup)
}

#[rstest]
#[case::zsh(Sh::Zsh)]
#[case::bash(Sh::Bash)]
#[case::fish(Sh::Fish)]
fn ctrl_g_turns_intent_into_the_model_s_command_and_runs_nothing(#[case] sh: Sh) {
    let env = TestEnv::new();
    let command = "find . -name '*.log' -size +100M";
    let mock = MockLlm::start([reply_tool_call("p1", "propose_command", json!({"command": command}))]);
    let Some(shell) = start(sh, &env, &mock) else { return };
    shell.mark();
    shell.term.type_text("find big log files");
    shell.term.press(&["C-g"]);
    let screen = shell.wait_line(command);
    shell.assert_clean(&screen, 2);
    let (buffer, cursor) = shell.dump();
    assert_eq!(buffer, command);
    assert_eq!(cursor, command.chars().count());
    let request = &mock.chat_requests()[0];
    let text = request.messages().iter().map(|m| m["content"].as_str().unwrap_or("").to_owned()).collect::<String>();
    assert!(text.contains("find big log files"), "{text}");
}

#[rstest]
#[case::zsh(Sh::Zsh)]
#[case::bash(Sh::Bash)]
#[case::fish(Sh::Fish)]
fn a_model_failure_keeps_the_line_and_shows_one_message(#[case] sh: Sh) {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_status(400, r#"{"error":{"message":"model not found"}}"#)]);
    let Some(shell) = start(sh, &env, &mock) else { return };
    shell.mark();
    shell.term.type_text("restart nginx");
    shell.term.press(&["C-g"]);
    let screen = shell.wait_line_and("restart nginx", "does not know the model");
    assert_eq!(screen.matches("does not know the model").count(), 1, "one message line:\n{screen}");
    let (buffer, _) = shell.dump();
    assert_eq!(buffer, "restart nginx");
}

#[rstest]
#[case::zsh(Sh::Zsh)]
#[case::bash(Sh::Bash)]
#[case::fish(Sh::Fish)]
fn ctrl_c_while_the_model_thinks_gives_the_line_back(#[case] sh: Sh) {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_hang_before_head()]);
    let Some(shell) = start(sh, &env, &mock) else { return };
    shell.mark();
    shell.term.type_text("list pods");
    shell.term.press(&["Left", "Left"]);
    shell.term.press(&["C-g"]);
    // The request has arrived: opsai is waiting for the model, with its spinner up.
    let asked = wait_until(super::harness::LIMIT, || !mock.chat_requests().is_empty());
    assert!(asked, "no request; the screen was:\n{}", shell.term.screen());
    shell.term.press(&["C-c"]);
    let screen = shell.wait_line("list pods");
    shell.assert_clean(&screen, 2);
    for frame in ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] {
        assert!(!screen.contains(frame), "a spinner frame was left:\n{screen}");
    }
    let (buffer, cursor) = shell.dump();
    assert_eq!((buffer.as_str(), cursor), ("list pods", 7));
}

#[rstest]
#[case::zsh(Sh::Zsh)]
#[case::bash(Sh::Bash)]
#[case::fish(Sh::Fish)]
fn an_empty_line_after_a_failure_asks_for_a_fix_and_a_risky_fix_warns(#[case] sh: Sh) {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("p1", "propose_command", json!({"command": "rm -rf ./build"}))]);
    let Some(shell) = start(sh, &env, &mock) else { return };
    shell.run("ls /definitely-not-here-opsai", 2);
    shell.term.press(&["C-g"]);
    let screen = shell.wait_line_and("rm -rf ./build", "⚠ high");
    assert_eq!(screen.matches("⚠ high").count(), 1, "{screen}");
    let request = &mock.chat_requests()[0];
    let text = request.messages().iter().map(|m| m["content"].as_str().unwrap_or("").to_owned()).collect::<String>();
    assert!(text.contains("ls /definitely-not-here-opsai"), "the failed command is sent: {text}");
    assert!(text.contains('2'), "with its status: {text}");
    assert!(!env.user_home().join("build").exists());
}
