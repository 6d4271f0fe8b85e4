//! The process side: SIGTERM, SIGHUP and SIGINT to opsai while the model thinks, while a command
//! runs (one that ignores them too) and at the approval prompt; one-shot and REPL, without a terminal
//! and on one (whose settings must come back as they were). Each case checks the exit code, the
//! line on stderr that says what happened, the audit line, the stored messages and that no process
//! of the command is left.

use super::*;
use crate::support::pty::PtySession;

/// Starts a one-shot run whose first command is `command` (carrying `marker`), and waits until it runs.
fn start_running(env: &TestEnv, mock: &MockLlm, marker: &str) -> Running {
    start_running_with(env, mock, marker, &["wait for it"])
}

fn start_running_with(env: &TestEnv, mock: &MockLlm, marker: &str, args: &[&str]) -> Running {
    let child = spawn(env, mock, args);
    wait_for("the first model request", LIMIT, || !mock.chat_requests().is_empty());
    wait_for("the command to start", LIMIT, || !processes_with(marker).is_empty());
    child
}

fn signal(child: &Running, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
}

fn name_and_code(signal: nix::sys::signal::Signal) -> (&'static str, i32) {
    match signal {
        nix::sys::signal::Signal::SIGTERM => ("SIGTERM", 143),
        nix::sys::signal::Signal::SIGHUP => ("SIGHUP", 129),
        other => panic!("no exit code for {other}"),
    }
}

/// What a signal while a command runs must leave: the command ended, its audit line, the task and
/// the interrupted call stored, no second model request, and stderr saying what happened.
fn assert_stopped_cleanly(env: &TestEnv, mock: &MockLlm, command: &str, run: &mut Running, sent: Signal) {
    let status = wait_exit(run, LIMIT);
    let err = run.stderr();
    let (name, expected) = name_and_code(sent);
    assert_no_leftovers(&marker_of(command));
    assert_eq!(status.code(), Some(expected), "exit status {status:?} (signal {:?}): {err}", status.signal());
    assert!(
        err.contains(&format!("opsai: {name} received: stopping the turn and its command (exit {expected})")),
        "the user is told: {err}"
    );
    assert!(err.contains("✗ interrupted after "), "the command's end is shown: {err}");
    assert!(!err.contains("did not end within"), "the turn ended within the grace: {err}");
    assert_eq!(mock.chat_requests().len(), 1, "no model request after the signal");
    let log = audit(env);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains(&format!("CMD: \"{command}\" | RISK: ")), "{log}");
    assert!(log.contains("| EXIT: "), "{log}");
    let stored = stored_messages(env);
    let roles: Vec<&str> = stored.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"], "{stored:?}");
    assert_eq!(stored[0].1, "wait for it");
    assert!(stored[2].1.contains("interrupted"), "{stored:?}");
}

/// The `1000.<n>` part of a marked command.
fn marker_of(command: &str) -> String {
    let at = command.find("1000.").expect("a marked command");
    command[at..].split_whitespace().next().unwrap().to_owned()
}

use nix::sys::signal::Signal;

#[test]
fn sigterm_while_a_command_runs_ends_it_logs_it_and_exits_143() {
    let env = TestEnv::new();
    let sleep = marked_sleep();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&sleep)), reply_text("never asked")]);
    let mut child = start_running(&env, &mock, &sleep);
    signal(&child, Signal::SIGTERM);
    assert_stopped_cleanly(&env, &mock, &sleep, &mut child, Signal::SIGTERM);
    assert!(audit(&env).contains(&format!("CMD: \"{sleep}\" | RISK: safe | CONFIRMED: auto")));
}

#[test]
fn sighup_while_a_command_runs_ends_it_logs_it_and_exits_129() {
    let env = TestEnv::new();
    let sleep = marked_sleep();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&sleep)), reply_text("never asked")]);
    let mut child = start_running(&env, &mock, &sleep);
    signal(&child, Signal::SIGHUP);
    assert_stopped_cleanly(&env, &mock, &sleep, &mut child, Signal::SIGHUP);
}

#[test]
fn sigterm_while_the_command_ignores_every_signal_kills_its_group_and_exits_143() {
    let env = TestEnv::new();
    env.write_config(r#"{"exec": {"timeout_s": 600}}"#);
    let sleep = marked_sleep();
    // The shell and its `sleep` (which inherits the ignored dispositions) ignore INT, TERM and HUP:
    // only the SIGKILL of the escalation ends them.
    let command = format!("trap '' INT TERM HUP; {sleep}; echo not-reached");
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&command)), reply_text("never asked")]);
    let mut child = start_running_with(&env, &mock, &sleep, &["-y", "wait for it"]);
    // The shell's own command line names the sleep too: wait for the sleep itself, which runs only
    // once the trap is set — a signal before that would end the shell with 130, not the SIGKILL.
    wait_for("the trap to be set", LIMIT, || !processes_running(&sleep).is_empty());
    signal(&child, Signal::SIGTERM);
    assert_stopped_cleanly(&env, &mock, &command, &mut child, Signal::SIGTERM);
    let stored = stored_messages(&env);
    assert!(!stored[2].1.contains("not-reached"), "{stored:?}");
    assert!(audit(&env).contains("CONFIRMED: auto | EXIT: 137"), "killed by SIGKILL: {}", audit(&env));
}

/// A REPL without a terminal, given `wait for it`, with its command running.
fn repl_running(env: &TestEnv, mock: &MockLlm, marker: &str) -> (Running, std::process::ChildStdin) {
    let mut child = spawn(env, mock, &[]);
    let mut stdin = child.child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"wait for it\n").unwrap();
    wait_for("the first model request", LIMIT, || !mock.chat_requests().is_empty());
    wait_for("the command to start", LIMIT, || !processes_with(marker).is_empty());
    (child, stdin)
}

#[test]
fn sigterm_and_sighup_to_the_repl_while_a_command_runs_end_it_and_log_it() {
    for sent in [Signal::SIGTERM, Signal::SIGHUP] {
        let env = TestEnv::new();
        let sleep = marked_sleep();
        let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&sleep)), reply_text("never asked")]);
        let (mut child, stdin) = repl_running(&env, &mock, &sleep);
        signal(&child, sent);
        assert_stopped_cleanly(&env, &mock, &sleep, &mut child, sent);
        drop(stdin);
    }
}

#[test]
fn sigint_without_a_terminal_while_a_command_runs_interrupts_only_the_command() {
    let env = TestEnv::new();
    let sleep = marked_sleep();
    let mock =
        MockLlm::start([reply_tool_call("c1", "run_command", run(&sleep)), reply_text("The wait was interrupted.")]);
    let mut child = start_running(&env, &mock, &sleep);
    signal(&child, Signal::SIGINT);
    let status = wait_exit(&mut child, LIMIT);
    let err = child.stderr();
    assert_no_leftovers(&sleep);
    assert_eq!(status.code(), Some(0), "the turn goes on after the command: {status:?}");
    assert!(err.contains("✗ interrupted after "), "the user is told: {err}");
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("interrupted"), "{observation}");
    assert!(audit(&env).contains(&format!("CMD: \"{sleep}\" | RISK: safe | CONFIRMED: auto | EXIT: 130")));
    let stored = stored_messages(&env);
    let roles: Vec<&str> = stored.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "{stored:?}");
}

#[test]
fn signals_without_a_terminal_while_the_model_thinks_end_the_run() {
    for (signal_sent, expected, said) in [
        (Signal::SIGINT, 130, None),
        (Signal::SIGTERM, 143, Some("opsai: SIGTERM received: stopping the turn and its command (exit 143)")),
        (Signal::SIGHUP, 129, Some("opsai: SIGHUP received: stopping the turn and its command (exit 129)")),
    ] {
        let env = TestEnv::new();
        let mock = MockLlm::start([reply_hang_before_head()]);
        let mut child = spawn(&env, &mock, &["wait for it"]);
        wait_for("the first model request", LIMIT, || !mock.chat_requests().is_empty());
        signal(&child, signal_sent);
        let status = wait_exit(&mut child, LIMIT);
        let err = child.stderr();
        assert_eq!(status.code(), Some(expected), "{signal_sent}: {status:?}");
        if let Some(said) = said {
            assert!(err.contains(said), "{signal_sent}: the user is told: {err}");
        }
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(audit(&env), "", "{signal_sent}: nothing ran");
        let stored = stored_messages(&env);
        assert_eq!(stored, [], "{signal_sent}: the model never replied, so no conversation is kept");
    }
}

// ---- on a terminal ----------------------------------------------------------------------------

/// `script` run by `sh` on a fresh PTY, with `$OPSAI` the binary; `stty -g` goes to before.txt and
/// after.txt around the opsai command line in the tests below.
fn on_terminal(env: &TestEnv, mock: &MockLlm, script: &str) -> PtySession {
    let mut vars = env.terminal_vars(&mock.base_url());
    vars.push(("OPSAI", env!("CARGO_BIN_EXE_opsai").to_owned()));
    PtySession::spawn("/bin/sh", &["-c", script], &vars, env.user_home())
}

fn read(env: &TestEnv, name: &str) -> String {
    std::fs::read_to_string(env.user_home().join(name)).unwrap_or_default()
}

/// The pid of the opsai process working in `dir` (each test has its own), once it runs.
fn opsai_in(dir: &Path) -> i32 {
    let binary = std::fs::canonicalize(env!("CARGO_BIN_EXE_opsai")).unwrap();
    let dir = std::fs::canonicalize(dir).unwrap();
    let mut found = None;
    wait_for("opsai to start", LIMIT, || {
        found = std::fs::read_dir("/proc").unwrap().filter_map(Result::ok).find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (exe == binary && cwd == dir).then_some(pid)
        });
        found.is_some()
    });
    found.unwrap()
}

fn kill(pid: i32, signal: Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).unwrap();
}

/// Runs `opsai ARGS` on a terminal between two `stty -g`; its exit code is printed as `rc=N`.
const AROUND: &str = r#"stty -g > before.txt; "$OPSAI" ARGS 2> err.txt; echo "rc=$?"; stty -g > after.txt; echo end"#;

fn assert_terminal_restored(env: &TestEnv, session: &mut PtySession) {
    session.expect("end", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    let before = read(env, "before.txt");
    assert!(!before.is_empty(), "{}", session.screen());
    assert_eq!(read(env, "after.txt"), before, "the terminal settings are restored");
}

#[test]
fn sigterm_at_an_approval_prompt_on_a_terminal_refuses_logs_and_restores_the_terminal() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run("touch never.txt"))]);
    // The prompt is on the terminal (stdin and stderr), in raw mode.
    let mut session = on_terminal(&env, &mock, &AROUND.replace(" 2> err.txt", "").replace("ARGS", "make-a-file"));
    session.expect("[n] no", LIMIT);
    let started = Instant::now();
    kill(opsai_in(env.user_home()), Signal::SIGTERM);
    session.expect("rc=143", LIMIT);
    assert!(started.elapsed() < stop_grace(), "answered at once, not after the grace: {:?}", started.elapsed());
    assert_terminal_restored(&env, &mut session);
    assert!(!env.user_home().join("never.txt").exists());
    assert_eq!(mock.chat_requests().len(), 1);
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains("CMD: \"touch never.txt\" | RISK: medium | CONFIRMED: no"), "{log}");
    let screen = session.screen();
    assert!(screen.contains("opsai: SIGTERM received: stopping the turn and its command (exit 143)"), "{screen}");
    let stored = stored_messages(&env);
    let roles: Vec<&str> = stored.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"], "{stored:?}");
    assert_eq!(stored[0].1, "make-a-file");
}

/// `runner::stop::GRACE`: how long a signalled turn may take before opsai exits anyway.
fn stop_grace() -> Duration {
    Duration::from_secs(8)
}

#[test]
fn sigterm_to_a_one_shot_on_a_terminal_while_a_command_runs_restores_the_terminal() {
    let env = TestEnv::new();
    let sleep = marked_sleep();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&sleep)), reply_text("never asked")]);
    let mut session = on_terminal(&env, &mock, &AROUND.replace("ARGS", "wait-for-it"));
    wait_for("the command to start", LIMIT, || !processes_with(&sleep).is_empty());
    kill(opsai_in(env.user_home()), Signal::SIGTERM);
    session.expect("rc=143", LIMIT);
    assert_terminal_restored(&env, &mut session);
    assert_no_leftovers(&sleep);
    assert!(audit(&env).contains(&format!("CMD: \"{sleep}\" | RISK: safe | CONFIRMED: auto")), "{}", audit(&env));
    let err = read(&env, "err.txt");
    assert!(err.contains("opsai: SIGTERM received: stopping the turn and its command (exit 143)"), "{err}");
}

#[test]
fn sigterm_and_sighup_to_the_repl_on_a_terminal_restore_it_at_the_prompt_and_during_a_command() {
    for (sent, running) in [(Signal::SIGTERM, false), (Signal::SIGHUP, false), (Signal::SIGTERM, true)] {
        let env = TestEnv::new();
        let sleep = marked_sleep();
        let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&sleep)), reply_text("never asked")]);
        let (name, code) = name_and_code(sent);
        // The REPL's line editor draws on stderr: here it stays on the terminal.
        let script = AROUND.replace(" 2> err.txt", "").replace("ARGS", "");
        let mut session = on_terminal(&env, &mock, &script);
        // The line editor asks where the cursor is before it draws the prompt.
        session.expect("\x1b[6n", LIMIT);
        session.send("\x1b[1;1R");
        session.expect("Agent", LIMIT);
        if running {
            session.send("wait for it\r");
            wait_for("the command to start", LIMIT, || !processes_with(&sleep).is_empty());
        }
        kill(opsai_in(env.user_home()), sent);
        session.expect(&format!("rc={code}"), LIMIT);
        assert_terminal_restored(&env, &mut session);
        let screen = session.screen();
        let said = if running {
            format!("opsai: {name} received: stopping the turn and its command (exit {code})")
        } else {
            format!("opsai: {name} received: exiting (exit {code})")
        };
        assert!(screen.contains(&said), "{sent} (running: {running}): {screen}");
        if running {
            assert_no_leftovers(&sleep);
            assert!(audit(&env).contains(&format!("CMD: \"{sleep}\"")), "{}", audit(&env));
        }
    }
}
