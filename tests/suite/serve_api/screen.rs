//! What the browser sees of a turn: no secret in any event (a token split across two PTY chunks
//! included, live and replayed by `/stream`), and text the model wrote with hidden characters
//! written visibly, in the events and in `/messages`.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::MEDIUM;
use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_token_printed_in_two_chunks_never_reaches_the_browser() {
    let (first, second) = ("ghp_Ab3dEf6hIjAb3d", "Ef6hIjAb3dEf6hIjKl9nOp");
    // Quotes split each half in the command line, so only the output can hold them whole.
    let command =
        "printf 'gh''p_Ab3dEf6hIjAb3d'; sleep 0.5; printf 'Ef6hIjAb3d''Ef6hIjKl9nOp\\n'; sleep 1; echo finished";
    let env = TestEnv::new();
    let mock =
        MockLlm::start([reply_tool_call("p1", "run_command", json!({"command": command})), reply_text("Printed.")]);
    let server = Server::builder(&env).mock(&mock).start();
    let api = server.api();
    let id = api.new_conversation().await;
    let mut live = api.chat(id, "print it").await;
    live.until(|e| e["kind"] == "tool_call").await;
    let replay = api.stream(id).await.collect().await;
    let live = live.collect().await;
    for (name, events) in [("live", &live), ("replay", &replay)] {
        let text = serde_json::to_string(events).unwrap();
        assert!(!text.contains(first) && !text.contains(second), "{name}: {events:#?}");
        let output: String =
            events.iter().filter(|e| e["kind"] == "output").map(|e| e["chunk"].as_str().unwrap()).collect();
        assert!(output.contains("[REDACTED:") && output.contains("finished"), "{name}: {output:?}");
    }
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn hidden_characters_the_model_wrote_arrive_visibly_and_answers_name_their_request() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("w1", "run_command", json!({"command": MEDIUM, "why": "fix \u{202e}txt.exe"})),
        reply_text("done \u{202e}cba"),
    ]);
    let server = Server::builder(&env).mock(&mock).start();
    let api = server.api();
    let id = api.new_conversation().await;
    let mut events = api.chat(id, "make a file").await;
    let request = events.until(|e| e["kind"] == "request").await;
    assert_eq!(request["why"], "fix \\u{202e}txt.exe", "{request}");
    assert_eq!((request["command"].as_str(), request["conversation_id"].as_i64()), (Some(MEDIUM), Some(id)));
    let answer = |command: &str| {
        let body = json!({"decision": "approve", "conversation_id": id, "command": command});
        api.send(api.request(Method::POST, "/api/v2/ai/approvals/w1").json(&body))
    };
    let (status, body) = answer("touch \"$HOME/other\"").await;
    assert_eq!(status, StatusCode::CONFLICT, "another command: {body}");
    assert_eq!(answer(MEDIUM).await.0, StatusCode::NO_CONTENT);
    let events = events.collect().await;
    let text = serde_json::to_string(&events).unwrap();
    assert!(!text.contains('\u{202e}'), "{events:#?}");
    let shown = events.iter().find(|e| e["kind"] == "answer").unwrap();
    assert_eq!(shown["content"], "done \\u{202e}cba");

    let (_, messages) = api.messages(id).await;
    assert!(!messages.to_string().contains('\u{202e}'), "{messages:#}");
    let messages = messages.as_array().unwrap();
    let call: &Value = &messages.iter().find(|m| m["tool_calls"].is_array()).unwrap()["tool_calls"][0];
    assert_eq!((call["command"].as_str(), call["risk"].as_str()), (Some(MEDIUM), Some("medium")), "{call}");
    assert_eq!(messages.last().unwrap()["content"], "done \\u{202e}cba");
    server.stop();
}
