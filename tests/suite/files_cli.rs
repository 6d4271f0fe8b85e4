//! The file tools end to end (seed 004): read_file, edit_file and write_file through the real
//! binary against the mock LLM, `opsai undo`, refusals, a kill -9 in the middle of a large write,
//! and the REPL's diff-in-the-prompt and `/undo` in tmux.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::killed_rewrites::KilledRewrites;
use crate::support::mock_llm::*;
use crate::support::tmux::{Tmux, require};

const LIMIT: Duration = Duration::from_secs(30);

fn opsai(env: &TestEnv, mock: &MockLlm) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url()).env("OPSAI_NONINTERACTIVE", "1").timeout(Duration::from_secs(60));
    cmd
}

fn run(command: &str) -> Value {
    json!({"command": command, "why": "test"})
}

fn script(env: &TestEnv) -> PathBuf {
    let dir = env.user_home().join("test");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.sh");
    std::fs::write(&path, "echo 1\n").unwrap();
    std::fs::canonicalize(path).unwrap()
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

#[test]
fn seed_004_read_edit_verify_then_opsai_undo_restores() {
    let env = TestEnv::new();
    let path = script(&env);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("bash ~/test/a.sh")),
        reply_tool_call("c2", "read_file", json!({"path": "~/test/a.sh"})),
        reply_tool_call("c3", "edit_file", json!({"path": "~/test/a.sh", "search": "echo 1", "replace": "echo 2"})),
        reply_tool_call("c4", "run_command", run("bash ~/test/a.sh")),
        reply_text("a.sh printed 1; it now prints 2."),
    ]);
    opsai(&env, &mock)
        .args(["-y", "执行用户目录下的test目录下 a.sh,如果输出为1那修改脚本让它输出为2"])
        .assert()
        .success()
        // The diff is shown even though -y approved it.
        .stderr(predicates::str::contains("│ --- ~/test/a.sh"))
        .stderr(predicates::str::contains("│ -echo 1\n"))
        .stderr(predicates::str::contains("│ +echo 2\n"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 2\n");
    let last = &mock.chat_requests()[4];
    last.assert_tool_calls_answered();
    assert!(last.tool_result("c2").unwrap().contains("~/test/a.sh · lines 1-1 of 1\necho 1\n"));
    let edited = last.tool_result("c3").unwrap();
    assert!(edited.starts_with("edited ~/test/a.sh: 1 occurrence replaced"), "{edited}");
    assert!(edited.contains("-echo 1\n+echo 2"), "{edited}");
    assert!(last.tool_result("c4").unwrap().contains('2'));
    let log = audit(&env);
    assert!(log.contains("TOOL: file.read_file | CMD: \"read_file ~/test/a.sh\" | RISK: safe"), "{log}");
    assert!(
        log.contains("TOOL: file.edit_file | CMD: \"edit_file ~/test/a.sh\" | RISK: medium | CONFIRMED: auto"),
        "{log}"
    );

    // The run was conversation c1 (its SESSION in the audit log); `1` names it too.
    assert!(log.contains("SESSION: c1 |"), "{log}");
    assert!(std::fs::read_dir(env.opsai_home().join("backups/c1")).is_ok(), "backups are kept under c1");
    let out = env.cmd().args(["undo", "--session", "1"]).assert().success().get_output().stdout.clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.starts_with(&format!("restored {} (changed at ", path.display())), "{out}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 1\n");
    let ran = std::process::Command::new("bash").arg(&path).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "1\n");
    let again = env.cmd().args(["undo", "--session", "c1"]).assert().code(1).get_output().stderr.clone();
    assert!(String::from_utf8_lossy(&again).contains("nothing to undo in session c1"));
}

#[test]
fn a_write_without_a_terminal_is_refused_and_the_run_exits_3() {
    let env = TestEnv::new();
    let path = script(&env);
    let mock = MockLlm::start([
        reply_tool_call("c1", "write_file", json!({"path": "test/a.sh", "content": "echo 2\n"})),
        reply_text("I could not change it."),
    ]);
    opsai(&env, &mock).arg("make a.sh print 2").assert().code(3);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 1\n");
    assert_eq!(
        mock.chat_requests()[1].tool_result("c1").as_deref(),
        Some("refused: medium requires confirmation in a terminal")
    );
    assert!(
        audit(&env).contains("TOOL: file.write_file | CMD: \"write_file ~/test/a.sh\" | RISK: medium | CONFIRMED: no")
    );
    env.cmd().arg("undo").assert().code(1);
}

#[test]
fn a_symlink_out_of_the_home_is_refused_even_with_yes() {
    let env = TestEnv::new();
    std::os::unix::fs::symlink("/etc", env.user_home().join("conf")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), env.user_home().join("elsewhere")).unwrap();
    let mock = MockLlm::start([
        reply_tool_call("c1", "write_file", json!({"path": "~/conf/opsai-test.conf", "content": "x"})),
        reply_tool_call("c2", "write_file", json!({"path": "elsewhere/notes.txt", "content": "x"})),
        reply_text("Both were refused."),
    ]);
    opsai(&env, &mock).args(["-y", "write two files"]).assert().success();
    let last = &mock.chat_requests()[2];
    let first = last.tool_result("c1").unwrap();
    assert!(first.starts_with("refused: /etc/opsai-test.conf is under /etc"), "{first}");
    let second = last.tool_result("c2").unwrap();
    assert!(second.contains("is outside the directories the file tools may change"), "{second}");
    assert!(!outside.path().join("notes.txt").exists());
    assert!(!Path::new("/etc/opsai-test.conf").exists());
}

/// Names in `dir` other than `keep`: what a killed write left behind.
fn leftovers(dir: &Path, keep: &str) -> Vec<String> {
    TestEnv::entries(dir).into_iter().filter(|name| name != keep).collect()
}

/// Starts `opsai -y` writing `content` to `~/data/big.txt`, with no terminal.
fn spawn_big_write(env: &TestEnv, mock: &MockLlm) -> std::process::Child {
    env.std_cmd()
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .args(["-y", "-q", "write the big file"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until `done()` or the limit; the time it took. Polls every 0.5 ms, finer than
/// `opsai::testing::wait_until`: the kills below aim at moments a few milliseconds apart.
fn wait_until(limit: Duration, done: impl Fn() -> bool) -> Duration {
    let started = Instant::now();
    while !done() && started.elapsed() < limit {
        std::thread::sleep(Duration::from_micros(500));
    }
    started.elapsed()
}

#[test]
fn kill_9_during_a_large_write_leaves_the_old_or_the_new_file_never_a_mix() {
    let env = TestEnv::new();
    let dir = std::fs::canonicalize(env.user_home()).unwrap().join("data");
    std::fs::create_dir(&dir).unwrap();
    let path = dir.join("big.txt");
    let mut rewrites = KilledRewrites::of_big_files();
    for round in 0..16u32 {
        std::fs::write(&path, &rewrites.old).unwrap();
        let mock = MockLlm::start([
            reply_tool_call("c1", "write_file", json!({"path": "data/big.txt", "content": rewrites.new})),
            reply_text("written"),
        ]);
        let mut child = spawn_big_write(&env, &mock);
        wait_until(LIMIT, || !mock.requests().is_empty());
        if round < 6 {
            // Anywhere from the request on: mostly while the model's reply is being read.
            std::thread::sleep(Duration::from_millis(u64::from(round) * 150));
        } else {
            // Aimed at the write itself: once the temp file exists, 0–18 ms later (it takes ~10 ms).
            // (Its own temp file: one left by an earlier killed round does not count.)
            let own = format!(".big.txt.opsai-{}-", child.id());
            wait_until(LIMIT, || TestEnv::entries(&dir).iter().any(|name| name.starts_with(&own)));
            std::thread::sleep(Duration::from_millis(u64::from(round - 6) * 2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        rewrites.check(round, &path);
        // Only a temp file of the killed process may remain; the next write of the file removes it.
        for name in leftovers(&dir, "big.txt") {
            assert!(name.starts_with(".big.txt.opsai-") && name.ends_with(".tmp"), "round {round}: {name}");
        }
    }
    rewrites.report();
    std::fs::write(&path, &rewrites.old).unwrap();
    let mock = MockLlm::start([
        reply_tool_call("c1", "write_file", json!({"path": "data/big.txt", "content": rewrites.new})),
        reply_text("written"),
    ]);
    opsai(&env, &mock).args(["-y", "write the big file"]).assert().success();
    assert!(std::fs::read(&path).unwrap() == rewrites.new.as_bytes());
    assert_eq!(leftovers(&dir, "big.txt"), Vec::<String>::new(), "a completed write cleans up after killed ones");
}

/// The REPL on a tmux terminal, once it shows its prompt.
fn repl(env: &TestEnv, mock: &MockLlm) -> Tmux {
    let term = Tmux::start(env!("CARGO_BIN_EXE_opsai"), &[], &env.terminal_vars(&mock.base_url()), env.user_home());
    term.wait_for("Agent > ", LIMIT);
    term
}

/// Waits until the approval prompt has been shown `n` times; the screen.
fn wait_for_prompt(term: &Tmux, n: usize) -> String {
    term.wait_until(LIMIT, &format!("approval prompt #{n}"), |screen| screen.matches("[y] run once").count() >= n)
}

#[test]
fn seed_004_in_the_repl_run_read_edit_with_the_diff_run_again_then_opsai_undo() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let path = script(&env);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("bash ~/test/a.sh")),
        reply_tool_call("c2", "read_file", json!({"path": "~/test/a.sh"})),
        reply_tool_call("c3", "edit_file", json!({"path": "~/test/a.sh", "search": "echo 1", "replace": "echo 2"})),
        reply_tool_call("c4", "run_command", run("bash ~/test/a.sh")),
        reply_text("a.sh printed 1; it now prints 2."),
    ]);
    let term = repl(&env, &mock);
    term.line("执行用户目录下的test目录下 a.sh,如果输出为1那修改脚本让它输出为2");
    let screen = wait_for_prompt(&term, 1);
    assert!(screen.contains("bash ~/test/a.sh"), "{screen}");
    term.type_text("y");
    // The read is Safe (no prompt); the edit shows its diff in the prompt.
    let screen = wait_for_prompt(&term, 2);
    assert!(screen.contains("[MEDIUM] edit_file ~/test/a.sh"), "{screen}");
    assert!(screen.contains("    -echo 1") && screen.contains("    +echo 2"), "{screen}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 1\n", "nothing written before the answer");
    term.type_text("y");
    wait_for_prompt(&term, 3);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 2\n");
    term.type_text("y");
    term.wait_for("it now prints 2.", LIMIT);
    let last = &mock.chat_requests()[4];
    last.assert_tool_calls_answered();
    assert!(last.tool_result("c1").unwrap().contains('1'), "the first run printed 1");
    assert!(last.tool_result("c2").unwrap().contains("echo 1"));
    assert!(last.tool_result("c3").unwrap().starts_with("edited ~/test/a.sh: 1 occurrence replaced"));
    let second = last.tool_result("c4").unwrap();
    assert!(second.contains('2') && !second.contains("\n1\n"), "the second run printed 2: {second}");
    term.line("exit");
    assert_eq!(term.wait_exit(LIMIT), 0);
    // The CLI undoes the REPL's change.
    let out = env.cmd().arg("undo").assert().success().get_output().stdout.clone();
    assert!(String::from_utf8_lossy(&out).starts_with(&format!("restored {} (changed at ", path.display())));
    let ran = std::process::Command::new("bash").arg(&path).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "1\n");
}

#[test]
fn the_repl_shows_the_diff_in_the_prompt_and_undo_restores() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let path = script(&env);
    let mock = MockLlm::start([
        reply_tool_call("c1", "edit_file", json!({"path": "test/a.sh", "search": "echo 1", "replace": "echo 2"})),
        reply_text("Changed it."),
    ]);
    let term = repl(&env, &mock);
    term.line("make a.sh print 2");
    let screen = term.wait_for("[y] run once", LIMIT);
    assert!(screen.contains("[MEDIUM] edit_file ~/test/a.sh"), "{screen}");
    assert!(
        screen.contains("    --- ~/test/a.sh") && screen.contains("    -echo 1") && screen.contains("    +echo 2"),
        "{screen}"
    );
    term.type_text("y");
    term.wait_for("Changed it.", LIMIT);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 2\n");
    term.line("/undo");
    let screen = term.wait_for("restored ", LIMIT);
    assert!(screen.contains(&format!("restored {} (changed at", path.display())), "{screen}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 1\n");
    term.line("/undo");
    term.wait_for("nothing to undo in session", LIMIT);
    term.line("exit");
    assert_eq!(term.wait_exit(LIMIT), 0);
}
