//! Review fixes: a title cut after redaction, a users file that fails to load, approvals that need
//! a grant, a context removed from `kube.contexts`, how a turn ended.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

const TOKEN: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_across_the_titles_cut_is_not_kept_in_part() {
    for storage in Storage::each() {
        let env = TestEnv::new();
        let mock = MockLlm::start([reply_text("Noted.")]);
        let server = Server::builder(&env).mock(&mock).storage(&storage).start();
        let api = server.api();
        let id = api.create(json!({"title": ""})).await["id"].as_i64().unwrap();
        let message = format!("{} {TOKEN} is my token", "p".repeat(62));
        let events = api.chat(id, &message).await.collect().await;
        assert_eq!(events.last().unwrap()["outcome"], "answer", "{:?}", events.last());
        let (_, list) = api.list().await;
        let title = list[0]["title"].as_str().unwrap();
        assert!(title.starts_with(&"p".repeat(62)), "{}: {title}", storage.name());
        assert!(!title.contains("ghp_") && !title.contains("1234567890"), "{title}");
        server.stop();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_users_file_that_fails_to_load_answers_503_and_logs_nobody_out() {
    let env = TestEnv::new();
    let file = super::two_users(&env);
    let server = Server::builder(&env).users(&file).start();
    let cookie = server.login("alice", "alice-password").await;
    let token = server.api_token("alice", "alice-password").await;
    let good = std::fs::read(&file).unwrap();
    std::fs::write(&file, b"{\"users\": [").unwrap();
    for api in [&cookie, &token] {
        let (status, body) = api.list().await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(body["error"].as_str().unwrap().contains("users file"), "{body}");
    }
    let login = server.post_credentials("/api/v2/auth/login", "alice", "alice-password").await;
    assert_eq!(login.status(), StatusCode::SERVICE_UNAVAILABLE);
    std::fs::write(&file, good).unwrap();
    assert_eq!(cookie.list().await.0, StatusCode::OK, "the same cookie works again");
    assert_eq!(token.list().await.0, StatusCode::OK, "the same bearer token works again");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_session_is_refused_for_a_request_without_a_grant() {
    let env = TestEnv::new();
    let mock =
        MockLlm::start([reply_tool_call("h1", "run_command", json!({"command": super::HIGH})), reply_text("Ok.")]);
    let server = Server::builder(&env).mock(&mock).arg("--approval-timeout").arg("30").start();
    let api = server.api();
    let id = api.new_conversation().await;
    let mut events = api.chat(id, "clean up").await;
    let request = events.until(|e| e["kind"] == "request").await;
    assert_eq!(request["grant"], serde_json::Value::Null, "{request}");
    let (status, body) = api.approve("h1", "approve_session", Some("yes")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body["error"].as_str().unwrap().contains("\"approve\""), "{body}");
    assert_eq!(api.approve("h1", "deny", None).await.0, StatusCode::NO_CONTENT, "still waiting");
    assert_eq!(events.collect().await.last().unwrap()["type"], "done");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_demoted_mid_turn_is_refused_at_the_next_approval() {
    let env = TestEnv::new();
    let file = super::two_users(&env);
    let waits = "touch \"$HOME/started\" && echo started && while [ ! -e \"$HOME/go\" ]; do sleep 0.1; done; echo went";
    let mock = MockLlm::start([
        reply_tool_call("d1", "run_command", json!({"command": waits})),
        reply_tool_call("d2", "run_command", json!({"command": super::MEDIUM})),
        reply_text("Done."),
    ]);
    let server = Server::builder(&env).mock(&mock).users(&file).arg("--approval-timeout").arg("5").start();
    let alice = server.login("alice", "alice-password").await;
    let id = alice.new_conversation().await;
    let mut events = alice.chat(id, "wait, then make a file").await;
    let request = events.until(|e| e["kind"] == "request").await;
    assert_eq!(alice.approve("d1", "approve", Some("yes")).await.0, StatusCode::NO_CONTENT, "{request}");
    events.until(|e| e["kind"] == "output").await;
    // Demoted by editing the file (the password hash stays, so the session does too).
    let text = std::fs::read_to_string(&file).unwrap();
    let mut users: serde_json::Value = serde_json::from_str(&text).unwrap();
    for user in users["users"].as_array_mut().unwrap() {
        if user["name"] == "alice" {
            user["role"] = json!("viewer");
        }
    }
    std::fs::write(&file, users.to_string()).unwrap();
    std::fs::write(env.user_home().join("go"), "").unwrap();
    // Demoted, her request waits for an operator like any viewer's, and she cannot answer it.
    let request = events.until(|e| e["kind"] == "request" && e["id"] == "d2").await;
    assert_eq!(request["needs_operator"], true, "{request}");
    assert_eq!(alice.approve("d2", "approve", None).await.0, StatusCode::FORBIDDEN);
    let rest = events.collect().await;
    assert!(rest.iter().any(|e| e["kind"] == "timeout" && e["id"] == "d2"), "nobody answered: {rest:#?}");
    let result = rest.iter().find(|e| e["type"] == "tool_result" && e["id"] == "d2").unwrap();
    assert_eq!(result["status"], "denied_by_policy", "{result}");
    assert!(!env.user_home().join("made").exists());
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_whose_cluster_left_kube_contexts_is_refused_and_not_named() {
    for storage in Storage::each() {
        let env = TestEnv::new();
        env.write_config(r#"{"kube": {"contexts": ["staging", "prod"]}}"#);
        let server = Server::builder(&env).storage(&storage).start();
        let id = server.api().create(json!({"title": "", "cluster_id": "staging"})).await["id"].as_i64().unwrap();
        server.stop();
        env.write_config(r#"{"kube": {"contexts": ["prod"]}}"#);
        let mock = MockLlm::start([reply_text("never")]);
        let server = Server::builder(&env).mock(&mock).storage(&storage).start();
        let api = server.api();
        let chat = api
            .request(reqwest::Method::POST, "/api/v2/ai/chat")
            .json(&json!({"conversation_id": id, "message": "hi"}));
        let (status, body) = api.send(chat).await;
        assert_eq!(status, StatusCode::CONFLICT, "{}: {body}", storage.name());
        assert!(body["error"].as_str().unwrap().contains("staging"), "{body}");
        let (_, list) = api.list().await;
        assert_eq!(list[0]["title"], "", "{}: a refused message names nothing: {list}", storage.name());
        // Refused before a claim was kept: with the context back, the next message is taken.
        server.stop();
        env.write_config(r#"{"kube": {"contexts": ["staging", "prod"]}}"#);
        let server = Server::builder(&env).mock(&mock).storage(&storage).start();
        let events = server.api().chat(id, "hi again").await.collect().await;
        assert_eq!(events.last().unwrap()["outcome"], "answer", "{}: {events:?}", storage.name());
        server.stop();
    }
}

#[test]
fn listening_on_every_address_prints_a_url_that_can_be_opened() {
    use std::io::BufRead;
    let env = TestEnv::new();
    let first_line = |extra: &[&str]| {
        let mut child = env
            .std_cmd()
            .args(["serve", "--listen", "0.0.0.0:0", "--allow-remote"])
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        child.kill().unwrap();
        let out = child.wait_with_output().unwrap();
        (line, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (line, stderr) = first_line(&[]);
    assert!(line.starts_with("opsai serve: open http://127.0.0.1:"), "{line}");
    assert!(stderr.contains("--public-host"), "{stderr}");
    let (line, _) = first_line(&["--public-host", "chat.example:8765"]);
    assert!(line.starts_with("opsai serve: open http://chat.example:8765/?token="), "{line}");
}

#[test]
fn passwords_that_differ_at_the_terminal_end_the_command_without_asking_again() {
    use crate::support::tmux::{Tmux, require};
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let file = env.opsai_home().join("users.json");
    let vars = env.terminal_vars("http://127.0.0.1:9");
    let args = ["serve", "user", "add", "alice", "--role", "viewer", "--users", file.to_str().unwrap()];
    let term = Tmux::start(env!("CARGO_BIN_EXE_opsai"), &args, &vars, env.user_home());
    let limit = std::time::Duration::from_secs(20);
    term.wait_for("Password for alice", limit);
    term.line("first-password");
    term.wait_for("Repeat it", limit);
    term.line("other-password");
    assert_eq!(term.wait_exit(limit), 2);
    let screen = term.screen();
    assert!(screen.contains("the passwords differ"), "{screen}");
    assert_eq!(screen.matches("Password for alice").count(), 1, "{screen}");
    assert!(!file.exists());
}
