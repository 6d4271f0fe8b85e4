//! A scripted OpenAI-compatible model server: real HTTP/1.1 on 127.0.0.1, one per test.
//!
//! ```ignore
//! let mock = MockLlm::start([
//!     reply_tool_call("call_1", "run_command", json!({"command": "ls"})),
//!     reply_text("There are 3 files."),
//! ]);
//! // point the client (or the opsai binary, via OPSAI_BASE_URL) at mock.base_url()
//! let second = &mock.chat_requests()[1];
//! assert_eq!(second.tool_result("call_1").as_deref(), Some("a\nb\nc\n"));
//! ```
//!
//! Like llama.cpp, a chat request whose history holds a tool call with arguments that are not a
//! JSON object is answered with HTTP 500 "Failed to parse tool call arguments" (and no scripted
//! reply is used up), so no test passes while opsai sends one.
//!
//! Each connection gets the next scripted [`Reply`], whatever its path (`GET /models` included),
//! and is closed after it (`Connection: close`). Every request is recorded (method, path,
//! headers, body) before it is answered. When the script runs out, the server answers 500 with a
//! body saying so, so a test that makes an unexpected request fails loudly. The server runs on its
//! own thread and runtime, so synchronous tests (`assert_cmd`) and `#[tokio::test]`s can both use it;
//! it stops when the `MockLlm` is dropped.

// Builders not used by every suite.
#![allow(dead_code)]

mod llama;
mod replies;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use llama::*;
pub use replies::*;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// How long a hanging reply holds the connection open at most (the client normally gives up first).
const MAX_HANG: Duration = Duration::from_secs(60);

/// The running server; dropping it stops the server.
pub struct MockLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// When each request in `requests` was fully read, in the same order.
    arrivals: Mutex<Vec<Instant>>,
}

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    /// The request target, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Header names lowercased, in order.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl MockLlm {
    /// Starts a server that answers requests with `script`, in order.
    pub fn start(script: impl IntoIterator<Item = Reply>) -> MockLlm {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the mock LLM");
        listener.set_nonblocking(true).expect("non-blocking listener");
        let addr = listener.local_addr().expect("mock LLM address");
        let shared = Arc::new(Shared { script: Mutex::new(script.into_iter().collect()), ..Shared::default() });
        let (shutdown, stopped) = oneshot::channel::<()>();
        let server_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("mock-llm".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("mock runtime");
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(listener).expect("tokio listener");
                    tokio::select! {
                        _ = stopped => {}
                        () = accept_loop(listener, server_shared) => {}
                    }
                });
            })
            .expect("spawn the mock LLM thread");
        MockLlm { addr, shared, shutdown: Some(shutdown), thread: Some(thread) }
    }

    /// The OpenAI-compatible base URL: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().expect("requests lock").clone()
    }

    /// When each request so far was fully read (before it was answered), in arrival order: the
    /// gaps between them are the client's waits (backoff, `Retry-After`).
    pub fn arrival_times(&self) -> Vec<Instant> {
        self.shared.arrivals.lock().expect("arrivals lock").clone()
    }

    /// The `POST …/chat/completions` requests so far.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(|r| r.method == "POST" && r.path.ends_with("/chat/completions")).collect()
    }

    /// Scripted replies not served yet.
    pub fn unused_replies(&self) -> usize {
        self.shared.script.lock().expect("script lock").len()
    }

    /// Asserts that no request body or header (Authorization excepted) contains `secret`.
    pub fn assert_never_sent(&self, secret: &str) {
        for request in self.requests() {
            assert!(!request.body.contains(secret), "secret in the body of {} {}", request.method, request.path);
            for (name, value) in &request.headers {
                assert!(name == "authorization" || !value.contains(secret), "secret in header {name}");
            }
        }
    }
}

impl Drop for MockLlm {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl RecordedRequest {
    /// A header's value; `name` is case-insensitive.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// The body as JSON (panics when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("request body is not JSON ({err}): {}", self.body))
    }

    /// The chat `messages` of the body.
    pub fn messages(&self) -> Vec<Value> {
        self.json()["messages"].as_array().cloned().unwrap_or_default()
    }

    /// How many worked examples come between the system message and the one user message after
    /// them, each with the roles `each`; panics when the messages are not laid out so.
    pub fn worked_examples(&self, each: &[&str]) -> usize {
        let roles: Vec<String> =
            self.messages().iter().map(|m| m["role"].as_str().unwrap_or_default().to_owned()).collect();
        let count = roles.len().saturating_sub(2) / each.len();
        let mut expected = vec!["system"];
        expected.extend(std::iter::repeat_n(each, count).flatten());
        expected.push("user");
        assert_eq!(roles, expected, "system, {count} worked examples of {each:?}, the user's message");
        count
    }

    /// The content of the `role: tool` message answering `call_id`.
    pub fn tool_result(&self, call_id: &str) -> Option<String> {
        self.messages()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
    }

    /// Names of the tools offered in the body.
    pub fn tool_names(&self) -> Vec<String> {
        let tools = self.json()["tools"].as_array().cloned().unwrap_or_default();
        tools.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect()
    }

    /// Asserts the tool protocol: every assistant tool call is answered by exactly one later tool
    /// message with its id, and every tool message answers an earlier call.
    pub fn assert_tool_calls_answered(&self) {
        let messages = self.messages();
        let mut open: Vec<String> = Vec::new();
        let mut answered: Vec<String> = Vec::new();
        for message in &messages {
            for call in message["tool_calls"].as_array().into_iter().flatten() {
                assert_eq!(call["type"], "function", "tool call without type function: {call}");
                assert!(call["function"]["arguments"].is_string(), "arguments must be a JSON string: {call}");
                open.push(call["id"].as_str().expect("tool call id").to_owned());
            }
            if message["role"] == "tool" {
                let id = message["tool_call_id"].as_str().expect("tool message without tool_call_id").to_owned();
                assert!(open.contains(&id), "tool message {id} answers no earlier call");
                assert!(!answered.contains(&id), "tool call {id} answered twice");
                answered.push(id);
            }
        }
        for id in &open {
            assert!(answered.contains(id), "tool call {id} has no tool message");
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    while let Ok((stream, _)) = listener.accept().await {
        let _ = stream.set_nodelay(true);
        tokio::spawn(serve(stream, Arc::clone(&shared)));
    }
}

async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    let number = {
        let mut requests = shared.requests.lock().expect("requests lock");
        requests.push(request.clone());
        shared.arrivals.lock().expect("arrivals lock").push(Instant::now());
        requests.len()
    };
    if let Some(invalid) = invalid_tool_arguments(&request) {
        let message = format!("Failed to parse tool call arguments as JSON: {invalid}");
        let body = serde_json::json!({"error": {"code": 500, "message": message, "type": "server_error"}});
        write_reply(&mut stream, reply_json(500, body)).await;
        return;
    }
    let next = shared.script.lock().expect("script lock").pop_front();
    let reply = next.unwrap_or_else(|| {
        let message = format!(
            "mock LLM script exhausted: no reply scripted for request #{number} ({} {})",
            request.method, request.path
        );
        reply_json(500, serde_json::json!({"error": {"message": message, "type": "mock_script_exhausted"}}))
    });
    write_reply(&mut stream, reply).await;
}

/// The first tool-call `arguments` in a chat request's history that a strict server (llama.cpp)
/// cannot parse as a JSON object.
fn invalid_tool_arguments(request: &RecordedRequest) -> Option<String> {
    if request.method != "POST" || !request.path.ends_with("/chat/completions") {
        return None;
    }
    let body: Value = serde_json::from_str(&request.body).ok()?;
    let messages = body["messages"].as_array()?;
    let calls = messages.iter().flat_map(|message| message["tool_calls"].as_array().into_iter().flatten());
    calls.map(|call| &call["function"]["arguments"]).find_map(|arguments| {
        let parsed = arguments.as_str().and_then(|text| serde_json::from_str::<Value>(text).ok());
        (!parsed.is_some_and(|value| value.is_object())).then(|| arguments.to_string())
    })
}

/// Reads one request: head up to the blank line, then `Content-Length` bytes of body.
async fn read_request(stream: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_owned();
    let path = request_line.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length = headers.iter().find(|(name, _)| name == "content-length").and_then(|(_, v)| v.parse().ok());
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length.unwrap_or(0) {
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&chunk[..n]);
    }
    Some(RecordedRequest { method, path, headers, body: String::from_utf8_lossy(&body).into_owned() })
}

async fn write_reply(stream: &mut TcpStream, reply: Reply) {
    if let Some(delay) = reply.head_delay {
        tokio::time::sleep(delay).await;
    }
    if reply.hang_before_head {
        hang(stream).await;
        return;
    }
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("Connection: close\r\n");
    let chunked = reply.body_mode == BodyMode::Chunked;
    match reply.body_mode {
        BodyMode::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
        BodyMode::Length => head.push_str(&format!("Content-Length: {}\r\n", reply.body_len())),
        BodyMode::CloseDelimited => {}
    }
    head.push_str("\r\n");
    if stream.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for part in reply.parts {
        match part {
            Part::Bytes(bytes) if bytes.is_empty() => {}
            Part::Bytes(bytes) => {
                let framed = if chunked {
                    [format!("{:x}\r\n", bytes.len()).into_bytes(), bytes, b"\r\n".to_vec()].concat()
                } else {
                    bytes
                };
                if stream.write_all(&framed).await.is_err() || stream.flush().await.is_err() {
                    return;
                }
            }
            Part::Pause(pause) => tokio::time::sleep(pause).await,
            Part::Wait(gate) => gate.0.notified().await,
            Part::Hang => {
                hang(stream).await;
                return;
            }
        }
    }
    if reply.abort {
        // Close without finishing the body: the client sees a broken connection.
        return;
    }
    if chunked {
        let _ = stream.write_all(b"0\r\n\r\n").await;
    }
    let _ = stream.shutdown().await;
}

/// Holds the connection open, writing nothing, until the client gives up (or `MAX_HANG`).
async fn hang(stream: &mut TcpStream) {
    let mut sink = [0u8; 256];
    let wait_for_close = async {
        while let Ok(n) = stream.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(MAX_HANG, wait_for_close).await;
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}
