//! `opsai serve` for tests: the real binary on `127.0.0.1:0` with a test's `OPSAI_HOME`, and an
//! async client for its API (reqwest) that reads SSE streams event by event.
//!
//! ```ignore
//! let env = TestEnv::new();
//! let mock = MockLlm::start([reply_text("hello")]);
//! let server = Server::builder(&env).mock(&mock).start();          // token mode
//! let api = server.api();                                          // Authorization: Bearer TOKEN
//! let id = api.create(json!({"title": "t"})).await["id"].as_i64().unwrap();
//! let events = api.chat(id, "hi").await.collect().await;            // every SSE data, in order
//! assert_eq!(events.last().unwrap()["type"], "done");
//! server.stop();                                                   // SIGTERM; asserts exit 0
//! ```
//!
//! Users mode: `add_user(&env, &file, "alice", "operator", "pw-alice-1")`, then
//! `Server::builder(&env).mock(&mock).users(&file).start()` and `server.login("alice", pw).await`
//! (an [`Api`] with the session cookie and CSRF token) or `server.api_token(..)` (a bearer API).
//! Every wait is bounded by [`WAIT`], so a hung server fails the test instead of hanging it.
//!
//! Both back ends: `for storage in Storage::each() { … Server::builder(&env).storage(&storage) … }`
//! runs a test on `$OPSAI_HOME/sessions.db`, then on a real PostgreSQL (`--database`).

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};

use super::TestEnv;
use super::mock_llm::MockLlm;

/// The longest any single wait in these helpers may take.
pub const WAIT: Duration = Duration::from_secs(60);

/// Adds a user with `opsai serve user add NAME --role ROLE --users FILE`, the password on stdin.
pub fn add_user(env: &TestEnv, users: &Path, name: &str, role: &str, password: &str) {
    let mut child = env
        .std_cmd()
        .args(["serve", "user", "add", name, "--role", role, "--users"])
        .arg(users)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start opsai serve user add");
    child.stdin.take().unwrap().write_all(format!("{password}\n").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "serve user add {name}: {out:?}");
}

/// Where a server keeps its conversations: its home's `sessions.db`, or a database of its own on a
/// real PostgreSQL server started for the test (`--database`, given as `OPSAI_DATABASE_URL`).
pub enum Storage {
    Sqlite,
    Postgres { url: String, server: Box<opsai::testing::postgres::PgServer> },
}

impl Storage {
    /// SQLite, then Postgres (skipped, with the reason printed, where PostgreSQL is not installed
    /// outside CI).
    pub fn each() -> Vec<Storage> {
        let mut each = vec![Storage::Sqlite];
        each.extend(Self::postgres());
        each
    }

    /// A new PostgreSQL server with an empty database; `None` (reason printed) where there is none.
    pub fn postgres() -> Option<Storage> {
        // On a thread of its own: making the database blocks, which an async test's thread may not.
        let started = std::thread::spawn(|| {
            let server = opsai::testing::postgres::PgServer::start()?;
            let url = server.database("opsai");
            Some(Storage::Postgres { url, server: Box::new(server) })
        });
        let storage = started.join().expect("starting PostgreSQL");
        if storage.is_none() {
            super::skipped("PostgreSQL (postgresql) is not installed");
        }
        storage
    }

    /// For assertion messages.
    pub fn name(&self) -> &'static str {
        match self {
            Storage::Sqlite => "sqlite",
            Storage::Postgres { .. } => "postgres",
        }
    }
}

/// How to start the server; see the module docs.
pub struct Builder<'e> {
    env: &'e TestEnv,
    args: Vec<String>,
    vars: Vec<(String, String)>,
    users: Option<PathBuf>,
    files: Option<u64>,
    listen: String,
}

impl<'e> Builder<'e> {
    /// Listens on `addr` instead of a port of its own choosing (a redirect URL registered
    /// elsewhere must name the port before the server starts).
    pub fn listen(mut self, addr: &str) -> Self {
        addr.clone_into(&mut self.listen);
        self
    }

    /// Starts it under an open-files limit of `n` (soft and hard), through util-linux's `prlimit`.
    pub fn files_limit(mut self, n: u64) -> Self {
        self.files = Some(n);
        self
    }

    /// The model endpoint (`OPSAI_BASE_URL`).
    pub fn mock(self, mock: &MockLlm) -> Self {
        self.env("OPSAI_BASE_URL", &mock.base_url())
    }

    pub fn arg(mut self, arg: &str) -> Self {
        self.args.push(arg.to_owned());
        self
    }

    pub fn args(mut self, args: impl IntoIterator<Item = &'static str>) -> Self {
        self.args.extend(args.into_iter().map(str::to_owned));
        self
    }

    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.vars.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Keeps the conversations in `storage`.
    pub fn storage(self, storage: &Storage) -> Self {
        match storage {
            Storage::Sqlite => self,
            Storage::Postgres { url, .. } => self.env("OPSAI_DATABASE_URL", url),
        }
    }

    /// Users mode with this users file.
    pub fn users(mut self, file: &Path) -> Self {
        self.users = Some(file.to_owned());
        self
    }

    /// Starts it and waits for the line with its URL.
    pub fn start(self) -> Server {
        let stderr_path = self.env.opsai_home().join("serve-stderr.log");
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut cmd = self.env.std_cmd();
        if let Some(n) = self.files {
            let opsai = cmd;
            cmd = std::process::Command::new("prlimit");
            cmd.arg(format!("--nofile={n}:{n}")).arg("--").arg(opsai.get_program()).env_clear();
            cmd.envs(opsai.get_envs().filter_map(|(k, v)| Some((k, v?)))).current_dir(self.env.user_home());
        }
        cmd.args(["serve", "--listen", &self.listen]).args(&self.args);
        if let Some(users) = &self.users {
            cmd.arg("--users").arg(users);
        }
        for (name, value) in &self.vars {
            cmd.env(name, value);
        }
        let mut child =
            cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(stderr).spawn().expect("start opsai serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().strip_prefix("opsai serve: open ").unwrap_or_else(|| {
            let _ = child.kill();
            panic!("no URL line from opsai serve: {line:?}; stderr: {}", std::fs::read_to_string(&stderr_path).unwrap())
        });
        let (base, token) = match url.split_once("/?token=") {
            Some((base, token)) => (base.to_owned(), Some(token.to_owned())),
            None => (url.trim_end_matches('/').to_owned(), None),
        };
        Server { child: Some(child), base, token, stderr: stderr_path, client: client() }
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).no_proxy().build().unwrap()
}

/// A running `opsai serve`; killed when dropped (use [`Server::stop`] to stop it as a user would).
pub struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The access token (token mode).
    pub token: Option<String>,
    stderr: PathBuf,
    client: reqwest::Client,
}

impl Server {
    pub fn builder(env: &TestEnv) -> Builder<'_> {
        Builder {
            env,
            args: Vec::new(),
            vars: vec![("OPSAI_SANDBOX".into(), "off".into())],
            users: None,
            files: None,
            listen: "127.0.0.1:0".into(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// A plain client (no redirects followed, no auth).
    pub fn client(&self) -> reqwest::Client {
        self.client.clone()
    }

    /// The API with the access token as `Authorization: Bearer` (token mode).
    pub fn api(&self) -> Api {
        self.api_with(Auth::Bearer(self.token.clone().expect("token mode")))
    }

    pub fn api_with(&self, auth: Auth) -> Api {
        Api { client: self.client.clone(), base: self.base.clone(), auth }
    }

    /// Logs in (`POST /api/v2/auth/login`): the API with the session cookie and CSRF token.
    pub async fn login(&self, name: &str, password: &str) -> Api {
        let response = self.post_credentials("/api/v2/auth/login", name, password).await;
        assert_eq!(response.status(), StatusCode::OK, "login {name}");
        let session = session_cookie(&response).expect("a session cookie");
        let body: Value = response.json().await.unwrap();
        self.api_with(Auth::Cookie { session, csrf: body["csrf_token"].as_str().unwrap().to_owned() })
    }

    /// Logs in at `base` (a proxy in front of this server and others): the API of that session
    /// (with this server's base; set `base` to go through the proxy).
    pub async fn login_at(&self, base: &str, name: &str, password: &str) -> Api {
        let request = self
            .client
            .post(format!("{base}/api/v2/auth/login"))
            .json(&json!({"username": name, "password": password}));
        let response = within(request.send()).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "login {name} at {base}");
        let session = session_cookie(&response).expect("a session cookie");
        let body: Value = response.json().await.unwrap();
        self.api_with(Auth::Cookie { session, csrf: body["csrf_token"].as_str().unwrap().to_owned() })
    }

    /// An API token (`POST /api/v2/auth/token`) as a bearer API.
    pub async fn api_token(&self, name: &str, password: &str) -> Api {
        let response = self.post_credentials("/api/v2/auth/token", name, password).await;
        assert_eq!(response.status(), StatusCode::OK, "token for {name}");
        let body: Value = response.json().await.unwrap();
        self.api_with(Auth::Bearer(body["token"].as_str().unwrap().to_owned()))
    }

    /// The raw answer to a login (`path` = `/api/v2/auth/login` or `/api/v2/auth/token`).
    pub async fn post_credentials(&self, path: &str, name: &str, password: &str) -> reqwest::Response {
        let request = self.client.post(self.url(path)).json(&json!({"username": name, "password": password}));
        within(request.send()).await.unwrap()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// SIGTERM, then waits: the exit status (asserted 0).
    pub fn stop(mut self) {
        let mut child = self.child.take().unwrap();
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "opsai serve exited with {status}; stderr: {}", self.stderr());
    }

    /// SIGKILL, no grace (a crash).
    pub fn kill(mut self) {
        let mut child = self.child.take().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The `opsai_session` cookie a response sets.
pub fn session_cookie(response: &reqwest::Response) -> Option<String> {
    response.headers().get_all(reqwest::header::SET_COOKIE).iter().find_map(|value| {
        let value = value.to_str().ok()?;
        value.strip_prefix("opsai_session=")?.split(';').next().map(str::to_owned).filter(|v| !v.is_empty())
    })
}

/// How requests prove who they are.
#[derive(Debug, Clone)]
pub enum Auth {
    None,
    Bearer(String),
    /// The session cookie; `csrf` goes in `X-CSRF-Token` on everything but GET.
    Cookie {
        session: String,
        csrf: String,
    },
}

/// The API as one caller.
#[derive(Clone)]
pub struct Api {
    client: reqwest::Client,
    pub base: String,
    pub auth: Auth,
}

impl Api {
    /// A request to `path` with this caller's credentials.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let is_get = method == Method::GET;
        let request = self.client.request(method, format!("{}{path}", self.base));
        match &self.auth {
            Auth::None => request,
            Auth::Bearer(token) => request.bearer_auth(token),
            Auth::Cookie { session, csrf } => {
                let request = request.header(reqwest::header::COOKIE, format!("opsai_session={session}"));
                if is_get { request } else { request.header("X-CSRF-Token", csrf) }
            }
        }
    }

    /// Sends `request`: its status and its JSON body (`null` when there is none).
    pub async fn send(&self, request: RequestBuilder) -> (StatusCode, Value) {
        let response = within(request.send()).await.unwrap();
        let status = response.status();
        let text = within(response.text()).await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// `POST /api/v2/ai/conversations` with `body`; asserts 201 and returns the conversation.
    pub async fn create(&self, body: Value) -> Value {
        let (status, conversation) =
            self.send(self.request(Method::POST, "/api/v2/ai/conversations").json(&body)).await;
        assert_eq!(status, StatusCode::CREATED, "{conversation}");
        conversation
    }

    /// A new conversation's id.
    pub async fn new_conversation(&self) -> i64 {
        self.create(json!({"title": "test"})).await["id"].as_i64().unwrap()
    }

    pub async fn list(&self) -> (StatusCode, Value) {
        self.send(self.request(Method::GET, "/api/v2/ai/conversations")).await
    }

    pub async fn messages(&self, id: i64) -> (StatusCode, Value) {
        self.send(self.request(Method::GET, &format!("/api/v2/ai/conversations/{id}/messages"))).await
    }

    pub async fn delete(&self, id: i64) -> StatusCode {
        self.send(self.request(Method::DELETE, &format!("/api/v2/ai/conversations/{id}"))).await.0
    }

    pub async fn stop_turn(&self, id: i64) -> StatusCode {
        self.send(self.request(Method::POST, &format!("/api/v2/ai/conversations/{id}/stop"))).await.0
    }

    /// `POST /api/v2/ai/approvals/{call_id}`: its status and body.
    pub async fn approve(&self, call_id: &str, decision: &str, confirm: Option<&str>) -> (StatusCode, Value) {
        let mut body = json!({"decision": decision});
        if let Some(confirm) = confirm {
            body["confirm"] = confirm.into();
        }
        self.send(self.request(Method::POST, &format!("/api/v2/ai/approvals/{call_id}")).json(&body)).await
    }

    /// `POST /api/v2/ai/chat`; asserts 200 and `text/event-stream`.
    pub async fn chat(&self, id: i64, message: &str) -> Events {
        let request =
            self.request(Method::POST, "/api/v2/ai/chat").json(&json!({"conversation_id": id, "message": message}));
        Events::open(request).await
    }

    /// `GET /api/v2/ai/conversations/{id}/stream`.
    pub async fn stream(&self, id: i64) -> Events {
        Events::open(self.request(Method::GET, &format!("/api/v2/ai/conversations/{id}/stream"))).await
    }
}

/// Bounds a wait by [`WAIT`].
pub async fn within<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(WAIT, future).await.expect("opsai serve did not answer in time")
}

/// An SSE response read event by event (`event: message` data as JSON; comments skipped).
pub struct Events {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buffer: String,
    /// Every event read so far, in order.
    pub seen: Vec<Value>,
}

impl Events {
    pub async fn open(request: RequestBuilder) -> Events {
        let response = within(request.send()).await.unwrap();
        let status = response.status();
        if status != StatusCode::OK {
            panic!("SSE request answered {status}: {}", response.text().await.unwrap_or_default());
        }
        let content_type = response.headers()[reqwest::header::CONTENT_TYPE].to_str().unwrap().to_owned();
        assert!(content_type.starts_with("text/event-stream"), "{content_type}");
        Events {
            body: response.bytes_stream().map(|r| r.map(|b| b.to_vec())).boxed(),
            buffer: String::new(),
            seen: Vec::new(),
        }
    }

    /// The next event's data, or `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let data: Vec<&str> =
                    block.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
                if data.is_empty() {
                    continue;
                }
                assert!(block.lines().any(|l| l == "event: message"), "an SSE event without `event: message`: {block}");
                let value: Value = serde_json::from_str(&data.join("\n")).expect("SSE data is JSON");
                self.seen.push(value.clone());
                return Some(value);
            }
            match within(self.body.next()).await {
                Some(Ok(bytes)) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                Some(Err(_)) | None => return None,
            }
        }
    }

    /// Reads until an event matches `wanted`; panics when the stream ends first.
    pub async fn until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        while let Some(event) = self.next().await {
            if wanted(&event) {
                return event;
            }
        }
        panic!("the stream ended without the event wanted; seen: {:#?}", self.seen);
    }

    /// Reads to the end: every event of the stream, in order.
    pub async fn collect(mut self) -> Vec<Value> {
        while self.next().await.is_some() {}
        self.seen
    }
}
