//! The users table on a real PostgreSQL (skipped with a reason when it is not installed, outside CI).

use std::time::{Duration, Instant};

use super::source::{FRESH, TableCache, UsersSource};
use super::table::UsersTable;
use super::{RESERVED, User, UsersError, UsersFile, hash_password, verify_password};
use crate::cli::ServeRole;
use crate::store::database::DatabaseUrl;
use crate::testing::postgres::PgServer;
use crate::testing::wait_until;

fn user(name: &str, role: ServeRole, hash: &str) -> User {
    User { name: name.into(), role, password_hash: hash.into() }
}

fn names(file: &UsersFile) -> Vec<(String, ServeRole)> {
    file.users.iter().map(|u| (u.name.clone(), u.role)).collect()
}

#[test]
fn the_table_adds_changes_lists_and_removes_users_and_keeps_their_hashes() {
    let Some(server) = PgServer::start() else { return };
    let url = DatabaseUrl::parse(&server.database("users")).unwrap();
    let mut table = UsersTable::open(&url).unwrap();
    assert!(table.all().unwrap().users.is_empty());
    let hash = hash_password("alice-password").unwrap();
    assert!(table.put(&user("alice", ServeRole::Viewer, &hash)).unwrap(), "added");
    assert!(!table.put(&user("alice", ServeRole::Operator, &hash)).unwrap(), "a second put updates");
    assert!(table.put(&user("bob", ServeRole::Viewer, "h")).unwrap());
    // A second connection (another replica) sees the same users, and opening migrates nothing twice.
    let mut other = UsersTable::open(&url).unwrap();
    let all = other.all().unwrap();
    assert_eq!(names(&all), [("alice".into(), ServeRole::Operator), ("bob".into(), ServeRole::Viewer)]);
    assert!(verify_password("alice-password", &all.find("alice").unwrap().password_hash));
    assert!(other.remove("bob").unwrap());
    assert!(!other.remove("bob").unwrap(), "nobody left to remove");
    assert_eq!(names(&table.all().unwrap()), [("alice".into(), ServeRole::Operator)]);
    // A row a hand-written statement broke is refused by the table itself.
    let mut client = url.connect().unwrap();
    let bad = client.execute("INSERT INTO web_users (name, role, password_hash) VALUES ('x', 'admin', 'h')", &[]);
    assert!(bad.is_err(), "only viewer and operator are roles");
    for name in ["a b", "", "owner", "\u{202e}x", &"x".repeat(65)] {
        let bad =
            client.execute("INSERT INTO web_users (name, role, password_hash) VALUES ($1, 'viewer', 'h')", &[&name]);
        assert!(bad.is_err(), "{name:?} is no user name, in SQL either");
    }
}

#[test]
fn import_copies_the_users_a_server_would_let_in_all_at_once() {
    let Some(server) = PgServer::start() else { return };
    let url = DatabaseUrl::parse(&server.database("import")).unwrap();
    let file = UsersFile {
        users: vec![
            user("alice", ServeRole::Operator, "h1"),
            user("a b", ServeRole::Operator, "h2"),
            user(RESERVED, ServeRole::Operator, "h3"),
            user("bob", ServeRole::Viewer, "h4"),
            user("\u{202e}eve", ServeRole::Viewer, "h5"),
        ],
    }
    .checked("a test file");
    let mut table = UsersTable::open(&url).unwrap();
    table.put(&user("bob", ServeRole::Operator, "old")).unwrap();
    assert_eq!(table.import(&file).unwrap(), (1, 1), "alice added, bob updated");
    let all = table.all().unwrap();
    assert_eq!(names(&all), [("alice".into(), ServeRole::Operator), ("bob".into(), ServeRole::Viewer)]);
    assert_eq!(all.find("bob").unwrap().password_hash, "h4", "the file's password wins");
}

#[test]
fn a_server_sees_a_change_made_elsewhere_within_seconds_and_a_failing_database_is_an_error_not_a_login() {
    let Some(server) = PgServer::start() else { return };
    let url = DatabaseUrl::parse(&server.database("cache")).unwrap();
    let mut table = UsersTable::open(&url).unwrap();
    table.put(&user("alice", ServeRole::Operator, "h")).unwrap();
    let users = table.all().unwrap();
    let source = UsersSource::Database(Box::new(TableCache::new(table, users)));
    // On the server's own runtime: the blocking client must not start its runtime inside it.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let get = |source: &UsersSource| runtime.block_on(async { source.get() });
    assert_eq!(get(&source).unwrap().find("alice").unwrap().role, ServeRole::Operator);

    let mut elsewhere = UsersTable::open(&url).unwrap();
    elsewhere.put(&user("alice", ServeRole::Viewer, "h")).unwrap();
    let changed = Instant::now();
    let demoted = || get(&source).unwrap().find("alice").is_some_and(|u| u.role == ServeRole::Viewer);
    assert!(wait_until(FRESH * 3, demoted), "the new role counts");
    assert!(changed.elapsed() <= FRESH + Duration::from_secs(2), "within {FRESH:?}: {:?}", changed.elapsed());
    elsewhere.remove("alice").unwrap();
    assert!(wait_until(FRESH * 3, || get(&source).unwrap().find("alice").is_none()), "removed");

    drop(elsewhere);
    drop(server);
    assert!(wait_until(FRESH * 3, || get(&source).is_err()), "the database is gone: an error, not the users last read");
    let err = get(&source).err().unwrap();
    assert!(matches!(err, UsersError::Database(_) | UsersError::DatabaseDown(_)), "{err}");
    let started = Instant::now();
    let again = get(&source).expect_err("still gone");
    assert!(matches!(again, UsersError::DatabaseDown(_)), "answered from the failure just seen: {again}");
    assert!(started.elapsed() < Duration::from_millis(100), "at once: {:?}", started.elapsed());
    assert!(err.unavailable().contains("cannot read its users from the database"), "{}", err.unavailable());
}
