//! `opsai serve --database URL` (issue 25): users kept in PostgreSQL by `opsai serve user … --database`
//! log in on a server started with the same database, a user removed there is refused within
//! seconds, a database failing during a login is a 503, and every audit line is also in the
//! `audit` table (with its user and approver, no secret), read back by `opsai audit --database`.
//! A real PostgreSQL per test (skipped with a reason when it is not installed, outside CI).

use std::io::Write;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use opsai::testing::postgres::PgServer;
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

const TOKEN: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";

/// The blocking database client outside the test's async threads.
fn blocking<T>(call: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(call)
}

/// A server and a fresh database on it.
fn database(name: &str) -> Option<(PgServer, String)> {
    blocking(|| {
        let server = PgServer::start()?;
        let url = server.database(name);
        Some((server, url))
    })
}

/// `opsai ARGS…` with `stdin` piped in.
fn opsai(env: &TestEnv, args: &[&str], stdin: &str) -> Output {
    let mut child = env
        .std_cmd()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start opsai");
    // A refused name exits before reading: the pipe may be closed already (its answer is the test).
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn add(env: &TestEnv, url: &str, name: &str, role: &str, password: &str) -> Output {
    opsai(env, &["serve", "user", "add", name, "--role", role, "--database", url], &format!("{password}\n"))
}

fn start(env: &TestEnv, mock: &MockLlm, url: &str) -> Server {
    Server::builder(env).mock(mock).arg("--database").arg(url).start()
}

#[tokio::test(flavor = "multi_thread")]
async fn users_added_in_the_database_log_in_there_and_one_removed_is_refused_within_seconds() {
    let Some((_pg, url)) = database("users") else { return };
    let env = TestEnv::new();
    let bad = add(&env, &url, "a b", "viewer", "long-enough-1");
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(text(&bad.stderr).contains("not a valid user name"), "{}", text(&bad.stderr));
    let short = add(&env, &url, "alice", "operator", "short");
    assert_eq!(short.status.code(), Some(2), "a short password, as with the file");
    let added = add(&env, &url, "alice", "operator", "alice-password");
    assert_eq!(
        (added.status.code(), text(&added.stdout)),
        (Some(0), format!("added alice (operator) in {url}\n")),
        "{}",
        text(&added.stderr)
    );
    // The URL from OPSAI_DATABASE_URL, as a deployment gives it.
    let mut bob = env.std_cmd();
    bob.args(["serve", "user", "add", "bob", "--role", "viewer"]).env("OPSAI_DATABASE_URL", &url);
    let bob = bob.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    bob.stdin.as_ref().unwrap().write_all(b"bob-password\n").unwrap();
    let bob = bob.wait_with_output().unwrap();
    assert!(bob.status.success(), "{bob:?}");
    let list = opsai(&env, &["serve", "user", "list", "--database", &url], "");
    assert_eq!(text(&list.stdout), "alice\toperator\nbob\tviewer\n");
    assert!(!env.opsai_home().join("serve-users.json").exists(), "no users file was written");

    let mock = MockLlm::start([]);
    let server = start(&env, &mock, &url);
    assert!(server.stderr().contains("users: 2 in the database"), "{}", server.stderr());
    assert!(server.token.is_none(), "users mode: no access token");
    let wrong = server.post_credentials("/api/v2/auth/login", "alice", "wrong-password").await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let alice = server.login("alice", "alice-password").await;
    let bob = server.api_token("bob", "bob-password").await;
    let (status, me) = bob.send(bob.request(Method::GET, "/api/v2/auth/me")).await;
    assert_eq!((status, me["role"].as_str()), (StatusCode::OK, Some("viewer")));

    let removed = opsai(&env, &["serve", "user", "remove", "bob", "--database", &url], "");
    assert!(text(&removed.stdout).starts_with(&format!("removed bob from {url}")), "{removed:?}");
    let again = opsai(&env, &["serve", "user", "remove", "bob", "--database", &url], "");
    assert_eq!(again.status.code(), Some(1), "nobody to remove: {again:?}");
    let since = Instant::now();
    loop {
        let (status, _) = bob.send(bob.request(Method::GET, "/api/v2/auth/me")).await;
        if status == StatusCode::UNAUTHORIZED {
            break;
        }
        assert!(since.elapsed() < Duration::from_secs(10), "bob is still let in");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(since.elapsed() < Duration::from_secs(5), "refused after {:?}", since.elapsed());
    assert_eq!(alice.list().await.0, StatusCode::OK, "the others stay");
    let refused = server.post_credentials("/api/v2/auth/token", "bob", "bob-password").await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_command_is_in_the_audit_table_with_who_asked_and_who_approved_and_no_secret() {
    let Some((_pg, url)) = database("audit") else { return };
    let env = TestEnv::new();
    assert!(add(&env, &url, "alice", "operator", "alice-password").status.success());
    assert!(add(&env, &url, "bob", "viewer", "bob-password").status.success());
    let command = format!(
        "printenv OPSAI_DATABASE_URL || echo not-inherited; env | cut -d= -f1 | grep -qx PGPASSWORD || echo no-pg-password; \
         touch \"$HOME/made\" && echo {TOKEN}"
    );
    let mock = MockLlm::start([
        reply_tool_call("v1", "run_command", json!({"command": command, "why": "bob asked"})),
        reply_text("Made it."),
    ]);
    // The URL and a password from the environment, which commands do not inherit.
    let server =
        Server::builder(&env).mock(&mock).env("OPSAI_DATABASE_URL", &url).env("PGPASSWORD", "pg-secret-7").start();
    let (alice, bob) = (server.login("alice", "alice-password").await, server.login("bob", "bob-password").await);
    let id = bob.new_conversation().await;
    let mut events = bob.chat(id, "make a file").await;
    let request = events.until(|e| e["kind"] == "request").await;
    let body = json!({"decision": "approve", "conversation_id": id, "command": request["command"],
                      "request_id": request["request_id"]});
    let answer = alice.request(Method::POST, "/api/v2/ai/approvals/v1").json(&body);
    let sent = alice.send(answer).await;
    assert_eq!(sent.0, StatusCode::NO_CONTENT, "{sent:?} {request}");
    let rest = events.collect().await;
    assert_eq!(rest.last().unwrap()["outcome"], "answer", "{rest:?}");
    assert!(env.user_home().join("made").exists(), "the operator's yes ran it");
    let result = rest.iter().find(|e| e["kind"] == "tool_result").expect("the result");
    let output = result["content"].as_str().unwrap();
    assert!(output.contains("not-inherited"), "commands do not inherit the URL: {result}");
    assert!(output.contains("no-pg-password"), "nor the server's database password: {result}");

    let file = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap();
    let file_line = file.lines().find(|line| line.contains("touch")).expect("the file has the line").to_owned();
    let row = blocking(|| {
        let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let since = Instant::now();
        loop {
            let rows = client
                .query(
                    "SELECT user_name, approver, confirmed, exit, risk, line, audit::text FROM audit
                     WHERE command LIKE '%touch%'",
                    &[],
                )
                .unwrap();
            if let Some(row) = rows.into_iter().next() {
                return row;
            }
            assert!(since.elapsed() < WAIT, "no audit row");
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let field = |i: usize| row.get::<_, Option<String>>(i);
    assert_eq!(
        (field(0).as_deref(), field(1).as_deref(), field(2).as_deref(), row.get::<_, Option<i32>>(3)),
        (Some("bob"), Some("alice"), Some("yes"), Some(0))
    );
    assert_eq!(field(4).as_deref(), Some("medium"));
    assert_eq!(field(5).as_deref(), Some(file_line.as_str()), "the file's own line");
    let whole = field(6).unwrap();
    assert!(!whole.contains(TOKEN) && !whole.contains("1234567890abcdefghij"), "{whole}");
    assert!(whole.contains("[REDACTED"), "{whole}");

    let read = opsai(&env, &["audit", "--database", &url, "--grep", "approver: alice"], "");
    assert_eq!(text(&read.stdout), format!("{file_line}\n"), "{}", text(&read.stderr));
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_imported_users_file_logs_in_and_a_database_that_fails_is_a_503_never_a_login() {
    let Some((pg, url)) = database("import") else { return };
    let env = TestEnv::new();
    let file = env.opsai_home().join("users.json");
    add_user(&env, &file, "carol", "operator", "carol-password");
    let imported = opsai(&env, &["serve", "user", "import", "--users", file.to_str().unwrap(), "--database", &url], "");
    assert!(text(&imported.stdout).starts_with("imported 1 users from"), "{imported:?}");
    let mock = MockLlm::start([]);
    let server = start(&env, &mock, &url);
    let carol = server.login("carol", "carol-password").await;
    assert_eq!(carol.list().await.0, StatusCode::OK);

    blocking(|| drop(pg));
    let since = Instant::now();
    let status = loop {
        let response = server.post_credentials("/api/v2/auth/login", "carol", "carol-password").await;
        if response.status() != StatusCode::OK {
            break response;
        }
        assert!(since.elapsed() < Duration::from_secs(10), "still logging in with the database gone");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(status.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: serde_json::Value = status.json().await.unwrap();
    // The users table or the replicas' shared logins, whichever the request reaches first.
    assert!(body["error"].as_str().unwrap().contains("database"), "{body}");
    let (status, body) = carol.list().await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "neither in nor out: {body}");
    let health = server.client().get(server.url("/healthz")).send().await.unwrap();
    // It answers (503 while its database is unreachable, so a balancer sends requests elsewhere).
    assert_eq!(health.status(), StatusCode::SERVICE_UNAVAILABLE, "the server is still up and says so");
    let logged = server.stderr();
    assert!(logged.contains("database postgres://opsai@127.0.0.1"), "the reason is in the log: {logged}");
    server.stop();
}

#[test]
fn without_users_in_the_database_the_server_says_so_and_a_wrong_url_stops_it() {
    let env = TestEnv::new();
    let bad = opsai(&env, &["serve", "--database", "mysql://u:pw@db/x"], "");
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("not a Postgres URL") && !text(&bad.stderr).contains("pw@"), "{bad:?}");
    let import = opsai(&env, &["serve", "user", "import"], "");
    assert_eq!(import.status.code(), Some(2), "{import:?}");
    assert!(text(&import.stderr).contains("--database URL or OPSAI_DATABASE_URL"), "{}", text(&import.stderr));
    let Some(pg) = PgServer::start() else { return };
    let url = pg.database("empty");
    let mock = MockLlm::start([]);
    let server = Server::builder(&env).mock(&mock).arg("--database").arg(&url).start();
    assert!(server.token.is_some(), "no users yet: token mode");
    assert!(server.stderr().contains("has no users yet: token mode"), "{}", server.stderr());
    server.stop();
    // An explicit users file wins, and the server says the database's users are not used.
    let file = env.opsai_home().join("users.json");
    add_user(&env, &file, "dave", "viewer", "dave-password");
    let server = Server::builder(&env).mock(&mock).arg("--database").arg(&url).users(&file).start();
    assert!(server.token.is_none(), "users mode");
    assert!(server.stderr().contains("(--users), not the database"), "{}", server.stderr());
    server.stop();
}

/// Polls `ok` every 100 ms for at most 10 s; the time it took.
async fn within_seconds(what: &str, mut ok: impl AsyncFnMut() -> bool) -> Duration {
    let since = Instant::now();
    while !ok().await {
        assert!(since.elapsed() < Duration::from_secs(10), "{what}: not within 10 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    since.elapsed()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_one_database_share_their_users_and_one_audit_log() {
    let Some((_pg, url)) = database("replicas") else { return };
    let (env_a, env_b) = (TestEnv::new(), TestEnv::new());
    assert!(add(&env_a, &url, "alice", "operator", "alice-password").status.success());
    let mock = |replica: &str| {
        let command = format!("echo from-replica-{replica}");
        MockLlm::start([reply_tool_call("c1", "run_command", json!({"command": command})), reply_text("Done.")])
    };
    let (mock_a, mock_b) = (mock("a"), mock("b"));
    let (a, b) = (start(&env_a, &mock_a, &url), start(&env_b, &mock_b, &url));

    // Added after both started: both let bob in once the users they read are 2 s old (the
    // documented bound; polling with logins would count failures against bob's login limit).
    assert!(add(&env_b, &url, "bob", "viewer", "bob-password").status.success());
    tokio::time::sleep(Duration::from_secs(2)).await;
    for server in [&a, &b] {
        let login = server.post_credentials("/api/v2/auth/login", "bob", "bob-password").await;
        assert_eq!(login.status(), StatusCode::OK, "bob, added on the database, logs in everywhere");
    }

    let (alice_a, alice_b) = (a.login("alice", "alice-password").await, b.login("alice", "alice-password").await);
    for alice in [&alice_a, &alice_b] {
        let id = alice.new_conversation().await;
        let events = alice.chat(id, "say where you are").await.collect().await;
        assert_eq!(events.last().unwrap()["outcome"], "answer", "{events:?}");
    }
    let mut lines = String::new();
    within_seconds("both replicas' lines in the table", async || {
        let read = opsai(&env_a, &["audit", "--database", &url, "--grep", "from-replica"], "");
        lines = text(&read.stdout);
        lines.lines().count() == 2
    })
    .await;
    let (first, second) = lines.split_once('\n').unwrap();
    assert!(first.contains("CMD: \"echo from-replica-a\"") && first.contains("USER: alice"), "{lines}");
    assert!(second.contains("CMD: \"echo from-replica-b\"") && second.contains("USER: alice"), "{lines}");

    assert!(opsai(&env_a, &["serve", "user", "remove", "alice", "--database", &url], "").status.success());
    for alice in [&alice_a, &alice_b] {
        let took =
            within_seconds("alice is logged out", async || alice.list().await.0 == StatusCode::UNAUTHORIZED).await;
        assert!(took < Duration::from_secs(5), "{took:?}");
    }
    a.stop();
    b.stop();
}
