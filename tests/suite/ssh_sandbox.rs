//! Remote auto-run is contained too (issue 21 §4), against a real sshd on 127.0.0.1 whose sessions
//! get a chosen PATH (`SetEnv`): a host with bubblewrap, a host with this opsai, and a host with
//! neither, where only plain words run without asking. A `touch` the test's own allow rule rates
//! Safe stands for a classifier miss: the sandbox, not the policy, must stop it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::sshd::{HOST, Sshd, require};

/// The test's rule: `touch` is Safe (a classifier miss, on purpose).
const MISS: &str =
    r#", "safety": {"allow": [{"pattern": "touch", "risk": "safe", "reason": "a classifier miss, for the test"}]}"#;

fn run(command: &str, cwd: &Path) -> Value {
    json!({"command": command, "cwd": cwd.to_string_lossy(), "why": "test"})
}

fn opsai(env: &TestEnv, mock: &MockLlm, sshd: &Sshd) -> assert_cmd::Command {
    std::fs::write(env.config_path(), sshd.opsai_config(MISS)).unwrap();
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .args(["--ssh-host", HOST])
        .timeout(Duration::from_secs(90));
    cmd
}

fn status(env: &TestEnv, sshd: &Sshd) -> std::process::Output {
    std::fs::write(env.config_path(), sshd.opsai_config("")).unwrap();
    env.std_cmd().args(["sandbox", "--status", "--ssh-host", HOST]).output().unwrap()
}

/// `program` on this machine, or `None` (skipped; a failure under CI=true).
fn installed(program: &str) -> Option<PathBuf> {
    let out = std::process::Command::new("sh").args(["-c", &format!("command -v {program}")]).output().unwrap();
    if out.status.success() {
        return Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    }
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{program} is required under CI=true (.ci/run installs it)");
    crate::support::skipped(&format!("{program} is not installed"));
    None
}

/// A file in a home that is not the working directory's (`/home/opsai-canary-N/notes.txt`), removed
/// when dropped; `None` when `/home` is not writable here (not root).
struct Canary(PathBuf);

impl Canary {
    fn plant() -> Option<Canary> {
        let dir = PathBuf::from(format!("/home/opsai-canary-{}", rand::random::<u32>()));
        std::fs::create_dir(&dir).ok()?;
        std::fs::write(dir.join("notes.txt"), "CANARY-REMOTE-HOME\n").ok()?;
        Some(Canary(dir))
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_safe_command_on_a_host_with_bubblewrap_runs_inside_it() {
    if !require() || installed("bwrap").is_none() {
        return;
    }
    // No opsai on the host's PATH: bubblewrap is the one found.
    let sshd = Sshd::start_with("SetEnv PATH=/usr/bin:/bin:/usr/sbin:/sbin\n");
    let env = TestEnv::new();
    let out = status(&env, &sshd);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with(&format!("sandbox on {HOST}: available\n  bubblewrap (")), "{text}");

    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("plain.txt"), "VISIBLE-IN-WORKDIR\n").unwrap();
    let canary = Canary::plant();
    let home_read = match &canary {
        Some(canary) => format!("cat {}", canary.0.join("notes.txt").display()),
        None => "id".to_owned(),
    };
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("touch made-by-a-miss", work.path())),
        reply_tool_call("c2", "run_command", run(&home_read, work.path())),
        reply_tool_call("c3", "run_command", run("cat plain.txt", work.path())),
        reply_text("done"),
    ]);
    opsai(&env, &mock, &sshd).arg("try").assert().success();
    let requests = mock.chat_requests();
    let system = requests[0].messages()[0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.contains("Sandbox there for commands that run without asking: bubblewrap"), "{system}");
    let touched = requests[1].tool_result("c1").unwrap();
    assert!(touched.contains("Read-only file system"), "{touched}");
    assert!(!work.path().join("made-by-a-miss").exists(), "the write went through");
    let read = requests[2].tool_result("c2").unwrap();
    assert!(!read.contains("CANARY-REMOTE-HOME"), "another home was readable: {read}");
    assert!(requests[3].tool_result("c3").unwrap().contains("VISIBLE-IN-WORKDIR"));
    let audit = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap();
    assert!(audit.contains("CMD: \"touch made-by-a-miss\"") && audit.contains("CONFIRMED: auto"), "{audit}");
    sshd.disconnect(env.opsai_home());
}

#[test]
fn a_host_with_this_opsai_applies_opsais_own_sandbox() {
    if !require() {
        return;
    }
    let env = TestEnv::new();
    let here = env.cmd().args(["sandbox", "--status"]).output().unwrap();
    if !here.status.success() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "the sandbox is required under CI=true");
        crate::support::skipped("no local sandbox, so none for the host's opsai either");
        return;
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_opsai"));
    let bin_dir = bin.parent().unwrap();
    let sshd = Sshd::start_with(&format!("SetEnv PATH={}:/usr/bin:/bin\n", bin_dir.display()));
    let out = status(&env, &sshd);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!("sandbox on {HOST}: available\n  opsai's own sandbox ({}", bin.display())),
        "{text}"
    );

    let work = tempfile::tempdir().unwrap();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("touch made-by-a-miss", work.path())),
        reply_text("done"),
    ]);
    opsai(&env, &mock, &sshd).arg("try").assert().success();
    let touched = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(!work.path().join("made-by-a-miss").exists(), "the write went through: {touched}");
    sshd.disconnect(env.opsai_home());
}

#[test]
fn a_host_without_a_sandbox_runs_only_plain_words_and_asks_for_the_rest() {
    if !require() {
        return;
    }
    // The host's PATH holds a shell and a few tools, but neither opsai nor bwrap.
    let bin = tempfile::tempdir().unwrap();
    for tool in ["sh", "bash", "env", "ls", "cat", "touch", "id", "uname", "head"] {
        if let Some(path) = ["/usr/bin", "/bin"].iter().map(|dir| Path::new(dir).join(tool)).find(|p| p.exists()) {
            std::os::unix::fs::symlink(path, bin.path().join(tool)).unwrap();
        }
    }
    let sshd = Sshd::start_with(&format!("SetEnv PATH={}\n", bin.path().display()));
    let env = TestEnv::new();
    let out = status(&env, &sshd);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.starts_with(&format!("sandbox on {HOST}: unavailable\n  none (")), "{text}");
    assert!(text.contains("neither opsai nor bwrap is installed there"), "{text}");

    let work = tempfile::tempdir().unwrap();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("ls $HOME", work.path())),
        reply_tool_call("c2", "run_command", run("touch made-by-plain-words", work.path())),
        reply_text("done"),
    ]);
    // A refusal for want of a terminal is exit 3.
    opsai(&env, &mock, &sshd).arg("try").assert().code(3).stderr(predicate::str::contains("plain words"));
    let requests = mock.chat_requests();
    let refused = requests[1].tool_result("c1").unwrap();
    assert!(refused.contains("refused") && refused.contains("`$` is not a plain word character"), "{refused}");
    assert!(work.path().join("made-by-plain-words").exists(), "plain words run uncontained there");
    sshd.disconnect(env.opsai_home());
}

#[test]
fn an_analysis_on_the_host_names_a_ports_owner_past_the_hosts_sandbox() {
    if !require() || installed("bwrap").is_none() {
        return;
    }
    let sshd = Sshd::start_with("SetEnv PATH=/usr/bin:/bin:/usr/sbin:/sbin\n");
    let env = TestEnv::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mock = MockLlm::start([
        reply_tool_call("c1", "analyze", json!({"target": port.to_string(), "type": "port"})),
        reply_text("done"),
    ]);
    opsai(&env, &mock, &sshd).arg("who has the port").assert().success();
    let report = mock.chat_requests()[1].tool_result("c1").unwrap();
    // The template's `ss` ran in the host's sandbox (its own PID namespace: no owner there); the
    // fixed reader names it.
    assert!(report.contains(&format!("$ ss -ltnu sport = :'{port}'")), "{report}");
    assert!(
        report.contains(&format!("(run by opsai outside the host's sandbox) ss -Hltnup sport = :{port}")),
        "{report}"
    );
    assert!(report.contains(&format!("pid={}", std::process::id())), "{report}");
    drop(listener);
    sshd.disconnect(env.opsai_home());
}

#[test]
fn the_status_of_a_host_that_cannot_be_reached_says_so_and_exits_1() {
    if !require() {
        return;
    }
    let sshd = Sshd::start();
    let env = TestEnv::new();
    std::fs::write(env.config_path(), sshd.opsai_config("")).unwrap();
    env.cmd()
        .args(["sandbox", "--status", "--ssh-host", "no-such-host.invalid"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with("sandbox on no-such-host.invalid: unknown: cannot connect"));
    // The flag belongs to --status.
    env.cmd().args(["sandbox", "--ssh-host", HOST, "--", "true"]).assert().code(2);
}
