//! `opsai --hosts PATTERN TASK` against a fleet of real sshd on loopback and the mock model: the
//! hosts come from the ssh config opsai's ssh reads (`-F`), the model's command runs on every one
//! of them, the person sees the grouped result, the model the bounded grouped view, the audit log
//! one line per host; a change rolls out canary first, and with nobody to ask runs nowhere.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::fleet::{Fleet, Kind, audit_lines, line_of, processes_with};
use crate::support::mock_llm::*;
use crate::support::sshd::require;

fn opsai(env: &TestEnv, mock: &MockLlm, fleet: &Fleet) -> assert_cmd::Command {
    let config = json!({"ssh": {"options": fleet.ssh_options(), "control_persist_s": 30}});
    std::fs::write(env.config_path(), config.to_string()).unwrap();
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .env_remove("ANSIBLE_INVENTORY")
        .timeout(Duration::from_secs(120));
    cmd
}

fn run(command: &str) -> Value {
    json!({"command": command, "why": "test"})
}

#[test]
fn a_safe_command_runs_on_every_selected_host_grouped_for_the_person_and_bounded_for_the_model() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[
        ("app-1", Kind::Up("a")),
        ("app-2", Kind::Up("a")),
        ("app-3", Kind::Down),
        ("db-1", Kind::Up("b")),
    ]);
    let env = TestEnv::new();
    let mock =
        MockLlm::start([reply_tool_call("c1", "run_command", run("echo fleet-ok")), reply_text("Two answered.")]);
    let output = opsai(&env, &mock, &fleet)
        .args(["--hosts", "app-*", "--forks", "1", "--json", "check the app hosts"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    let events: Vec<Value> = stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    let shown: String =
        events.iter().filter(|event| event["type"] == "output").filter_map(|event| event["chunk"].as_str()).collect();
    assert!(shown.contains("2 hosts: app-[1:2] · exit 0"), "the person sees the group: {shown}");
    assert!(shown.contains("fleet-ok"), "{shown}");
    assert!(shown.contains("app-3") && shown.contains("unreachable"), "and the host that is down: {shown}");
    assert!(!shown.contains("db-1"), "db-1 was not selected: {shown}");
    let hosts: Vec<(&str, &str, Option<i64>)> = events
        .iter()
        .filter(|event| event["type"] == "host_result")
        .map(|event| (event["host"].as_str().unwrap(), event["outcome"].as_str().unwrap(), event["exit_code"].as_i64()))
        .collect();
    assert_eq!(
        hosts,
        [("app-1", "ran", Some(0)), ("app-2", "ran", Some(0)), ("app-3", "unreachable", None)],
        "one host_result per host, in inventory order"
    );

    let requests = mock.chat_requests();
    let system = requests[0].messages()[0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.contains("3 hosts: app-[1:3]") && system.contains("in parallel over ssh"), "{system}");
    let observation = requests[1].tool_result("c1").unwrap();
    assert!(observation.contains("`echo fleet-ok` on 3 hosts"), "{observation}");
    assert!(observation.contains("2 hosts: app-[1:2]") && observation.contains("fleet-ok"), "{observation}");
    assert!(observation.contains("app-3") && observation.contains("unreachable"), "{observation}");
    assert!(observation.len() < opsai::fleet::fanout::MODEL_VIEW_MAX, "bounded: {}", observation.len());

    let lines = audit_lines(&env);
    assert_eq!(lines.len(), 3, "one line per host: {lines:#?}");
    for host in ["app-1", "app-2"] {
        let line = line_of(&lines, host);
        assert!(line.contains("echo fleet-ok") && line.contains("EXIT: 0"), "{line}");
    }
    assert!(line_of(&lines, "app-3").contains("unreachable"), "{lines:#?}");
}

#[test]
fn a_change_rolls_out_canary_first_with_yes_and_runs_nowhere_without_anyone_to_ask() {
    if !require() {
        return;
    }
    let fleet =
        Fleet::start(&[("web-1", Kind::Up("canary")), ("web-2", Kind::Up("rest")), ("web-3", Kind::Up("rest"))]);
    let log = fleet.path().join("rollout.log");
    let change = format!("echo \"$OPSAI_FLEET_ROLE\" >> {}", log.display());

    // No terminal and no -y: refused on every host, nothing ran anywhere, each host's line says so.
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&change)), reply_text("Refused.")]);
    let status = opsai(&env, &mock, &fleet).args(["--hosts", "web-*", "record the role"]).output().unwrap();
    assert_eq!(status.status.code(), Some(3), "{}", String::from_utf8_lossy(&status.stderr));
    assert!(!log.exists(), "nothing ran on any host");
    let lines = audit_lines(&env);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    for host in ["web-1", "web-2", "web-3"] {
        let line = line_of(&lines, host);
        assert!(line.contains("CONFIRMED: no") && line.contains("refused"), "{line}");
    }

    // With -y: the canary alone first, then the rest.
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&change)), reply_text("Done.")]);
    opsai(&env, &mock, &fleet).args(["--hosts", "web-*", "-y", "record the role"]).assert().success();
    let written = std::fs::read_to_string(&log).unwrap();
    let roles: Vec<&str> = written.lines().collect();
    assert_eq!(roles, ["canary", "rest", "rest"], "the canary ran before the rest");
    let lines = audit_lines(&env);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    let order: Vec<usize> = ["web-1", "web-2", "web-3"]
        .iter()
        .map(|host| lines.iter().position(|line| line.contains(&format!("| HOST: {host} |"))).unwrap())
        .collect();
    assert_eq!(order[0], 0, "the canary's line first: {lines:#?}");
    for host in ["web-1", "web-2", "web-3"] {
        assert!(line_of(&lines, host).contains("EXIT: 0"), "{lines:#?}");
    }
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("3 hosts: web-[1:3] · exit 0"), "{observation}");
}

#[test]
fn a_pattern_that_selects_nothing_is_an_error_before_any_model_request() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("app-1", Kind::Down)]);
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("never")]);
    let output = opsai(&env, &mock, &fleet).args(["--hosts", "nosuch-*", "hello"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nosuch-*"), "the message names the pattern: {stderr}");
    assert!(mock.chat_requests().is_empty(), "no model request");
    // --hosts and --ssh-host are one or the other.
    let output = opsai(&env, &mock, &fleet).args(["--hosts", "app-1", "--ssh-host", "x", "hello"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "a usage error");
    assert!(mock.chat_requests().is_empty());
}

#[test]
fn the_repl_selects_a_fleet_with_slash_hosts_and_leaves_it_with_hosts_off() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("app-1", Kind::Up("a")), ("app-2", Kind::Up("a"))]);
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("echo on-the-fleet")),
        reply_text("ran on both"),
        reply_tool_call("c2", "read_file", json!({"path": "/etc/hostname"})),
        reply_text("refused"),
        reply_tool_call("c3", "run_command", run("echo back-here")),
        reply_text("ran here"),
    ]);
    let output = opsai(&env, &mock, &fleet)
        .args(["--forks", "1"])
        .write_stdin("/hosts nosuch-*\n/hosts app-*\n/hosts\nfirst\nsecond\n/hosts off\nthird\n")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nosuch-*"), "an empty selection is said: {stderr}");
    assert!(stderr.contains("2 hosts: app-[1:2]"), "`/hosts` shows the set: {stderr}");
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 6, "{stderr}");
    assert!(requests[1].tool_result("c1").unwrap().contains("2 hosts: app-[1:2] · exit 0"));
    let refused = requests[3].tool_result("c2").unwrap();
    assert!(refused.contains("refused") && refused.contains("--ssh-host"), "file tools refuse on a fleet: {refused}");
    let system = requests[4].messages()[0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(!system.contains("in parallel over ssh"), "the fleet is gone from the prompt: {system}");
    let lines = audit_lines(&env);
    assert_eq!(lines.len(), 3, "two fleet lines and one here: {lines:#?}");
    assert!(line_of(&lines, "app-1").contains("on-the-fleet") || line_of(&lines, "app-1").contains("EXIT: 0"));
    line_of(&lines, "app-2");
    assert!(lines[2].contains("echo back-here") && !lines[2].contains("HOST:"), "{lines:#?}");
}

/// `/host local` (like `/host HOST`) ends a fleet: the next command runs here only, and the model
/// is no longer told about the hosts.
#[test]
fn slash_host_local_ends_the_fleet() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("app-1", Kind::Up("a")), ("app-2", Kind::Up("a"))]);
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run("echo back-here")), reply_text("ran here")]);
    let output = opsai(&env, &mock, &fleet).write_stdin("/hosts app-*\n/host local\nthird\n").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the fleet is off"), "{stderr}");
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 2, "{stderr}");
    let system = requests[0].messages()[0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(!system.contains("in parallel over ssh"), "the fleet is gone from the prompt: {system}");
    let lines = audit_lines(&env);
    assert_eq!(lines.len(), 1, "one line, here: {lines:#?}");
    assert!(lines[0].contains("echo back-here") && !lines[0].contains("HOST:"), "{lines:#?}");
}

/// A change on a real terminal: the one prompt names the hosts, and after a good canary the person
/// is asked again before the rest; a no there leaves the rest not run (and audited as refused).
#[test]
fn on_a_terminal_the_prompt_names_the_hosts_and_the_rest_waits_for_a_second_yes() {
    use crate::support::pty::PtySession;
    if !require() {
        return;
    }
    let limit = Duration::from_secs(60);
    let fleet = Fleet::start(&[("web-1", Kind::Up("canary")), ("web-2", Kind::Up("rest"))]);
    for (second, ran) in [("y", vec!["canary", "rest"]), ("n", vec!["canary"])] {
        let log = fleet.path().join(format!("terminal-{second}.log"));
        let change = format!("echo \"$OPSAI_FLEET_ROLE\" >> {}", log.display());
        let env = TestEnv::new();
        let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&change)), reply_text("Done.")]);
        let config = json!({"ssh": {"options": fleet.ssh_options(), "control_persist_s": 30}});
        std::fs::write(env.config_path(), config.to_string()).unwrap();
        let vars = env.terminal_vars(&mock.base_url());
        let script = format!("'{}' --hosts 'web-*' 'record the role'; echo \"rc=$?\"", env!("CARGO_BIN_EXE_opsai"));
        let mut session =
            PtySession::spawn("/bin/sh", &["-c", &script], &vars, env.user_home()).answer_cursor_queries();
        session.expect("[MEDIUM] on 2 hosts: web-[1:2]: echo", limit);
        session.expect("[q] abort", limit);
        session.send("y");
        session.expect("[MEDIUM] on the other 1 host: echo", limit);
        session.expect_count("[q] abort", 2, limit);
        session.send(second);
        session.expect("rc=", limit);
        assert_eq!(session.wait(limit), 0);
        let written = std::fs::read_to_string(&log).unwrap_or_default();
        assert_eq!(written.lines().collect::<Vec<_>>(), ran, "answer {second}:\n{}", session.screen());
        let lines = audit_lines(&env);
        assert!(line_of(&lines, "web-1").contains("CONFIRMED: yes"), "{lines:#?}");
        let rest = line_of(&lines, "web-2");
        if second == "n" {
            assert!(rest.contains("CONFIRMED: no") && rest.contains("not run: stopped after the canary"), "{rest}");
        } else {
            assert!(rest.contains("CONFIRMED: yes") && rest.contains("EXIT: 0"), "{rest}");
        }
    }
}

#[test]
fn ctrl_c_ends_the_command_on_every_host_and_the_model_hears_which_ran() {
    use crate::support::pty::PtySession;
    if !require() {
        return;
    }
    let limit = Duration::from_secs(60);
    let fleet = Fleet::start(&[("job-1", Kind::Up("a")), ("job-2", Kind::Up("a"))]);
    // A duration no other process uses, to find the remote `sleep`s.
    let sleep = format!("sleep 1000.{}3", std::process::id());
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("c1", "run_command", run(&sleep)), reply_text("It was stopped.")]);
    let config = json!({"ssh": {"options": fleet.ssh_options(), "control_persist_s": 30}});
    std::fs::write(env.config_path(), config.to_string()).unwrap();
    let vars = env.terminal_vars(&mock.base_url());
    let started = std::time::Instant::now();
    // opsai itself on the terminal: Ctrl-C reaches the whole foreground group, and a shell around
    // it would die of it.
    let args = ["--hosts", "job-*", "wait on both"];
    let mut session =
        PtySession::spawn(env!("CARGO_BIN_EXE_opsai"), &args, &vars, env.user_home()).answer_cursor_queries();
    let both = opsai::testing::wait_until(limit, || processes_with(&sleep) >= 2);
    assert!(both, "the command never ran on both hosts: {}", session.screen());
    session.send("\x03");
    session.expect("It was stopped.", limit);
    assert_eq!(session.wait(limit), 0, "the turn goes on after a cancelled command");
    assert!(started.elapsed() < Duration::from_secs(40), "the sleeps were not cancelled");
    let gone = opsai::testing::wait_until(Duration::from_secs(10), || processes_with(&sleep) == 0);
    assert!(gone, "left behind on a host: {}", processes_with(&sleep));
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("cancelled") && observation.contains("job-[1:2]"), "{observation}");
    let lines = audit_lines(&env);
    assert_eq!(lines.len(), 2, "{lines:#?}");
}
