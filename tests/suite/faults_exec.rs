//! Faults on the command, process and storage side, against the real binary and the mock LLM.
//!
//! Each case checks that opsai stays usable and says what happened, that no audit line or stored
//! message is lost, and that no process of the command is left behind: every long-running command
//! carries a unique marker (`sleep 1000.<n>`) that is looked for in `/proc/*/cmdline` afterwards.
//!
//! Already covered elsewhere, so not repeated here: the executor's own timeout/SIGKILL escalation,
//! stopped children, stdin waits and background jobs at the unit level (`src/exec/pty/tests.rs`);
//! 50 MB of output through the binary (`agent_cli.rs`); Ctrl-C on a real terminal while the model
//! thinks, while a command runs and at the approval prompt, one-shot (`agent_pty.rs`) and in the REPL
//! (`repl_tmux.rs`); a corrupt `sessions.db` in the REPL (`sessions_cli.rs`); a corrupt config for
//! `opsai config show` (`config_cli.rs`); an audit path nobody can open at the unit level
//! (`src/store/audit/tests.rs`).

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::inspect::{processes_running, processes_with, stored_messages};
use crate::support::mock_llm::*;
use opsai::testing::wait_until;

mod signals;

/// Generous: the suite runs on loaded two-core machines.
const LIMIT: Duration = Duration::from_secs(60);

fn run(command: &str) -> Value {
    json!({"command": command, "why": "test"})
}

fn opsai(env: &TestEnv, mock: &MockLlm) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url()).env("OPSAI_NONINTERACTIVE", "1").timeout(LIMIT);
    cmd
}

/// `opsai` as a plain child process (for signals and memory readings); stdin is a pipe for the
/// REPL (no arguments), else empty; stderr is read as it comes (see [`Running`]).
fn spawn(env: &TestEnv, mock: &MockLlm, args: &[&str]) -> Running {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_opsai"));
    cmd.env_clear();
    for name in ["PATH", "TMPDIR", "LANG", "LC_ALL"] {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.env("OPSAI_HOME", env.opsai_home())
        .env("HOME", env.user_home())
        .env("NO_COLOR", "1")
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .current_dir(env.user_home())
        .args(args)
        .stdin(if args.is_empty() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn opsai");
    let mut pipe = child.stderr.take().unwrap();
    // Drained on its own thread (1 GB of live output must not block opsai); the first and the
    // last 64 KB are kept, which hold every message.
    let stderr = std::thread::spawn(move || {
        const KEEP: usize = 64 * 1024;
        let (mut head, mut tail) = (Vec::new(), std::collections::VecDeque::<u8>::new());
        let mut buf = [0u8; 65536];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            let room = KEEP.saturating_sub(head.len()).min(n);
            head.extend_from_slice(&buf[..room]);
            tail.extend(&buf[room..n]);
            while tail.len() > KEEP {
                tail.pop_front();
            }
        }
        head.extend(tail);
        String::from_utf8_lossy(&head).into_owned()
    });
    Running { child, stderr: Some(stderr) }
}

/// A spawned `opsai` and the reader of its stderr.
struct Running {
    child: Child,
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Running {
    fn id(&self) -> u32 {
        self.child.id()
    }

    /// Its stderr up to its exit (head and tail); call after it exited.
    fn stderr(&mut self) -> String {
        self.stderr.take().map(|reader| reader.join().unwrap()).unwrap_or_default()
    }
}

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

/// `1000.<n>`, a number no other process has in its command line.
fn marker() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    format!("1000.{}{:03}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A `sleep` long enough to outlive any test, with a duration no other process uses.
fn marked_sleep() -> String {
    format!("sleep {}", marker())
}

/// Waits until `condition` holds; panics with `what` after `limit`.
fn wait_for(what: &str, limit: Duration, condition: impl FnMut() -> bool) {
    assert!(wait_until(limit, condition), "timed out waiting for {what}");
}

fn assert_no_leftovers(marker: &str) {
    if wait_until(Duration::from_secs(10), || processes_with(marker).is_empty()) {
        return;
    }
    let left = processes_with(marker);
    for pid in &left {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid as i32), nix::sys::signal::SIGKILL);
    }
    panic!("processes of `{marker}` left behind: {left:?}");
}

/// Waits for `child` to exit within `limit` (killing it and panicking otherwise).
fn wait_exit(run: &mut Running, limit: Duration) -> ExitStatus {
    let mut status = None;
    if !wait_until(limit, || {
        status = run.child.try_wait().unwrap();
        status.is_some()
    }) {
        let _ = run.child.kill();
        panic!("opsai did not exit within {limit:?}");
    }
    status.unwrap()
}

// ---------------------------------------------------------------------------------------------
// Command side
// ---------------------------------------------------------------------------------------------

#[test]
fn a_child_ignoring_sigterm_is_killed_at_the_timeout_and_the_model_is_told() {
    let env = TestEnv::new();
    env.write_config(r#"{"exec": {"timeout_s": 2}}"#);
    let sleep = marked_sleep();
    let command = format!("trap '' TERM; {sleep}; echo not-reached");
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&command)), reply_text("It hung.")]);
    let started = Instant::now();
    let out = opsai(&env, &mock).args(["-y", "wait"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    assert!(started.elapsed() < Duration::from_secs(40), "{:?}", started.elapsed());
    assert_no_leftovers(&sleep);
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("timed out"), "{observation}");
    assert!(observation.contains("137") && !observation.contains("not-reached"), "{observation}");
    assert!(stderr_of(&out).contains("timed out"), "the user is told: {}", stderr_of(&out));
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains("RISK: medium | CONFIRMED: auto | EXIT: 137"), "{log}");
    let stored = stored_messages(&env);
    let roles: Vec<&str> = stored.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "every message stored");
    assert!(stored[2].1.contains("timed out") && stored[3].1 == "It hung.", "{stored:?}");
}

#[test]
fn a_background_process_holding_the_pty_ends_with_the_run() {
    let env = TestEnv::new();
    let sleep = marked_sleep();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run(&format!("{sleep} & echo started"))),
        reply_text("Started."),
    ]);
    let started = Instant::now();
    opsai(&env, &mock).args(["-q", "start it"]).assert().success().stdout("Started.\n");
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    assert_no_leftovers(&sleep);
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.starts_with("exit 0 ") && observation.ends_with("\nstarted\n"), "{observation:?}");
    assert!(audit(&env).contains("| EXIT: 0 | OUTPUT: started"), "{}", audit(&env));
}

#[test]
fn binary_output_becomes_valid_text_for_the_model_the_log_and_the_store() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("head -c 100000 /dev/urandom")),
        reply_text("Random bytes."),
    ]);
    opsai(&env, &mock).args(["-q", "show random"]).assert().success().stdout("Random bytes.\n");
    // The request body parsed as JSON (the mock would panic otherwise) and the text is clean.
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("bytes truncated]"), "{}", observation.len());
    assert!(observation.len() < 20_000, "{}", observation.len());
    let bad: Vec<char> = observation.chars().filter(|c| c.is_control() && *c != '\n' && *c != '\t').collect();
    assert!(bad.is_empty(), "control characters reach the model: {bad:?}");
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "one line whatever the bytes: {log:?}");
    assert!(log.contains("| EXIT: 0 | OUTPUT: "), "{log:?}");
    let stored = stored_messages(&env);
    let roles: Vec<&str> = stored.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "every message stored");
}

/// Peak resident set size of `pid` in kB (`VmHWM`), if it is still there.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn a_gigabyte_on_one_line_keeps_memory_bounded_and_the_observation_short() {
    let env = TestEnv::new();
    env.write_config(r#"{"exec": {"timeout_s": 600}}"#);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("head -c 1G /dev/zero | tr '\\0' a")),
        reply_text("A lot of a."),
    ]);
    // Human output (live chunks rendered) to /dev/null: the renderer's path is part of the check.
    let mut child = spawn(&env, &mock, &["print a lot"]);
    let pid = child.id();
    let started = Instant::now();
    let mut peak = 0;
    let deadline = Instant::now() + Duration::from_secs(600);
    let status = loop {
        if let Some(kb) = peak_rss_kb(pid) {
            peak = peak.max(kb);
        }
        if let Some(status) = child.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "1 GB took more than 10 minutes");
        // The peak RSS is sampled while it runs: this loop is the measurement, not a wait.
        std::thread::sleep(Duration::from_millis(50));
    };
    eprintln!("1 GB through opsai in {:?}, peak RSS {peak} kB", started.elapsed());
    let mut stdout = String::new();
    child.child.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    let err = child.stderr();
    assert!(status.success(), "{status:?}");
    assert_eq!(stdout, "A lot of a.\n");
    // The user is told how it ended and how much there was (the live block is cut at the gutter).
    assert!(err.contains("  ✓ exit 0 · "), "the summary line: {}", &err[err.len().saturating_sub(500)..]);
    assert!(err.ends_with(" ms\n"), "nothing after the summary: {:?}", &err[err.len().saturating_sub(500)..]);
    assert!(peak > 0 && peak < 100 * 1024, "opsai's peak RSS was {peak} kB");
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.len() < 6000, "observation is {} bytes", observation.len());
    let total: u64 = 1 << 30;
    assert!(observation.contains(&format!("[{} bytes truncated]", total - 4000)), "{}", &observation[..200]);
    // One 1 GB "word": the edges of the cut are scrubbed as a possible secret, and that is fine.
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains("| EXIT: 0 | OUTPUT: "), "{log}");
    let stored = stored_messages(&env);
    let roles: Vec<&str> = stored.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "every message stored");
    assert!(stored[2].1.len() < 6000 && stored[2].1.contains("bytes truncated]"), "the stored result is the short one");
    assert_eq!(stored[3].1, "A lot of a.");
}

#[test]
fn output_without_a_trailing_newline_is_kept_whole_and_the_next_line_starts_clean() {
    let env = TestEnv::new();
    let mock =
        MockLlm::start([reply_tool_call("c1", "run_command", run("printf 'no-newline-here'")), reply_text("Printed.")]);
    let out = opsai(&env, &mock).arg("print").output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Printed.\n");
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.starts_with("exit 0 ") && observation.ends_with("\nno-newline-here"), "{observation:?}");
    let err = stderr_of(&out);
    let shown: Vec<&str> = err.lines().filter(|l| l.trim_start().starts_with('│')).collect();
    assert_eq!(shown, ["  │ no-newline-here"], "{err}");
    assert!(err.contains("no-newline-here\n  ✓ exit 0"), "the summary starts on its own line: {err}");
    assert!(audit(&env).contains("| EXIT: 0 | OUTPUT: no-newline-here\n"), "{}", audit(&env));
    let stored = stored_messages(&env);
    let roles: Vec<&str> = stored.iter().map(|(role, _)| role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "every message stored");
    assert!(stored[2].1.ends_with("\nno-newline-here"), "{stored:?}");
}

#[test]
fn commands_reading_stdin_end_at_the_timeout_and_say_so() {
    let env = TestEnv::new();
    env.write_config(r#"{"exec": {"timeout_s": 2}}"#);
    // Markers in the command lines: `read` runs inside the shell, `cat` as its own process.
    let (first, second) = (marker().replace('.', "_"), marker());
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run(&format!("read x m{first}; echo got $x"))),
        reply_tool_call("c2", "run_command", run(&format!("cat - {second}"))),
        reply_text("Both waited for input."),
    ]);
    let started = Instant::now();
    // opsai's own stdin has data: it must not reach the command.
    // `read` assigns a variable, so it is Medium: -y approves it.
    let out = opsai(&env, &mock).args(["-y", "read"]).write_stdin("typed-by-nobody\n").output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(started.elapsed() < Duration::from_secs(40), "{:?}", started.elapsed());
    assert_no_leftovers(&first);
    assert_no_leftovers(&second);
    let last = &mock.chat_requests()[2];
    for id in ["c1", "c2"] {
        let observation = last.tool_result(id).unwrap();
        assert!(observation.contains("timed out"), "{id}: {observation}");
        assert!(!observation.contains("typed-by-nobody") && !observation.contains("got"), "{id}: {observation}");
    }
    let err = stderr_of(&out);
    assert_eq!(err.matches("✗ timed out after ").count(), 2, "the user is told: {err}");
    assert_eq!(audit(&env).lines().count(), 2, "{}", audit(&env));
    assert!(audit(&env).lines().all(|l| l.contains("| EXIT: 143 |")), "{}", audit(&env));
}

// ---------------------------------------------------------------------------------------------
// Storage side
// ---------------------------------------------------------------------------------------------

/// A storage fault this machine cannot simulate: under `CI=true` that fails the test (CI must
/// cover it); elsewhere the test is skipped with the reason printed.
fn skip(reason: &str) {
    assert!(std::env::var("CI").as_deref() != Ok("true"), "required under CI=true: {reason}");
    crate::support::skipped(reason);
}

/// Whether the tests run as root: a directory they create belongs to uid 0.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::tempdir().unwrap();
    std::fs::metadata(probe.path()).unwrap().uid() == 0
}

/// Makes a directory unwritable for as long as it lives. Permission bits do not stop root (CI),
/// so root gets `chattr +i`, or else a read-only tmpfs mounted over it holding the same files.
enum ReadOnlyDir {
    Mode(PathBuf),
    Immutable(PathBuf),
    Mounted(PathBuf),
}

fn succeeds(command: &mut Command) -> bool {
    command.stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

impl ReadOnlyDir {
    fn new(path: &Path) -> Option<ReadOnlyDir> {
        use std::os::unix::fs::PermissionsExt;
        if !is_root() {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o555)).unwrap();
            return Some(ReadOnlyDir::Mode(path.to_owned()));
        }
        if succeeds(Command::new("chattr").arg("+i").arg(path)) {
            return Some(ReadOnlyDir::Immutable(path.to_owned()));
        }
        let saved: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(path)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .map(|file| (file.clone(), std::fs::read(&file).unwrap()))
            .collect();
        if !succeeds(Command::new("mount").args(["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs"]).arg(path)) {
            return None;
        }
        let mounted = ReadOnlyDir::Mounted(path.to_owned());
        for (file, bytes) in saved {
            std::fs::write(file, bytes).unwrap();
        }
        succeeds(Command::new("mount").args(["-o", "remount,ro"]).arg(path)).then_some(mounted)
    }
}

impl Drop for ReadOnlyDir {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        match self {
            ReadOnlyDir::Mode(path) => {
                let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700));
            }
            ReadOnlyDir::Immutable(path) => {
                let _ = succeeds(Command::new("chattr").arg("-i").arg(&*path));
            }
            ReadOnlyDir::Mounted(path) => {
                let _ = succeeds(Command::new("umount").arg(&*path));
            }
        }
    }
}

#[test]
fn a_read_only_home_runs_safe_commands_refuses_the_rest_and_says_so() {
    let env = TestEnv::new();
    let config = r#"{"llm": {"model": "qwen2.5:7b"}}"#;
    env.write_config(config);
    let Some(_guard) = ReadOnlyDir::new(env.opsai_home()) else {
        return skip("running as root, and neither `chattr +i` nor a read-only tmpfs mount works here");
    };
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("echo safe-ran")),
        reply_tool_call("c2", "run_command", run("touch medium-ran.txt")),
        reply_text("Only the safe one ran."),
    ]);
    let out = opsai(&env, &mock).args(["-y", "try both"]).output().unwrap();
    let err = stderr_of(&out);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Only the safe one ran.\n", "{err}");
    assert_eq!(out.status.code(), Some(0), "the task itself finished: {err}");
    assert!(!env.user_home().join("medium-ran.txt").exists(), "nothing above safe ran");
    let last = &mock.chat_requests()[2];
    assert!(last.tool_result("c1").unwrap().contains("safe-ran"), "{:?}", last.tool_result("c1"));
    let refused = last.tool_result("c2").unwrap();
    assert!(refused.contains("the audit log cannot be written"), "{refused}");
    assert!(err.contains("the audit log cannot be written"), "the user is told: {err}");
    assert!(err.contains("not saved"), "the sessions warning: {err}");
    assert!(err.contains("no audit line was written"), "the safe command's missing audit line is reported: {err}");
    assert_eq!(std::fs::read_to_string(env.config_path()).unwrap(), config, "config untouched");
    assert_eq!(TestEnv::entries(env.opsai_home()), ["config.json"], "nothing created");
}

#[test]
fn an_audit_log_that_cannot_be_written_refuses_everything_above_safe() {
    for target in ["under-a-file", "a-directory"] {
        let env = TestEnv::new();
        let blocker = env.opsai_home().join("blocker");
        let log_path = if target == "under-a-file" {
            std::fs::write(&blocker, "").unwrap();
            blocker.join("audit.log")
        } else {
            std::fs::create_dir(&blocker).unwrap();
            blocker.clone()
        };
        env.write_config(&json!({"audit": {"log_path": log_path}}).to_string());
        let mock = MockLlm::start([
            reply_tool_call("c1", "run_command", run("touch medium-ran.txt")),
            reply_tool_call("c2", "run_command", run("echo safe-ran")),
            reply_text("The audit log is broken."),
        ]);
        let out = opsai(&env, &mock).args(["-y", "try both"]).output().unwrap();
        let err = stderr_of(&out);
        assert!(!env.user_home().join("medium-ran.txt").exists(), "{target}: nothing above safe ran");
        let last = &mock.chat_requests()[2];
        let refused = last.tool_result("c1").unwrap();
        assert!(refused.contains("refused: the audit log cannot be written"), "{target}: {refused}");
        assert!(refused.contains(&blocker.display().to_string()), "{target}: names the path: {refused}");
        assert!(err.contains("the audit log cannot be written"), "{target}: the user is told: {err}");
        // Safe commands still run (reading is not an action to answer for); the model and the user
        // are told that this one has no audit line.
        let safe = last.tool_result("c2").unwrap();
        assert!(safe.contains("safe-ran"), "{target}: {safe}");
        assert!(safe.contains("audit log"), "{target}: the missing line is reported: {safe}");
        assert_eq!(out.status.code(), Some(0), "{target}: {err}");
    }
}

/// Bytes of `sessions.db` and its WAL, if any.
fn database_bytes(env: &TestEnv) -> (Vec<u8>, Option<Vec<u8>>) {
    let db = env.opsai_home().join("sessions.db");
    (std::fs::read(&db).unwrap(), std::fs::read(db.with_extension("db-wal")).ok())
}

#[test]
fn a_locked_sessions_database_is_a_warning_and_left_as_it_was() {
    let env = TestEnv::new();
    let first = MockLlm::start([reply_text("First.")]);
    opsai(&env, &first).arg("first task").assert().success();
    let before = database_bytes(&env);
    let holder = rusqlite::Connection::open(env.opsai_home().join("sessions.db")).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run("echo still-works")), reply_text("Second.")]);
    let out = opsai(&env, &mock).arg("second task").output().unwrap();
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Second.\n");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("opsai: ")).collect();
    assert_eq!(warnings.len(), 1, "one warning: {err}");
    assert!(warnings[0].contains("not saved") || warnings[0].contains("no longer being saved"), "{err}");
    assert!(audit(&env).contains("CMD: \"echo still-works\""), "the audit log does not depend on it");
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_eq!(database_bytes(&env), before, "the database is byte-identical");
    let stored = stored_messages(&env);
    assert_eq!(stored.first().map(|(_, c)| c.as_str()), Some("first task"), "the earlier run is intact");
}

#[test]
fn a_corrupt_sessions_database_in_a_one_shot_run_is_a_warning_and_left_alone() {
    let env = TestEnv::new();
    let garbage: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let db = env.opsai_home().join("sessions.db");
    std::fs::write(&db, &garbage).unwrap();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run("echo still-works")), reply_text("Done.")]);
    let out = opsai(&env, &mock).arg("a task").output().unwrap();
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Done.\n");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("opsai: ")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(warnings[0].contains("not saved") && warnings[0].contains(&db.display().to_string()), "{err}");
    assert_eq!(std::fs::read(&db).unwrap(), garbage, "byte-identical");
    assert!(audit(&env).contains("CMD: \"echo still-works\""));
}

#[test]
fn a_corrupt_config_stops_a_task_with_exit_2_before_anything_runs() {
    let env = TestEnv::new();
    let corrupt = "{\n  \"exec\": {\"timeout_s\": 5,}\n}\n";
    env.write_config(corrupt);
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run("echo x")), reply_text("x")]);
    let out = opsai(&env, &mock).arg("a task").output().unwrap();
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with(&format!("opsai: {}:2:", env.config_path().display())), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(mock.requests().is_empty(), "no model request");
    assert_eq!(std::fs::read(env.config_path()).unwrap(), corrupt.as_bytes());
    assert_eq!(TestEnv::entries(env.opsai_home()), ["config.json"]);
}

/// A small tmpfs mounted for the test's life (root only); `None` when mounting is not possible.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::Builder::new().prefix("opsai-disk-").tempdir().ok()?;
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status();
        status.is_ok_and(|s| s.success()).then_some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes until the disk is full.
    fn fill(&self) {
        use std::io::Write;
        let mut file = std::fs::File::create(self.path().join("filler")).unwrap();
        let block = [b'x'; 1024];
        while file.write_all(&block).is_ok() {}
        while file.write_all(&block[..1]).is_ok() {}
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_disk_refuses_everything_above_safe_and_warns_about_the_sessions() {
    let Some(disk) = SmallDisk::mount("256k") else {
        return skip("cannot mount a tmpfs here (needs root)");
    };
    let env = TestEnv::new();
    let home = disk.path().join("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join("config.json"), "{}").unwrap();
    let first = MockLlm::start([reply_tool_call("c1", "run_command", run("echo before-full")), reply_text("ok")]);
    let mut first_run = opsai(&env, &first);
    first_run.env("OPSAI_HOME", &home).arg("first task").assert().success();
    let log_before = std::fs::read_to_string(home.join("audit.log")).unwrap();
    assert_eq!(log_before.lines().count(), 1, "{log_before}");
    disk.fill();

    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("touch medium-ran.txt")),
        reply_tool_call("c2", "run_command", run("echo safe-ran")),
        reply_text("The disk is full."),
    ]);
    let out = opsai(&env, &mock).env("OPSAI_HOME", &home).args(["-y", "second task"]).output().unwrap();
    let err = stderr_of(&out);
    assert!(!env.user_home().join("medium-ran.txt").exists(), "nothing above safe ran: {err}");
    let last = &mock.chat_requests()[2];
    let refused = last.tool_result("c1").unwrap();
    assert!(refused.contains("refused: the audit log cannot be written"), "{refused}");
    assert!(err.contains("the audit log cannot be written"), "the user is told: {err}");
    let safe = last.tool_result("c2").unwrap();
    assert!(safe.contains("safe-ran"), "{safe}");
    assert!(err.contains("not saved") || err.contains("no longer being saved"), "the sessions warning: {err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
    let log_after = std::fs::read_to_string(home.join("audit.log")).unwrap();
    // The safe command's line may still fit in the log's last allocated page; if not, that is said.
    if !log_after.contains("CMD: \"echo safe-ran\"") {
        assert!(safe.contains("no audit line was written"), "{safe}");
        assert!(err.contains("no audit line was written"), "{err}");
    }
    assert!(log_after.starts_with(&log_before), "earlier lines are kept");
    assert!(log_after.lines().all(|l| l.starts_with('[') && l.contains(" | OUTPUT: ")), "no torn line: {log_after}");
}
