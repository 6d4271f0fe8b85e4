//! What a fleet run must also get right (issue 24's review): the prompt names the hosts that
//! cannot be reached before anyone says yes, progress shows while hosts end, the model's
//! `timeout_s` holds on every host, `~` is each host's own home, and a refused kube call is
//! audited on every host's line like a refused command. Real sshd on loopback, the real binary.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::fleet::{Fleet, Kind, audit_lines, line_of};
use crate::support::mock_llm::*;
use crate::support::sshd::require;

fn configure(env: &TestEnv, fleet: &Fleet) {
    let config = json!({"ssh": {"options": fleet.ssh_options(), "control_persist_s": 30}});
    std::fs::write(env.config_path(), config.to_string()).unwrap();
}

fn opsai(env: &TestEnv, mock: &MockLlm, fleet: &Fleet) -> std::process::Command {
    configure(env, fleet);
    let mut cmd = env.std_cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url()).env("OPSAI_NONINTERACTIVE", "1");
    cmd
}

/// `--json` events of one type.
fn events(stdout: &[u8], kind: &str) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == kind)
        .collect()
}

/// A change on a terminal: the prompt says which hosts cannot be reached and why before the yes;
/// those hosts never run, are results with their reason, and have their own audit line.
#[test]
fn the_prompt_names_unreachable_hosts_and_they_end_not_run_with_their_reason() {
    use crate::support::pty::PtySession;
    if !require() {
        return;
    }
    let limit = Duration::from_secs(60);
    let fleet = Fleet::start(&[("web-1", Kind::Up("canary")), ("web-2", Kind::Down), ("web-3", Kind::Up("rest"))]);
    let log = fleet.path().join("roles.log");
    let change = format!("echo \"$OPSAI_FLEET_ROLE\" >> {}", log.display());
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": change, "why": "test"})),
        reply_text("Done."),
    ]);
    configure(&env, &fleet);
    let vars = env.terminal_vars(&mock.base_url());
    let script = format!("'{}' --hosts 'web-*' 'record the role'; echo \"rc=$?\"", env!("CARGO_BIN_EXE_opsai"));
    let mut session = PtySession::spawn("/bin/sh", &["-c", &script], &vars, env.user_home()).answer_cursor_queries();
    session.expect("[MEDIUM] on 3 hosts: web-[1:3]: echo", limit);
    session.expect("2 of 3 hosts reachable; these will not run:", limit);
    session.expect("web-2: unreachable: ssh: connect to host 127.0.0.1 port", limit);
    session.expect("[q] abort", limit);
    session.send("y");
    // The canary, then the one other reachable host.
    session.expect("[MEDIUM] on the other 1 host: echo", limit);
    session.expect_count("[q] abort", 2, limit);
    session.send("y");
    session.expect("rc=", limit);
    assert_eq!(session.wait(limit), 0);
    let written = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(written.lines().collect::<Vec<_>>(), ["canary", "rest"], "{}", session.screen());
    let lines = audit_lines(&env);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    let down = line_of(&lines, "web-2");
    assert!(down.contains("CONFIRMED: no") && down.contains("not run: unreachable: ssh: connect to host"), "{down}");
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("web-2") && observation.contains("unreachable"), "{observation}");
}

/// As hosts end, a person watching stderr sees how far the batch has got, before the slow host
/// is done; `-q` shows none of it.
#[test]
fn progress_shows_on_stderr_while_hosts_end_and_not_under_quiet() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("job-1", Kind::Up("fast")), ("job-2", Kind::Up("fast")), ("job-3", Kind::Up("slow"))]);
    let flag = fleet.path().join("go");
    let out = fleet.path().join("out");
    let change = format!(
        "if [ \"$OPSAI_FLEET_ROLE\" = slow ]; then while [ ! -e {flag} ]; do sleep 0.1; done; fi; echo ok >> {out}",
        flag = flag.display(),
        out = out.display()
    );
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": change, "why": "test"})),
        reply_text("Done."),
    ]);
    // -y: the canary (job-1) alone, then job-2 and job-3 as one batch; job-3 waits for the flag.
    let mut child = opsai(&env, &mock, &fleet)
        .args(["--hosts", "job-*", "-y", "record"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = Vec::new();
    for line in stderr.lines() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line.contains("job-[2:3]: 1/2 done") {
            // Only now may the slow host end: the line came while it still ran.
            assert!(!flag.exists());
            std::fs::write(&flag, "").unwrap();
        }
    }
    assert!(child.wait().unwrap().success(), "{seen:#?}");
    assert!(flag.exists(), "no progress line while job-3 still ran: {seen:#?}");
    assert!(seen.iter().any(|line| line.contains("job-[2:3]: 2/2 done")), "{seen:#?}");

    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": change, "why": "test"})),
        reply_text("Done."),
    ]);
    let quiet = opsai(&env, &mock, &fleet).args(["--hosts", "job-*", "-y", "-q", "record"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&quiet.stderr);
    assert!(quiet.status.success() && !stderr.contains("done"), "{stderr}");
}

/// `timeout_s` from the model bounds each host's run (within the configured maximum), as on one host.
#[test]
fn the_calls_timeout_holds_on_every_host() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("slow-1", Kind::Up("a")), ("slow-2", Kind::Up("a"))]);
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("t1", "run_command", json!({"command": "sleep 60", "why": "test", "timeout_s": 2})),
        reply_text("It timed out."),
    ]);
    let started = Instant::now();
    let output = opsai(&env, &mock, &fleet).args(["--hosts", "slow-*", "--json", "wait"]).output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(30), "the 2 s limit was not kept: {:?}", started.elapsed());
    let results = events(&output.stdout, "host_result");
    assert_eq!(results.len(), 2, "{}", String::from_utf8_lossy(&output.stdout));
    for result in results {
        assert_eq!(result["outcome"], "timed-out", "{result}");
    }
}

/// A `cwd` of `~/…` on a fleet is each host's own home, not this machine's.
#[test]
fn a_tilde_cwd_is_the_hosts_home() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("home-1", Kind::Up("a"))]);
    let out = fleet.path().join("pwd");
    let env = TestEnv::new();
    let remote_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let mock = MockLlm::start([
        reply_tool_call(
            "h1",
            "run_command",
            json!({"command": format!("pwd >> {}", out.display()), "cwd": "~", "why": "test"}),
        ),
        reply_text("Done."),
    ]);
    let output = opsai(&env, &mock, &fleet).args(["--hosts", "home-1", "-y", "where"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let pwd = std::fs::read_to_string(&out).unwrap_or_default();
    // This test's own HOME (opsai's) is a temp dir; the host's login home is the user's real one.
    assert_ne!(pwd.trim(), env.user_home().display().to_string());
    let home = std::fs::canonicalize(&remote_home).unwrap();
    assert_eq!(pwd.trim(), home.display().to_string(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// A kube call refused on a fleet is audited like a refused command there: on every host's line.
#[test]
fn a_refused_kube_call_on_a_fleet_is_on_every_hosts_audit_line() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("k-1", Kind::Down), ("k-2", Kind::Down)]);
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("k1", "list_pods", json!({"namespace": "kube-system"})),
        reply_text("Refused."),
    ]);
    let output = opsai(&env, &mock, &fleet).args(["--hosts", "k-*", "pods"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let observation = mock.chat_requests()[1].tool_result("k1").unwrap();
    assert!(observation.contains("no permission"), "{observation}");
    let lines = audit_lines(&env);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    for host in ["k-1", "k-2"] {
        let line = line_of(&lines, host);
        assert!(line.contains("CONFIRMED: no") && line.contains("kube.list_pods"), "{line}");
    }
}
