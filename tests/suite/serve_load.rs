//! `opsai serve` under load and after a crash, through the real binary and the mock LLM: 20
//! conversations streaming at once lose nothing and store every message exactly once (read from
//! sessions.db itself); a server killed with SIGKILL mid-turn and started again still has and lists
//! every message it had stored.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;

const TOKEN: &str = "load-test-token-0123456789";
const LIMIT: Duration = Duration::from_secs(60);
const STREAMS: usize = 20;

/// A running `opsai serve` on a free loopback port, in token mode; SIGKILLed when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    fn start(env: &TestEnv, mock: &MockLlm) -> Server {
        let mut child = env
            .std_cmd()
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("OPSAI_BASE_URL", mock.base_url())
            .env("OPSAI_SERVE_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start opsai serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = send.send(line);
        });
        let line = receive.recv_timeout(LIMIT).unwrap_or_default();
        let Some(url) = line.trim().strip_prefix("opsai serve: open ") else {
            let _ = child.kill();
            panic!("opsai serve printed {line:?} instead of its URL");
        };
        let base = url.split("/?").next().unwrap_or(url).trim_end_matches('/').to_owned();
        Server { child, base }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// SIGKILL: no shutdown code runs.
    fn kill(mut self) {
        self.child.kill().expect("SIGKILL opsai serve");
        self.child.wait().expect("reap opsai serve");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(LIMIT).build().expect("http client")
}

async fn api(server: &Server, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut request = client().request(method, server.url(path)).bearer_auth(TOKEN);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request to opsai serve");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

async fn create(server: &Server, title: &str) -> i64 {
    let (status, body) =
        api(server, reqwest::Method::POST, "/api/v2/ai/conversations", Some(json!({"title": title}))).await;
    assert_eq!(status, 201, "{body}");
    body["id"].as_i64().unwrap_or_else(|| panic!("no id in {body}"))
}

/// The `data:` of every SSE event of one chat, in order, until the stream ends.
async fn chat(server: &Server, conversation: i64, message: &str) -> Vec<Value> {
    let response = client()
        .post(server.url("/api/v2/ai/chat"))
        .bearer_auth(TOKEN)
        .json(&json!({"conversation_id": conversation, "message": message}))
        .send()
        .await
        .expect("POST /api/v2/ai/chat");
    assert_eq!(response.status().as_u16(), 200);
    let mut response = response;
    let mut buffer = String::new();
    let mut events = Vec::new();
    while let Some(bytes) = response.chunk().await.expect("read the SSE stream") {
        buffer.push_str(&String::from_utf8_lossy(&bytes));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            for data in block.lines().filter_map(|line| line.strip_prefix("data:")) {
                events.push(serde_json::from_str(data.trim()).unwrap_or_else(|e| panic!("bad event {data}: {e}")));
            }
        }
    }
    events
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
    let env = TestEnv::new();
    let answers: Vec<String> = (0..STREAMS).map(|n| format!("Answer number {n} is here.")).collect();
    // Token delays: each piece of each answer is its own write, 15 ms apart, so all 20 overlap.
    let mock = MockLlm::start(answers.iter().map(|text| reply_text(text).with_pauses(Duration::from_millis(15))));
    let server = Server::start(&env, &mock);
    let mut conversations = Vec::new();
    for n in 0..STREAMS {
        conversations.push(create(&server, &format!("load {n}")).await);
    }
    let server = std::sync::Arc::new(server);
    let turns = conversations.iter().enumerate().map(|(n, &id)| {
        let server = server.clone();
        tokio::spawn(async move { (id, n, chat(&server, id, &format!("question {n}")).await) })
    });
    let mut seen = BTreeSet::new();
    let mut answer_of = std::collections::HashMap::new();
    for turn in futures_util::future::join_all(turns).await {
        let (id, n, events) = turn.expect("a chat task");
        assert_eq!(events.first().map(|e| &e["kind"]), Some(&json!("start")), "c{id}: {events:?}");
        assert_eq!(events.last().map(|e| &e["type"]), Some(&json!("done")), "c{id} did not end with done: {events:?}");
        let text = answer(&events).unwrap_or_else(|| panic!("c{id} (question {n}) has no answer: {events:?}"));
        assert!(answers.contains(&text), "c{id}: {text:?}");
        seen.insert(text.clone());
        answer_of.insert(id, (n, text));
    }
    assert_eq!(seen.len(), STREAMS, "every scripted answer reached exactly one stream");
    assert_eq!(mock.chat_requests().len(), STREAMS);

    let rows = stored(&env);
    assert_eq!(rows.len(), 2 * STREAMS, "{rows:#?}");
    for (id, (n, text)) in &answer_of {
        let mine: Vec<(&str, &str)> =
            rows.iter().filter(|(c, ..)| c == id).map(|(_, role, content)| (role.as_str(), content.as_str())).collect();
        assert_eq!(mine, [("user", format!("question {n}").as_str()), ("assistant", text.as_str())], "c{id}");
        let (status, listed) =
            api(&server, reqwest::Method::GET, &format!("/api/v2/ai/conversations/{id}/messages"), None).await;
        assert_eq!((status, listed.as_array().map(Vec::len)), (200, Some(2)), "{listed}");
    }
    let (_, listed) = api(&server, reqwest::Method::GET, "/api/v2/ai/conversations", None).await;
    let counts: Vec<i64> =
        listed.as_array().into_iter().flatten().filter_map(|c| c["message_count"].as_i64()).collect();
    assert_eq!(counts, vec![2; STREAMS], "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_turn_keeps_every_stored_message_after_a_restart() {
    let env = TestEnv::new();
    let gate = Gate::new();
    // The second turn's reply stops after its first write and waits for a gate nobody opens.
    let mock = MockLlm::start([reply_text("First answer."), reply_text("Never finished.").held_after(1, &gate)]);
    let server = Server::start(&env, &mock);
    let id = create(&server, "crash").await;
    let first = chat(&server, id, "the first question").await;
    assert_eq!(answer(&first).as_deref(), Some("First answer."), "{first:?}");

    let base = server.base.clone();
    let second = tokio::spawn(async move {
        let response = client()
            .post(format!("{base}/api/v2/ai/chat"))
            .bearer_auth(TOKEN)
            .json(&json!({"conversation_id": id, "message": "the second question"}))
            .send()
            .await;
        // The stream breaks when the server dies; what it carried does not matter here.
        if let Ok(mut response) = response {
            while let Ok(Some(_)) = response.chunk().await {}
        }
    });
    // The model has the second request: the turn is running and its user message was stored first.
    let waited = tokio::time::timeout(LIMIT, async {
        while mock.chat_requests().len() < 2 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "the second turn never reached the model");
    server.kill();
    second.await.expect("the reader task");

    let expected = [
        (id, "user".to_owned(), "the first question".to_owned()),
        (id, "assistant".to_owned(), "First answer.".to_owned()),
        (id, "user".to_owned(), "the second question".to_owned()),
    ];
    assert_eq!(stored(&env), expected);
    let db = rusqlite::Connection::open(env.opsai_home().join("sessions.db")).unwrap();
    let check: String = db.query_row("PRAGMA integrity_check", [], |row| row.get(0)).unwrap();
    assert_eq!(check, "ok");

    let mock = MockLlm::start([]);
    let server = Server::start(&env, &mock);
    let (status, listed) = api(&server, reqwest::Method::GET, "/api/v2/ai/conversations", None).await;
    assert_eq!(status, 200, "{listed}");
    let row = listed.as_array().and_then(|all| all.iter().find(|c| c["id"] == id)).cloned().unwrap_or_default();
    assert_eq!((row["message_count"].as_i64(), row["running"].as_bool()), (Some(3), Some(false)), "{listed}");
    let (status, messages) =
        api(&server, reqwest::Method::GET, &format!("/api/v2/ai/conversations/{id}/messages"), None).await;
    assert_eq!(status, 200, "{messages}");
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
    assert_eq!(stored(&env).len(), 3, "the restart stored nothing twice");
}
