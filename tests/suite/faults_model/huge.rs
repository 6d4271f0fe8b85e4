//! Ten-megabyte replies: an answer, an error body, a command.

use std::path::Path;

use super::*;

/// Runs opsai under GNU time: (output, peak resident set in KiB), or `None` without `/usr/bin/time`.
fn run_measured(env: &TestEnv, mock: &MockLlm, args: &[&str]) -> Option<(std::process::Output, u64)> {
    let time = Path::new("/usr/bin/time");
    if !time.exists() {
        return None;
    }
    let report = env.opsai_home().join("peak-rss");
    let out = assert_cmd::Command::new(time)
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(env!("CARGO_BIN_EXE_opsai"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPSAI_HOME", env.opsai_home())
        .env("HOME", env.user_home())
        .env("NO_COLOR", "1")
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .current_dir(env.user_home())
        .timeout(RUN_LIMIT)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let kib = text.lines().last().and_then(|l| l.trim().parse().ok())?;
    Some((out, kib))
}

#[test]
fn a_ten_megabyte_answer_is_printed_whole_in_bounded_memory() {
    let env = TestEnv::new();
    let piece = "0123456789abcdef".repeat(4096); // 64 KiB of content per delta, 160 of them
    let mut payloads = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    payloads.extend((0..160).map(|_| chunk(json!({"content": piece}), None)));
    payloads.extend([chunk(json!({}), Some("stop")), "[DONE]".to_owned()]);
    let mock = MockLlm::start([reply_sse_events(&payloads)]);
    let Some((out, peak_kib)) = run_measured(&env, &mock, &["-q", "a runaway model"]) else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "/usr/bin/time is missing");
        eprintln!("note: /usr/bin/time is missing; the memory bound is not checked");
        return;
    };
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // No limit on an answer's size: all of it is printed (and saved), as the model sent it.
    assert_eq!(out.stdout.len(), 160 * piece.len() + 1);
    // About 25 MiB at rest and 80 MiB here: a few copies of the reply, never a runaway.
    assert!(peak_kib < 256 * 1024, "peak RSS {} MiB for a 10 MiB reply", peak_kib / 1024);
    assert_saved(&env, 2, &["a runaway model"]);
}

#[test]
fn a_ten_megabyte_command_is_refused_as_too_long_to_assess() {
    let env = TestEnv::new();
    let command = format!("echo {}", "a".repeat(10 * 1024 * 1024));
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&command)), reply_text("It was refused.")]);
    let out = opsai(&env, &mock).arg("huge command").output().unwrap();
    assert_eq!(out.status.code(), Some(3), "High without a terminal is refused");
    assert!(stderr(&out).contains("too long to assess"), "the reason is shown");
    assert_eq!(
        mock.chat_requests()[1].tool_result("c1").as_deref(),
        Some("refused: high requires confirmation in a terminal")
    );
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1);
    assert!(log.contains("RISK: high | CONFIRMED: no") && log.len() < 64 * 1024, "{} bytes", log.len());
}

#[test]
fn a_ten_megabyte_error_body_is_cut_to_a_readable_message() {
    let env = TestEnv::new();
    let body = format!("{{\"error\": {{\"message\": \"{}\"}}}}", "overloaded ".repeat(1_000_000));
    let mock = MockLlm::start([reply_status(500, &body), reply_status(500, &body), reply_status(500, &body)]);
    let out = opsai(&env, &mock).arg("x").output().unwrap();
    assert_model_failure(&out, &["HTTP 500", "overloaded"]);
    assert!(out.stderr.len() < 2_000, "the error is clipped, stderr is {} bytes", out.stderr.len());
}
