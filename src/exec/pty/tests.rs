//! Real PTYs, real bash. Every run is checked for leftovers: each command gets a unique marker in its
//! environment, and no live process may carry it once `run` returned (bounded wait for the kernel
//! to finish SIGKILLed processes).

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;

use super::*;
use crate::exec::ExecError;
use crate::testing::wait_until;

const MARK_VAR: &str = "OPSAI_EXEC_TEST_MARK";

struct Outcome {
    result: ExecResult,
    live: Vec<u8>,
    chunks: Vec<Vec<u8>>,
    elapsed: Duration,
}

fn request(command: &str, cwd: &Path, timeout: Duration) -> CommandRequest {
    CommandRequest {
        call_id: "call_1".into(),
        command: command.into(),
        cwd: cwd.into(),
        timeout,
        why: None,
        sandbox: None,
    }
}

/// Runs `command` in a temporary directory; cancels the token once the live output contains
/// `cancel_on`. Asserts that nothing of the command is left running afterwards.
async fn run_full(executor: PtyExecutor, command: &str, timeout: Duration, cancel_on: Option<&str>) -> Outcome {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let mark = format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let executor = executor.with_env(MARK_VAR, &mark);
    let dir = tempfile::tempdir().unwrap();
    let request = request(command, dir.path(), timeout);
    let token = CancellationToken::new();
    let mut live = Vec::new();
    let mut chunks = Vec::new();
    let started = Instant::now();
    let result = {
        let canceller = token.clone();
        let mut on_output = |chunk: &[u8]| {
            live.extend_from_slice(chunk);
            chunks.push(chunk.to_vec());
            if let Some(needle) = cancel_on
                && String::from_utf8_lossy(&live).contains(needle)
            {
                canceller.cancel();
            }
        };
        executor.run(&request, &mut on_output, token).await.unwrap()
    };
    let elapsed = started.elapsed();
    assert_no_leftovers(&mark);
    Outcome { result, live, chunks, elapsed }
}

async fn run(command: &str) -> Outcome {
    run_full(PtyExecutor::new().with_size(24, 80), command, Duration::from_secs(20), None).await
}

/// Live processes whose environment carries `MARK_VAR=mark`.
fn marked_processes(mark: &str) -> Vec<String> {
    let needle = format!("{MARK_VAR}={mark}\0");
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|entry| {
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            environ.windows(needle.len()).any(|w| w == needle.as_bytes())
        })
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .collect()
}

fn assert_no_leftovers(mark: &str) {
    let gone = wait_until(Duration::from_secs(3), || marked_processes(mark).is_empty());
    assert!(gone, "processes left behind: {:?}", marked_processes(mark));
}

#[tokio::test]
async fn echo_output_and_exit_code() {
    let out = run("echo hello").await;
    assert_eq!(out.result.exit_code, Some(0));
    assert_eq!(out.result.output.text(), "hello\n");
    assert_eq!(out.result.output.truncated_bytes, 0);
    assert!(!out.result.timed_out && !out.result.interrupted);
    assert_eq!(out.live, b"hello\r\n");
}

#[tokio::test]
async fn non_zero_exit_with_stderr_merged() {
    let out = run("echo out; echo oops >&2; exit 3").await;
    assert_eq!(out.result.exit_code, Some(3));
    assert_eq!(out.result.output.text(), "out\noops\n");
}

#[tokio::test]
async fn output_without_trailing_newline() {
    let out = run("printf 'no newline'").await;
    assert_eq!(out.result.output.text(), "no newline");
}

#[tokio::test]
async fn cwd_is_honoured_and_pwd_set() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let request = request("pwd; pwd -P; echo \"$PWD\"", &cwd, Duration::from_secs(10));
    let result = PtyExecutor::new().run(&request, &mut |_: &[u8]| {}, CancellationToken::new()).await.unwrap();
    let cwd = cwd.display();
    assert_eq!(result.output.text(), format!("{cwd}\n{cwd}\n{cwd}\n"));
}

#[tokio::test]
async fn a_relative_cwd_is_made_absolute_and_a_huge_timeout_is_none() {
    let request = request("echo \"$PWD\"; pwd", Path::new("src"), Duration::MAX);
    let result = PtyExecutor::new().run(&request, &mut |_: &[u8]| {}, CancellationToken::new()).await.unwrap();
    let expected = std::env::current_dir().unwrap().join("src");
    assert_eq!(result.output.text(), format!("{0}\n{0}\n", expected.display()));
    assert_eq!(result.exit_code, Some(0));
}

#[tokio::test]
async fn a_missing_cwd_is_an_error_not_home() {
    let request = request("pwd", Path::new("/nonexistent/opsai/dir"), Duration::from_secs(10));
    let result = PtyExecutor::new().run(&request, &mut |_: &[u8]| {}, CancellationToken::new()).await;
    assert!(matches!(result, Err(ExecError::NoSuchDirectory(dir)) if dir == "/nonexistent/opsai/dir"));
}

#[tokio::test]
async fn pagers_are_disabled_and_overrides_apply() {
    let executor = PtyExecutor::new().with_size(24, 80).with_env("OPSAI_EXTRA", "x").with_env("PAGER", "more");
    let out = run_full(
        executor,
        "echo \"$PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT $OPSAI_EXTRA\"",
        Duration::from_secs(10),
        None,
    )
    .await;
    assert_eq!(out.result.output.text(), "more cat 0 x\n");
    assert_eq!(run("echo \"$PAGER\"").await.result.output.text(), "cat\n");
}

#[tokio::test]
async fn pty_has_the_configured_size() {
    assert_eq!(run("stty size").await.result.output.text(), "24 80\n");
    let out = run_full(PtyExecutor::new().with_size(30, 100), "stty size", Duration::from_secs(10), None).await;
    assert_eq!(out.result.output.text(), "30 100\n");
}

#[tokio::test]
async fn ansi_is_stripped_in_the_capture_but_live_output_is_raw() {
    let out = run("printf '\\033[31mred\\033[0m plain\\n'; printf 'step 1\\rstep 2\\n'").await;
    assert_eq!(out.result.output.text(), "red plain\nstep 2\n");
    let live = String::from_utf8(out.live).unwrap();
    assert!(live.contains("\x1b[31mred\x1b[0m"), "{live:?}");
    assert!(live.contains("step 1\rstep 2"), "{live:?}");
}

#[tokio::test]
async fn live_chunks_never_split_a_character() {
    let out = run("for i in $(seq 3000); do printf '世界é'; done; echo").await;
    assert!(out.chunks.len() > 1);
    for chunk in &out.chunks {
        assert!(std::str::from_utf8(chunk).is_ok(), "chunk splits a character");
    }
    assert!(!out.result.output.text().contains('\u{fffd}'));
    assert!(out.result.output.truncated_bytes > 0);
}

#[tokio::test]
async fn fifty_megabytes_give_a_bounded_capture() {
    let out = run_full(PtyExecutor::new(), "head -c 50M /dev/zero | base64", Duration::from_secs(300), None).await;
    // base64 of 52,428,800 bytes: 69,905,068 characters in 76-character lines, each with "\n".
    let total: u64 = 69_905_068 + 69_905_068_u64.div_ceil(76);
    assert_eq!(out.result.exit_code, Some(0), "{:?}", (out.result.timed_out, out.elapsed));
    assert_eq!(out.result.output.truncated_bytes, total - 4000);
    assert!(out.result.output.text().contains(&format!("\n... [{} bytes truncated] ...\n", total - 4000)));
    assert!(out.result.output.text().len() < 4100, "{}", out.result.output.text().len());
    assert!(out.result.output.text().starts_with("AAAA"));
    assert!(out.result.output.text().ends_with("AAA=\n"));
    // Every byte went to the live sink, with the PTY's "\r\n".
    assert_eq!(out.live.len() as u64, total + 69_905_068_u64.div_ceil(76));
}

#[tokio::test]
async fn timeout_terminates_the_group() {
    let out = run_full(PtyExecutor::new(), "sleep 100", Duration::from_millis(300), None).await;
    assert!(out.result.timed_out);
    assert!(!out.result.interrupted);
    assert_eq!(out.result.exit_code, Some(143));
    assert!(out.elapsed < Duration::from_millis(1500), "{:?}", out.elapsed);
}

#[tokio::test]
async fn timeout_kills_a_child_that_ignores_sigterm() {
    let out =
        run_full(PtyExecutor::new(), "trap '' TERM; sleep 100; echo not reached", Duration::from_millis(300), None)
            .await;
    assert!(out.result.timed_out);
    assert_eq!(out.result.exit_code, Some(137));
    assert!(out.elapsed >= Duration::from_millis(2300), "{:?}", out.elapsed);
    assert!(out.elapsed < Duration::from_millis(2800), "{:?}", out.elapsed);
}

#[tokio::test]
async fn timeout_resumes_a_stopped_child() {
    let out =
        run_full(PtyExecutor::new(), "echo before; kill -STOP $$; echo after", Duration::from_millis(300), None).await;
    assert!(out.result.timed_out);
    assert_eq!(out.result.exit_code, Some(143));
    assert_eq!(out.result.output.text(), "before\n");
    assert!(out.elapsed < Duration::from_millis(1500), "{:?}", out.elapsed);
}

#[tokio::test]
async fn reading_stdin_waits_for_the_timeout_without_eof() {
    let out = run_full(PtyExecutor::new(), "read -r line; echo \"got:$line\"", Duration::from_millis(300), None).await;
    assert!(out.result.timed_out);
    assert!(!out.result.output.text().contains("got:"), "{:?}", out.result.output.text());
    assert_eq!(out.result.exit_code, Some(143));
}

#[tokio::test]
async fn cancel_sends_sigint() {
    // `exec`: a SIGINT racing bash's fork of `sleep` could be taken by the forked child before its exec
    // (as with a real Ctrl-C); here it always meets the default disposition.
    let out = run_full(PtyExecutor::new(), "echo ready; exec sleep 100", Duration::from_secs(20), Some("ready")).await;
    assert!(out.result.interrupted);
    assert!(!out.result.timed_out);
    assert_eq!(out.result.exit_code, Some(130));
    assert!(out.elapsed < Duration::from_millis(1500), "{:?}", out.elapsed);
}

#[tokio::test]
async fn cancel_reaches_an_int_trap() {
    // The marker comes from the child, so bash is already waiting for it when SIGINT arrives.
    let command = "trap 'echo got INT; exit 7' INT; sh -c 'echo ready; exec sleep 100'; echo not reached";
    let out = run_full(PtyExecutor::new(), command, Duration::from_secs(20), Some("ready")).await;
    assert!(out.result.interrupted);
    assert_eq!(out.result.exit_code, Some(7));
    assert_eq!(out.result.output.text(), "ready\ngot INT\n");
}

#[tokio::test]
async fn cancel_escalates_when_sigint_is_ignored() {
    let out =
        run_full(PtyExecutor::new(), "trap '' INT; echo ready; sleep 100", Duration::from_secs(20), Some("ready"))
            .await;
    assert!(out.result.interrupted);
    assert_eq!(out.result.exit_code, Some(143));
    assert!(out.elapsed >= Duration::from_millis(1900), "{:?}", out.elapsed);
    assert!(out.elapsed < Duration::from_millis(3000), "{:?}", out.elapsed);
}

#[tokio::test]
async fn cancelled_before_the_start_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let request = request("touch ran", dir.path(), Duration::from_secs(10));
    let token = CancellationToken::new();
    token.cancel();
    let result = PtyExecutor::new().run(&request, &mut |_: &[u8]| {}, token).await.unwrap();
    assert!(result.interrupted);
    assert_eq!(result.exit_code, None);
    assert!(!dir.path().join("ran").exists());
}

#[tokio::test]
async fn a_background_job_does_not_hold_the_run() {
    let out = run("sleep 100 & echo started").await;
    assert_eq!(out.result.exit_code, Some(0));
    assert_eq!(out.result.output.text(), "started\n");
    assert!(out.elapsed < Duration::from_secs(1), "{:?}", out.elapsed);
}

#[tokio::test]
async fn a_hangup_immune_background_job_holding_the_pty_is_killed() {
    let out = run("(trap '' HUP; exec sleep 100) & echo started").await;
    assert_eq!(out.result.exit_code, Some(0));
    assert_eq!(out.result.output.text(), "started\n");
    assert!(out.elapsed < Duration::from_millis(1500), "{:?}", out.elapsed);
}

#[tokio::test]
async fn a_background_job_without_the_pty_is_killed_too() {
    let out = run("(trap '' HUP; exec sleep 100) >/dev/null 2>&1 </dev/null & echo started").await;
    assert_eq!(out.result.output.text(), "started\n");
    assert!(out.elapsed < Duration::from_secs(1), "{:?}", out.elapsed);
}

#[tokio::test]
async fn killed_by_a_signal_is_128_plus_n() {
    assert_eq!(run("kill -KILL $$").await.result.exit_code, Some(137));
    assert_eq!(run("kill -USR1 $$").await.result.exit_code, Some(138));
    assert_eq!(run("kill -TERM $$").await.result.exit_code, Some(143));
}

#[test]
fn incomplete_suffixes() {
    use super::process::incomplete_utf8_suffix;
    assert_eq!(incomplete_utf8_suffix(b""), 0);
    assert_eq!(incomplete_utf8_suffix(b"abc"), 0);
    assert_eq!(incomplete_utf8_suffix("é".as_bytes()), 0);
    assert_eq!(incomplete_utf8_suffix(&"é".as_bytes()[..1]), 1);
    assert_eq!(incomplete_utf8_suffix(&"世".as_bytes()[..2]), 2);
    assert_eq!(incomplete_utf8_suffix(&"🎉".as_bytes()[..3]), 3);
    assert_eq!(incomplete_utf8_suffix(b"a\xff"), 0);
    assert_eq!(incomplete_utf8_suffix(b"\x80\x80\x80"), 0);
}

#[tokio::test]
async fn a_hidden_variable_reaches_no_command() {
    let executor = PtyExecutor::new()
        .with_size(24, 80)
        .with_env("OPSAI_HIDDEN_TEST", "s3cret")
        .without_env(&["OPSAI_HIDDEN_TEST".to_owned()]);
    let out = run_full(executor, "echo \"[${OPSAI_HIDDEN_TEST-unset}]\"", Duration::from_secs(20), None).await;
    let live = String::from_utf8_lossy(&out.live);
    assert!(live.contains("[unset]") && !live.contains("s3cret"), "{live:?}");
}
