//! What a chat checks before its first byte, on both back ends (with `--database` the owner check
//! is folded into the claim of the turn, and the title is given in the turn's task): another
//! user's conversation is 404 exactly like one that does not exist, running or not; the owner's
//! busy one is 409; a refused message names nothing; an accepted one names the conversation.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::{MEDIUM, two_users};
use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

fn chat(api: &Api, id: i64, message: &str) -> reqwest::RequestBuilder {
    api.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": id, "message": message}))
}

async fn title(api: &Api, id: i64) -> Value {
    let (status, list) = api.list().await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list.as_array().unwrap().iter().find(|c| c["id"] == id).map(|c| c["title"].clone()).unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn another_users_conversation_is_404_like_none_a_busy_one_409_and_a_refused_message_names_nothing() {
    for storage in Storage::each() {
        let env = TestEnv::new();
        let file = two_users(&env);
        let mock = MockLlm::start([reply_tool_call("w1", "run_command", json!({"command": MEDIUM}))]);
        let server =
            Server::builder(&env).mock(&mock).users(&file).storage(&storage).args(["--approval-timeout", "60"]).start();
        let (alice, bob) = (server.login("alice", "alice-password").await, server.login("bob", "bob-password").await);
        let running = alice.create(json!({"title": ""})).await["id"].as_i64().unwrap();
        let idle = alice.create(json!({"title": ""})).await["id"].as_i64().unwrap();
        let bobs = bob.create(json!({"title": ""})).await["id"].as_i64().unwrap();

        let mut turn = alice.chat(running, "make   a\nfile").await;
        turn.until(|e| e["kind"] == "request").await;
        // Named in the turn's task, before the turn ends (the list shows it while it runs).
        assert_eq!(title(&alice, running).await, "make a file", "{}", storage.name());

        let (none_status, none) = bob.send(chat(&bob, running + 1000, "hi")).await;
        assert_eq!(none_status, StatusCode::NOT_FOUND, "{none}");
        for id in [running, idle] {
            let (status, body) = bob.send(chat(&bob, id, "hi")).await;
            assert_eq!((status, &body), (none_status, &none), "{}: alice's {id} is answered as none", storage.name());
        }
        // An operator may read anyone's conversation, but asks only in her own.
        let (status, body) = alice.send(chat(&alice, bobs, "hi")).await;
        assert_eq!((status, &body), (none_status, &none), "{}", storage.name());

        let (status, body) = alice.send(chat(&alice, running, "again")).await;
        assert_eq!(status, StatusCode::CONFLICT, "{}: {body}", storage.name());
        assert!(body["error"].as_str().unwrap().contains("already running"), "{body}");

        assert_eq!(title(&bob, bobs).await, "", "{}: a refused message names nothing", storage.name());
        assert_eq!(title(&alice, idle).await, "", "{}", storage.name());
        let (_, messages) = bob.messages(bobs).await;
        assert_eq!(messages, json!([]), "{}", storage.name());

        assert_eq!(alice.stop_turn(running).await, StatusCode::NO_CONTENT);
        let done = turn.collect().await.pop().unwrap();
        assert_eq!(done["outcome"], "stopped", "{done}");
        assert_eq!(title(&alice, running).await, "make a file", "{}", storage.name());
        server.stop();
    }
}
