//! `opsai widget` through the real binary: the shell's contract (stdout is exactly the new buffer,
//! or one message line; 130 when cancelled), what the model is sent (and never sent), the probe
//! rules (with `llm.tool_mode` native: the widget's default asks for the command as text), and the terminal side (spinner, warning, Ctrl-C, termios) on a real pseudo-terminal.
//!
//! Runs without a terminal use `setsid` (when installed), so the child has no `/dev/tty` even when
//! the tests themselves run in one: no spinner or raw mode may touch the developer's terminal.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::pty::PtySession;

const LIMIT: Duration = Duration::from_secs(30);

/// `opsai widget` for zsh 5.9 against `mock`, with no controlling terminal.
pub(crate) fn widget(env: &TestEnv, mock: &MockLlm) -> assert_cmd::Command {
    let mut cmd = detached(env);
    cmd.env("OPSAI_BASE_URL", mock.base_url()).env("OPSAI_SHELL", "zsh").env("OPSAI_SHELL_VERSION", "5.9");
    cmd
}

/// `opsai widget` as `TestEnv::cmd` sets it up (clean environment, private homes), run through
/// `setsid -w` so it has no controlling terminal.
pub(crate) fn detached(env: &TestEnv) -> assert_cmd::Command {
    const SETSID: &str = "/usr/bin/setsid";
    let opsai = env!("CARGO_BIN_EXE_opsai");
    let mut cmd = if Path::new(SETSID).exists() {
        let mut cmd = std::process::Command::new(SETSID);
        cmd.args(["-w", opsai]);
        cmd
    } else {
        std::process::Command::new(opsai)
    };
    cmd.arg("widget").env_clear();
    for name in ["PATH", "TMPDIR", "LANG", "LC_ALL", "RUST_BACKTRACE", "LLVM_PROFILE_FILE"] {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.env("OPSAI_HOME", env.opsai_home()).env("HOME", env.user_home()).env("NO_COLOR", "1");
    cmd.current_dir(env.user_home());
    assert_cmd::Command::from_std(cmd)
}

pub(crate) struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub(crate) fn run(cmd: &mut assert_cmd::Command) -> Run {
    let output = cmd.timeout(LIMIT).output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

pub(crate) fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

pub(crate) fn propose(id: &str, command: &str) -> Reply {
    reply_tool_call(id, "propose_command", json!({"command": command, "explanation": "test"}))
}

fn probe(id: &str, command: &str) -> Reply {
    reply_tool_call(id, "run_command", json!({"command": command, "why": "look"}))
}

pub(crate) fn system_prompt(request: &RecordedRequest) -> String {
    request.messages()[0]["content"].as_str().unwrap().to_owned()
}

/// The line sent: the last user message. Any before it is a worked example (text calls), answered
/// by a command in a ```sh block right after it.
fn user_message(request: &RecordedRequest) -> String {
    let messages = request.messages();
    let user: Vec<usize> = (0..messages.len()).filter(|&i| messages[i]["role"] == "user").collect();
    let (&last, examples) = user.split_last().unwrap_or_else(|| panic!("no user message: {messages:#?}"));
    for &i in examples {
        let answer = messages[i + 1]["content"].as_str().unwrap_or_default();
        assert!(messages[i + 1]["role"] == "assistant" && answer.starts_with("```sh\n"), "{messages:#?}");
    }
    messages[last]["content"].as_str().unwrap().to_owned()
}

/// The contract: exit 0, stdout exactly the command, nothing on stderr, no escape bytes.
pub(crate) fn assert_replaced(run: &Run, command: &str) {
    assert_eq!(run.code, 0, "stdout {:?}, stderr {:?}", run.stdout, run.stderr);
    assert_eq!(run.stdout, command);
    assert_eq!(run.stderr, "");
}

/// The contract on failure: one message line, the given exit code, nothing on stderr.
pub(crate) fn assert_message(run: &Run, code: i32) -> String {
    assert_eq!(run.code, code, "stdout {:?}, stderr {:?}", run.stdout, run.stderr);
    assert_eq!(run.stdout.trim_end_matches('\n').lines().count(), 1, "{:?}", run.stdout);
    assert!(!run.stdout.contains('\x1b'), "{:?}", run.stdout);
    assert_eq!(run.stderr, "");
    run.stdout.trim_end().to_owned()
}

#[test]
fn plain_intent_from_the_environment_becomes_exactly_the_proposed_command() {
    let env = TestEnv::new();
    let mock = MockLlm::start([propose("c1", "ls -lS")]);
    let result = run(widget(&env, &mock).env("OPSAI_BUFFER", "list files by size").env("OPSAI_CURSOR", "18"));
    assert_replaced(&result, "ls -lS");
    let request = &mock.chat_requests()[0];
    assert_eq!(user_message(request), "list files by size");
    // `llm.tool_mode` auto: the widget asks for the command itself (issue 22); probes need `native`.
    assert!(request.json().get("tools").is_none(), "{}", request.json());
    let system = system_prompt(request);
    assert!(
        system.contains("opsai's shell widget")
            && system.contains("Reply with the command line alone in a ```sh block.")
    );
    assert!(system.contains("Shell: zsh 5.9"), "{system}");
    assert!(!system.contains("Cursor:"), "a cursor at the end needs no note: {system}");
    let log = audit(&env);
    assert!(
        log.contains(
            "INPUT: \"list files by size\" | TOOL: widget.propose_command | CMD: \"ls -lS\" | RISK: safe | \
             CONFIRMED: proposed | EXIT: -"
        ),
        "{log}"
    );
}

#[test]
fn flags_work_by_hand_and_the_model_flag_is_respected() {
    let env = TestEnv::new();
    let mock = MockLlm::start([propose("c1", "df -h")]);
    let mut cmd = widget(&env, &mock);
    cmd.args(["--shell", "bash", "--buffer", "disk space", "--cursor", "2", "--status", "0"])
        .args(["--shell-version", "5.2", "--model", "tiny-model"]);
    assert_replaced(&run(&mut cmd), "df -h");
    let request = &mock.chat_requests()[0];
    assert_eq!(request.json()["model"], "tiny-model");
    let system = system_prompt(request);
    assert!(system.contains("Shell: bash 5.2"), "{system}");
    assert!(system.contains("- Cursor: at character 2 of 10"), "{system}");
    assert!(system.contains("- Exit status of the last command: 0"), "{system}");
}

#[test]
fn a_half_written_command_with_an_intent_comment_is_completed() {
    let env = TestEnv::new();
    let buffer = "tar -czf logs.tgz # only the .log files in logs/";
    let mock = MockLlm::start([propose("c1", "tar -czf logs.tgz logs/*.log")]);
    let result = run(widget(&env, &mock).env("OPSAI_BUFFER", buffer).env("OPSAI_CURSOR", "9"));
    assert_replaced(&result, "tar -czf logs.tgz logs/*.log");
    let request = &mock.chat_requests()[0];
    assert_eq!(user_message(request), buffer);
    assert!(system_prompt(request).contains("- Cursor: at character 9 of 48"), "{}", system_prompt(request));
}

#[test]
fn an_empty_line_after_a_failed_command_asks_for_a_corrected_last_command() {
    let env = TestEnv::new();
    let mock = MockLlm::start([propose("c1", "git push origin main")]);
    let result = run(widget(&env, &mock)
        .env("OPSAI_BUFFER", "")
        .env("OPSAI_LAST_STATUS", "127")
        .write_stdin("\t git status\n\t gti push origin main\n"));
    assert_replaced(&result, "git push origin main");
    let message = user_message(&mock.chat_requests()[0]);
    assert!(message.contains("exit status 127"), "{message}");
    assert!(message.ends_with("\ngti push origin main"), "{message}");
    let system = system_prompt(&mock.chat_requests()[0]);
    assert!(system.contains("oldest first:\n  git status\n  gti push origin main\n"), "{system}");
}

#[test]
fn an_empty_line_after_success_is_a_hint_without_any_request() {
    let env = TestEnv::new();
    let mock = MockLlm::start([]);
    let result = run(widget(&env, &mock).env("OPSAI_LAST_STATUS", "0").write_stdin("\t ls\n"));
    let message = assert_message(&result, 1);
    assert!(message.starts_with("opsai: type a request"), "{message}");
    assert!(mock.requests().is_empty());
}

#[test]
fn a_fenced_block_or_a_single_line_answer_is_taken_as_the_proposal() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("```bash\nfind . -name '*.log' -mtime +7\n```")]);
    assert_replaced(&run(widget(&env, &mock).env("OPSAI_BUFFER", "old logs")), "find . -name '*.log' -mtime +7");
    let mock = MockLlm::start([reply_text("du -sh * | sort -h")]);
    assert_replaced(&run(widget(&env, &mock).env("OPSAI_BUFFER", "sizes")), "du -sh * | sort -h");
    let mock = MockLlm::start([reply_text("```\nfor f in *.txt; do\n  wc -l \"$f\"\ndone\n```")]);
    let result = run(widget(&env, &mock).env("OPSAI_BUFFER", "count lines per file"));
    assert_replaced(&result, "for f in *.txt; do\n  wc -l \"$f\"\ndone");
    assert_eq!(audit(&env).matches("CONFIRMED: proposed").count(), 3, "{}", audit(&env));
}

#[test]
fn a_prose_answer_is_one_message_line_with_exit_1() {
    let env = TestEnv::new();
    let prose = "I need to know which directory you mean.\nTell me and press Ctrl-G again.";
    let mock = MockLlm::start([reply_text(prose), reply_text(prose)]);
    let result = run(widget(&env, &mock).env("OPSAI_BUFFER", "clean it up"));
    assert_eq!(assert_message(&result, 1), "opsai: I need to know which directory you mean.");
    assert!(!audit(&env).contains("widget.propose_command"));
    // Prose gets one more chance to be a command, told what the answer must be.
    let second = &mock.chat_requests()[1];
    let asked = second.messages().last().and_then(|m| m["content"].as_str().map(str::to_owned)).unwrap_or_default();
    assert!(asked.starts_with("Reply with the command line alone in a ```sh block"), "{asked}");
}

#[test]
fn a_model_error_is_one_message_line() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_status(400, "bad request: the model is confused\nsecond line")]);
    let started = Instant::now();
    let result = run(widget(&env, &mock).env("OPSAI_BUFFER", "anything"));
    let message = assert_message(&result, 1);
    assert!(message.starts_with("opsai: ") && message.contains("400"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let log = std::fs::read_to_string(env.opsai_home().join("widget.log")).unwrap();
    assert!(log.contains(": failed with 1: opsai: "), "{log}");
}

#[test]
fn an_unreachable_endpoint_is_one_message_line() {
    let env = TestEnv::new();
    let mut cmd = detached(&env);
    cmd.env("OPSAI_BASE_URL", "http://127.0.0.1:9/v1").env("OPSAI_BUFFER", "anything");
    let result = run(&mut cmd);
    assert!(assert_message(&result, 1).contains("cannot connect"), "{}", result.stdout);
}

#[test]
fn a_safe_probe_runs_and_its_output_goes_back_to_the_model() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"tool_mode": "native"}}"#);
    std::fs::write(env.user_home().join("marker-7f3a.txt"), "x").unwrap();
    let mock = MockLlm::start([probe("p1", "ls"), propose("c1", "cat marker-7f3a.txt")]);
    let result = run(widget(&env, &mock).env("OPSAI_BUFFER", "show the marker file"));
    assert_replaced(&result, "cat marker-7f3a.txt");
    let second = &mock.chat_requests()[1];
    assert!(second.tool_result("p1").unwrap().contains("marker-7f3a.txt"), "{:?}", second.tool_result("p1"));
    second.assert_tool_calls_answered();
    assert!(audit(&env).contains("CMD: \"ls\" | RISK: safe | CONFIRMED: auto | EXIT: 0"), "{}", audit(&env));
}

#[test]
fn a_medium_probe_is_refused_and_nothing_runs() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"tool_mode": "native"}}"#);
    let mock = MockLlm::start([probe("p1", "touch created-by-probe.txt"), propose("c1", "touch notes.txt")]);
    let result = run(widget(&env, &mock).env("OPSAI_BUFFER", "make a notes file"));
    assert_replaced(&result, "touch notes.txt");
    assert!(!env.user_home().join("created-by-probe.txt").exists());
    let observation = mock.chat_requests()[1].tool_result("p1").unwrap();
    assert!(observation.contains("refused") && observation.contains("propose_command"), "{observation}");
    assert!(audit(&env).contains("RISK: medium | CONFIRMED: no"), "{}", audit(&env));
}

#[test]
fn the_fourth_probe_is_refused() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"tool_mode": "native"}}"#);
    let mock = MockLlm::start([
        probe("p1", "pwd"),
        probe("p2", "ls"),
        probe("p3", "whoami"),
        probe("p4", "echo fourth-probe-ran"),
        propose("c1", "ls -la"),
    ]);
    let result = run(widget(&env, &mock).env("OPSAI_BUFFER", "look around"));
    assert_replaced(&result, "ls -la");
    let last = &mock.chat_requests()[4];
    assert_eq!(last.tool_result("p3").map(|r| r.contains("refused")), Some(false));
    let fourth = last.tool_result("p4").unwrap();
    assert!(fourth.contains("limit of 3 probes") && !fourth.contains("fourth-probe-ran"), "{fourth}");
    assert_eq!(audit(&env).matches("CONFIRMED: auto").count(), 3, "{}", audit(&env));
}

#[test]
fn secrets_in_the_line_history_and_environment_are_never_sent() {
    let env = TestEnv::new();
    let mock = MockLlm::start([propose("c1", "aws s3 ls")]);
    let history = "\t psql postgres://admin:hunter2hunter2@db.internal/app\n\t echo k9-learned-secret-value\n";
    let result = run(widget(&env, &mock)
        .env("OPSAI_BUFFER", "list buckets with key AKIAIOSFODNN7EXAMPLE")
        .env("MY_API_KEY", "k9-learned-secret-value")
        .env("OPSAI_CANARY_SETTING", "canary-value-5521")
        .env("VIRTUAL_ENV", "/srv/venv")
        .env("AWS_PROFILE", "staging")
        .write_stdin(history));
    assert_replaced(&result, "aws s3 ls");
    for secret in ["AKIAIOSFODNN7EXAMPLE", "hunter2hunter2", "k9-learned-secret-value", "canary-value-5521"] {
        mock.assert_never_sent(secret);
    }
    mock.assert_never_sent("OPSAI_CANARY_SETTING");
    mock.assert_never_sent("MY_API_KEY=");
    let system = system_prompt(&mock.chat_requests()[0]);
    assert!(system.contains("VIRTUAL_ENV=/srv/venv") && system.contains("AWS_PROFILE=staging"), "{system}");
    assert!(system.contains("psql postgres://"), "the history is sent, redacted: {system}");
    assert!(!audit(&env).contains("AKIAIOSFODNN7EXAMPLE"), "{}", audit(&env));
}

#[test]
fn no_history_is_sent_when_it_is_switched_off() {
    let env = TestEnv::new();
    let mock = MockLlm::start([propose("c1", "ls")]);
    let result = run(widget(&env, &mock)
        .env("OPSAI_BUFFER", "list")
        .env("OPSAI_NO_HISTORY", "1")
        .write_stdin("\t cat private-history-line-331\n"));
    assert_replaced(&result, "ls");
    mock.assert_never_sent("private-history-line-331");
    assert!(!system_prompt(&mock.chat_requests()[0]).contains("history"));
    // With nothing to fix from, an empty line after a failure is a hint.
    let idle = MockLlm::start([]);
    let result = run(widget(&env, &idle)
        .env("OPSAI_LAST_STATUS", "1")
        .env("OPSAI_NO_HISTORY", "1")
        .write_stdin("\t gti status\n"));
    assert!(assert_message(&result, 1).contains("OPSAI_NO_HISTORY"), "{}", result.stdout);
    assert!(idle.requests().is_empty());
}

#[test]
fn a_proposal_the_users_policy_denies_is_refused_with_exit_3() {
    let env = TestEnv::new();
    env.write_config(r#"{"safety": {"deny": [{"pattern": "shutdown", "reason": "not from a prompt"}]}}"#);
    let mock = MockLlm::start([propose("c1", "shutdown -h now")]);
    let result = run(widget(&env, &mock).env("OPSAI_BUFFER", "turn it off"));
    assert!(assert_message(&result, 3).contains("denies"), "{}", result.stdout);
    assert!(audit(&env).contains("CMD: \"shutdown -h now\" | RISK: high | CONFIRMED: no"), "{}", audit(&env));
}

// ---- On a terminal ----------------------------------------------------------------------------

/// Runs `script` with `sh` on a fresh pseudo-terminal, `opsai` on its PATH as `$OPSAI`.
fn on_terminal(env: &TestEnv, mock: &MockLlm, script: &str, extra: &[(&str, &str)]) -> PtySession {
    let mut vars = vec![
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPSAI_HOME", env.opsai_home().display().to_string()),
        ("HOME", env.user_home().display().to_string()),
        ("OPSAI_BASE_URL", mock.base_url()),
        ("OPSAI", env!("CARGO_BIN_EXE_opsai").to_owned()),
        ("OPSAI_SHELL", "zsh".to_owned()),
    ];
    vars.extend(extra.iter().map(|(key, value)| (*key, (*value).to_owned())));
    PtySession::spawn("/bin/sh", &["-c", script], &vars, env.user_home())
}

fn read(env: &TestEnv, name: &str) -> String {
    std::fs::read_to_string(env.user_home().join(name)).unwrap_or_default()
}

#[test]
fn a_high_proposal_warns_on_the_terminal_and_is_still_the_buffer() {
    let env = TestEnv::new();
    let mock = MockLlm::start([propose("c1", "rm -rf build")]);
    let script = r#""$OPSAI" widget > out.txt 2> err.txt; echo "rc=$?""#;
    let mut session = on_terminal(&env, &mock, script, &[("OPSAI_BUFFER", "remove the build dir")]);
    session.expect("rc=0", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    assert!(session.screen().contains("⚠ high: recursive delete"), "{:?}", session.screen());
    assert_eq!(read(&env, "out.txt"), "rm -rf build");
    assert_eq!(read(&env, "err.txt"), "");
    assert!(audit(&env).contains("CMD: \"rm -rf build\" | RISK: high | CONFIRMED: proposed"), "{}", audit(&env));
}

#[test]
fn the_spinner_is_drawn_in_place_and_erased_and_never_reaches_stdout() {
    let env = TestEnv::new();
    let mock = MockLlm::start([probe("p1", "pwd"), propose("c1", "ls")]);
    let script = r#""$OPSAI" widget > out.txt 2> err.txt; echo "rc=$?""#;
    let mut session = on_terminal(&env, &mock, script, &[("OPSAI_BUFFER", "list")]);
    session.expect("rc=0", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    let screen = session.screen();
    assert!(screen.contains("\x1b7\x1b[K⠋ opsai\x1b8"), "{screen:?}");
    assert!(screen.contains(" pwd\x1b8"), "the probe is the spinner's text: {screen:?}");
    let before_rc = &screen[..screen.find("rc=0").unwrap()];
    assert!(before_rc.ends_with("\x1b7\x1b[K\x1b8"), "erased before exit: {screen:?}");
    assert_eq!(read(&env, "out.txt"), "ls");
    assert_eq!(read(&env, "err.txt"), "");
}

#[test]
fn ctrl_c_while_the_model_thinks_exits_130_and_restores_the_terminal() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_hang_before_head()]);
    let script = r#"stty -g > before.txt; "$OPSAI" widget > out.txt 2> err.txt; echo "rc=$?"; stty -g > after.txt"#;
    let mut session = on_terminal(&env, &mock, script, &[("OPSAI_BUFFER", "anything")]);
    session.expect("opsai\x1b8", LIMIT);
    let started = Instant::now();
    session.send("\x03");
    session.expect("rc=130", LIMIT);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(session.wait(LIMIT), 0);
    assert_eq!(read(&env, "out.txt"), "");
    assert_eq!(read(&env, "err.txt"), "");
    let before = read(&env, "before.txt");
    assert!(!before.is_empty());
    assert_eq!(read(&env, "after.txt"), before, "the terminal modes are restored");
    // Read as a key in raw mode, not delivered as SIGINT.
    let log = std::fs::read_to_string(env.opsai_home().join("widget.log")).unwrap();
    assert!(log.contains("cancelled by a key"), "{log}");
    assert!(session.screen().ends_with("\x1b7\x1b[K\x1b8rc=130\r\n"), "{:?}", session.screen());
}

#[test]
fn a_lone_esc_cancels_too() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_hang_before_head()]);
    let script = r#""$OPSAI" widget > out.txt; echo "rc=$?""#;
    let mut session = on_terminal(&env, &mock, script, &[("OPSAI_BUFFER", "anything")]);
    session.expect("opsai\x1b8", LIMIT);
    // An arrow key is not a cancel; Esc alone is.
    session.send("\x1b[A");
    // Nothing signals "not cancelled": give a wrong cancel the time to show itself.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!session.screen().contains("rc="), "{:?}", session.screen());
    session.send("\x1b");
    session.expect("rc=130", LIMIT);
    assert_eq!(read(&env, "out.txt"), "");
}

#[test]
fn sigterm_cancels_with_130_and_restores_the_terminal() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_hang_before_head()]);
    let script = r#"stty -g > before.txt; "$OPSAI" widget > out.txt & pid=$!; echo "pid=$pid"; wait $pid; echo "rc=$?"; stty -g > after.txt"#;
    let mut session = on_terminal(&env, &mock, script, &[("OPSAI_BUFFER", "anything")]);
    session.expect("opsai\x1b8", LIMIT);
    let screen = session.screen();
    let pid: i32 = screen.split("pid=").nth(1).unwrap().lines().next().unwrap().trim().parse().unwrap();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM).unwrap();
    session.expect("rc=130", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    assert_eq!(read(&env, "after.txt"), read(&env, "before.txt"));
    assert_eq!(read(&env, "out.txt"), "");
    let log = std::fs::read_to_string(env.opsai_home().join("widget.log")).unwrap();
    assert!(log.contains("cancelled by SIGTERM"), "{log}");
}
