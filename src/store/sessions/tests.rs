use std::os::unix::fs::PermissionsExt;
use std::time::Instant;

use pretty_assertions::assert_eq;
use serde_json::json;

use rusqlite::Connection;

use super::schema::SCHEMA_VERSION;
pub(super) use super::test_db::{Db, each_db};
use super::*;
use crate::testing::wait_until;

const GITHUB_TOKEN: &str = "ghp_1234567890abcdefghijABCDEFGHIJ123456";
const ENV_SECRET: &str = "hunter2-but-longer-9f8e7d";

pub(super) fn open_in(dir: &tempfile::TempDir) -> SessionStore {
    SessionStore::open(&dir.path().join("sessions.db"), Arc::new(Redactor::default())).unwrap()
}

pub(super) fn new_in<'a>(cwd: &'a str, first_request: &'a str) -> NewConversation<'a> {
    NewConversation {
        first_request,
        cwd,
        host: "localhost",
        model: "gpt-4o-mini",
        user: None,
        cluster: None,
        hosts: None,
    }
}

/// A second connection, outside the store, to see what is really in the file.
pub(super) fn raw(path: &Path) -> Connection {
    Connection::open(path).unwrap()
}

fn schema_of(path: &Path) -> Vec<String> {
    let connection = raw(path);
    let mut statement =
        connection.prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name").unwrap();
    statement.query_map([], |row| row.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

pub(super) fn user_version_of(path: &Path) -> i64 {
    raw(path).pragma_query_value(None, "user_version", |row| row.get(0)).unwrap()
}

/// Waits for the next millisecond, so `updated_at` orders the operations of a test.
pub(super) fn tick() {
    let before = crate::store::unix_ms();
    assert!(wait_until(Duration::from_secs(1), || crate::store::unix_ms() > before), "the clock stood still");
}

#[test]
fn a_store_can_be_shared_between_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<SessionStore>();
}

#[test]
fn creates_a_private_file_in_a_new_directory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("home/.opsai/sessions.db");
    let store = SessionStore::open(&path, Arc::new(Redactor::default())).unwrap();
    assert_eq!(store.path(), Some(path.as_path()));
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    let journal: String = raw(&path).pragma_query_value(None, "journal_mode", |row| row.get(0)).unwrap();
    assert_eq!(journal, "wal");
    assert_eq!(user_version_of(&path), SCHEMA_VERSION);
    assert_eq!(store.list(10).unwrap(), vec![]);
}

#[test]
fn migrating_from_version_0_twice_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    // An existing database at version 0, as another tool or an older build might leave it.
    raw(&path).execute_batch("PRAGMA user_version = 0; CREATE TABLE notes (text TEXT);").unwrap();
    let id = {
        let store = open_in(&dir);
        let id = store.create(&new_in("/srv", "first")).unwrap();
        store.append(id, &ChatMessage::user("first")).unwrap();
        id
    };
    let schema = schema_of(&path);
    assert!(schema.iter().any(|sql| sql.starts_with("CREATE TABLE conversations")), "{schema:?}");
    let store = open_in(&dir);
    assert_eq!(schema_of(&path), schema);
    assert_eq!(user_version_of(&path), SCHEMA_VERSION);
    assert_eq!(store.messages(id).unwrap(), vec![ChatMessage::user("first")]);
    assert_eq!(store.get(id).unwrap().map(|summary| summary.message_count), Some(1));
}

#[test]
fn refuses_a_newer_schema_and_leaves_the_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    raw(&path).execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;").unwrap();
    let before = std::fs::read(&path).unwrap();
    let error = SessionStore::open(&path, Arc::new(Redactor::default())).unwrap_err();
    assert!(
        matches!(&error, SessionError::TooNew { path: p, found: 99, known } if *p == path && *known == SCHEMA_VERSION),
        "{error:?}"
    );
    assert!(error.to_string().contains("Upgrade opsai"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let journal: String = raw(&path).pragma_query_value(None, "journal_mode", |row| row.get(0)).unwrap();
    assert_eq!(journal, "delete");
}

#[test]
fn refuses_a_file_that_is_not_a_database_and_leaves_it_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    // Pseudo-random bytes, and text: neither has SQLite's header.
    let mut seed = 0x2545_f491_u32;
    let noise: Vec<u8> = (0..8192)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed.to_le_bytes()[0]
        })
        .collect();
    for garbage in [noise, b"not a database\n".to_vec()] {
        std::fs::write(&path, &garbage).unwrap();
        let error = SessionStore::open(&path, Arc::new(Redactor::default())).unwrap_err();
        assert!(matches!(&error, SessionError::Corrupt { path: p } if *p == path), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("not a valid SQLite database") && message.contains("mv "), "{message}");
        assert_eq!(std::fs::read(&path).unwrap(), garbage);
        let mut files: Vec<_> =
            std::fs::read_dir(dir.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
        files.sort();
        assert_eq!(files, ["sessions.db"]);
    }
}

#[test]
fn reports_a_database_another_program_keeps_locked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let holder = raw(&path);
    holder.execute_batch("CREATE TABLE held (x); BEGIN EXCLUSIVE; INSERT INTO held VALUES (1);").unwrap();
    let started = Instant::now();
    let error =
        SessionStore::open_with_timeout(&path, Arc::new(Redactor::default()), Duration::from_millis(200)).unwrap_err();
    assert!(matches!(&error, SessionError::Locked { path: p } if *p == path), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(2), "gave up after {:?}", started.elapsed());
    assert!(error.to_string().contains("locked by another program"), "{error}");
    holder.execute_batch("COMMIT").unwrap();
    // Once the lock is gone, the same file opens and is migrated.
    let store = open_in(&dir);
    assert_eq!(store.list(1).unwrap(), vec![]);
}

#[test]
fn titles_are_one_line_of_at_most_60_characters() {
    assert_eq!(title_for("  list big files\n"), "list big files");
    assert_eq!(title_for("line one\nline two\r\nthree\tfour"), "line one line two three four");
    let sixty = "a".repeat(60);
    assert_eq!(title_for(&sixty), sixty);
    let long = format!("{} and more", "b".repeat(58));
    assert_eq!(title_for(&long), format!("{}…", "b".repeat(58)));
    assert_eq!(title_for(&long).chars().count(), 58 + 1);
    let exact_cut = "c".repeat(61);
    assert_eq!(title_for(&exact_cut), format!("{}…", "c".repeat(59)));
    assert_eq!(title_for(&exact_cut).chars().count(), TITLE_CHARS);
    // Three bytes a character: the cut falls on a character, never inside one.
    let chinese = "查找日志目录里最大的文件并且告诉我哪些可以安全删除".repeat(3);
    let title = title_for(&chinese);
    assert_eq!(title.chars().count(), TITLE_CHARS);
    assert!(title.ends_with('…'));
    assert_eq!(title, format!("{}…", chinese.chars().take(59).collect::<String>()));
    assert_eq!(title_for(""), "");
}

#[test]
fn messages_round_trip_exactly() {
    each_db(messages_round_trip_exactly_on)
}

fn messages_round_trip_exactly_on(db: &Db) {
    let store = db.open();
    let id = store.create(&new_in("/srv/app", "find big logs")).unwrap();
    let messages = vec![
        ChatMessage::system("You are opsai."),
        ChatMessage::user("find big logs — 日志 \"quoted\"\nsecond line"),
        ChatMessage::assistant(
            "Let me look.",
            vec![
                ToolCall {
                    id: "call_1".into(),
                    name: "run_command".into(),
                    arguments: json!({"command": "du -sh /var/log/*", "timeout": 30, "flags": [true, null, 1.5],
                                      "nested": {"z": "last", "a": "first"}}),
                },
                ToolCall { id: "call_2".into(), name: "broken".into(), arguments: json!("{not json") },
            ],
        ),
        ChatMessage::tool("call_1", "1.2G\t/var/log/big.log\n"),
        ChatMessage::tool("call_2", ""),
        // Command output may hold NUL (Postgres text cannot), and the character that escapes it there.
        ChatMessage::tool("call_3", "a\0b \u{E000}0 \u{E000}e \u{E000}\0\u{E000}"),
        ChatMessage::assistant("The biggest is big.log.", vec![]),
    ];
    for message in &messages {
        store.append(id, message).unwrap();
    }
    let stored = store.messages(id).unwrap();
    assert_eq!(stored, messages);
    // Object keys keep their order (preserve_order), so the stored JSON is the model's.
    assert_eq!(stored[2].tool_calls[0].arguments.to_string(), messages[2].tool_calls[0].arguments.to_string());
    let summary = store.get(id).unwrap().unwrap();
    assert_eq!(
        (summary.title.as_str(), summary.cwd.as_str(), summary.host.as_str(), summary.model.as_str()),
        ("find big logs", "/srv/app", "localhost", "gpt-4o-mini")
    );
    assert_eq!(summary.message_count, 7);
    assert!(summary.updated_at >= summary.created_at && summary.created_at > 1_700_000_000_000, "{summary:?}");
    let roles = db.column("SELECT role FROM messages ORDER BY id");
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool", "tool", "assistant"]);
}

#[test]
fn redacts_content_titles_and_tool_arguments_before_storing() {
    each_db(redacts_before_storing_on)
}

fn redacts_before_storing_on(db: &Db) {
    let redactor = Redactor::new([("DEPLOY_TOKEN".to_owned(), ENV_SECRET.to_owned())]);
    let store = db.open_with(Arc::new(redactor));
    let request = format!("push with {GITHUB_TOKEN} and {ENV_SECRET}");
    let id = store.create(&new_in("/srv", &request)).unwrap();
    store.append(id, &ChatMessage::user(&request)).unwrap();
    let call = ToolCall {
        id: "call_1".into(),
        name: "run_command".into(),
        arguments: json!({"command": format!("git push https://x:{GITHUB_TOKEN}@github.com/o/r"),
                          "env": [{"value": ENV_SECRET}], "retries": 2}),
    };
    store.append(id, &ChatMessage::assistant(format!("using {ENV_SECRET}"), vec![call])).unwrap();
    store.append(id, &ChatMessage::tool("call_1", format!("token {GITHUB_TOKEN} rejected"))).unwrap();

    let row_text = db.column(
        "SELECT title || ' ' || cwd FROM conversations UNION ALL SELECT content || ' ' || \
         coalesce(CAST(tool_calls AS TEXT), '') || ' ' || coalesce(tool_call_id, '') FROM messages",
    );
    let all = row_text.join("\n");
    assert!(!all.contains(GITHUB_TOKEN) && !all.contains(ENV_SECRET), "{all}");
    assert!(all.contains("[REDACTED:github]") && all.contains("[REDACTED:env:DEPLOY_TOKEN]"), "{all}");
    let tool_calls = db.column("SELECT CAST(tool_calls AS TEXT) FROM messages WHERE tool_calls IS NOT NULL").join("");
    let arguments: serde_json::Value = serde_json::from_str(&tool_calls).unwrap();
    assert_eq!(arguments[0]["arguments"]["env"][0]["value"], "[REDACTED:env:DEPLOY_TOKEN]");
    assert_eq!(arguments[0]["arguments"]["retries"], 2);
    assert_eq!(store.get(id).unwrap().unwrap().title, "push with [REDACTED:github] and [REDACTED:env:DEPLOY_TOKEN]");

    // Not in the bytes on disk either (database and write-ahead log).
    let Db::Sqlite(dir) = db else { return };
    drop(store);
    for file in ["sessions.db", "sessions.db-wal"] {
        let bytes = std::fs::read(dir.path().join(file)).unwrap_or_default();
        for secret in [GITHUB_TOKEN, ENV_SECRET] {
            assert!(!bytes.windows(secret.len()).any(|window| window == secret.as_bytes()), "{secret} in {file}");
        }
    }
}

#[test]
fn last_prefers_the_directory_then_the_newest_anywhere() {
    each_db(|db| {
        let store = db.open();
        assert_eq!(store.last(None).unwrap(), None);
        assert_eq!(store.last(Some("/a")).unwrap(), None);
        let older_in_a = store.create(&new_in("/a", "one")).unwrap();
        tick();
        let newer_in_a = store.create(&new_in("/a", "two")).unwrap();
        tick();
        let in_b = store.create(&new_in("/b", "three")).unwrap();
        tick();
        let last_id = |cwd| store.last(cwd).unwrap().map(|summary| summary.id);
        assert_eq!(last_id(Some("/a")), Some(newer_in_a));
        assert_eq!(last_id(Some("/b")), Some(in_b));
        assert_eq!(last_id(Some("/elsewhere")), Some(in_b));
        assert_eq!(last_id(None), Some(in_b));
        // A new message makes a conversation the newest.
        store.append(older_in_a, &ChatMessage::user("again")).unwrap();
        assert_eq!(last_id(Some("/a")), Some(older_in_a));
        assert_eq!(last_id(None), Some(older_in_a));
    });
}

#[test]
fn lists_the_most_recently_updated_first() {
    each_db(|db| {
        let store = db.open();
        let ids: Vec<ConversationId> = (0..5)
            .map(|n| {
                tick();
                store.create(&new_in("/srv", &format!("request {n}"))).unwrap()
            })
            .collect();
        tick();
        store.append(ids[1], &ChatMessage::user("bump")).unwrap();
        let listed: Vec<ConversationId> = store.list(3).unwrap().iter().map(|summary| summary.id).collect();
        assert_eq!(listed, [ids[1], ids[4], ids[3]]);
        assert_eq!(store.list(0).unwrap(), vec![]);
        assert_eq!(store.list(usize::MAX).unwrap().len(), 5);
    });
}

#[test]
fn delete_takes_the_messages_with_it() {
    each_db(|db| {
        let store = db.open();
        let gone = store.create(&new_in("/srv", "gone")).unwrap();
        let kept = store.create(&new_in("/srv", "kept")).unwrap();
        for n in 0..3 {
            store.append(gone, &ChatMessage::user(format!("gone {n}"))).unwrap();
            store.append(kept, &ChatMessage::user(format!("kept {n}"))).unwrap();
        }
        assert!(store.delete(gone).unwrap());
        assert!(!store.delete(gone).unwrap());
        assert_eq!(store.get(gone).unwrap(), None);
        assert!(matches!(store.messages(gone), Err(SessionError::NotFound(id)) if id == gone));
        let count = |id: ConversationId| -> i64 {
            let counted =
                db.column(&format!("SELECT CAST(count(*) AS TEXT) FROM messages WHERE conversation_id = {id}"));
            counted[0].parse().unwrap()
        };
        assert_eq!((count(gone), count(kept)), (0, 3));
        // Deleted ids are not reused.
        assert!(store.create(&new_in("/srv", "new")).unwrap() > kept);
    });
}

#[test]
fn a_missing_conversation_is_not_found() {
    each_db(|db| {
        let store = db.open();
        assert!(matches!(store.append(42, &ChatMessage::user("x")), Err(SessionError::NotFound(42))));
        assert!(matches!(store.messages(42), Err(SessionError::NotFound(42))));
        assert!(matches!(store.set_model(42, "m"), Err(SessionError::NotFound(42))));
        assert_eq!(store.get(42).unwrap(), None);
        assert!(SessionError::NotFound(42).to_string().contains("opsai sessions list"));
        let id = store.create(&new_in("/srv", "x")).unwrap();
        store.set_model(id, "llama3").unwrap();
        assert_eq!(store.get(id).unwrap().unwrap().model, "llama3");
        assert_eq!(store.messages(id).unwrap(), vec![]);
    });
}

#[test]
fn a_conversation_id_is_read_as_typed_and_printed_as_c_and_the_number() {
    for typed in ["14", "c14", "C14", "#14", " c14 "] {
        assert_eq!(parse_id(typed), Ok(14), "{typed}");
        assert_eq!(session_label(typed), "c14", "{typed}");
    }
    for bad in ["", "c", "0", "c-1", "-1", "+14", "cc14", "14a", "s14"] {
        assert!(parse_id(bad).is_err(), "{bad} was accepted");
    }
    assert_eq!(label(14), "c14");
    // A run without a conversation is named by its process id; that name is kept as it is.
    assert_eq!(session_label("s4242"), "s4242");
    assert_eq!(SessionError::NotFound(14).to_string().split(';').next(), Some("no saved conversation c14"));
}
