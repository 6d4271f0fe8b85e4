//! Saved conversations through the real binary: the REPL fed from a pipe, one-shot runs with
//! `-c`/`--session`, `opsai sessions list|show|delete`, and a broken database.

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

fn opsai(env: &TestEnv, mock: &MockLlm) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url()).env("OPSAI_NONINTERACTIVE", "1");
    cmd
}

fn contents(request: &RecordedRequest) -> Vec<String> {
    request.messages().iter().map(|m| m["content"].as_str().unwrap_or("").to_owned()).collect()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Every byte opsai keeps under `$OPSAI_HOME` (database, WAL, history, audit log), as text.
fn everything_stored(env: &TestEnv) -> String {
    let mut all = String::new();
    for name in TestEnv::entries(env.opsai_home()) {
        if let Ok(bytes) = std::fs::read(env.opsai_home().join(&name)) {
            all.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    all
}

#[test]
fn piped_lines_are_one_conversation_saved_and_listed() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo from-the-first-turn"})),
        reply_text("First answer."),
        reply_text("Second answer."),
    ]);
    let out = opsai(&env, &mock).write_stdin("the first question\n\nthe second question\n").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "First answer.\nSecond answer.\n");
    let second = &mock.chat_requests()[2];
    let seen = contents(second);
    assert!(seen.contains(&"the first question".to_owned()), "{seen:?}");
    assert!(seen.iter().any(|c| c.contains("from-the-first-turn")), "{seen:?}");
    assert_eq!(seen.last().unwrap(), "the second question");

    let list = env.cmd().args(["sessions", "list"]).output().unwrap();
    assert!(list.status.success(), "{}", stderr(&list));
    let text = stdout(&list);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("the first question") && text.contains("6 msgs"), "{text}");
    assert!(text.starts_with("c1  "), "ids are printed as c1, like the audit log's SESSION: {text}");
    assert!(audit(&env).contains("SESSION: c1 |"), "{}", audit(&env));

    let json = env.cmd().args(["sessions", "list", "--json"]).output().unwrap();
    let row: serde_json::Value = serde_json::from_str(stdout(&json).trim()).unwrap();
    assert_eq!((row["id"].as_i64(), row["message_count"].as_i64()), (Some(1), Some(6)));
    assert_eq!(row["title"], "the first question");

    let show = env.cmd().args(["sessions", "show", "c1"]).output().unwrap();
    let text = stdout(&show);
    assert!(text.starts_with("conversation c1: the first question\n"), "{text}");
    let by_number = env.cmd().args(["sessions", "show", "1"]).output().unwrap();
    assert_eq!(stdout(&by_number), text, "`1` and `c1` name the same conversation");
    for expected in ["the first question", "echo from-the-first-turn", "from-the-first-turn", "Second answer."] {
        assert!(text.contains(expected), "{expected:?} missing from\n{text}");
    }

    let bad = env.cmd().args(["sessions", "show", "cx1"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("not a conversation id such as c14 or 14"), "{}", stderr(&bad));
    let delete = env.cmd().args(["sessions", "delete", "c1"]).output().unwrap();
    assert_eq!(stdout(&delete), "deleted conversation c1\n");
    let show = env.cmd().args(["sessions", "show", "1"]).output().unwrap();
    assert_eq!(show.status.code(), Some(1));
    assert!(stderr(&show).contains("no saved conversation c1;"), "{}", stderr(&show));
    let list = env.cmd().args(["sessions", "list"]).output().unwrap();
    assert!(stdout(&list).contains("no saved conversations yet"), "{}", stdout(&list));
}

#[test]
fn one_shot_runs_are_saved_and_continue_with_c_or_session() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("Alpha."), reply_text("Beta."), reply_text("Gamma.")]);
    opsai(&env, &mock).arg("remember alpha").assert().success().stdout("Alpha.\n");
    opsai(&env, &mock).args(["-c", "and now beta"]).assert().success().stdout("Beta.\n");
    let seen = contents(&mock.chat_requests()[1]);
    assert!(seen.contains(&"remember alpha".to_owned()) && seen.contains(&"Alpha.".to_owned()), "{seen:?}");
    // As `sessions list` and the audit log print it; `--session 1` is the same conversation.
    opsai(&env, &mock).args(["--session", "c1", "gamma?"]).assert().success().stdout("Gamma.\n");
    let seen = contents(&mock.chat_requests()[2]);
    assert!(seen.contains(&"and now beta".to_owned()), "one conversation throughout: {seen:?}");

    let missing = opsai(&env, &mock).args(["--session", "99", "anything"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("no saved conversation c99"), "{}", stderr(&missing));
    assert_eq!(mock.chat_requests().len(), 3, "nothing is sent for a conversation that does not exist");
}

#[test]
fn secrets_typed_or_printed_never_reach_the_database_or_history() {
    let env = TestEnv::new();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo $DEPLOY_TOKEN"})),
        reply_text("Printed it."),
    ]);
    let out = opsai(&env, &mock)
        .env("DEPLOY_TOKEN", "s3cr3t-deploy-value-42")
        .write_stdin(format!("use {token} to deploy\n"))
        .output()
        .unwrap();
    // `echo $DEPLOY_TOKEN` prints a secret variable: High, refused without a terminal.
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let stored = everything_stored(&env);
    assert!(stored.contains("to deploy"), "the conversation was saved");
    assert!(!stored.contains(token) && !stored.contains("s3cr3t-deploy-value-42"), "a secret was stored");
    mock.assert_never_sent(token);
    mock.assert_never_sent("s3cr3t-deploy-value-42");
}

#[test]
fn a_corrupt_database_is_reported_left_alone_and_the_repl_still_works() {
    let env = TestEnv::new();
    let garbage = b"this is not an SQLite database, and it is the user's file".repeat(100);
    let db = env.opsai_home().join("sessions.db");
    std::fs::write(&db, &garbage).unwrap();
    let mock = MockLlm::start([reply_text("Still answering.")]);
    let out = opsai(&env, &mock).write_stdin("hello\n").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Still answering.\n");
    assert!(stderr(&out).contains("conversations are not saved this time"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&db).unwrap(), garbage, "the file is never overwritten");

    let list = env.cmd().args(["sessions", "list"]).output().unwrap();
    assert_eq!(list.status.code(), Some(1));
    assert!(stderr(&list).contains(&db.display().to_string()), "the message names the file: {}", stderr(&list));
    assert_eq!(std::fs::read(&db).unwrap(), garbage);
}

#[test]
fn the_piped_repl_exits_3_when_a_command_was_refused_and_1_when_a_turn_failed() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "touch created.txt"})),
        reply_text("Not allowed."),
        reply_text("Fine."),
    ]);
    let out = opsai(&env, &mock).write_stdin("create a file\nsay fine\n").output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Not allowed.\nFine.\n", "the turn after the refusal still ran");
    assert!(stderr(&out).contains("refused: medium requires confirmation in a terminal"), "{}", stderr(&out));

    // A failed turn (a rejected key) outweighs a refusal; the turns after it still run.
    let mock = MockLlm::start([
        reply_status(401, "bad key"),
        reply_tool_call("c1", "run_command", json!({"command": "touch created.txt"})),
        reply_text("Not allowed."),
    ]);
    let out = opsai(&env, &mock).write_stdin("first\ncreate a file\n").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Not allowed.\n");
    assert!(!env.user_home().join("created.txt").exists());
}

#[test]
fn json_and_quiet_need_a_task() {
    let env = TestEnv::new();
    let out = env.cmd().arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("need a task"), "{}", stderr(&out));
}

#[test]
fn slash_commands_work_from_a_pipe_and_never_reach_the_model() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo audited"})),
        reply_text("One."),
        reply_text("Two."),
    ]);
    let script =
        "/model other-model:3b\nfirst task\n/audit 5\n/new\nsecond task\n/model\n/config\n/dry-run\n/sessions\n";
    let out = opsai(&env, &mock).write_stdin(script).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "One.\nTwo.\n");
    let err = stderr(&out);
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 3, "only the two tasks were sent");
    assert_eq!(requests[0].json()["model"], "other-model:3b");
    let second_task = contents(&requests[2]);
    assert!(!second_task.contains(&"first task".to_owned()), "/new starts afresh: {second_task:?}");
    assert!(err.contains("CMD: \"echo audited\""), "/audit shows the log: {err}");
    assert!(err.contains("model: other-model:3b"), "/model shows the current one: {err}");
    assert!(err.contains("base_url"), "/config shows the configuration: {err}");
    assert!(err.contains("dry-run on"), "{err}");
    assert!(err.contains("first task") && err.contains("second task"), "/sessions lists both: {err}");
}

fn listed(env: &TestEnv) -> Vec<serde_json::Value> {
    let list = env.cmd().args(["sessions", "list", "--json"]).output().unwrap();
    assert!(list.status.success(), "{}", stderr(&list));
    stdout(&list).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[test]
fn a_run_that_never_reached_the_model_is_not_saved() {
    let env = TestEnv::new();
    // Nothing listens on this port: the endpoint is unreachable.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let unreachable = env
        .cmd()
        .env("OPSAI_BASE_URL", format!("http://{closed}/v1"))
        .env("OPSAI_NONINTERACTIVE", "1")
        .arg("is anyone there")
        .output()
        .unwrap();
    assert_eq!(unreachable.status.code(), Some(1), "{}", stderr(&unreachable));
    let mock = MockLlm::start([reply_status(401, "bad key"), reply_text("Here.")]);
    let rejected = opsai(&env, &mock).arg("a rejected key").output().unwrap();
    assert_eq!(rejected.status.code(), Some(1), "{}", stderr(&rejected));
    assert_eq!(listed(&env), Vec::<serde_json::Value>::new(), "failed runs leave no conversation");

    opsai(&env, &mock).arg("and now it works").assert().success().stdout("Here.\n");
    let rows = listed(&env);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["title"], "and now it works");
    assert!(audit(&env).is_empty(), "no command ran, so no SESSION was named: {}", audit(&env));
}

#[test]
fn a_failed_first_turn_in_the_repl_is_forgotten_and_a_resumed_conversation_is_kept() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_status(401, "bad key"), reply_text("Second.")]);
    let out = opsai(&env, &mock).write_stdin("the failed question\nthe second question\n").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let seen = contents(&mock.chat_requests()[1]);
    assert!(!seen.contains(&"the failed question".to_owned()), "the forgotten turn is not sent again: {seen:?}");
    let rows = listed(&env);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0]["title"].as_str(), rows[0]["message_count"].as_i64()), (Some("the second question"), Some(2)));

    // Continuing it with a model that fails keeps it (and the request that was not answered).
    let mock = MockLlm::start([reply_status(401, "bad key")]);
    let out = opsai(&env, &mock).args(["-c", "one more"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let rows = listed(&env);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["title"], "the second question");
}

/// Step 1 of sessions.db's schema as released (a released step is never edited).
const SCHEMA_V1: &str = "CREATE TABLE conversations (
        id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, cwd TEXT NOT NULL, host TEXT NOT NULL,
        model TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
        message_count INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        content TEXT NOT NULL, tool_calls TEXT CHECK (tool_calls IS NULL OR json_valid(tool_calls)),
        tool_call_id TEXT, created_at INTEGER NOT NULL);
    CREATE INDEX messages_by_conversation ON messages (conversation_id, id);
    CREATE INDEX conversations_by_cwd ON conversations (cwd, updated_at);
    CREATE INDEX conversations_by_updated ON conversations (updated_at);
    PRAGMA user_version = 1;";

#[test]
fn an_older_database_keeps_its_conversations_and_a_web_one_is_shown_but_not_continued() {
    let env = TestEnv::new();
    let db = env.opsai_home().join("sessions.db");
    std::fs::create_dir_all(env.opsai_home()).unwrap();
    let v1 = rusqlite::Connection::open(&db).unwrap();
    v1.execute_batch(SCHEMA_V1).unwrap();
    v1.execute_batch(
        "INSERT INTO conversations (title, cwd, host, model, created_at, updated_at, message_count)
             VALUES ('kept from before', '/srv', 'h', 'm', 1700000000000, 1700000001000, 2);
         INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id, created_at)
             VALUES (1, 'user', 'what happened before', NULL, NULL, 1700000000500),
                    (1, 'assistant', 'Earlier answer.', NULL, NULL, 1700000001000);",
    )
    .unwrap();
    drop(v1);
    let list = env.cmd().args(["sessions", "list"]).output().unwrap();
    assert!(list.status.success() && stdout(&list).contains("kept from before"), "{}", stderr(&list));

    // A conversation `opsai serve` made for alice (migration 2's columns).
    let db = rusqlite::Connection::open(&db).unwrap();
    let version: i64 = db.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap();
    assert_eq!(version, 3);
    db.execute_batch(
        "INSERT INTO conversations (title, cwd, host, model, created_at, updated_at, message_count, user_id, cluster_id)
             VALUES ('alice in the browser', '', 'srv', 'm', 1800000000000, 1800000000000, 1, 'alice', 'prod');
         INSERT INTO messages (conversation_id, role, content, created_at) VALUES (2, 'user', 'pods?', 1800000000000);",
    )
    .unwrap();
    let list = stdout(&env.cmd().args(["sessions", "list"]).output().unwrap());
    assert!(list.contains("kept from before") && !list.contains("alice"), "{list}");
    let show = env.cmd().args(["sessions", "show", "c2"]).output().unwrap();
    let text = stdout(&show);
    assert!(show.status.success() && text.contains("alice in the browser"), "{}", stderr(&show));
    assert!(text.contains("user alice · cluster prod"), "{text}");

    let mock = MockLlm::start([reply_text("Continued.")]);
    let refused = opsai(&env, &mock).args(["--session", "c2", "more"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(stderr(&refused).contains("c2 is alice's conversation in opsai serve"), "{}", stderr(&refused));
    assert!(mock.chat_requests().is_empty());
    // `-c` continues the terminal's own, not the newer web one.
    opsai(&env, &mock).args(["-c", "and now?"]).assert().success().stdout("Continued.\n");
    let seen = contents(&mock.chat_requests()[0]);
    assert!(seen.contains(&"what happened before".to_owned()) && !seen.contains(&"pods?".to_owned()), "{seen:?}");
}
