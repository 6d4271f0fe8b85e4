//! Issue 23, the approval prompt on a real terminal: one key answers a Medium command at once (no
//! Enter), High needs `yes` and Enter, `[e]` opens the command pre-filled in a line editor, the
//! command and its reasons are printed once, an `[a]` grant says so on the command it covers, and
//! the terminal's settings are as before after every way of answering.

use std::time::Duration;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::pty::PtySession;

const LIMIT: Duration = Duration::from_secs(30);

/// `opsai ARGS` on a fresh terminal between two `stty -g`; its exit code printed as `rc=N`.
const AROUND: &str = r#"stty -g > before.txt; "$OPSAI" ARGS; echo "rc=$?"; stty -g > after.txt; echo end"#;

fn on_terminal(env: &TestEnv, mock: &MockLlm, task: &str) -> PtySession {
    let mut vars = env.terminal_vars(&mock.base_url());
    vars.push(("OPSAI", env!("CARGO_BIN_EXE_opsai").to_owned()));
    let script = AROUND.replace("ARGS", &format!("'{task}'"));
    PtySession::spawn("/bin/sh", &["-c", &script], &vars, env.user_home()).answer_cursor_queries()
}

fn file(env: &TestEnv, name: &str) -> String {
    std::fs::read_to_string(env.user_home().join(name)).unwrap_or_default()
}

/// Waits for opsai to end; its exit code, after checking the terminal is as it was before.
fn ended_restored(env: &TestEnv, session: &mut PtySession) -> String {
    session.expect("end", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    let screen = session.screen();
    let before = file(env, "before.txt");
    assert!(!before.is_empty(), "{screen}");
    assert_eq!(file(env, "after.txt"), before, "the terminal settings are restored:\n{screen}");
    let rc = screen.split("rc=").nth(1).and_then(|rest| rest.split_whitespace().next()).unwrap_or("");
    rc.to_owned()
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

#[test]
fn one_key_answers_a_medium_prompt_at_once_and_the_call_is_printed_once() {
    // (key, runs, the audit's CONFIRMED, what is on screen after, the exit code)
    for (key, runs, confirmed, said, rc) in [
        ("y", true, "yes", "Done.", "0"),
        ("n", false, "no", "Done.", "0"),
        ("q", false, "no", "aborted: not run", "1"),
        ("\x04", false, "no", "Done.", "0"),
    ] {
        let env = TestEnv::new();
        let mock = MockLlm::start([
            reply_tool_call("c1", "run_command", json!({"command": "touch marker.txt", "why": "mark it"})),
            reply_text("Done."),
        ]);
        let mut session = on_terminal(&env, &mock, "make a marker");
        session.expect("[q] abort: ", LIMIT);
        // No Enter: the key alone answers.
        session.send(key);
        session.expect(said, LIMIT);
        assert_eq!(ended_restored(&env, &mut session), rc, "{key:?}");
        assert_eq!(env.user_home().join("marker.txt").exists(), runs, "{key:?}: {}", session.screen());
        assert!(audit(&env).contains(&format!("CONFIRMED: {confirmed}")), "{key:?}: {}", audit(&env));
        // Printed once: the badge and the reason appear once, in the prompt.
        let screen = session.screen();
        assert_eq!(screen.matches("[MEDIUM]").count(), 1, "{key:?}: {screen}");
        assert_eq!(screen.matches("why: mark it").count(), 1, "{key:?}: {screen}");
    }
}

#[test]
fn a_key_that_is_no_answer_gets_a_hint_and_enter_alone_decides_nothing() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "touch marker.txt"})),
        reply_text("Done."),
    ]);
    let mut session = on_terminal(&env, &mock, "make a marker");
    session.expect("[q] abort: ", LIMIT);
    session.send("x");
    session.expect("one key, no Enter", LIMIT);
    session.send("\r\x1b[A");
    assert!(!env.user_home().join("marker.txt").exists());
    assert_eq!(mock.chat_requests().len(), 1, "still waiting at the prompt");
    session.send("y");
    session.expect("Done.", LIMIT);
    assert_eq!(ended_restored(&env, &mut session), "0");
    assert!(env.user_home().join("marker.txt").exists());
    assert_eq!(session.screen().matches("one key, no Enter").count(), 1, "the hint is given once");
}

#[test]
fn high_is_not_approved_by_one_key_only_by_yes_and_enter() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.user_home().join("logs/old")).unwrap();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "rm -rf logs/old"})),
        reply_text("Deleted."),
    ]);
    let mut session = on_terminal(&env, &mock, "clean up");
    session.expect("Type yes and Enter to run it", LIMIT);
    session.send("y");
    // Echoed as typed, and nothing else: a `y` alone is not an answer here.
    session.expect("declines: y", LIMIT);
    assert!(env.user_home().join("logs/old").exists());
    assert_eq!(mock.chat_requests().len(), 1);
    session.send("es\r");
    session.expect("Deleted.", LIMIT);
    assert_eq!(ended_restored(&env, &mut session), "0");
    assert!(!env.user_home().join("logs/old").exists());
    assert!(audit(&env).contains("CMD: \"rm -rf logs/old\" | RISK: high | CONFIRMED: yes"), "{}", audit(&env));
}

#[test]
fn ctrl_c_at_a_one_key_prompt_stops_the_task_and_restores_the_terminal() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", json!({"command": "touch never.txt"}))]);
    let mut session = on_terminal(&env, &mock, "make a file");
    session.expect("[q] abort: ", LIMIT);
    session.send("\x03");
    assert_eq!(ended_restored(&env, &mut session), "130");
    assert!(!env.user_home().join("never.txt").exists());
    assert!(audit(&env).contains("CONFIRMED: no"), "{}", audit(&env));
}

#[test]
fn e_opens_the_command_pre_filled_and_the_edit_is_shown_again_before_it_runs() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "touch wrong.txt"})),
        reply_text("Made it."),
    ]);
    let mut session = on_terminal(&env, &mock, "make a marker");
    session.expect("[q] abort: ", LIMIT);
    // Ctrl-C in the editor goes back to the prompt, not out of the task.
    session.send("e");
    session.expect("Ctrl-C goes back", LIMIT);
    session.expect("touch wrong.txt", LIMIT);
    session.send("\x03");
    session.expect_count("[q] abort: ", 2, LIMIT);
    // Pre-filled, the cursor at the end: a suffix is typed straight on.
    session.send("e");
    session.expect_count("Ctrl-C goes back", 2, LIMIT);
    session.send(".bak\r");
    session.expect("[MEDIUM] touch wrong.txt.bak", LIMIT);
    assert!(!env.user_home().join("wrong.txt.bak").exists(), "nothing runs before the edited command is approved");
    session.send("y");
    session.expect("Made it.", LIMIT);
    assert_eq!(ended_restored(&env, &mut session), "0");
    assert!(env.user_home().join("wrong.txt.bak").exists());
    assert!(!env.user_home().join("wrong.txt").exists());
    assert!(audit(&env).contains("CMD: \"touch wrong.txt.bak\" | RISK: medium | CONFIRMED: yes"), "{}", audit(&env));
}

#[test]
fn an_a_grant_says_so_on_the_command_it_covers() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "mkdir -p d1/x"})),
        reply_tool_call("c2", "run_command", json!({"command": "mkdir -p d2/x"})),
        reply_text("Made both."),
    ]);
    let mut session = on_terminal(&env, &mock, "make dirs");
    session.expect("[a] always allow `mkdir -p` for this session", LIMIT);
    session.send("a");
    session.expect("Made both.", LIMIT);
    assert_eq!(ended_restored(&env, &mut session), "0");
    assert!(env.user_home().join("d1/x").is_dir() && env.user_home().join("d2/x").is_dir());
    let screen = session.screen();
    assert_eq!(screen.matches("[q] abort: ").count(), 1, "asked once: {screen}");
    let covered = screen.lines().find(|l| l.contains("mkdir -p d2/x")).unwrap_or_default();
    assert!(covered.contains("approved by your [a] for `mkdir -p`"), "{screen}");
    assert_eq!(screen.matches("[MEDIUM]  mkdir -p d2/x").count(), 1, "{screen}");
    assert_eq!(screen.matches("d2/x: creates the directory").count(), 1, "{screen}");
}

/// The pid of the opsai working in `dir` (each test has its own directory).
fn opsai_in(dir: &std::path::Path) -> i32 {
    let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_opsai")).unwrap();
    let dir = std::fs::canonicalize(dir).unwrap();
    let find = || {
        std::fs::read_dir("/proc").unwrap().filter_map(Result::ok).find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (exe == binary && cwd == dir).then_some(pid)
        })
    };
    let mut found = None;
    assert!(opsai::testing::wait_until(LIMIT, || {
        found = find();
        found.is_some()
    }));
    found.unwrap_or_default()
}

#[test]
fn sigterm_while_the_editor_is_open_refuses_at_once_and_restores_the_terminal() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", json!({"command": "touch never.txt"}))]);
    let mut session = on_terminal(&env, &mock, "make a file");
    session.expect("[q] abort: ", LIMIT);
    session.send("e");
    session.expect("Ctrl-C goes back", LIMIT);
    let started = std::time::Instant::now();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(opsai_in(env.user_home())), nix::sys::signal::Signal::SIGTERM)
        .unwrap();
    assert_eq!(ended_restored(&env, &mut session), "143");
    // Not after the 8 s grace: the editor gave up at once and the prompt answered as a Ctrl-C.
    assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
    assert!(!env.user_home().join("never.txt").exists());
    assert!(audit(&env).contains("CMD: \"touch never.txt\" | RISK: medium | CONFIRMED: no"), "{}", audit(&env));
}

/// stdin is not the terminal (opsai fed from elsewhere, the prompt on `/dev/tty`): answers stay
/// typed lines, as before issue 23.
#[test]
fn with_stdin_not_the_terminal_the_prompt_on_dev_tty_takes_a_typed_line() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "touch marker.txt"})),
        reply_text("Done."),
    ]);
    let mut session = on_terminal(&env, &mock, "make a marker' < '/dev/null");
    session.expect("[q] abort: ", LIMIT);
    // A `y` alone answers nothing here: taken back with Backspace, then `n` and Enter decline.
    session.send("y");
    session.expect("abort: y", LIMIT);
    session.send("\x7fn\r");
    session.expect("Done.", LIMIT);
    assert_eq!(ended_restored(&env, &mut session), "0");
    assert!(!env.user_home().join("marker.txt").exists(), "{}", session.screen());
    assert!(audit(&env).contains("CONFIRMED: no"), "{}", audit(&env));
}
