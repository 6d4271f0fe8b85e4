//! A web conversation's host set (`opsai serve --hosts PATTERN`) against real sshd on loopback:
//! the server offers the sets it was given, a conversation names one, and its commands run on
//! every host through the same gate as the terminal's fleet (grouped result, one `host_result`
//! per host, one audit line per host with the web user, a change canary first with the operator
//! asked again before the rest).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::fleet::{Fleet, Kind, audit_lines, line_of, processes_with};
use crate::support::mock_llm::*;
use crate::support::serve::*;
use crate::support::sshd::require;

fn configure(env: &TestEnv, fleet: &Fleet) {
    env.write_config(&json!({"ssh": {"options": fleet.ssh_options(), "control_persist_s": 30}}).to_string());
}

/// Every system message of a request to the model, joined.
fn system(request: &RecordedRequest) -> String {
    let messages = request.messages();
    let texts = messages.iter().filter(|m| m["role"] == "system").filter_map(|m| m["content"].as_str());
    texts.collect::<Vec<_>>().join("\n")
}

fn host_results(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|event| event["kind"] == "host_result")
        .map(|event| {
            assert_eq!(event["type"], "tool_result", "{event}");
            (event["host"].as_str().unwrap().to_owned(), event["outcome"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_on_a_host_set_runs_its_commands_on_every_host_of_it() {
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
    configure(&env, &fleet);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo fleet-ok", "why": "check"})),
        reply_text("Two of three answered."),
        reply_text("Here on the server."),
    ]);
    let server = Server::builder(&env).mock(&mock).arg("--hosts").arg("app-*").arg("--hosts").arg("db-1").start();
    let api = server.api();
    let (_, me) = api.send(api.request(Method::GET, "/api/v2/auth/me")).await;
    assert_eq!(
        me["host_sets"],
        json!([{"pattern": "app-*", "label": "3 hosts: app-[1:3]"}, {"pattern": "db-1", "label": "1 host: db-1"}])
    );
    // Only an offered set can be named: not another pattern the ssh config would select.
    let other = api.request(Method::POST, "/api/v2/ai/conversations").json(&json!({"hosts": "db-*"}));
    let (status, body) = api.send(other).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("`app-*`, `db-1`"), "{body}");

    let created = api.create(json!({"title": "apps", "hosts": "app-*"})).await;
    assert_eq!(created["hosts"], "app-*");
    let id = created["id"].as_i64().unwrap();
    let events = api.chat(id, "is echo working on the apps?").await.collect().await;
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!(call["hosts"], "3 hosts: app-[1:3]", "the call says where it runs: {call}");
    assert_eq!(
        host_results(&events),
        [("app-1".into(), "ran".into()), ("app-2".into(), "ran".into()), ("app-3".into(), "unreachable".into())],
        "one host_result per host, in inventory order"
    );
    let shown: String = events.iter().filter(|e| e["kind"] == "output").filter_map(|e| e["chunk"].as_str()).collect();
    assert!(shown.contains("2 hosts: app-[1:2] · exit 0") && shown.contains("fleet-ok"), "{shown}");
    assert!(!shown.contains("db-1"), "db-1 is not in this set: {shown}");
    let result = events.iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert!(result["content"].as_str().unwrap().contains("app-3"), "the model is told of the host that is down");
    assert_eq!(events.last().unwrap()["outcome"], "answer");
    // The model was told where its commands run.
    let prompt = system(&mock.chat_requests()[0]);
    assert!(prompt.contains("every run_command runs on 3 hosts: app-[1:3]"), "{prompt}");
    let lines = audit_lines(&env);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    for host in ["app-1", "app-2", "app-3"] {
        let line = line_of(&lines, host);
        assert!(line.contains("USER: owner") && line.contains("echo fleet-ok"), "{line}");
    }
    assert!(line_of(&lines, "app-1").contains("EXIT: 0"));
    let (_, list) = api.list().await;
    assert_eq!(list[0]["hosts"], "app-*", "{list}");

    // A conversation without a set runs on the server itself, as before.
    let here = api.create(json!({"title": "here"})).await;
    assert_eq!(here["hosts"], Value::Null);
    let events = api.chat(here["id"].as_i64().unwrap(), "hello").await.collect().await;
    assert_eq!(events.last().unwrap()["outcome"], "answer");
    assert!(!system(&mock.chat_requests()[2]).contains("every run_command runs on"));
    server.stop();

    // Started again without that set: the conversation takes no new message, and says why.
    let server = Server::builder(&env).mock(&mock).arg("--hosts").arg("db-1").start();
    let api = server.api();
    let chat = api.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": id, "message": "again"}));
    let (status, body) = api.send(chat).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body["error"].as_str().unwrap().contains("`app-*` is no longer offered"), "{body}");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_on_a_host_set_asks_the_operator_for_the_canary_and_again_for_the_rest() {
    if !require() {
        return;
    }
    let fleet =
        Fleet::start(&[("web-1", Kind::Up("canary")), ("web-2", Kind::Up("rest")), ("web-3", Kind::Up("rest"))]);
    let log = fleet.path().join("rollout.log");
    let change = format!("echo \"$OPSAI_FLEET_ROLE\" >> {}", log.display());
    let env = TestEnv::new();
    configure(&env, &fleet);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": change, "why": "record"})),
        reply_text("Recorded."),
    ]);
    let server = Server::builder(&env).mock(&mock).arg("--hosts").arg("web-*").start();
    let api = server.api();
    let id = api.create(json!({"hosts": "web-*"})).await["id"].as_i64().unwrap();
    let mut events = api.chat(id, "record each host's role").await;

    let first = events.until(|e| e["kind"] == "request").await;
    assert_eq!(first["host"], "3 hosts: web-[1:3]", "the approval names the hosts: {first}");
    assert!(!log.exists(), "nothing runs before the yes");
    assert_eq!(api.approve("c1", "approve", None).await.0, StatusCode::NO_CONTENT);

    let second = events.until(|e| e["kind"] == "request").await;
    assert_eq!(second["host"], "the other 2 hosts", "{second}");
    assert_ne!(second["request_id"], first["request_id"], "the same call id, another request: {second}");
    assert!(second["detail"].as_str().unwrap().contains("web-1"), "the canary's result is shown: {second}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "canary\n", "only the canary ran before the second yes");
    assert_eq!(api.approve("c1", "approve", None).await.0, StatusCode::NO_CONTENT);

    let rest = events.collect().await;
    assert_eq!(rest.last().unwrap()["outcome"], "answer");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "canary\nrest\nrest\n");
    let lines = audit_lines(&env);
    for host in ["web-1", "web-2", "web-3"] {
        let line = line_of(&lines, host);
        assert!(line.contains("USER: owner") && line.contains("CONFIRMED: yes") && line.contains("EXIT: 0"), "{line}");
    }
    server.stop();
}

/// The page's Stop on a host set ends the command on every host, like Ctrl-C in the terminal.
#[tokio::test(flavor = "multi_thread")]
async fn stop_ends_the_command_on_every_host_of_the_set() {
    if !require() {
        return;
    }
    let limit = std::time::Duration::from_secs(60);
    let fleet = Fleet::start(&[("job-1", Kind::Up("a")), ("job-2", Kind::Up("a"))]);
    let sleep = format!("sleep 1000.{}7", std::process::id());
    let env = TestEnv::new();
    configure(&env, &fleet);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": sleep, "why": "wait"})),
        reply_text("Never heard."),
    ]);
    let server = Server::builder(&env).mock(&mock).arg("--hosts").arg("job-*").start();
    let api = server.api();
    let id = api.create(json!({"hosts": "job-*"})).await["id"].as_i64().unwrap();
    let mut events = api.chat(id, "wait on both").await;
    events.until(|e| e["type"] == "tool_call").await;
    let both = tokio::task::spawn_blocking({
        let sleep = sleep.clone();
        move || opsai::testing::wait_until(limit, || processes_with(&sleep) >= 2)
    });
    assert!(both.await.unwrap(), "the command never ran on both hosts");
    assert_eq!(api.stop_turn(id).await, StatusCode::NO_CONTENT);
    let rest = events.collect().await;
    assert_eq!(rest.last().unwrap()["outcome"], "stopped", "{rest:#?}");
    let outcomes: Vec<(String, String)> = host_results(&rest);
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    // Each host ended by the stop: its command killed, or (stopped between its connection and its
    // command) never started.
    assert!(outcomes.iter().all(|(_, outcome)| outcome == "cancelled" || outcome == "not-run"), "{outcomes:?}");
    assert!(outcomes.iter().any(|(_, outcome)| outcome == "cancelled"), "{outcomes:?}");
    let gone = tokio::task::spawn_blocking({
        let sleep = sleep.clone();
        move || opsai::testing::wait_until(std::time::Duration::from_secs(10), || processes_with(&sleep) == 0)
    });
    assert!(gone.await.unwrap(), "left behind on a host: {}", processes_with(&sleep));
    assert_eq!(audit_lines(&env).len(), 2, "one line per host");
    server.stop();
}

#[test]
fn a_host_set_that_selects_nothing_stops_the_start() {
    let env = TestEnv::new();
    let names = env.user_home().join("hosts.txt");
    std::fs::write(&names, "web-1\nweb-2\n").unwrap();
    let out = env
        .cmd()
        .args(["serve", "--listen", "127.0.0.1:0", "--hosts", "wbe-*", "--hosts-file"])
        .arg(&names)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--hosts wbe-*") && stderr.contains("hosts.txt: 2 hosts"),
        "names the pattern and what was read: {stderr}"
    );

    let out = env.cmd().args(["serve", "--listen", "127.0.0.1:0", "--hosts-file"]).arg(&names).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --hosts PATTERN too"));
}
