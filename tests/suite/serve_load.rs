//! `opsai serve` under load and after a crash, through the real binary and the mock LLM: 20
//! conversations streaming at once lose nothing and store every message exactly once (read from
//! sessions.db itself, and from the Postgres database with `--database`); a server killed with SIGKILL mid-turn and started again still has and lists
//! every message it had stored.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::{Server, Storage, within};

const STREAMS: usize = 20;

/// Every stored message as (conversation, role, content), read from where `storage` keeps them.
fn stored_in(env: &TestEnv, storage: &Storage) -> Vec<(i64, String, String)> {
    let Storage::Postgres { url, .. } = storage else { return stored(env) };
    let url = url.clone();
    // The blocking client on a thread of its own, not on the test's async one.
    let read = std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect to the database");
        let rows = client.query("SELECT conversation_id, role, content FROM messages ORDER BY id", &[]).unwrap();
        rows.iter().map(|row| (row.get(0), row.get(1), row.get(2))).collect()
    });
    read.join().expect("reading the messages")
}

/// The whole answer a stream carried (its `answer` event).
fn answer(events: &[Value]) -> Option<String> {
    events.iter().rev().find(|e| e["kind"] == "answer").and_then(|e| e["content"].as_str()).map(str::to_owned)
}

/// Every stored message as (conversation, role, content), read from sessions.db directly.
fn stored(env: &TestEnv) -> Vec<(i64, String, String)> {
    let db = rusqlite::Connection::open(env.opsai_home().join("sessions.db")).expect("open sessions.db");
    let mut statement =
        db.prepare("SELECT conversation_id, role, content FROM messages ORDER BY id").expect("query messages");
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .expect("read messages")
        .collect::<Result<_, _>>()
        .expect("message rows")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_conversations_stream_at_once_and_every_message_is_stored_once() {
    for storage in Storage::each() {
        let env = TestEnv::new();
        let answers: Vec<String> = (0..STREAMS).map(|n| format!("Answer number {n} is here.")).collect();
        // Each reply holds after its first write until its gate opens, then streams with token delays
        // (each piece its own write, 15 ms apart).
        let gates: Vec<Gate> = (0..STREAMS).map(|_| Gate::new()).collect();
        let replies = answers.iter().zip(&gates);
        let mock = MockLlm::start(
            replies.map(|(text, gate)| reply_text(text).with_pauses(Duration::from_millis(15)).held_after(1, gate)),
        );
        let server = Server::builder(&env).mock(&mock).storage(&storage).start();
        let api = server.api();
        let mut conversations = Vec::new();
        for n in 0..STREAMS {
            conversations.push(api.create(json!({"title": format!("load {n}")})).await["id"].as_i64().unwrap());
        }
        let turns: Vec<_> = conversations
            .iter()
            .enumerate()
            .map(|(n, &id)| {
                let api = server.api();
                tokio::spawn(async move { (id, n, api.chat(id, &format!("question {n}")).await.collect().await) })
            })
            .collect();
        // All 20 turns are at the model at once, each holding its stream open, before any may finish.
        within(async {
            while mock.chat_requests().len() < STREAMS {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        gates.iter().for_each(Gate::open);
        let mut seen = BTreeSet::new();
        let mut answer_of = HashMap::new();
        for turn in futures_util::future::join_all(turns).await {
            let (id, n, events) = turn.expect("a chat task");
            assert_eq!(events.first().map(|e| &e["kind"]), Some(&json!("start")), "c{id}: {events:?}");
            assert_eq!(
                events.last().map(|e| &e["type"]),
                Some(&json!("done")),
                "c{id} did not end with done: {events:?}"
            );
            let text = answer(&events).unwrap_or_else(|| panic!("c{id} (question {n}) has no answer: {events:?}"));
            assert!(answers.contains(&text), "c{id}: {text:?}");
            seen.insert(text.clone());
            answer_of.insert(id, (n, text));
        }
        assert_eq!(seen.len(), STREAMS, "every scripted answer reached exactly one stream");
        assert_eq!(mock.chat_requests().len(), STREAMS);

        let rows = stored_in(&env, &storage);
        assert_eq!(rows.len(), 2 * STREAMS, "{rows:#?}");
        for (id, (n, text)) in &answer_of {
            let mine: Vec<(&str, &str)> = rows
                .iter()
                .filter(|(c, ..)| c == id)
                .map(|(_, role, content)| (role.as_str(), content.as_str()))
                .collect();
            assert_eq!(mine, [("user", format!("question {n}").as_str()), ("assistant", text.as_str())], "c{id}");
            let (status, listed) = api.messages(*id).await;
            assert_eq!((status, listed.as_array().map(Vec::len)), (StatusCode::OK, Some(2)), "{listed}");
        }
        let (_, listed) = api.list().await;
        let counts: Vec<i64> =
            listed.as_array().into_iter().flatten().filter_map(|c| c["message_count"].as_i64()).collect();
        assert_eq!(counts, vec![2; STREAMS], "{listed}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_turn_keeps_every_stored_message_after_a_restart() {
    for storage in Storage::each() {
        let env = TestEnv::new();
        let gate = Gate::new();
        // The second turn's reply stops after its first write and waits for a gate nobody opens.
        let mock = MockLlm::start([reply_text("First answer."), reply_text("Never finished.").held_after(1, &gate)]);
        let server = Server::builder(&env).mock(&mock).storage(&storage).start();
        let api = server.api();
        let id = api.new_conversation().await;
        let first = api.chat(id, "the first question").await.collect().await;
        assert_eq!(answer(&first).as_deref(), Some("First answer."), "{first:?}");

        let mut second = api.chat(id, "the second question").await;
        second.until(|e| e["kind"] == "start").await;
        // The model has the second request: the turn is running and its user message was stored first.
        within(async {
            while mock.chat_requests().len() < 2 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        server.kill();
        // The stream breaks with the server; what it carried until then does not matter here.
        drop(second.collect().await);

        let expected = [
            (id, "user".to_owned(), "the first question".to_owned()),
            (id, "assistant".to_owned(), "First answer.".to_owned()),
            (id, "user".to_owned(), "the second question".to_owned()),
        ];
        assert_eq!(stored_in(&env, &storage), expected);
        if let Storage::Sqlite = storage {
            let db = rusqlite::Connection::open(env.opsai_home().join("sessions.db")).unwrap();
            let check: String = db.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
            assert_eq!(check, "ok");
        }

        let mock = MockLlm::start([]);
        let server = Server::builder(&env).mock(&mock).storage(&storage).start();
        let api = server.api();
        let (status, listed) = api.list().await;
        assert_eq!(status, StatusCode::OK, "{listed}");
        let row = listed.as_array().and_then(|all| all.iter().find(|c| c["id"] == id)).cloned().unwrap_or_default();
        assert_eq!((row["message_count"].as_i64(), row["running"].as_bool()), (Some(3), Some(false)), "{listed}");
        let (status, messages) = api.messages(id).await;
        assert_eq!(status, StatusCode::OK, "{messages}");
        let contents: Vec<(&str, &str)> = messages
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| (m["role"].as_str().unwrap_or(""), m["content"].as_str().unwrap_or("")))
            .collect();
        assert_eq!(
            contents,
            [("user", "the first question"), ("assistant", "First answer."), ("user", "the second question")]
        );
        assert_eq!(stored_in(&env, &storage).len(), 3, "the restart stored nothing twice");
        server.stop();
    }
}
