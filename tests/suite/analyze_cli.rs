//! Ops-object analysis and the template cache through the real binary.

use std::time::Duration;

use predicates::prelude::*;

use crate::support::TestEnv;

fn cache_file(env: &TestEnv) -> std::path::PathBuf {
    env.opsai_home().join("cache").join("analyze_templates.json")
}

const CACHED: &str = r#"{
  "redis": {"commands": ["redis-cli -h {name} info"], "created_at": "2026-11-22T10:00:00Z", "hit_count": 15}
}"#;

#[test]
fn cache_list_shows_types_commands_and_hits_then_clear_empties_it() {
    let env = TestEnv::new();
    std::fs::create_dir_all(cache_file(&env).parent().unwrap()).unwrap();
    std::fs::write(cache_file(&env), CACHED).unwrap();
    env.cmd()
        .args(["cache", "list"])
        .timeout(Duration::from_secs(30))
        .assert()
        .success()
        .stdout(predicate::str::contains("redis").and(predicate::str::contains("used 15 times")))
        .stdout(predicate::str::contains("redis-cli -h {name} info"));
    env.cmd()
        .args(["cache", "clear"])
        .timeout(Duration::from_secs(30))
        .assert()
        .success()
        .stdout(predicate::str::contains("cleared 1 cached template"));
    env.cmd().args(["cache", "list"]).timeout(Duration::from_secs(30)).assert().success().stdout("");
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(cache_file(&env)).unwrap()).unwrap();
    assert_eq!(saved, serde_json::json!({}));
}

#[test]
fn corrupt_cache_warns_is_moved_aside_and_is_not_fatal() {
    let env = TestEnv::new();
    std::fs::create_dir_all(cache_file(&env).parent().unwrap()).unwrap();
    std::fs::write(cache_file(&env), "{\"redis\": [oops").unwrap();
    env.cmd()
        .args(["cache", "list"])
        .timeout(Duration::from_secs(30))
        .assert()
        .success()
        .stderr(predicate::str::contains("corrupt"));
    let aside = cache_file(&env).with_extension("json.corrupt");
    assert_eq!(std::fs::read_to_string(aside).unwrap(), "{\"redis\": [oops");
    env.cmd().args(["cache", "clear"]).timeout(Duration::from_secs(30)).assert().success();
    assert!(cache_file(&env).exists());
}

use serde_json::json;

use crate::support::mock_llm::*;

/// A directory of fake `docker`, `systemctl`, `ss`, `lsof` scripts that print canned output and
/// append their argv (one line per call, words separated by `|`) to `argv.log` beside them, in one
/// write each: the analyses run probes in parallel, and lines written piecewise interleaved.
struct FakeBin {
    dir: tempfile::TempDir,
}

impl FakeBin {
    fn new() -> Self {
        Self::with(&[])
    }

    /// The default scripts, with `overrides` (name, body) replacing or adding some.
    fn with(overrides: &[(&str, &str)]) -> Self {
        let dir = tempfile::Builder::new().prefix("opsai-fakebin-").tempdir().unwrap();
        let log = dir.path().join("argv.log");
        let scripts = [
            (
                "docker",
                r#"case "$1" in
  ps) printf 'compoder-mongo\nweb\n' ;;
  inspect) for n; do :; done; printf '[{"Name": "/%s", "Config": {"Image": "mongo:5.0.18"}, "State": {"Status": "running"}}]\n' "$n" ;;
  logs) printf 'Waiting for connections on port 27017\n' ;;
  *) exit 1 ;;
esac"#,
            ),
            ("systemctl", "exit 1"),
            ("ss", "printf 'LISTEN 0 4096 *:8080 users:((\"nginx\",pid=42))\\n'"),
            ("lsof", "printf 'nginx 42 root 6u IPv4 TCP *:8080 (LISTEN)\\n'"),
            ("journalctl", "printf -- '-- No entries --\\n'"),
        ];
        let mut scripts: Vec<(&str, &str)> =
            scripts.into_iter().filter(|(name, _)| !overrides.iter().any(|(o, _)| o == name)).collect();
        scripts.extend_from_slice(overrides);
        for (name, body) in scripts {
            let path = dir.path().join(name);
            let script = format!(
                "#!/bin/sh\nline={name}; for a in \"$@\"; do line=\"$line|$a\"; done; printf '%s\\n' \"$line\" >> '{}'\n{body}\n",
                log.display()
            );
            opsai::testing::write_program(&path, script);
        }
        Self { dir }
    }

    fn path_var(&self) -> String {
        format!("{}:{}", self.dir.path().display(), std::env::var("PATH").unwrap_or_default())
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("argv.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

fn opsai(env: &TestEnv, mock: &MockLlm, bin: &FakeBin) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .env("PATH", bin.path_var())
        // The fake programs log their argv to a file, which the sandbox's read-only filesystem forbids.
        .env("OPSAI_SANDBOX", "off")
        .timeout(Duration::from_secs(120));
    cmd
}

/// The built-in container template's `docker inspect --format … NAME` ran for `name`.
fn inspected(calls: &[String], name: &str) -> bool {
    calls.iter().any(|c| c.starts_with("docker|inspect|--format|") && c.ends_with(&format!("|{name}")))
}

fn all_text(mock: &MockLlm) -> String {
    mock.chat_requests().iter().map(|r| r.body.clone()).collect::<Vec<_>>().join("\n")
}

#[test]
fn explain_a_container_runs_the_builtin_template_and_prints_the_summary() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let mock = MockLlm::start([reply_text("A MongoDB 5.0.18 database, running, listening on 27017.")]);
    opsai(&env, &mock, &bin)
        .args(["explain", "compoder-mongo"])
        .assert()
        .success()
        .stdout(predicate::str::contains("A MongoDB 5.0.18 database"));
    let calls = bin.calls();
    assert!(inspected(&calls, "compoder-mongo"), "{calls:?}");
    assert!(calls.contains(&"docker|logs|--tail|20|compoder-mongo".to_owned()), "{calls:?}");
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 1, "one summary request, no template generation");
    let sent = all_text(&mock);
    assert!(sent.contains("mongo:5.0.18"), "inspect output reaches the model");
    assert!(sent.contains("Waiting for connections on port 27017"), "logs reach the model");
    let audit = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default();
    assert!(audit.contains("TOOL: analyze") && audit.contains("docker logs --tail 20"), "{audit}");
}

#[test]
fn an_injected_target_name_stays_one_argument() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let evil = "x'; touch pwned; '";
    let mock = MockLlm::start([
        reply_tool_call("call_1", "analyze", json!({"target": evil, "type": "container"})),
        reply_text("nothing there"),
    ]);
    opsai(&env, &mock, &bin).args(["what is this container", "x"]).assert().success();
    assert!(!env.user_home().join("pwned").exists());
    let calls = bin.calls();
    assert!(inspected(&calls, evil), "{calls:?}");
    mock.chat_requests()[1].assert_tool_calls_answered();
}

/// Requests without tools: analyze's template generation (the agent's own requests offer tools).
fn generation_requests(mock: &MockLlm) -> Vec<RecordedRequest> {
    mock.chat_requests().into_iter().filter(|r| r.json()["tools"].as_array().is_none_or(Vec::is_empty)).collect()
}

fn cached(env: &TestEnv) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(cache_file(env)).unwrap()).unwrap()
}

#[test]
fn a_generated_type_is_validated_cached_and_reused() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let mock = MockLlm::start([
        reply_tool_call("call_1", "analyze", json!({"target": "cache-1", "type": "redis"})),
        // The generation request's reply: one read-only command, one that is not.
        reply_text("```json\n[\"docker logs --tail 5 {name}\", \"docker exec {name} redis-cli flushall\"]\n```"),
        reply_text("A Redis 7.2.4 server."),
    ]);
    opsai(&env, &mock, &bin).args(["what is cache-1"]).assert().success().stdout(predicate::str::contains("Redis"));
    let generation = generation_requests(&mock);
    assert_eq!(generation.len(), 1, "one template-generation request");
    assert!(generation[0].body.contains("Object type: redis"), "{}", generation[0].body);
    let requests = mock.chat_requests();
    let observed = requests[2].tool_result("call_1").unwrap();
    assert!(
        observed.contains("$ docker logs --tail 5 'cache-1'") && observed.contains("Waiting for connections"),
        "{observed}"
    );
    assert!(observed.contains("not read-only: dropped"), "{observed}");
    assert_eq!(cached(&env)["redis"]["commands"], json!(["docker logs --tail 5 {name}"]));
    assert_eq!(cached(&env)["redis"]["hit_count"], 0);

    // Second run: the cached template is used without any generation request.
    let again = MockLlm::start([
        reply_tool_call("call_1", "analyze", json!({"target": "cache-2", "type": "Redis"})),
        reply_text("Redis again."),
    ]);
    opsai(&env, &again, &bin).args(["what is cache-2"]).assert().success();
    assert!(generation_requests(&again).is_empty());
    let observed = again.chat_requests()[1].tool_result("call_1").unwrap();
    assert!(observed.contains("$ docker logs --tail 5 'cache-2'"), "{observed}");
    assert_eq!(cached(&env)["redis"]["hit_count"], 1);
    assert!(!bin.calls().iter().any(|c| c.contains("flushall")));
}

#[test]
fn a_generation_that_fails_or_holds_nothing_safe_is_an_observation_not_a_crash() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let mock = MockLlm::start([
        reply_tool_call("call_1", "analyze", json!({"target": "q1", "type": "rabbitmq"})),
        reply_text(r#"["docker rm -f {name}", "docker exec {name} rabbitmqctl stop_app"]"#),
        reply_tool_call("call_2", "analyze", json!({"target": "q1", "type": "kafka"})),
        reply_text("I am not sure."),
        reply_text("Could not tell."),
    ]);
    opsai(&env, &mock, &bin)
        .args(["what are q1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Could not tell"));
    let requests = mock.chat_requests();
    let unsafe_only = requests[2].tool_result("call_1").unwrap();
    assert!(unsafe_only.contains("none of the model's commands for type `rabbitmq` is read-only"), "{unsafe_only}");
    let empty = requests[4].tool_result("call_2").unwrap();
    assert!(empty.contains("template held no command"), "{empty}");
    assert!(bin.calls().iter().all(|c| !c.contains("|rm|") && !c.contains("stop_app")), "{:?}", bin.calls());
    let cache = std::fs::read_to_string(cache_file(&env)).unwrap_or_default();
    assert!(!cache.contains("rabbitmq") && !cache.contains("kafka"), "{cache}");
}

#[test]
fn seed_001_dialogue_lists_then_analyzes_and_the_second_time_counts_a_hit() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let mock = MockLlm::start([
        reply_tool_call("call_1", "run_command", json!({"command": "docker ps"})),
        reply_text("You have two containers: compoder-mongo and web."),
        reply_tool_call("call_2", "analyze", json!({"target": "compoder-mongo", "type": "docker"})),
        reply_text("这是一个 MongoDB 5.0.18 数据库服务，通过 27017 端口提供数据库连接服务。"),
    ]);
    opsai(&env, &mock, &bin)
        .write_stdin("我有哪些 docker 服务\n这个 docker 服务是干嘛的\n")
        .assert()
        .success()
        .stdout(predicate::str::contains("MongoDB 5.0.18"));
    let calls = bin.calls();
    assert!(calls.contains(&"docker|ps".to_owned()), "{calls:?}");
    assert!(inspected(&calls, "compoder-mongo"), "{calls:?}");
    assert!(calls.contains(&"docker|logs|--tail|20|compoder-mongo".to_owned()), "{calls:?}");
    let requests = mock.chat_requests();
    // The second question reaches the model with the first turn's docker ps output in the history.
    assert!(requests[2].body.contains("compoder-mongo") && requests[2].body.contains("这个 docker 服务是干嘛的"));
    let observed = requests[3].tool_result("call_2").unwrap();
    assert!(observed.contains("mongo:5.0.18") && observed.contains("Waiting for connections"), "{observed}");
    assert!(generation_requests(&mock).is_empty(), "a built-in template needs no generation");
    assert_eq!(cached(&env)["container"]["hit_count"], 0);

    let again = MockLlm::start([
        reply_tool_call("call_1", "analyze", json!({"target": "compoder-mongo", "type": "container"})),
        reply_text("MongoDB again."),
    ]);
    opsai(&env, &again, &bin).args(["这个 docker 服务是干嘛的"]).assert().success();
    assert!(generation_requests(&again).is_empty());
    assert_eq!(again.chat_requests().len(), 2);
    assert_eq!(cached(&env)["container"]["hit_count"], 1);
}

#[test]
fn the_agent_analyzes_a_container_through_the_tool() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let mock = MockLlm::start([
        reply_tool_call("call_1", "analyze", json!({"target": "compoder-mongo", "type": "container"})),
        reply_text("这是一个 MongoDB 5.0.18 数据库服务"),
    ]);
    opsai(&env, &mock, &bin).args(["这个 docker 服务是干嘛的"]).assert().success();
    let observed = mock.chat_requests()[1].tool_result("call_1").unwrap();
    assert!(observed.contains("$ docker inspect --format") && observed.contains("mongo:5.0.18"), "{observed}");
    assert!(observed.contains("$ docker logs --tail 20 'compoder-mongo'"), "{observed}");
}

#[test]
fn explain_a_port_runs_ss_with_the_port_and_opsai_names_the_owner() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let mock = MockLlm::start([reply_text("nginx listens on 8080.")]);
    opsai(&env, &mock, &bin)
        .args(["explain", ":8080"])
        .assert()
        .success()
        .stdout(predicate::str::contains("nginx listens on 8080."));
    let calls = bin.calls();
    assert!(calls.contains(&"ss|-ltnu|sport|=|:8080".to_owned()), "{calls:?}");
    assert!(!calls.iter().any(|call| call.starts_with("lsof")), "lsof cannot see other processes: {calls:?}");
    let sent = all_text(&mock);
    assert!(sent.contains("users:((\\\"nginx\\\",pid=42))"), "{sent}");
    assert!(sent.contains("(read by opsai from /proc) owner of port 8080"), "{sent}");
}

#[test]
fn an_old_cached_port_template_with_the_quoted_ss_filter_gets_the_builtin_back() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    std::fs::create_dir_all(cache_file(&env).parent().unwrap()).unwrap();
    // What older versions wrote for ports: the quoted filter is refused by today's validation.
    let old = r#"{"port": {"commands": ["ss -ltnup 'sport = :{port}'", "lsof -nP -i :{port}"],
                   "created_at": "2026-01-02T03:04:05Z", "hit_count": 4}}"#;
    std::fs::write(cache_file(&env), old).unwrap();
    let mock = MockLlm::start([reply_text("nginx listens on 8080.")]);
    opsai(&env, &mock, &bin)
        .args(["explain", ":8080"])
        .assert()
        .success()
        .stdout(predicate::str::contains("nginx listens on 8080."))
        .stderr(predicate::str::contains("cached template for `port`").and(predicate::str::contains("built-in")));
    let calls = bin.calls();
    assert!(calls.contains(&"ss|-ltnu|sport|=|:8080".to_owned()), "{calls:?}");
    assert!(all_text(&mock).contains("users:((\\\"nginx\\\",pid=42))"), "{}", all_text(&mock));
    let expected = json!({"commands": ["ss -ltnu sport = :{port}"],
                          "created_at": "2026-01-02T03:04:05Z", "hit_count": 5});
    assert_eq!(cached(&env)["port"], expected);
    // The rewritten entry is valid: the next run uses it without a warning.
    let again = MockLlm::start([reply_text("Still nginx.")]);
    opsai(&env, &again, &bin)
        .args(["explain", ":8080"])
        .assert()
        .success()
        .stderr(predicate::str::contains("warning").not());
    assert_eq!(bin.calls().iter().filter(|c| c.starts_with("ss|")).count(), 2);
    assert_eq!(cached(&env)["port"]["hit_count"], 6);
}

#[test]
fn an_unknown_name_is_left_to_the_model_to_type_or_ask() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let mock = MockLlm::start([reply_text("What is `frobnicator`: a container, a service, or something else?")]);
    opsai(&env, &mock, &bin)
        .args(["explain", "frobnicator"])
        .assert()
        .success()
        .stdout(predicate::str::contains("What is `frobnicator`"));
    let calls = bin.calls();
    assert!(calls.contains(&"docker|ps|-a|--format|{{.Names}}".to_owned()), "{calls:?}");
    assert!(calls.iter().any(|c| c.starts_with("systemctl|")), "{calls:?}");
    assert!(!calls.iter().any(|c| c.contains("inspect")), "{calls:?}");
    assert!(all_text(&mock).contains("ask the user what `frobnicator` is"));
}

#[test]
fn explain_of_an_unknown_name_lets_the_model_type_it_and_generate_a_template() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let mock = MockLlm::start([
        reply_tool_call("call_1", "analyze", json!({"target": "orders-queue", "type": "rabbitmq queue"})),
        reply_text(r#"["docker logs --tail 5 {name}"]"#),
        reply_text("orders-queue is a RabbitMQ queue container."),
    ]);
    opsai(&env, &mock, &bin)
        .args(["explain", "orders-queue"])
        .assert()
        .success()
        .stdout(predicate::str::contains("RabbitMQ queue container"));
    let requests = mock.chat_requests();
    assert!(requests[0].tool_names().contains(&"analyze".to_owned()), "{:?}", requests[0].tool_names());
    assert_eq!(generation_requests(&mock).len(), 1);
    assert!(bin.calls().contains(&"docker|logs|--tail|5|orders-queue".to_owned()), "{:?}", bin.calls());
    assert_eq!(cached(&env)["rabbitmq queue"]["commands"], json!(["docker logs --tail 5 {name}"]));
}

/// `docker ps` lists `nginx`, and `nginx` and `sshd` are programs on PATH; systemd knows `sshd`.
fn bin_with_named_objects() -> FakeBin {
    FakeBin::with(&[
        (
            "docker",
            r#"case "$1" in
  ps) printf 'nginx\n' ;;
  inspect) for n; do :; done; printf '[{"Name": "/%s", "Config": {"Image": "nginx:1.25"}}]\n' "$n" ;;
  logs) printf 'start worker processes\n' ;;
  *) exit 1 ;;
esac"#,
        ),
        (
            "systemctl",
            r#"case "$1" in
  list-units) printf 'sshd.service loaded active running OpenBSD Secure Shell server\n' ;;
  status) printf 'sshd.service - OpenBSD Secure Shell server\n   Active: active (running)\n' ;;
  *) exit 1 ;;
esac"#,
        ),
        ("nginx", "exit 0"),
        ("sshd", "exit 0"),
    ])
}

#[test]
fn a_program_name_that_is_also_a_container_or_a_unit_is_explained_as_the_object() {
    let env = TestEnv::new();
    let bin = bin_with_named_objects();
    let mock = MockLlm::start([reply_text("nginx is a container running nginx:1.25.")]);
    opsai(&env, &mock, &bin)
        .args(["explain", "nginx"])
        .assert()
        .success()
        .stdout(predicate::str::contains("nginx is a container"))
        .stderr(predicate::str::contains("looking into `nginx` as a container (it is also a command name)"));
    assert!(inspected(&bin.calls(), "nginx"), "{:?}", bin.calls());
    assert!(all_text(&mock).contains("nginx:1.25") && all_text(&mock).contains("also the name of a program"));

    // A systemd unit: detected as a service, its status and journal collected.
    let mock = MockLlm::start([reply_text("sshd is the OpenSSH server, running.")]);
    opsai(&env, &mock, &bin)
        .args(["explain", "sshd"])
        .assert()
        .success()
        .stdout(predicate::str::contains("OpenSSH server"))
        .stderr(predicate::str::contains("as a service"));
    let calls = bin.calls();
    assert!(calls.contains(&"systemctl|status|sshd|--no-pager".to_owned()), "{calls:?}");
    assert!(calls.contains(&"journalctl|-u|sshd|-n|20|--no-pager".to_owned()), "{calls:?}");
    assert!(all_text(&mock).contains("Active: active (running)"));

    // A program with no container or unit of its name is still a command.
    let mock = MockLlm::start([reply_text("ls lists a directory.")]);
    opsai(&env, &mock, &bin)
        .args(["explain", "ls"])
        .assert()
        .success()
        .stdout(predicate::str::contains("ls lists a directory."));
    assert!(all_text(&mock).contains("Explain this shell command"));
}

#[test]
fn explain_a_pid_and_an_existing_path_end_to_end() {
    let env = TestEnv::new();
    // A bare number is a pid when a process has it.
    let mut child = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let pid = child.id();
    let bin = FakeBin::with(&[("ps", &format!("printf '{pid} 1 root 01:02 Ss /usr/bin/frobd --serve\\n'"))]);
    let mock = MockLlm::start([reply_text("It is frobd.")]);
    let out = opsai(&env, &mock, &bin).args(["explain", &pid.to_string()]).output().unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "It is frobd.\n", "{}", String::from_utf8_lossy(&out.stderr));
    let ps = format!("ps|-o|pid,ppid,user,etime,stat,cmd|-p|{pid}");
    assert!(bin.calls().contains(&ps), "{:?}", bin.calls());
    let sent = all_text(&mock);
    assert!(
        sent.contains(&format!("Analysis of process `{pid}`")) && sent.contains("/usr/bin/frobd --serve"),
        "{sent}"
    );

    // With no process of that number, a number that fits is a port (`opsai explain 8081`).
    let free = (40000..65535).rev().find(|n| !std::path::Path::new(&format!("/proc/{n}")).exists()).unwrap();
    let mock = MockLlm::start([reply_text("Nothing listens there.")]);
    opsai(&env, &mock, &bin)
        .args(["explain", &free.to_string()])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!("looking into `{free}` as a port")));
    assert!(all_text(&mock).contains(&format!("Analysis of port `{free}`")), "{}", all_text(&mock));

    std::fs::write(env.user_home().join("notes.txt"), "remember the milk\n").unwrap();
    let mock = MockLlm::start([reply_text("A small text file.")]);
    opsai(&env, &mock, &bin).args(["explain", "notes.txt"]).assert().success().stdout("A small text file.\n");
    let sent = all_text(&mock);
    assert!(sent.contains("Analysis of file `notes.txt`") && sent.contains("$ ls -la 'notes.txt'"), "{sent}");
    assert!(sent.contains("notes.txt: ASCII text") || sent.contains("Size: 18"), "{sent}");
}

#[test]
fn an_analysis_carries_on_past_a_corrupt_cache() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    std::fs::create_dir_all(cache_file(&env).parent().unwrap()).unwrap();
    std::fs::write(cache_file(&env), "{\"container\": [oops").unwrap();
    let mock = MockLlm::start([reply_text("A MongoDB database.")]);
    opsai(&env, &mock, &bin)
        .args(["explain", "compoder-mongo"])
        .assert()
        .success()
        .stdout("A MongoDB database.\n")
        .stderr(predicate::str::contains("warning: the template cache").and(predicate::str::contains("corrupt")));
    assert_eq!(
        std::fs::read_to_string(cache_file(&env).with_extension("json.corrupt")).unwrap(),
        "{\"container\": [oops"
    );
    assert!(inspected(&bin.calls(), "compoder-mongo"), "{:?}", bin.calls());
    assert!(all_text(&mock).contains("mongo:5.0.18"));
    assert_eq!(
        cached(&env)["container"]["commands"],
        json!([
            "docker inspect --format '{{.Name}} {{.State.Status}} {{.Config.Image}} restarts={{.RestartCount}}' {name}",
            "docker logs --tail 20 {name}"
        ])
    );
}

#[test]
fn hostile_cached_and_generated_templates_cannot_expand_a_hostile_target() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    std::fs::create_dir_all(cache_file(&env).parent().unwrap()).unwrap();
    let hostile = r#"{"redis": {"commands": ["journalctl -u \"{name}\" -n 5", "docker logs --tail 5 {name}"],
                      "created_at": "2026-11-22T10:00:00Z", "hit_count": 1}}"#;
    std::fs::write(cache_file(&env), hostile).unwrap();
    let mock = MockLlm::start([
        reply_tool_call("call_1", "analyze", json!({"target": "x$(echo INJECTED)", "type": "redis"})),
        reply_tool_call("call_2", "analyze", json!({"target": "y$(echo INJECTED)", "type": "memcached"})),
        // The generation request's reply for memcached: the same placeholder in double quotes.
        reply_text(r#"["journalctl -u \"{name}\" -n 5", "docker logs --tail 5 {name}"]"#),
        reply_text("done"),
    ]);
    opsai(&env, &mock, &bin).args(["what are these"]).assert().success();
    let calls = bin.calls();
    assert!(!calls.iter().any(|c| c.starts_with("journalctl") || c.contains("xINJECTED") || c.contains("yINJECTED")));
    assert!(calls.contains(&"docker|logs|--tail|5|x$(echo INJECTED)".to_owned()), "{calls:?}");
    assert!(calls.contains(&"docker|logs|--tail|5|y$(echo INJECTED)".to_owned()), "{calls:?}");
    let requests = mock.chat_requests();
    let cached_run = requests[1].tool_result("call_1").unwrap();
    assert!(
        cached_run.contains("journalctl -u \"{name}\" -n 5 (a placeholder is not a plain shell word"),
        "{cached_run}"
    );
    assert_eq!(cached(&env)["memcached"]["commands"], json!(["docker logs --tail 5 {name}"]));
}

#[test]
fn a_completed_analysis_is_a_success_so_repeating_it_is_not_a_failure_loop() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let call = |id: &str| reply_tool_call(id, "analyze", json!({"target": "compoder-mongo", "type": "container"}));
    let mock = MockLlm::start([call("call_1"), call("call_2"), call("call_3"), reply_text("MongoDB, running.")]);
    opsai(&env, &mock, &bin)
        .args(["what is compoder-mongo"])
        .assert()
        .success()
        .stdout(predicate::str::contains("MongoDB, running."))
        .stderr(predicate::str::contains("exit -").not().and(predicate::str::contains("failed 3 times").not()));
    assert_eq!(mock.chat_requests().len(), 4);
}

#[test]
fn the_analyze_tool_without_a_type_detects_ports_pids_and_paths_too() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    std::fs::write(env.user_home().join("app.conf"), "listen 8080;\n").unwrap();
    let mock = MockLlm::start([
        reply_tool_call("call_1", "analyze", json!({"target": ":8080"})),
        reply_tool_call("call_2", "analyze", json!({"target": "app.conf"})),
        reply_text("done"),
    ]);
    opsai(&env, &mock, &bin).args(["what is on 8080 and what is app.conf"]).assert().success();
    let requests = mock.chat_requests();
    let port = requests[1].tool_result("call_1").unwrap();
    assert!(port.starts_with("Analysis of port `8080`") && port.contains("users:((\"nginx\",pid=42))"), "{port}");
    let file = requests[2].tool_result("call_2").unwrap();
    assert!(file.starts_with("Analysis of file `app.conf`") && file.contains("$ stat 'app.conf'"), "{file}");
    assert!(bin.calls().contains(&"ss|-ltnu|sport|=|:8080".to_owned()), "{:?}", bin.calls());
}

#[test]
fn the_structured_ss_and_lsof_tools_run_the_exact_argv() {
    let env = TestEnv::new();
    let bin = FakeBin::new();
    let mock = MockLlm::start([
        reply_tool_call("call_1", "ss", json!({"port": 8080, "protocol": "tcp", "options": ["-l", "-n"]})),
        reply_tool_call("call_2", "lsof", json!({"port": "8080", "user": "root", "path": "-weird name; id"})),
        reply_text("nginx holds 8080."),
    ]);
    opsai(&env, &mock, &bin).args(["who holds 8080"]).assert().success().stdout("nginx holds 8080.\n");
    let calls = bin.calls();
    assert!(calls.contains(&"ss|-l|-n|-t|( sport = :8080 or dport = :8080 )".to_owned()), "{calls:?}");
    assert!(calls.contains(&"lsof|-nP|-i:8080|-u|root|--|-weird name; id".to_owned()), "{calls:?}");
    let requests = mock.chat_requests();
    assert!(requests[1].tool_result("call_1").unwrap().contains("users:((\"nginx\",pid=42))"));
    assert!(requests[2].tool_result("call_2").unwrap().contains("nginx 42 root"));
}

#[test]
fn docker_missing_where_the_commands_run_is_an_observation() {
    let env = TestEnv::new();
    // A shell with no docker answers 127: the run's own result decides, not a look at PATH.
    let bin = FakeBin::with(&[("docker", "echo 'sh: 1: docker: not found' >&2; exit 127")]);
    let mock = MockLlm::start([reply_tool_call("call_1", "list_containers", json!({})), reply_text("No docker here.")]);
    opsai(&env, &mock, &bin).args(["list my containers"]).assert().success();
    let observed = mock.chat_requests()[1].tool_result("call_1").unwrap();
    assert!(observed.contains("docker is not available on this machine"), "{observed}");
}

#[test]
fn over_ssh_docker_is_looked_for_on_the_host_not_here() {
    use crate::support::sshd::{HOST, Sshd, require};
    if !require() {
        return;
    }
    let sshd = Sshd::start();
    let env = TestEnv::new();
    std::fs::write(env.config_path(), sshd.opsai_config("")).unwrap();
    let mock = MockLlm::start([reply_tool_call("call_1", "list_containers", json!({})), reply_text("listed")]);
    // No docker on this side's PATH: before, that alone answered "not available on this machine".
    let local_bin = tempfile::tempdir().unwrap();
    env.cmd()
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .env("PATH", format!("{}:/usr/bin:/bin", local_bin.path().display()))
        .args(["--ssh-host", HOST, "list my containers"])
        .timeout(Duration::from_secs(90))
        .assert()
        .success();
    let observed = mock.chat_requests()[1].tool_result("call_1").unwrap();
    assert!(!observed.contains("not available on this machine"), "{observed}");
    let audit = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default();
    assert!(audit.contains("docker ps") && audit.contains(&format!("HOST: {HOST}")), "{audit}");
    sshd.disconnect(env.opsai_home());
}
