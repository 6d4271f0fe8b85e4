//! Several stores, threads and processes on one file at once: nothing fails, nothing is lost.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::schema::SCHEMA_VERSION;
use super::tests::{each_db, new_in, open_in, user_version_of};
use super::{ConversationId, SessionStore};
use crate::protocol::ChatMessage;
use crate::redact::Redactor;
use crate::testing::wait_until;

/// Set on a child test process by `two_processes_write_at_once_without_losing_a_message`.
const CHILD_ENV: &str = "OPSAI_SESSIONS_TEST_CHILD";

/// Writes `count` messages alternately into `own` and `shared`, each saying who wrote it and its number.
fn write_alternately(store: &SessionStore, label: &str, own: ConversationId, shared: ConversationId, count: usize) {
    for n in 0..count {
        let target = if n % 2 == 0 { own } else { shared };
        store.append(target, &ChatMessage::user(format!("{label} {n}"))).unwrap();
    }
}

/// Checks what `write_alternately` by `labels` left: every message there once, in each writer's order,
/// and counts that match the rows.
fn assert_all_written(store: &SessionStore, own: &[(ConversationId, &str)], shared: ConversationId, count: usize) {
    for (id, label) in own {
        let expected: Vec<ChatMessage> =
            (0..count).step_by(2).map(|n| ChatMessage::user(format!("{label} {n}"))).collect();
        assert_eq!(store.messages(*id).unwrap(), expected);
        assert_eq!(store.get(*id).unwrap().unwrap().message_count, (count / 2) as i64);
    }
    let in_shared = store.messages(shared).unwrap();
    assert_eq!(in_shared.len(), own.len() * count / 2);
    assert_eq!(store.get(shared).unwrap().unwrap().message_count, in_shared.len() as i64);
    for (_, label) in own {
        let mine: Vec<&str> = in_shared
            .iter()
            .map(|message| message.content.as_str())
            .filter(|content| content.split(' ').next() == Some(*label))
            .collect();
        let expected: Vec<String> = (1..count).step_by(2).map(|n| format!("{label} {n}")).collect();
        assert_eq!(mine, expected);
    }
}

#[test]
fn two_stores_write_at_once_without_losing_a_message() {
    each_db(|db| {
        let setup = db.open();
        let (first, second, shared) = (
            setup.create(&new_in("/a", "first")).unwrap(),
            setup.create(&new_in("/b", "second")).unwrap(),
            setup.create(&new_in("/c", "shared")).unwrap(),
        );
        let start = Barrier::new(2);
        thread::scope(|scope| {
            for (label, own) in [("first", first), ("second", second)] {
                let start = &start;
                scope.spawn(move || {
                    let store = db.open();
                    start.wait();
                    write_alternately(&store, label, own, shared, 200);
                });
            }
        });
        assert_all_written(&setup, &[(first, "first"), (second, "second")], shared, 200);
    });
}

#[test]
fn stores_opening_a_new_file_at_once_all_succeed() {
    for _ in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let start = Barrier::new(6);
        thread::scope(|scope| {
            for n in 0..6 {
                let (dir, start) = (&dir, &start);
                scope.spawn(move || {
                    start.wait();
                    let store = open_in(dir);
                    store.create(&new_in("/", &format!("opener {n}"))).unwrap();
                });
            }
        });
        assert_eq!(open_in(&dir).list(10).unwrap().len(), 6);
        assert_eq!(user_version_of(&dir.path().join("sessions.db")), SCHEMA_VERSION);
    }
}

#[test]
fn two_processes_write_at_once_without_losing_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let setup = open_in(&dir);
    let (first, second, shared) = (
        setup.create(&new_in("/a", "first")).unwrap(),
        setup.create(&new_in("/b", "second")).unwrap(),
        setup.create(&new_in("/c", "shared")).unwrap(),
    );
    let go = dir.path().join("go");
    let children: Vec<_> = [("p1", first), ("p2", second)]
        .into_iter()
        .map(|(label, own)| {
            Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "store::sessions::concurrency_tests::child_writer", "--test-threads=1", "--quiet"])
                .env(CHILD_ENV, format!("{}|{}|{label}|{own}|{shared}", go.display(), path.display()))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    std::fs::write(&go, "").unwrap();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{stdout}{stderr}");
    }
    assert_all_written(&setup, &[(first, "p1"), (second, "p2")], shared, 200);
}

/// The writer process of `two_processes_write_at_once_without_losing_a_message`; without its
/// environment variable (a normal test run) it does nothing.
#[test]
fn child_writer() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let [go, path, label, own, shared] = spec.split('|').collect::<Vec<_>>()[..] else { panic!("bad spec {spec}") };
    let store = SessionStore::open(Path::new(path), Arc::new(Redactor::default())).unwrap();
    // Both writers start at once; past the limit, this one starts alone (the test still checks).
    let _ = wait_until(Duration::from_secs(10), || Path::new(go).exists());
    write_alternately(&store, label, own.parse().unwrap(), shared.parse().unwrap(), 200);
}
