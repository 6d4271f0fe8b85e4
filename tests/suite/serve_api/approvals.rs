//! Approvals in the browser by role: a viewer's request waits for an operator, an operator approves Medium and
//! confirms High, an unanswered approval times out as a refusal, a grant holds for the conversation,
//! and stopping or deleting a waiting turn ends it; every decision has its audit line with USER.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::{HIGH, MEDIUM, audit, kinds, two_users};
use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

/// A viewer's request waits for an operator: every operator sees it in the queue, one answers,
/// the viewer's stream says who decided, and the audit line names both.
#[tokio::test(flavor = "multi_thread")]
async fn a_viewers_request_waits_for_an_operator_who_answers_it_from_the_queue() {
    let env = TestEnv::new();
    let file = two_users(&env);
    let mock = MockLlm::start([
        reply_tool_call("v1", "run_command", json!({"command": MEDIUM, "why": "bob asked"})),
        reply_text("Made it."),
    ]);
    let server = Server::builder(&env).mock(&mock).users(&file).start();
    let (alice, bob) = (server.login("alice", "alice-password").await, server.login("bob", "bob-password").await);
    let id = bob.new_conversation().await;
    let mut events = bob.chat(id, "make a file").await;
    let request = events.until(|e| e["kind"] == "request").await;
    assert_eq!((request["id"].as_str(), request["needs_operator"].as_bool()), (Some("v1"), Some(true)), "{request}");
    assert!(!env.user_home().join("made").exists(), "nothing runs while it waits");

    // Operators may read anyone's conversation, never write in it.
    let (status, shown) = alice.send(alice.request(Method::GET, &format!("/api/v2/ai/conversations/{id}"))).await;
    assert_eq!(
        (status, shown["user_id"].as_str(), shown["running"].as_bool()),
        (StatusCode::OK, Some("bob"), Some(true))
    );
    let (status, messages) = alice.messages(id).await;
    assert_eq!((status, messages[0]["content"].as_str()), (StatusCode::OK, Some("make a file")), "{messages}");
    let theirs = alice.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": id, "message": "hi"}));
    assert_eq!(alice.send(theirs).await.0, StatusCode::NOT_FOUND, "asking stays the owner's");
    assert_eq!(alice.stop_turn(id).await, StatusCode::NOT_FOUND, "stopping too");
    assert_eq!(alice.delete(id).await, StatusCode::NOT_FOUND, "deleting too");
    let alices = alice.new_conversation().await;
    let (status, _) = bob.send(bob.request(Method::GET, &format!("/api/v2/ai/conversations/{alices}"))).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a viewer reads only their own");
    let (status, _) = bob.send(bob.request(Method::GET, "/api/v2/ai/approvals")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "the queue is the operators'");
    assert_eq!(bob.approve("v1", "approve", None).await.0, StatusCode::FORBIDDEN, "a viewer answers nothing");
    let (status, queue) = alice.send(alice.request(Method::GET, "/api/v2/ai/approvals")).await;
    assert_eq!(status, StatusCode::OK);
    let waiting = queue.as_array().unwrap();
    assert_eq!(waiting.len(), 1, "{queue}");
    assert_eq!(
        (waiting[0]["asked_by"].as_str(), waiting[0]["conversation_id"].as_i64(), waiting[0]["command"].as_str()),
        (Some("bob"), Some(id), Some(MEDIUM))
    );
    assert_eq!(waiting[0]["why"], "bob asked");
    let request_id = waiting[0]["request_id"].as_str().unwrap().to_owned();
    assert_eq!(request["request_id"], request_id.as_str(), "the queue and the stream name the same request");
    let answer = |decision: &str, request_id: Option<&str>| {
        let mut body = json!({"decision": decision, "conversation_id": id, "command": MEDIUM});
        if let Some(request_id) = request_id {
            body["request_id"] = request_id.into();
        }
        alice.request(Method::POST, "/api/v2/ai/approvals/v1").json(&body)
    };
    let (status, body) = alice.send(answer("approve", None)).await;
    assert_eq!(status, StatusCode::CONFLICT, "another user's request is answered by its request id: {body}");
    let stale = alice.send(answer("approve", Some("an-earlier-request"))).await.0;
    assert_eq!(stale, StatusCode::NOT_FOUND, "an answer to a request no longer waiting decides nothing");
    let session = alice.send(answer("approve_session", Some(&request_id))).await.0;
    assert_eq!(session, StatusCode::BAD_REQUEST, "a grant is for one's own turns");
    assert_eq!(alice.send(answer("approve", Some(&request_id))).await.0, StatusCode::NO_CONTENT);

    let decided = events.until(|e| e["kind"] == "decided_by").await;
    assert_eq!(decided["decided_by"], "alice");
    let rest = events.collect().await;
    assert_eq!(rest.last().unwrap()["outcome"], "answer");
    assert!(env.user_home().join("made").exists(), "the operator's yes ran it");
    let (_, queue) = alice.send(alice.request(Method::GET, "/api/v2/ai/approvals")).await;
    assert_eq!(queue, json!([]), "answered: no longer waiting");
    let log = audit(&env);
    let line = log.lines().find(|line| line.contains("touch")).unwrap();
    assert!(line.contains("USER: bob | APPROVER: alice") && line.contains("CONFIRMED: yes"), "{line}");
    server.stop();
}

/// Nobody answering a viewer's request refuses it when the approval timeout passes.
#[tokio::test(flavor = "multi_thread")]
async fn a_viewers_request_nobody_answers_is_refused_after_the_timeout() {
    let env = TestEnv::new();
    let file = two_users(&env);
    let mock = MockLlm::start([
        reply_tool_call("v1", "run_command", json!({"command": MEDIUM})),
        reply_text("Nobody approved it."),
    ]);
    let server = Server::builder(&env).mock(&mock).users(&file).arg("--approval-timeout").arg("1").start();
    let bob = server.login("bob", "bob-password").await;
    let id = bob.new_conversation().await;
    let events = bob.chat(id, "make a file").await.collect().await;
    assert!(events.iter().any(|e| e["kind"] == "timeout"), "{events:#?}");
    assert!(!env.user_home().join("made").exists());
    let log = audit(&env);
    assert!(log.contains("USER: bob") && log.contains("CONFIRMED: no") && !log.contains("APPROVER"), "{log}");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operator_approves_medium_and_confirms_high_in_the_browser() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.user_home().join("junk")).unwrap();
    let file = two_users(&env);
    let mock = MockLlm::start([
        reply_tool_call("m1", "run_command", json!({"command": MEDIUM})),
        reply_tool_call("h1", "run_command", json!({"command": HIGH})),
        reply_text("Both done."),
    ]);
    let server = Server::builder(&env).mock(&mock).users(&file).start();
    let alice = server.login("alice", "alice-password").await;
    let bob = server.login("bob", "bob-password").await;
    let id = alice.new_conversation().await;
    let mut events = alice.chat(id, "make a file, then clean up").await;

    let request = events.until(|e| e["kind"] == "request").await;
    assert_eq!((request["id"].as_str(), request["risk"].as_str()), (Some("m1"), Some("medium")), "{request}");
    assert_eq!(request["confirm_word"], Value::Null);
    assert_eq!(bob.approve("m1", "approve", None).await.0, StatusCode::FORBIDDEN, "a viewer");
    assert_eq!(alice.approve("nope", "approve", None).await.0, StatusCode::NOT_FOUND);
    assert_eq!(alice.approve("m1", "approve", None).await.0, StatusCode::NO_CONTENT);
    let result = events.until(|e| e["type"] == "tool_result" && e["kind"] == "tool_result").await;
    assert!(result["content"].as_str().unwrap().contains("made-it"), "{result}");

    let request = events.until(|e| e["kind"] == "request").await;
    assert_eq!((request["id"].as_str(), request["confirm_word"].as_str()), (Some("h1"), Some("yes")), "{request}");
    let (status, body) = alice.approve("h1", "approve", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(env.user_home().join("junk").exists(), "nothing was decided");
    assert_eq!(alice.approve("h1", "approve", Some("yes")).await.0, StatusCode::NO_CONTENT);
    let result = events.until(|e| e["type"] == "tool_result" && e["kind"] == "tool_result").await;
    assert!(result["content"].as_str().unwrap().contains("removed-ok"), "{result}");
    let rest = events.collect().await;
    assert_eq!(rest.last().unwrap()["type"], "done");
    assert!(!env.user_home().join("junk").exists());

    let (_, messages) = alice.messages(id).await;
    let risks: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .map(|c| c["risk"].as_str().unwrap())
        .collect();
    assert_eq!(risks, ["medium", "high"]);
    let log = audit(&env);
    let approved: Vec<&str> =
        log.lines().filter(|l| l.contains("USER: alice") && l.contains("CONFIRMED: yes")).collect();
    assert_eq!(approved.len(), 2, "{log}");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unanswered_approval_times_out_as_a_refusal() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("t1", "run_command", json!({"command": MEDIUM})),
        reply_text("Nobody approved it."),
    ]);
    let server = Server::builder(&env).mock(&mock).arg("--approval-timeout").arg("1").start();
    let api = server.api();
    let id = api.new_conversation().await;
    let events = api.chat(id, "make a file").await.collect().await;
    let kinds = kinds(&events);
    let at = |kind: &str| kinds.iter().position(|k| k == kind).unwrap_or_else(|| panic!("{kind}: {kinds:?}"));
    assert!(at("approval/request") < at("approval/timeout") && at("approval/timeout") < at("tool_result/tool_result"));
    let result = events.iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert_eq!(result["status"], "denied_by_policy", "{result}");
    assert!(result["content"].as_str().unwrap().contains("no operator answered within 1 s"), "{result}");
    assert_eq!(events.last().unwrap()["type"], "done");
    assert!(!env.user_home().join("made").exists());
    let (status, body) = api.approve("t1", "approve", None).await;
    assert_eq!(status, StatusCode::CONFLICT, "a late answer is told it timed out: {body}");
    let log = audit(&env);
    assert!(log.contains("USER: owner") && log.contains("CONFIRMED: no"), "{log}");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_ends_a_waiting_turn_which_is_stored() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_tool_call("s1", "run_command", json!({"command": MEDIUM}))]);
    let server = Server::builder(&env).mock(&mock).start();
    let api = server.api();
    let id = api.new_conversation().await;
    let mut events = api.chat(id, "make a file").await;
    events.until(|e| e["kind"] == "request").await;
    assert_eq!(api.stop_turn(id).await, StatusCode::NO_CONTENT);
    let rest = events.collect().await;
    assert_eq!(rest.last().unwrap()["type"], "done");
    assert_eq!(api.approve("s1", "approve", None).await.0, StatusCode::NOT_FOUND, "no longer pending");
    let (_, messages) = api.messages(id).await;
    let roles: Vec<&str> = messages.as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"], "the stopped turn is stored");
    assert!(!env.user_home().join("made").exists());
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn approve_session_covers_the_next_turn_and_delete_stops_a_running_one() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("a1", "run_command", json!({"command": "touch made-one"})),
        reply_text("Made."),
        reply_tool_call("a2", "run_command", json!({"command": "touch made-two"})),
        reply_text("Made again."),
        reply_tool_call("a3", "run_command", json!({"command": "mkdir -p newdir"})),
    ]);
    let server = Server::builder(&env).mock(&mock).arg("--approval-timeout").arg("30").start();
    let api = server.api();
    let id = api.new_conversation().await;
    let mut events = api.chat(id, "make a file").await;
    events.until(|e| e["kind"] == "request").await;
    assert_eq!(api.approve("a1", "approve_session", None).await.0, StatusCode::NO_CONTENT);
    let first = events.collect().await;
    assert!(first.iter().any(|e| e["decision"] == "approved_for_session"), "{first:#?}");
    let second = api.chat(id, "again").await.collect().await;
    assert!(!second.iter().any(|e| e["kind"] == "request"), "the grant holds in the next turn: {second:#?}");
    let result = second.iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert_eq!(result["status"], "ran", "{result}");
    assert!(env.user_home().join("made-two").exists());

    let mut third = api.chat(id, "make a directory").await;
    third.until(|e| e["kind"] == "request").await;
    assert_eq!(api.delete(id).await, StatusCode::NO_CONTENT);
    assert_eq!(third.collect().await.last().unwrap()["type"], "done");
    assert_eq!(api.messages(id).await.0, StatusCode::NOT_FOUND);
    assert!(!env.user_home().join("newdir").exists());
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_demoted_operator_keeps_no_grant() {
    let env = TestEnv::new();
    let file = two_users(&env);
    let mock = MockLlm::start([
        reply_tool_call("g1", "run_command", json!({"command": "touch made-one"})),
        reply_text("Made."),
        reply_tool_call("g2", "run_command", json!({"command": "touch made-two"})),
        reply_text("Not allowed."),
    ]);
    let server = Server::builder(&env).mock(&mock).users(&file).arg("--approval-timeout").arg("2").start();
    let alice = server.login("alice", "alice-password").await;
    let id = alice.new_conversation().await;
    let mut events = alice.chat(id, "make a file").await;
    events.until(|e| e["kind"] == "request").await;
    assert_eq!(alice.approve("g1", "approve_session", None).await.0, StatusCode::NO_CONTENT);
    events.collect().await;
    assert!(env.user_home().join("made-one").exists());

    add_user(&env, &file, "alice", "viewer", "alice-password");
    let alice = server.login("alice", "alice-password").await;
    let events = alice.chat(id, "again").await.collect().await;
    let asked = events.iter().find(|e| e["kind"] == "request").unwrap();
    assert_eq!(asked["needs_operator"], true, "not let through by her old grant: {asked}");
    let result = events.iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert_eq!(result["status"], "denied_by_policy", "the grant is gone with the role: {result}");
    assert!(!env.user_home().join("made-two").exists());
    let log = audit(&env);
    let last = log.lines().rfind(|l| l.contains("made-two")).unwrap_or_default();
    assert!(last.contains("USER: alice") && last.contains("CONFIRMED: no"), "{log}");
    server.stop();
}

/// Issue 21 §6: the card masks a secret inside its word only; every operator and command that
/// would run is on it (`;rm -rf DIR`), in the request, the tool call and its arguments, and the
/// audit line of the refusal.
#[tokio::test(flavor = "multi_thread")]
async fn the_approval_card_shows_every_command_and_operator_of_a_redacted_line() {
    let env = TestEnv::new();
    let file = two_users(&env);
    let command = "echo Authorization: Bearer tok3n42abc;rm -rf DIR";
    let shown = "echo Authorization: Bearer [REDACTED:authorization];rm -rf DIR";
    let mock =
        MockLlm::start([reply_tool_call("r1", "run_command", json!({"command": command})), reply_text("Not run.")]);
    let server = Server::builder(&env).mock(&mock).users(&file).start();
    let alice = server.login("alice", "alice-password").await;
    let id = alice.new_conversation().await;
    let mut events = alice.chat(id, "print the header").await;
    let request = events.until(|e| e["kind"] == "request").await;
    assert_eq!(request["command"], shown, "{request}");
    assert_eq!(alice.approve("r1", "deny", None).await.0, StatusCode::NO_CONTENT);
    let rest = events.collect().await;
    let call = rest.iter().find(|e| e["type"] == "tool_call" && e["id"] == "r1" && e["command"].is_string());
    let call = call.unwrap_or_else(|| panic!("no tool_call event: {rest:#?}"));
    assert_eq!(call["command"], shown, "{call}");
    assert_eq!(call["args"]["command"], shown, "{call}");
    let text = serde_json::to_string(&rest).unwrap();
    assert!(!text.contains("tok3n42abc"), "{text}");
    let log = audit(&env);
    assert!(log.contains(&format!("CMD: \"{shown}\"")), "{log}");
    server.stop();
}
