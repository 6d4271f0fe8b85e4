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
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("Noted.")]);
    let server = Server::builder(&env).mock(&mock).start();
    let api = server.api();
    let id = api.create(json!({"title": ""})).await["id"].as_i64().unwrap();
    let message = format!("{} {TOKEN} is my token", "p".repeat(62));
    api.chat(id, &message).await.collect().await;
    let (_, list) = api.list().await;
    let title = list[0]["title"].as_str().unwrap();
    assert!(title.starts_with(&"p".repeat(62)), "{title}");
    assert!(!title.contains("ghp_") && !title.contains("1234567890"), "{title}");
    server.stop();
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
