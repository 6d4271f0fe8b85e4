//! What bounds a caller: logins in parallel, a turn's output, turns per user, credentials that
//! changed, the Host a request names, guessed tokens.

use reqwest::{Method, StatusCode};
use serde_json::json;

use super::{MEDIUM, two_users};
use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

#[tokio::test(flavor = "multi_thread")]
async fn parallel_wrong_logins_are_limited_like_sequential_ones() {
    let env = TestEnv::new();
    let file = two_users(&env);
    let server = Server::builder(&env).users(&file).start();
    let attempts = (0..20).map(|_| server.post_credentials("/api/v2/auth/login", "alice", "wrong-password"));
    let answers = futures_util::future::join_all(attempts).await;
    let statuses: Vec<StatusCode> = answers.iter().map(reqwest::Response::status).collect();
    let checked = statuses.iter().filter(|s| **s == StatusCode::UNAUTHORIZED).count();
    assert!((1..=5).contains(&checked), "{statuses:?}");
    assert_eq!(checked + statuses.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count(), 20);
    assert!(answers.iter().filter(|a| a.status() == 429).all(|a| a.headers().contains_key("retry-after")));
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turns_live_output_is_cut_at_2_mib_and_the_result_still_comes() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("y1", "run_command", json!({"command": "yes | head -c 6000000"})),
        reply_text("Lots of y."),
    ]);
    let server = Server::builder(&env).mock(&mock).start();
    let api = server.api();
    let id = api.new_conversation().await;
    let events = api.chat(id, "say yes").await.collect().await;
    let shown: usize =
        events.iter().filter(|e| e["kind"] == "output").map(|e| e["chunk"].as_str().unwrap().len()).sum();
    assert!(shown <= 2 * 1024 * 1024, "{shown} bytes of live output");
    let cut: Vec<_> = events.iter().filter(|e| e["kind"] == "output_truncated").collect();
    assert_eq!(cut.len(), 1, "one marker");
    assert_eq!(cut[0]["id"], "y1");
    let result = events.iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert_eq!(result["output_bytes"], 6_000_000, "{result}");
    assert_eq!(events.last().unwrap()["type"], "done");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_runs_at_most_four_turns_at_once_in_users_mode() {
    let env = TestEnv::new();
    let mock =
        MockLlm::start((1..=4).map(|n| reply_tool_call(&format!("t{n}"), "run_command", json!({"command": MEDIUM}))));
    let file = two_users(&env);
    let server = Server::builder(&env).mock(&mock).users(&file).arg("--approval-timeout").arg("60").start();
    let api = server.login("alice", "alice-password").await;
    let mut waiting = Vec::new();
    for _ in 0..4 {
        let id = api.new_conversation().await;
        let mut events = api.chat(id, "make a file").await;
        events.until(|e| e["kind"] == "request").await;
        waiting.push((id, events));
    }
    let fifth = api.create(json!({"title": ""})).await["id"].as_i64().unwrap();
    let chat = api.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": fifth, "message": "x"}));
    let (status, body) = api.send(chat).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let (_, list) = api.list().await;
    let refused = list.as_array().unwrap().iter().find(|c| c["id"] == fifth).unwrap();
    assert_eq!(refused["title"], "", "a refused message does not name the conversation");
    for (id, events) in waiting {
        assert_eq!(api.stop_turn(id).await, StatusCode::NO_CONTENT);
        let done = events.collect().await.pop().unwrap();
        assert_eq!((done["type"].as_str(), done["outcome"].as_str()), (Some("done"), Some("stopped")), "{done}");
    }
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_changed_password_ends_sessions_and_api_tokens() {
    let env = TestEnv::new();
    let file = two_users(&env);
    let server = Server::builder(&env).users(&file).start();
    let cookie = server.login("alice", "alice-password").await;
    let token = server.api_token("alice", "alice-password").await;
    let bob = server.login("bob", "bob-password").await;
    assert_eq!(cookie.list().await.0, StatusCode::OK);
    add_user(&env, &file, "alice", "operator", "alice-new-password");
    assert_eq!(cookie.list().await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(token.list().await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(bob.list().await.0, StatusCode::OK, "others stay logged in");
    server.login("alice", "alice-new-password").await;
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn only_this_servers_host_names_are_answered() {
    let env = TestEnv::new();
    let server = Server::builder(&env).arg("--public-host").arg("chat.example").start();
    let api = server.api();
    let port = server.base.rsplit(':').next().unwrap().to_owned();
    let with_host = |host: String| api.send(api.request(Method::GET, "/api/v2/auth/me").header("host", host));
    let (status, body) = with_host(format!("evil.example:{port}")).await;
    assert_eq!(status, StatusCode::MISDIRECTED_REQUEST, "{body}");
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), "chat.example".to_owned()] {
        assert_eq!(with_host(host.clone()).await.0, StatusCode::OK, "{host}");
    }
    let page = server.client().get(server.url("/")).header("host", "evil.example").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::MISDIRECTED_REQUEST);
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_access_token_is_long_hidden_from_commands_and_not_guessable() {
    let env = TestEnv::new();
    let short = env
        .cmd()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("OPSAI_SERVE_TOKEN", "0123456789abcdefghij")
        .output()
        .unwrap();
    assert_eq!(short.status.code(), Some(2), "20 characters are too few: {short:?}");
    let token = "a-fixed-token-of-thirty-two-chars";
    let mock = MockLlm::start([
        reply_tool_call("e1", "run_command", json!({"command": "printenv OPSAI_SERVE_TOKEN; echo rc=$?"})),
        reply_text("Looked."),
    ]);
    let server =
        Server::builder(&env).mock(&mock).env("OPSAI_SERVE_TOKEN", token).arg("--approval-timeout").arg("30").start();
    let api = server.api();
    let id = api.new_conversation().await;
    let mut events = api.chat(id, "look").await;
    if events.until(|e| e["kind"] == "request" || e["kind"] == "tool_result").await["kind"] == "request" {
        assert_eq!(api.approve("e1", "approve", Some("yes")).await.0, StatusCode::NO_CONTENT);
    }
    let events = events.collect().await;
    let result = events.iter().find(|e| e["kind"] == "tool_result").expect("the result");
    assert!(result["content"].as_str().unwrap().contains("rc=1"), "commands do not inherit it: {result}");

    let guesser = server.api_with(Auth::Bearer("guess".into()));
    for _ in 0..20 {
        assert_eq!(guesser.list().await.0, StatusCode::UNAUTHORIZED);
    }
    let (status, body) = guesser.list().await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let url = server.url(&format!("/?token={token}"));
    let page = server.client().get(url).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::TOO_MANY_REQUESTS, "the address is throttled, the right token too");
    server.stop();
}

#[test]
fn the_token_modes_user_name_is_reserved() {
    let env = TestEnv::new();
    let file = env.opsai_home().join("users.json");
    let mut child = env
        .std_cmd()
        .args(["serve", "user", "add", "owner", "--role", "viewer", "--users"])
        .arg(&file)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    // The reserved name is refused before the password is read: the pipe may be closed already.
    let _ = child.stdin.take().unwrap().write_all(b"owner-password\n");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("reserved"), "{out:?}");
    assert!(!file.exists());
    let empty =
        env.cmd().args(["serve", "user", "add", "carol", "--role", "viewer", "--users"]).arg(&file).output().unwrap();
    assert_eq!(empty.status.code(), Some(2), "{empty:?}");
    assert!(String::from_utf8_lossy(&empty.stderr).contains("no password on standard input"), "{empty:?}");
}

#[test]
fn parallel_user_adds_all_land_and_a_readable_file_is_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let file = env.opsai_home().join("users.json");
    std::thread::scope(|scope| {
        for n in 0..6 {
            let (env, file) = (&env, &file);
            scope.spawn(move || add_user(env, file, &format!("user{n}"), "viewer", "a-long-password"));
        }
    });
    let listed = env.cmd().args(["serve", "user", "list", "--users"]).arg(&file).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&listed.stdout).lines().count(), 6, "{listed:?}");
    assert!(env.opsai_home().join("users.json.bak").exists());
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let server = Server::builder(&env).users(&file).start();
    assert!(server.stderr().contains("chmod 600"), "{}", server.stderr());
    server.stop();
}
