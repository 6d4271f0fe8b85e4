//! Issue 23, the first run: with no model reachable the REPL says so at start, under its banner,
//! with the command that fixes it; with nothing configured it looks for the usual local servers
//! and offers the one it finds (asked on a terminal and saved; said in one line without one).
//!
//! The search's list is pointed at the test's own mock server with `OPSAI_TEST_LOCAL_SERVERS`
//! (for tests only): the real default ports (8000, 8080, …) may be taken on a test machine, so a
//! test cannot count on binding them. Ollama's default endpoint is the default configuration, so
//! the tests that need it unreachable skip (with the reason) where something listens on 11434.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::support::mock_llm::*;
use crate::support::tmux::{Tmux, require};
use crate::support::{TestEnv, skipped};

const LIMIT: Duration = Duration::from_secs(30);

/// A loopback URL where nothing listens (a port just freed).
fn closed_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

/// False (the test skipped, the reason printed) when something listens on Ollama's default port.
fn ollama_port_free() -> bool {
    let taken =
        std::net::TcpStream::connect_timeout(&"127.0.0.1:11434".parse().unwrap(), Duration::from_secs(1)).is_ok();
    if taken {
        skipped("something listens on 127.0.0.1:11434 (Ollama's default), so the default model is reachable here");
    }
    !taken
}

/// The REPL in tmux with exactly `vars` (no `OPSAI_BASE_URL` unless given).
fn repl(env: &TestEnv, vars: &[(&'static str, String)]) -> Tmux {
    let mut all = vec![
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPSAI_HOME", env.opsai_home().display().to_string()),
        ("HOME", env.user_home().display().to_string()),
        ("NO_COLOR", "1".to_owned()),
    ];
    all.extend(vars.iter().cloned());
    Tmux::start(env!("CARGO_BIN_EXE_opsai"), &[], &all, env.user_home())
}

#[test]
fn the_banner_says_at_once_that_the_configured_model_is_unreachable_and_how_to_fix_it() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let url = closed_url();
    let started = Instant::now();
    let term = repl(&env, &[("OPSAI_BASE_URL", url.clone())]);
    let screen = term.wait_for("Agent >", LIMIT);
    let took = started.elapsed();
    let banner = screen.lines().position(|l| l.starts_with("opsai · qwen2.5:7b at ")).expect(&screen);
    let warning = screen.lines().nth(banner + 1).unwrap_or_default();
    assert!(warning.starts_with(&format!("opsai: no model: nothing answers at {url}")), "{screen}");
    assert!(screen.contains("`opsai config set-llm`"), "the command that fixes it: {screen}");
    // Configured by the person: no search for other servers.
    assert!(!screen.contains("found "), "{screen}");
    assert!(took < Duration::from_secs(10), "the prompt waited {took:?}");
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
}

#[test]
fn a_reachable_model_gets_no_warning_and_no_request() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([]);
    let term = repl(&env, &[("OPSAI_BASE_URL", mock.base_url())]);
    let screen = term.wait_for("Agent >", LIMIT);
    assert!(!screen.contains("no model"), "{screen}");
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
    assert_eq!(mock.requests().len(), 0, "the check connects; it asks the model server nothing");
}

#[test]
fn with_nothing_configured_a_local_server_is_offered_saved_and_used() {
    if !require("tmux") || !ollama_port_free() {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_models(&["local-7b", "other"]), reply_text("Hello from LM Studio.")]);
    let servers = format!("vLLM={},LM Studio={}", closed_url(), mock.base_url());
    let term = repl(&env, &[("OPSAI_TEST_LOCAL_SERVERS", servers)]);
    let offer = format!("found LM Studio at {} with the model local-7b. Use it", mock.base_url());
    term.wait_for("[y/N]", LIMIT);
    let screen = term.screen().replace('\n', "");
    assert!(screen.contains(&offer), "{screen}");
    term.line("y");
    let screen = term.wait_for("Agent >", LIMIT);
    assert!(screen.contains(&format!("opsai · local-7b at {}", mock.base_url())), "{screen}");
    assert!(!screen.contains("no model:"), "the model now answers: {screen}");
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(env.config_path()).unwrap()).unwrap();
    assert_eq!(saved["llm"]["base_url"], mock.base_url().as_str());
    assert_eq!(saved["llm"]["model"], "local-7b");
    term.line("hi");
    // Ctrl-D once the next prompt is drawn: one pressed while the turn ends is lost.
    term.wait_until(LIMIT, "the answer and the next prompt", |s| {
        s.contains("Hello from LM Studio.") && s.lines().filter(|l| l.starts_with("Agent >")).count() == 2
    });
    assert_eq!(mock.chat_requests()[0].json()["model"], "local-7b");
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
}

#[test]
fn without_a_terminal_the_found_server_is_only_said_and_nothing_is_saved() {
    if !ollama_port_free() {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_models(&["local-7b"])]);
    let servers = format!("llama.cpp server={}", mock.base_url());
    let out = env.cmd().env("OPSAI_TEST_LOCAL_SERVERS", &servers).write_stdin("").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("found llama.cpp server at {} (model local-7b); to use it", mock.base_url())),
        "{err}"
    );
    assert!(
        err.contains(
            "no model: nothing answers at http://localhost:11434/v1 (Ollama's default). Start it: `ollama serve`"
        ),
        "{err}"
    );
    let saved = std::fs::read_to_string(env.config_path()).unwrap_or_default();
    assert!(!saved.contains("local-7b"), "nothing saved without a yes: {saved}");
}

#[test]
fn a_one_shot_run_that_finds_no_model_names_the_local_server_found() {
    if !ollama_port_free() {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_models(&["local-7b"])]);
    let servers = format!("LM Studio={}", mock.base_url());
    let out = env.cmd().env("OPSAI_TEST_LOCAL_SERVERS", &servers).arg("hello").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let connect = err.find("cannot connect to Ollama at http://localhost:11434/v1").expect(&err);
    let found = err.find(&format!("found LM Studio at {} (model local-7b); to use it", mock.base_url())).expect(&err);
    assert!(connect < found, "the failure first, then what to use instead: {err}");
}
