//! The API's edges: another user's conversation is answered as one that does not exist, the
//! router's own errors are JSON, the bearer scheme in any case, and conversations bounded per user
//! (a quota, a creation rate) and listed a page at a time.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::alice_file;
use crate::support::TestEnv;
use crate::support::serve::*;

#[tokio::test(flavor = "multi_thread")]
async fn another_users_conversation_is_answered_as_one_that_does_not_exist() {
    let env = TestEnv::new();
    let file = alice_file(&env);
    // A viewer: an operator may read anyone's conversation (docs/serve.md), never write in it.
    add_user(&env, &file, "bob", "viewer", "bob-password");
    add_user(&env, &file, "carol", "operator", "carol-password");
    let server = Server::builder(&env).users(&file).start();
    let alice = server.login("alice", "alice-password").await;
    let bob = server.api_token("bob", "bob-password").await;
    let id = alice.new_conversation().await;
    let missing = id + 1000;
    for (method, path) in [
        (Method::GET, "/api/v2/ai/conversations/{}/messages"),
        (Method::GET, "/api/v2/ai/conversations/{}/stream"),
        (Method::POST, "/api/v2/ai/conversations/{}/stop"),
        (Method::DELETE, "/api/v2/ai/conversations/{}"),
    ] {
        let theirs = bob.send(bob.request(method.clone(), &path.replace("{}", &id.to_string()))).await;
        let nobodys = bob.send(bob.request(method.clone(), &path.replace("{}", &missing.to_string()))).await;
        assert_eq!(theirs.0, StatusCode::NOT_FOUND, "{method} {path}: {}", theirs.1);
        assert_eq!(theirs, nobodys, "{method} {path}: the same answer");
    }
    let chat =
        |id: i64| bob.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": id, "message": "x"}));
    assert_eq!(bob.send(chat(id)).await, bob.send(chat(missing)).await);
    let carol = server.api_token("carol", "carol-password").await;
    assert_eq!(carol.messages(id).await.0, StatusCode::OK, "an operator reads it");
    for (method, path) in
        [(Method::POST, "/api/v2/ai/conversations/{}/stop"), (Method::DELETE, "/api/v2/ai/conversations/{}")]
    {
        let theirs = carol.send(carol.request(method.clone(), &path.replace("{}", &id.to_string()))).await;
        let nobodys = carol.send(carol.request(method.clone(), &path.replace("{}", &missing.to_string()))).await;
        assert_eq!(
            (theirs.0, &theirs),
            (StatusCode::NOT_FOUND, &nobodys),
            "{method} {path}: not an operator's to change"
        );
    }
    assert_eq!(alice.messages(id).await.0, StatusCode::OK, "still alice's");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_routers_own_errors_are_json_and_the_bearer_scheme_is_case_insensitive() {
    let env = TestEnv::new();
    let server = Server::builder(&env).start();
    let api = server.api();
    let token = server.token.clone().unwrap();
    for (method, path, status) in [
        (Method::GET, "/api/v2/ai/conversations/abc/messages", StatusCode::BAD_REQUEST),
        (Method::GET, "/api/v2/ai/conversations/99999999999999999999999/messages", StatusCode::BAD_REQUEST),
        (Method::GET, "/api/v2/no-such-route", StatusCode::NOT_FOUND),
        (Method::GET, "/no-such-page", StatusCode::NOT_FOUND),
        (Method::GET, "/assets/nope.js", StatusCode::NOT_FOUND),
        (Method::PUT, "/api/v2/ai/conversations", StatusCode::METHOD_NOT_ALLOWED),
        (Method::POST, "/api/v2/auth/me", StatusCode::METHOD_NOT_ALLOWED),
        (Method::GET, "/api/v2/ai/conversations?limit=abc", StatusCode::BAD_REQUEST),
    ] {
        let response = within(api.request(method.clone(), path).send()).await.unwrap();
        assert_eq!(response.status(), status, "{method} {path}");
        let kind = response.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(kind.starts_with("application/json"), "{method} {path}: {kind}");
        if status == StatusCode::METHOD_NOT_ALLOWED {
            assert!(response.headers().contains_key("allow"), "{method} {path}: Allow kept");
        }
        let body: Value = response.json().await.unwrap();
        assert!(body["error"].as_str().is_some_and(|e| e.contains("docs/serve.md") || e.contains("limit")), "{body}");
    }
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let request =
            server.client().get(server.url("/api/v2/auth/me")).header("Authorization", format!("{scheme} {token}"));
        assert_eq!(within(request.send()).await.unwrap().status(), StatusCode::OK, "{scheme}");
    }
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn conversations_have_a_quota_a_creation_rate_and_pages() {
    for storage in Storage::each() {
        let env = TestEnv::new();
        let server = Server::builder(&env).arg("--max-conversations").arg("7").storage(&storage).start();
        let api = server.api();
        let mut ids = Vec::new();
        for _ in 0..7 {
            ids.push(api.new_conversation().await);
        }
        let (status, body) = api.send(api.request(Method::POST, "/api/v2/ai/conversations").json(&json!({}))).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert!(body["error"].as_str().unwrap().contains("--max-conversations"), "{body}");

        // Pages of 3 that follow each other through the Link header are the whole list.
        let mut seen = Vec::new();
        let mut next = Some("/api/v2/ai/conversations?limit=3".to_owned());
        while let Some(path) = next.take() {
            let response = within(api.request(Method::GET, &path).send()).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            next = response.headers().get("link").map(|link| {
                let link = link.to_str().unwrap();
                assert!(link.ends_with(">; rel=\"next\""), "{link}");
                link.trim_start_matches('<').split('>').next().unwrap().to_owned()
            });
            let page: Vec<Value> = response.json().await.unwrap();
            assert!(page.len() <= 3);
            seen.extend(page.iter().map(|c| c["id"].as_i64().unwrap()));
        }
        ids.reverse();
        assert_eq!(seen, ids, "newest first, each once");
        for bad in ["limit=0", "limit=501", "before=nonsense"] {
            let (status, body) = api.send(api.request(Method::GET, &format!("/api/v2/ai/conversations?{bad}"))).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        }
        assert_eq!(api.delete(ids[0]).await, StatusCode::NO_CONTENT);
        api.new_conversation().await;
        server.stop();
    }

    // Made as fast as a script can: 60 a minute, then 429.
    let env = TestEnv::new();
    let server = Server::builder(&env).start();
    let api = server.api();
    let mut answers = Vec::new();
    for _ in 0..70 {
        let request = api.request(Method::POST, "/api/v2/ai/conversations").json(&json!({}));
        answers.push(within(request.send()).await.unwrap());
    }
    let made = answers.iter().filter(|a| a.status() == StatusCode::CREATED).count();
    assert_eq!(made, 60, "{:?}", answers.iter().map(reqwest::Response::status).collect::<Vec<_>>());
    let refused = answers.iter().find(|a| a.status() == StatusCode::TOO_MANY_REQUESTS).expect("a 429");
    assert!(refused.headers().contains_key("retry-after"));
    server.stop();
}
