//! Two `opsai serve` replicas on one PostgreSQL database behind a real nginx (round robin, no
//! sticky sessions) serve one team (issue 25): a login on one is a login on both, a stream opened
//! on one follows a turn running on the other, an approval or a stop given on one reaches the turn
//! on the other, and a replica killed mid-turn leaves the turn ended as interrupted, with a new
//! message accepted elsewhere.

use std::path::PathBuf;

use opsai::testing::postgres::PgServer;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::nginx::{self, Nginx};
use crate::support::serve::*;
use crate::support::sshd::free_port;

struct Team {
    /// Kept for the drop order: the servers go before the database.
    servers: Vec<Server>,
    envs: Vec<TestEnv>,
    nginx: Nginx,
    _pg: PgServer,
}

/// Two replicas (each its own `OPSAI_HOME`, one users file, one database) behind nginx; `None`
/// (skipped, reason printed) without PostgreSQL or nginx outside CI.
fn team(mock: &MockLlm) -> Option<Team> {
    if !nginx::require() {
        return None;
    }
    let pg = PgServer::start()?;
    let url = tokio::task::block_in_place(|| pg.database("team"));
    let envs = vec![TestEnv::new(), TestEnv::new()];
    let users = users(&envs[0]);
    let front = free_port();
    let public = format!("127.0.0.1:{front}");
    let servers: Vec<Server> = envs
        .iter()
        .map(|env| {
            Server::builder(env)
                .mock(mock)
                .users(&users)
                .args(["--approval-timeout", "60"])
                .arg("--database")
                .arg(&url)
                .arg("--public-host")
                .arg(&public)
                .start()
        })
        .collect();
    let upstreams: Vec<String> = servers.iter().map(|s| s.base.trim_start_matches("http://").to_owned()).collect();
    let nginx = Nginx::start(front, &upstreams);
    Some(Team { servers, envs, nginx, _pg: pg })
}

/// alice (operator) and bob (viewer).
fn users(env: &TestEnv) -> PathBuf {
    let file = env.opsai_home().join("users.json");
    add_user(env, &file, "alice", "operator", "alice-password");
    add_user(env, &file, "bob", "viewer", "bob-password");
    file
}

impl Team {
    /// Logs in through nginx: the API of that login, through nginx.
    async fn login(&self, name: &str, password: &str) -> Api {
        let mut api = self.servers[0].login_at(&self.nginx.url(""), name, password).await;
        api.base = self.nginx.url("");
        api
    }

    /// The same caller straight to replica `n`.
    fn on(&self, api: &Api, n: usize) -> Api {
        let mut direct = api.clone();
        direct.base = self.servers[n].base.clone();
        direct
    }
}

fn chat(api: &Api, id: i64, message: &str) -> reqwest::RequestBuilder {
    api.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": id, "message": message}))
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_behind_nginx_serve_one_team_and_an_approval_on_one_reaches_the_turn_on_the_other() {
    let made = tempfile::tempdir().unwrap();
    let command = format!("touch '{}/made' && echo made-it", made.path().display());
    let mock = MockLlm::start([
        reply_tool_call("v1", "run_command", json!({"command": command, "why": "bob asked"})),
        reply_text("Made it."),
    ]);
    let Some(team) = team(&mock) else { return };
    let (alice, bob) = (team.login("alice", "alice-password").await, team.login("bob", "bob-password").await);
    let id = bob.new_conversation().await;
    // Requests alternate between the replicas: the login and the conversation hold on both.
    for _ in 0..4 {
        let (status, list) = bob.list().await;
        assert_eq!(status, StatusCode::OK, "{list}");
        assert!(list.to_string().contains(&format!("\"id\":{id}")), "{list}");
    }

    let mut asked = Events::open(chat(&team.on(&bob, 0), id, "make a file")).await;
    let request = asked.until(|e| e["kind"] == "request").await;
    assert_eq!(request["needs_operator"], true);
    // A second message on the other replica is refused as busy: one turn per conversation.
    let (status, body) = team.on(&bob, 1).send(chat(&team.on(&bob, 1), id, "again")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    // A stream opened on the other replica replays the turn so far.
    let mut followed = team.on(&bob, 1).stream(id).await;
    let replayed = followed.until(|e| e["kind"] == "request").await;
    assert_eq!(replayed["request_id"], request["request_id"]);

    // The operator on the other replica sees it in the queue and answers it there.
    let alice_b = team.on(&alice, 1);
    let (status, queue) = alice_b.send(alice_b.request(Method::GET, "/api/v2/ai/approvals")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(queue.as_array().map(Vec::len), Some(1), "{queue}");
    assert_eq!((queue[0]["asked_by"].as_str(), queue[0]["command"].as_str()), (Some("bob"), Some(command.as_str())));
    let answer = json!({"decision": "approve", "conversation_id": id, "request_id": queue[0]["request_id"]});
    let (status, body) = alice_b.send(alice_b.request(Method::POST, "/api/v2/ai/approvals/v1").json(&answer)).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");

    let decided = asked.until(|e| e["kind"] == "decided_by").await;
    assert_eq!(decided["decided_by"], "alice");
    let here = asked.collect().await;
    let there = followed.collect().await;
    assert_eq!(here.last().unwrap()["outcome"], "answer", "{here:#?}");
    assert_eq!(there.last().unwrap()["outcome"], "answer", "{there:#?}");
    assert!(there.iter().any(|e| e["kind"] == "decided_by"), "the follower saw every event: {there:#?}");
    assert!(made.path().join("made").exists(), "the yes given on replica 1 ran the command on replica 0");
    let audit = std::fs::read_to_string(team.envs[0].opsai_home().join("audit.log")).unwrap();
    assert!(audit.lines().any(|l| l.contains("USER: bob | APPROVER: alice")), "{audit}");
    // The messages are stored once, in the shared database: read back through either replica.
    for n in 0..2 {
        let (status, messages) = team.on(&bob, n).messages(id).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(messages[0]["content"], "make a file", "{messages}");
        assert_eq!(messages.as_array().unwrap().last().unwrap()["content"], "Made it.", "{messages}");
    }
    // A logout on one replica ends the session on both.
    let (status, _) = alice_b.send(alice_b.request(Method::POST, "/api/v2/auth/logout")).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = team.on(&alice, 0).list().await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_or_a_delete_given_on_one_replica_ends_the_turn_on_the_other() {
    let mock = MockLlm::start([
        reply_tool_call("s1", "run_command", json!({"command": "touch /nonexistent/x"})),
        reply_tool_call("s2", "run_command", json!({"command": "touch /nonexistent/y"})),
    ]);
    let Some(team) = team(&mock) else { return };
    let bob = team.login("bob", "bob-password").await;
    let id = bob.new_conversation().await;
    let mut asked = Events::open(chat(&team.on(&bob, 0), id, "make a file")).await;
    asked.until(|e| e["kind"] == "request").await;
    assert_eq!(team.on(&bob, 1).stop_turn(id).await, StatusCode::NO_CONTENT);
    let events = asked.collect().await;
    assert_eq!(events.last().unwrap()["outcome"], "stopped", "{events:#?}");

    // Deleting it on the other replica while a turn runs stops the turn first, then deletes.
    let mut asked = Events::open(chat(&team.on(&bob, 0), id, "make another")).await;
    asked.until(|e| e["kind"] == "request").await;
    assert_eq!(team.on(&bob, 1).delete(id).await, StatusCode::NO_CONTENT);
    let events = asked.collect().await;
    assert_eq!(events.last().unwrap()["type"], "done", "{events:#?}");
    assert_eq!(team.on(&bob, 0).messages(id).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_mid_turn_leaves_the_turn_interrupted_and_the_other_takes_the_next_message() {
    let mock = MockLlm::start([
        reply_tool_call("k1", "run_command", json!({"command": "touch /nonexistent/x"})),
        reply_text("Still here."),
    ]);
    let Some(mut team) = team(&mock) else { return };
    let bob = team.login("bob", "bob-password").await;
    let id = bob.new_conversation().await;
    let mut asked = Events::open(chat(&team.on(&bob, 0), id, "make a file")).await;
    asked.until(|e| e["kind"] == "request").await;
    let bob_b = team.on(&bob, 1);
    let mut followed = bob_b.stream(id).await;
    followed.until(|e| e["kind"] == "request").await;

    team.servers.remove(0).kill();
    let rest = followed.collect().await;
    let kinds: Vec<(&str, &str)> =
        rest.iter().map(|e| (e["type"].as_str().unwrap_or(""), e["kind"].as_str().unwrap_or(""))).collect();
    assert_eq!(kinds.last(), Some(&("done", "done")), "{rest:#?}");
    assert_eq!(rest.last().unwrap()["outcome"], "interrupted", "{rest:#?}");
    assert!(kinds.contains(&("error", "interrupted")), "{rest:#?}");
    let (_, queue) = bob_b.send(bob_b.request(Method::GET, "/api/v2/ai/conversations")).await;
    assert!(queue.to_string().contains(&format!("\"id\":{id}")));

    // The conversation takes a new message on the replica left, with whole messages before it.
    let events = Events::open(chat(&bob_b, id, "are you there?")).await.collect().await;
    assert_eq!(events.last().unwrap()["outcome"], "answer", "{events:#?}");
    let (status, messages) = bob_b.messages(id).await;
    assert_eq!(status, StatusCode::OK);
    let contents: Vec<&Value> = messages.as_array().unwrap().iter().map(|m| &m["content"]).collect();
    assert_eq!(contents.first().map(|c| c.as_str()), Some(Some("make a file")), "{messages}");
    assert_eq!(contents.last().map(|c| c.as_str()), Some(Some("Still here.")), "{messages}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_operators_approval_for_the_session_holds_for_the_next_turn_on_the_other_replica() {
    let made = tempfile::tempdir().unwrap();
    let touch = |name: &str| format!("touch '{}/{name}'", made.path().display());
    let mock = MockLlm::start([
        reply_tool_call("g1", "run_command", json!({"command": touch("first"), "why": "asked"})),
        reply_text("First made."),
        reply_tool_call("g2", "run_command", json!({"command": touch("second"), "why": "asked"})),
        reply_text("Second made."),
    ]);
    let Some(team) = team(&mock) else { return };
    let alice = team.login("alice", "alice-password").await;
    let id = alice.new_conversation().await;
    let on_a = team.on(&alice, 0);
    let mut first = Events::open(chat(&on_a, id, "make the first file")).await;
    let request = first.until(|e| e["kind"] == "request").await;
    assert!(!request["grant"].is_null(), "a grant is offered: {request}");
    let answer = json!({"decision": "approve_session", "conversation_id": id, "request_id": request["request_id"]});
    let (status, body) = on_a.send(on_a.request(Method::POST, "/api/v2/ai/approvals/g1").json(&answer)).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert_eq!(first.collect().await.last().unwrap()["outcome"], "answer");
    assert!(made.path().join("first").exists());

    // The next turn runs on the other replica: the same kind of command runs without asking.
    let on_b = team.on(&alice, 1);
    let second = Events::open(chat(&on_b, id, "make the second file")).await.collect().await;
    assert_eq!(second.last().unwrap()["outcome"], "answer", "{second:#?}");
    assert!(!second.iter().any(|e| e["kind"] == "request"), "asked again on the other replica: {second:#?}");
    assert!(made.path().join("second").exists(), "{second:#?}");
}
