//! `opsai serve`'s API against the real binary on loopback, with the mock model (issue 16): the
//! conversation routes and the SSE turn, auth (token, cookie + CSRF, users, rate limit), approvals
//! by role (in `approvals`), the kube blacklist relayed, and turns that outlive their connection.

use std::path::PathBuf;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

mod approvals;
mod claims;
mod edges;
mod limits;
mod postgres;
mod screen;

/// A Medium command with output to look for, and a High one.
const MEDIUM: &str = "touch \"$HOME/made\" && echo made-it";
const HIGH: &str = "rm -rf \"$HOME/junk\" && echo removed-ok";

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

fn kinds(events: &[Value]) -> Vec<String> {
    events.iter().map(|e| format!("{}/{}", e["type"].as_str().unwrap(), e["kind"].as_str().unwrap_or(""))).collect()
}

/// Two users (alice operator, bob viewer) in a users file under `env`'s home.
fn two_users(env: &TestEnv) -> PathBuf {
    let file = env.opsai_home().join("users.json");
    add_user(env, &file, "alice", "operator", "alice-password");
    add_user(env, &file, "bob", "viewer", "bob-password");
    file
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_is_created_chatted_read_listed_and_deleted() {
    for storage in Storage::each() {
        let env = TestEnv::new();
        let mock = MockLlm::start([reply_text("All pods are running.")]);
        let server = Server::builder(&env).mock(&mock).storage(&storage).start();
        let api = server.api();
        let created = api.create(json!({"title": ""})).await;
        assert_eq!((created["user_id"].as_str(), created["message_count"].as_i64()), (Some("owner"), Some(0)));
        assert_eq!((created["cluster_id"].clone(), created["running"].clone()), (Value::Null, json!(false)));
        let id = created["id"].as_i64().unwrap();

        let events = api.chat(id, "how are my pods?").await.collect().await;
        assert_eq!(events[0], json!({"type": "text", "kind": "start", "conversation_id": id}));
        let kinds = kinds(&events);
        assert_eq!(kinds.last().map(String::as_str), Some("done/done"), "{kinds:?}");
        assert_eq!(kinds.iter().filter(|k| *k == "done/done").count(), 1, "{kinds:?}");
        let answer = events.iter().find(|e| e["kind"] == "answer").unwrap();
        assert_eq!(answer["content"], "All pods are running.");
        let deltas: String =
            events.iter().filter(|e| e["kind"] == "answer_delta").map(|e| e["content"].as_str().unwrap()).collect();
        assert_eq!(deltas, "All pods are running.");
        assert!(!kinds.iter().any(|k| k.contains("progress")), "{kinds:?}");

        let (status, messages) = api.messages(id).await;
        assert_eq!(status, StatusCode::OK);
        let shape: Vec<(&str, &str)> = messages
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
            .collect();
        assert_eq!(shape, [("user", "how are my pods?"), ("assistant", "All pods are running.")]);
        assert!(messages[0]["created_at"].as_i64().unwrap() > 1_700_000_000);

        let (_, list) = api.list().await;
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert_eq!(list[0]["title"], "how are my pods?", "an empty title becomes the first message");
        assert_eq!(list[0]["message_count"], 2);

        assert_eq!(api.delete(id).await, StatusCode::NO_CONTENT);
        assert_eq!(api.messages(id).await.0, StatusCode::NOT_FOUND);
        assert_eq!(api.list().await.1, json!([]));
        server.stop();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn auth_is_required_the_token_url_sets_a_cookie_and_cookie_posts_need_csrf() {
    let env = TestEnv::new();
    let server = Server::builder(&env).start();
    let anonymous = server.api_with(Auth::None);
    let (status, body) = anonymous.list().await;
    assert_eq!((status, body["mode"].as_str()), (StatusCode::UNAUTHORIZED, Some("token")), "{body}");
    assert!(body["error"].as_str().unwrap().contains("open the URL"), "{body}");
    let wrong = server.api_with(Auth::Bearer("not-the-token-at-all".into()));
    assert_eq!(wrong.list().await.0, StatusCode::UNAUTHORIZED);

    let client = server.client();
    let bad = client.get(server.url("/?token=wrong")).send().await.unwrap();
    assert_eq!(bad.status(), StatusCode::UNAUTHORIZED);
    let good = client.get(server.url(&format!("/?token={}", server.token.as_ref().unwrap()))).send().await.unwrap();
    assert_eq!(good.status(), StatusCode::SEE_OTHER);
    assert_eq!(good.headers()["location"], "/");
    let set_cookie = good.headers()["set-cookie"].to_str().unwrap().to_owned();
    assert!(set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Strict"), "{set_cookie}");
    let session = session_cookie(&good).unwrap();

    let page = client.get(server.url("/")).send().await.unwrap();
    let headers = page.headers().clone();
    assert!(headers["content-security-policy"].to_str().unwrap().contains("script-src 'self'"));
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert!(page.text().await.unwrap().contains("/assets/app.js"));

    let no_csrf = server.api_with(Auth::Cookie { session: session.clone(), csrf: "wrong".into() });
    let (status, me) = no_csrf.send(no_csrf.request(Method::GET, "/api/v2/auth/me")).await;
    assert_eq!((status, me["user"].as_str(), me["mode"].as_str()), (StatusCode::OK, Some("owner"), Some("token")));
    assert_eq!(me["clusters"], json!([]));
    let create = no_csrf.request(Method::POST, "/api/v2/ai/conversations").json(&json!({}));
    assert_eq!(no_csrf.send(create).await.0, StatusCode::FORBIDDEN);
    let with_csrf = server.api_with(Auth::Cookie { session, csrf: me["csrf_token"].as_str().unwrap().into() });
    let foreign = with_csrf
        .request(Method::POST, "/api/v2/ai/conversations")
        .header("Origin", "http://evil.example")
        .json(&json!({}));
    assert_eq!(with_csrf.send(foreign).await.0, StatusCode::FORBIDDEN);
    let (status, list) = with_csrf.list().await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(with_csrf.create(json!({"title": "mine"})).await["title"], "mine");
    assert!(list.is_array());
    let listed = with_csrf.send(with_csrf.request(Method::GET, "/api/v2/ai/conversations")).await;
    assert_eq!(listed.1.as_array().unwrap().len(), 1);
    let unknown = with_csrf.request(Method::POST, "/api/v2/ai/conversations").json(&json!({"cluster_id": "prod"}));
    assert_eq!(with_csrf.send(unknown).await.0, StatusCode::BAD_REQUEST, "prod is not in kube.contexts");
    let api_headers = with_csrf.request(Method::GET, "/api/v2/ai/conversations").send().await.unwrap();
    assert_eq!(api_headers.headers()["cache-control"], "no-store");
    let bad_body = with_csrf.request(Method::POST, "/api/v2/ai/chat").body("{not json");
    let (status, body) = with_csrf.send(bad_body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body["error"].is_string(), "{body}");
    let logout = with_csrf.send(with_csrf.request(Method::POST, "/api/v2/auth/logout")).await;
    assert_eq!(logout.0, StatusCode::NO_CONTENT);
    assert_eq!(with_csrf.list().await.0, StatusCode::UNAUTHORIZED, "the session is gone");
    // Last: the server answers before reading the body and closes that connection.
    let huge = server.api().request(Method::POST, "/api/v2/ai/chat").body(vec![b' '; 100 * 1024]);
    let huge = huge.send().await.unwrap();
    assert_eq!(huge.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(huge.json::<Value>().await.unwrap()["error"].as_str().unwrap().contains("64 KiB"));
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn users_see_only_their_own_conversations_and_logins_are_rate_limited() {
    let env = TestEnv::new();
    let file = two_users(&env);
    let listed = env.cmd().args(["serve", "user", "list", "--users"]).arg(&file).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "alice\toperator\nbob\tviewer\n");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("$argon2id$") && !text.contains("alice-password"), "{text}");

    let mock = MockLlm::start([reply_text("hello alice")]);
    let server = Server::builder(&env).mock(&mock).users(&file).start();
    assert!(server.token.is_none());
    let alice = server.login("alice", "alice-password").await;
    let bob = server.api_token("bob", "bob-password").await;
    let id = alice.new_conversation().await;
    alice.chat(id, "hi").await.collect().await;

    assert_eq!(bob.messages(id).await.0, StatusCode::NOT_FOUND);
    assert_eq!(bob.delete(id).await, StatusCode::NOT_FOUND);
    assert_eq!(bob.stop_turn(id).await, StatusCode::NOT_FOUND);
    let chat = bob.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": id, "message": "x"}));
    assert_eq!(bob.send(chat).await.0, StatusCode::NOT_FOUND);
    assert_eq!(bob.list().await.1, json!([]));
    assert_eq!(alice.list().await.1.as_array().unwrap().len(), 1);
    assert_eq!(alice.messages(999).await.0, StatusCode::NOT_FOUND);
    let alice_token = server.api_token("alice", "alice-password").await;
    assert_eq!(
        alice_token.send(alice_token.request(Method::POST, "/api/v2/auth/logout")).await.0,
        StatusCode::NO_CONTENT
    );
    assert_eq!(alice_token.list().await.0, StatusCode::UNAUTHORIZED, "logging out revokes an API token");

    for _ in 0..5 {
        let response = server.post_credentials("/api/v2/auth/login", "alice", "wrong-password").await;
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    let limited = server.post_credentials("/api/v2/auth/login", "alice", "alice-password").await;
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(limited.headers().contains_key("retry-after"));
    let token = server.post_credentials("/api/v2/auth/token", "bob", "bob-password").await;
    assert_eq!(token.status(), StatusCode::OK, "another name from that address is not held by alice's failures");
    assert!(!server.stderr().contains("alice-password"));
    let removed = env.cmd().args(["serve", "user", "remove", "bob", "--users"]).arg(&file).output().unwrap();
    assert!(removed.status.success(), "{removed:?}");
    assert_eq!(bob.list().await.0, StatusCode::UNAUTHORIZED, "a removed user is logged out at once");
    server.stop();
}

/// A fake kubectl first on PATH that appends its argv to a file: the PATH and the file.
fn fake_kubectl(env: &TestEnv) -> (String, PathBuf) {
    let bin = env.user_home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let ran = env.user_home().join("kubectl-ran");
    let script = format!("#!/bin/sh\necho \"$@\" >> '{}'\necho 'NAME READY'\n", ran.display());
    opsai::testing::write_program(bin.join("kubectl"), script);
    (format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()), ran)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_conversation_talks_to_its_own_cluster() {
    let env = TestEnv::new();
    env.write_config(r#"{"kube": {"contexts": ["staging", "prod"]}}"#);
    let (path, ran) = fake_kubectl(&env);
    let mock =
        MockLlm::start([reply_tool_call("p1", "list_pods", json!({"namespace": "web"})), reply_text("One pod.")]);
    let server = Server::builder(&env).mock(&mock).env("PATH", &path).start();
    let api = server.api();
    let (_, me) = api.send(api.request(Method::GET, "/api/v2/auth/me")).await;
    assert_eq!(me["clusters"], json!(["staging", "prod"]));
    let unknown = api.request(Method::POST, "/api/v2/ai/conversations").json(&json!({"cluster_id": "dev"}));
    assert_eq!(api.send(unknown).await.0, StatusCode::BAD_REQUEST);
    let created = api.create(json!({"title": "staging pods", "cluster_id": "staging"})).await;
    assert_eq!(created["cluster_id"], "staging");
    let events = api.chat(created["id"].as_i64().unwrap(), "list the web pods").await.collect().await;
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!((call["cluster"].as_str(), call["namespace"].as_str()), (Some("staging"), Some("web")), "{call}");
    let argv = std::fs::read_to_string(&ran).unwrap();
    assert!(argv.contains("--context=staging") && argv.contains("get pods -n web"), "{argv}");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_blacklisted_kube_call_is_refused_and_relayed() {
    let env = TestEnv::new();
    let (path, ran) = fake_kubectl(&env);
    let mock = MockLlm::start([
        reply_tool_call("k1", "get_configmap", json!({"name": "secret/db-credentials", "namespace": "prod"})),
        reply_text("I may not read secrets."),
    ]);
    let server = Server::builder(&env).mock(&mock).env("PATH", &path).start();
    let api = server.api();
    let id = api.new_conversation().await;
    let events = api.chat(id, "show the db password").await.collect().await;
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!((call["tool"].as_str(), call["namespace"].as_str()), (Some("get_configmap"), Some("prod")), "{call}");
    assert!(call["params"].as_str().unwrap().contains("db-credentials"), "params is the arguments as a string");
    let result = events.iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert!(result["content"].as_str().unwrap().starts_with("no permission: "), "{result}");
    let answer = events.iter().find(|e| e["kind"] == "answer").unwrap();
    assert_eq!(answer["content"], "I may not read secrets.");
    assert!(!ran.exists(), "kubectl ran");
    assert!(mock.chat_requests()[1].tool_result("k1").unwrap().starts_with("no permission: "));
    let log = audit(&env);
    assert!(log.contains("USER: owner") && log.contains("no permission"), "{log}");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_outlives_its_connection_and_stream_shows_it() {
    let env = TestEnv::new();
    let gate = Gate::new();
    let mock = MockLlm::start([reply_text("first part, second part, and the end.").held_after(3, &gate)]);
    let server = Server::builder(&env).mock(&mock).start();
    let api = server.api();
    let id = api.new_conversation().await;
    let mut events = api.chat(id, "tell me").await;
    events.until(|e| e["kind"] == "answer_delta").await;
    drop(events);
    let busy = api.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": id, "message": "again"}));
    assert_eq!(api.send(busy).await.0, StatusCode::CONFLICT, "the turn still runs");
    assert_eq!(api.list().await.1[0]["running"], true);

    let mut replay = api.stream(id).await;
    assert_eq!(replay.next().await.unwrap()["kind"], "start", "the stream replays the turn from its start");
    replay.until(|e| e["kind"] == "answer_delta").await;
    gate.open();
    let rest = replay.collect().await;
    assert_eq!(rest.last().unwrap()["type"], "done");
    let (_, messages) = api.messages(id).await;
    assert_eq!(messages[1]["content"], "first part, second part, and the end.");
    let idle = api.stream(id).await.collect().await;
    assert_eq!(kinds(&idle), ["done/done"]);
    server.stop();
}

#[test]
fn a_remote_address_needs_users_or_allow_remote() {
    let env = TestEnv::new();
    let out = env.cmd().args(["serve", "--listen", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--users") && stderr.contains("--allow-remote"), "{stderr}");
    assert!(out.stdout.is_empty(), "no URL is printed");
    let short =
        env.cmd().args(["serve", "--listen", "127.0.0.1:0"]).env("OPSAI_SERVE_TOKEN", "short").output().unwrap();
    assert_eq!(short.status.code(), Some(2), "{short:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_mid_turn_stores_the_turn_and_exits_0() {
    for storage in Storage::each() {
        let env = TestEnv::new();
        let mock = MockLlm::start([reply_tool_call("g1", "run_command", json!({"command": MEDIUM}))]);
        let token = "fixed-token-for-the-test-0123456789";
        let server = Server::builder(&env).mock(&mock).env("OPSAI_SERVE_TOKEN", token).storage(&storage).start();
        assert_eq!(server.token.as_deref(), Some("fixed-token-for-the-test-0123456789"));
        let api = server.api();
        let id = api.new_conversation().await;
        let mut events = api.chat(id, "make a file").await;
        events.until(|e| e["kind"] == "request").await;
        server.stop();
        let rest = events.collect().await;
        assert_eq!(rest.last().unwrap()["type"], "done", "{rest:#?}");

        // On Postgres the server that reads it back has another home: what it shows is the database's.
        let other_home = TestEnv::new();
        let home = if matches!(storage, Storage::Postgres { .. }) { &other_home } else { &env };
        let again = Server::builder(home).mock(&mock).env("OPSAI_SERVE_TOKEN", token).storage(&storage).start();
        let (_, messages) = again.api().messages(id).await;
        let roles: Vec<&str> = messages.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "tool"], "{}: {messages}", storage.name());
        again.stop();
    }
}
