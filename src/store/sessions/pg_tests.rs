//! What only the Postgres back end has: its migrations in `opsai_schema`, replicas opening one
//! database at once, connections the server drops, an unreachable server, and being dropped where
//! async tasks run.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::pg::{PG_MIGRATIONS, POOL_SIZE, decode, encode};
use super::tests::{Db, new_in};
use super::*;
use crate::testing::postgres::PgServer;

fn fresh() -> Option<(PgServer, DatabaseUrl)> {
    let server = PgServer::start()?;
    let url = DatabaseUrl::parse(&server.database("sessions")).unwrap();
    Some((server, url))
}

fn open(url: &DatabaseUrl) -> Result<SessionStore, SessionError> {
    SessionStore::open_database(url, Arc::new(Redactor::default()))
}

fn version(url: &DatabaseUrl) -> Option<i64> {
    let row = url.connect().unwrap().query_opt("SELECT version FROM opsai_schema WHERE component = 'sessions'", &[]);
    row.unwrap().map(|row| row.get(0))
}

fn tables(url: &DatabaseUrl) -> Vec<String> {
    let rows = url
        .connect()
        .unwrap()
        .query("SELECT tablename::TEXT FROM pg_tables WHERE schemaname = 'public' ORDER BY 1", &[])
        .unwrap();
    rows.iter().map(|row| row.get(0)).collect()
}

#[test]
fn an_empty_database_is_migrated_once_and_opened_again_unchanged() {
    let Some((_server, url)) = fresh() else { return };
    assert_eq!(tables(&url), Vec::<String>::new());
    let store = open(&url).unwrap();
    assert_eq!(version(&url), Some(PG_MIGRATIONS.len() as i64));
    assert_eq!(tables(&url), ["conversations", "messages", "opsai_schema"]);
    let id = store.create(&new_in("/srv", "first")).unwrap();
    store.append(id, &ChatMessage::user("first")).unwrap();
    drop(store);
    let again = open(&url).unwrap();
    assert_eq!(version(&url), Some(PG_MIGRATIONS.len() as i64));
    assert_eq!(again.messages(id).unwrap(), [ChatMessage::user("first")]);
    assert_eq!(again.path(), None);
    assert_eq!(again.location(), url.to_string());
}

#[test]
fn replicas_opening_a_new_database_at_once_all_succeed() {
    let Some((_server, url)) = fresh() else { return };
    let start = Barrier::new(6);
    thread::scope(|scope| {
        for n in 0..6 {
            let (url, start) = (&url, &start);
            scope.spawn(move || {
                start.wait();
                let store = open(url).unwrap();
                store.create(&new_in("/", &format!("opener {n}"))).unwrap();
            });
        }
    });
    assert_eq!(open(&url).unwrap().list(10).unwrap().len(), 6);
    assert_eq!(version(&url), Some(PG_MIGRATIONS.len() as i64));
}

#[test]
fn a_database_from_a_newer_opsai_is_refused_and_left_untouched() {
    let Some((_server, url)) = fresh() else { return };
    url.connect()
        .unwrap()
        .batch_execute(
            "CREATE TABLE opsai_schema (component TEXT PRIMARY KEY, version BIGINT NOT NULL);
             INSERT INTO opsai_schema VALUES ('sessions', 99);
             CREATE TABLE conversations (future TEXT); INSERT INTO conversations VALUES ('kept');",
        )
        .unwrap();
    let error = open(&url).unwrap_err();
    assert!(matches!(&error, SessionError::Database(DatabaseError::TooNew { found: 99, .. })), "{error:?}");
    assert!(error.to_string().contains("Upgrade opsai on every replica"), "{error}");
    assert_eq!(version(&url), Some(99));
    assert_eq!(tables(&url), ["conversations", "opsai_schema"]);
    let kept: String = url.connect().unwrap().query_one("SELECT future FROM conversations", &[]).unwrap().get(0);
    assert_eq!(kept, "kept");
}

/// Fills several of the pool's connections, then has the server end every connection to the
/// database, as a restart or an admin does.
fn end_its_connections(server: &PgServer, store: &SessionStore, id: ConversationId) {
    thread::scope(|scope| {
        for n in 0..POOL_SIZE {
            scope.spawn(move || store.append(id, &ChatMessage::user(format!("before {n}"))).unwrap());
        }
    });
    let mut admin = postgres::Client::connect(&server.url("postgres"), postgres::NoTls).unwrap();
    let count = |admin: &mut postgres::Client, sql: &str| -> i64 { admin.query_one(sql, &[]).unwrap().get(0) };
    let ended = count(
        &mut admin,
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = 'sessions' AND pid <> pg_backend_pid()) AS ended",
    );
    assert!(ended >= 2, "the pool held {ended} connections");
    let gone = || count(&mut admin, "SELECT count(*) FROM pg_stat_activity WHERE datname = 'sessions'") == 0;
    assert!(crate::testing::wait_until(std::time::Duration::from_secs(5), gone), "the connections did not end");
}

#[test]
fn connections_the_server_ended_are_checked_and_made_again_before_use() {
    let Some((server, url)) = fresh() else { return };
    // Every connection counts as idle here: each is checked before it is used.
    let store = SessionStore::open_database_checking(&url, Arc::new(Redactor::default()), Duration::ZERO).unwrap();
    let id = store.create(&new_in("/srv", "survives")).unwrap();
    end_its_connections(&server, &store, id);
    for n in 0..20 {
        store.append(id, &ChatMessage::user(format!("after {n}"))).unwrap();
    }
    let count = POOL_SIZE as i64 + 20;
    assert_eq!(store.get(id).unwrap().unwrap().message_count, count);
    assert_eq!(store.messages(id).unwrap().len() as i64, count);
}

#[test]
fn a_busy_connection_the_server_ended_fails_one_call_and_the_next_connects_again() {
    let Some((server, url)) = fresh() else { return };
    // Never idle: a dead connection is only found by using it.
    let store = SessionStore::open_database_checking(&url, Arc::new(Redactor::default()), Duration::MAX).unwrap();
    let id = store.create(&new_in("/srv", "survives")).unwrap();
    end_its_connections(&server, &store, id);
    let results: Vec<_> =
        (0..3 * POOL_SIZE).map(|n| store.append(id, &ChatMessage::user(format!("after {n}"))).is_ok()).collect();
    let failed = results.iter().filter(|ok| !**ok).count();
    assert!(failed <= POOL_SIZE, "each dead connection fails at most once: {results:?}");
    assert!(results[POOL_SIZE..].iter().all(|ok| *ok), "{results:?}");
    let stored = (POOL_SIZE + 3 * POOL_SIZE - failed) as i64;
    assert_eq!(store.get(id).unwrap().unwrap().message_count, stored, "a failed call stored nothing");
    assert_eq!(store.messages(id).unwrap().len() as i64, stored);
}

#[test]
fn a_restarted_server_is_used_again_and_while_it_is_down_calls_say_which_database() {
    let Some(mut server) = PgServer::start() else { return };
    let url = DatabaseUrl::parse(&server.database("sessions")).unwrap();
    let store = open(&url).unwrap();
    let checked = SessionStore::open_database_checking(&url, Arc::new(Redactor::default()), Duration::ZERO).unwrap();
    let id = store.create(&new_in("/srv", "restarts")).unwrap();
    store.append(id, &ChatMessage::user("before")).unwrap();
    checked.append(id, &ChatMessage::user("before, checked")).unwrap();

    server.stop();
    // The first call may still find the ended connection; after it, the store tries to connect.
    let _ = store.append(id, &ChatMessage::user("lost"));
    let down = store.append(id, &ChatMessage::user("lost too")).unwrap_err().to_string();
    assert!(down.starts_with(&format!("cannot connect to the database {url}")), "{down}");

    server.start_again();
    // A store that checks its idle connections loses no call to the restart; the other, at most one.
    checked.append(id, &ChatMessage::user("after, checked")).unwrap();
    let _ = store.append(id, &ChatMessage::user("maybe"));
    store.append(id, &ChatMessage::user("after")).unwrap();
    let contents: Vec<String> = store.messages(id).unwrap().into_iter().map(|m| m.content).collect();
    let expected = ["before", "before, checked", "after, checked"];
    assert_eq!(contents[..3], expected, "nothing that failed was stored");
    assert_eq!(contents.last().map(String::as_str), Some("after"));
    assert!(contents.len() <= 5, "{contents:?}");
}

#[test]
fn an_unreachable_database_is_an_error_that_names_it_without_the_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = DatabaseUrl::parse(&format!("postgres://ops:s3cret@127.0.0.1:{port}/opsai")).unwrap();
    let error = open(&url).unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, SessionError::Database(DatabaseError::Connect { .. })), "{error:?}");
    assert!(text.starts_with(&format!("cannot connect to the database postgres://ops:***@127.0.0.1:{port}/opsai")));
    assert!(text.contains("check that it runs") && !text.contains("s3cret"), "{text}");
}

#[test]
fn a_store_dropped_where_async_tasks_run_does_not_panic() {
    let Some((_server, url)) = fresh() else { return };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    runtime.block_on(async move {
        let store = tokio::task::spawn_blocking(move || {
            let store = open(&url).unwrap();
            store.create(&new_in("/", "x")).unwrap();
            store
        })
        .await
        .unwrap();
        // The last owner of a server's store may be a task: its clients must not end here.
        tokio::spawn(async move { drop(store) }).await.unwrap();
    });
}

#[test]
fn nul_and_the_escape_character_round_trip_in_every_text_column() {
    for text in ["", "plain", "\0", "a\0b", "\u{E000}", "\u{E000}0", "\u{E000}e\0\u{E000}\u{E000}0", "日志\0"] {
        assert_eq!(decode(encode(text).into_owned()), text, "{text:?}");
        assert!(!encode(text).contains('\0'), "{text:?}");
    }
    let Some((server, url)) = fresh() else { return };
    let db = Db::Postgres { url: Box::new(url), _server: server };
    let store = db.open();
    let odd = "a\0b\u{E000}";
    let new = NewConversation {
        first_request: odd,
        cwd: odd,
        host: odd,
        model: odd,
        user: Some(odd),
        cluster: Some(odd),
        hosts: Some(odd),
    };
    let id = store.create(&new).unwrap();
    store.append(id, &ChatMessage::tool(odd, odd)).unwrap();
    let web = store.get_web(id).unwrap().unwrap();
    assert_eq!(
        (web.title.as_str(), web.user.as_deref(), web.cluster.as_deref()),
        ("a b\u{E000}", Some(odd), Some(odd))
    );
    assert_eq!(web.hosts.as_deref(), Some(odd));
    assert_eq!(store.list_for_user(odd).unwrap().len(), 1);
    assert_eq!(store.messages(id).unwrap(), [ChatMessage::tool(odd, odd)]);
    let summary = store.get(id).unwrap().unwrap();
    assert_eq!((summary.cwd.as_str(), summary.host.as_str(), summary.model.as_str()), (odd, odd, odd));
}
