//! Migration 2 and the web side of the store: a version-1 file keeps its rows, users see only their
//! own conversations, the terminal only its own, messages come back with ids and times.

use pretty_assertions::assert_eq;
use serde_json::json;

use super::schema::{MIGRATIONS, SCHEMA_VERSION};
use super::tests::{each_db, new_in, raw, tick, user_version_of};
use super::*;
use crate::protocol::ToolCall;

fn web<'a>(user: &'a str, cluster: Option<&'a str>, title: &'a str) -> NewConversation<'a> {
    NewConversation {
        first_request: title,
        cwd: "",
        host: "server",
        model: "m",
        user: Some(user),
        cluster,
        hosts: None,
    }
}

#[test]
fn a_version_1_file_migrates_keeps_its_rows_and_the_terminal_still_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    {
        let v1 = raw(&path);
        v1.execute_batch(MIGRATIONS[0]).unwrap();
        v1.execute_batch(
            "PRAGMA user_version = 1;
             INSERT INTO conversations (title, cwd, host, model, created_at, updated_at, message_count)
                 VALUES ('old one', '/srv', 'h', 'm', 1700000000000, 1700000001000, 2);
             INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id, created_at)
                 VALUES (1, 'user', 'hello', NULL, NULL, 1700000000500),
                        (1, 'assistant', 'hi', NULL, NULL, 1700000001000);",
        )
        .unwrap();
    }
    let store = SessionStore::open(&path, Arc::new(Redactor::default())).unwrap();
    assert_eq!((user_version_of(&path), SCHEMA_VERSION), (3, 3));
    let listed = store.list(10).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].title.as_str(), listed[0].message_count, listed[0].user.as_ref()), ("old one", 2, None));
    assert_eq!(store.messages(1).unwrap(), [ChatMessage::user("hello"), ChatMessage::assistant("hi", vec![])]);
    assert_eq!(store.last(Some("/srv")).unwrap().map(|c| c.id), Some(1));
    let web = store.get_web(1).unwrap().unwrap();
    assert_eq!((web.user, web.cluster, web.created_at, web.updated_at), (None, None, 1_700_000_000, 1_700_000_001));
    let columns: Vec<String> = raw(&path)
        .prepare("SELECT name FROM pragma_table_info('conversations')")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(columns.ends_with(&["user_id".to_owned(), "cluster_id".to_owned(), "hosts".to_owned()]), "{columns:?}");
    drop(store);
    // Opening again migrates nothing more.
    SessionStore::open(&path, Arc::new(Redactor::default())).unwrap();
    assert_eq!(user_version_of(&path), 3);
}

#[test]
fn a_version_2_file_gains_host_sets_and_keeps_its_web_conversations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    {
        let v2 = raw(&path);
        v2.execute_batch(MIGRATIONS[0]).unwrap();
        v2.execute_batch(MIGRATIONS[1]).unwrap();
        v2.execute_batch(
            "PRAGMA user_version = 2;
             INSERT INTO conversations (title, cwd, host, model, created_at, updated_at, message_count, user_id, cluster_id)
                 VALUES ('pods', '', 'web', 'm', 1700000000000, 1700000000000, 0, 'alice', 'prod');",
        )
        .unwrap();
    }
    let store = SessionStore::open(&path, Arc::new(Redactor::default())).unwrap();
    assert_eq!(user_version_of(&path), 3);
    let old = store.get_web(1).unwrap().unwrap();
    assert_eq!((old.user.as_deref(), old.cluster.as_deref(), old.hosts), (Some("alice"), Some("prod"), None));
    let new = NewConversation { hosts: Some("web-*:&eu"), ..web("alice", None, "disk on the web hosts") };
    let id = store.create(&new).unwrap();
    assert_eq!(store.get_web(id).unwrap().unwrap().hosts.as_deref(), Some("web-*:&eu"));
    assert_eq!(store.list_for_user("alice").unwrap().iter().map(|c| c.hosts.clone()).collect::<Vec<_>>().len(), 2);
}

#[test]
fn each_user_sees_only_their_own_and_the_terminal_only_its_own() {
    each_db(|db| {
        let store = db.open();
        let terminal = store.create(&new_in("/srv", "from the terminal")).unwrap();
        let alice_1 = store.create(&web("alice", Some("prod"), "pods in prod")).unwrap();
        let bob = store.create(&web("bob", None, "bob's")).unwrap();
        let alice_2 = store.create(&web("alice", Some("staging"), "second")).unwrap();
        tick();
        store.append(alice_1, &ChatMessage::user("newest activity")).unwrap();

        let alice: Vec<_> = store.list_for_user("alice").unwrap();
        assert_eq!(alice.iter().map(|c| c.id).collect::<Vec<_>>(), [alice_1, alice_2], "newest first");
        assert_eq!(
            (alice[0].title.as_str(), alice[0].user.as_deref(), alice[0].cluster.as_deref(), alice[0].message_count),
            ("pods in prod", Some("alice"), Some("prod"), 1)
        );
        assert_eq!(store.list_for_user("bob").unwrap().iter().map(|c| c.id).collect::<Vec<_>>(), [bob]);
        assert!(store.list_for_user("carol").unwrap().is_empty());
        assert!(store.list_for_user("").unwrap().is_empty(), "the terminal's are nobody's on the web");

        assert_eq!(store.list(10).unwrap().iter().map(|c| c.id).collect::<Vec<_>>(), [terminal]);
        assert_eq!(store.last(None).unwrap().map(|c| c.id), Some(terminal));
        assert_eq!(store.last(Some("")).unwrap().map(|c| c.id), Some(terminal), "not a web one with the same cwd");
        // Shown by id whoever made it (`opsai sessions show`), with its owner.
        let shown = store.get(bob).unwrap().unwrap();
        assert_eq!((shown.user.as_deref(), shown.cluster), (Some("bob"), None));
        let json = serde_json::to_value(store.get(terminal).unwrap().unwrap()).unwrap();
        assert!(json.get("user").is_none() && json.get("cluster").is_none(), "{json}");
        assert_eq!(store.get_web(bob).unwrap().unwrap().user.as_deref(), Some("bob"));
        assert_eq!(store.get_web(999).unwrap(), None);
    });
}

#[test]
fn messages_come_back_in_order_with_ids_and_times_in_seconds() {
    each_db(|db| {
        let store = db.open();
        let id = store.create(&web("alice", None, "q")).unwrap();
        let other = store.create(&web("alice", None, "other")).unwrap();
        let call = ToolCall { id: "call_1".into(), name: "kube".into(), arguments: json!({"action": "pods"}) };
        let messages = [
            ChatMessage::user("list pods"),
            ChatMessage::assistant("", vec![call]),
            ChatMessage::tool("call_1", "web-1 Running"),
            ChatMessage::assistant("One pod runs.", vec![]),
        ];
        for (n, message) in messages.iter().enumerate() {
            store.append(id, message).unwrap();
            if n == 1 {
                store.append(other, &ChatMessage::user("interleaved")).unwrap();
            }
        }
        let stored = store.messages_with_meta(id).unwrap();
        assert_eq!(stored.iter().map(|m| m.message.clone()).collect::<Vec<_>>(), messages);
        let ids: Vec<i64> = stored.iter().map(|m| m.id).collect();
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "{ids:?}");
        assert_eq!(ids[2] - ids[1], 2, "the other conversation's message took an id between: {ids:?}");
        let now = crate::store::unix_ms() / 1000;
        assert!(stored.iter().all(|m| (now - 5..=now).contains(&m.created_at)), "{stored:?}");
        let meta = store.get_web(id).unwrap().unwrap();
        assert!((now - 5..=now).contains(&meta.created_at) && meta.updated_at >= meta.created_at, "{meta:?}");
        assert_eq!(store.messages_with_meta(other).unwrap().len(), 1);
        assert!(matches!(store.messages_with_meta(999), Err(SessionError::NotFound(999))));
    });
}

#[test]
fn titles_are_set_redacted_on_one_line_and_cut_at_80() {
    each_db(|db| {
        let store = db.open();
        let long = "x".repeat(100);
        let id = store.create(&web("alice", None, &long)).unwrap();
        assert_eq!(store.get_web(id).unwrap().unwrap().title, format!("{}…", "x".repeat(79)));
        store.set_title(id, "why is\nghp_1234567890abcdefghijABCDEFGHIJ123456 failing").unwrap();
        let title = store.get_web(id).unwrap().unwrap().title;
        assert!(title.starts_with("why is ") && !title.contains("ghp_1234") && !title.contains('\n'), "{title}");
        assert!(matches!(store.set_title(999, "t"), Err(SessionError::NotFound(999))));
        // The terminal's titles stay at 60 characters.
        let terminal = store.create(&new_in("/", &long)).unwrap();
        assert_eq!(store.get(terminal).unwrap().unwrap().title.chars().count(), TITLE_CHARS);
    });
}

#[test]
fn a_first_message_names_its_conversation_in_the_same_write_and_only_when_stored() {
    each_db(|db| {
        let store = db.open();
        let id = store.create(&web("alice", None, "")).unwrap();
        let asked = ChatMessage::user("why is\nghp_1234567890abcdefghijABCDEFGHIJ123456 failing");
        store.append_naming(id, &asked, "why is ghp_1234567890abcdefghijABCDEFGHIJ123456 failing").unwrap();
        let named = store.get_web(id).unwrap().unwrap();
        assert!(named.title.starts_with("why is ") && !named.title.contains("ghp_1234"), "{named:?}");
        assert_eq!(named.message_count, 1);
        store.append(id, &ChatMessage::assistant("Because.", Vec::new())).unwrap();
        assert_eq!(store.get_web(id).unwrap().unwrap().title, named.title, "a plain append keeps the title");
        // A title given meanwhile (the page's rename) is not replaced by a message's.
        store.set_title(id, "Renamed").unwrap();
        store.append_naming(id, &asked, "a later message").unwrap();
        assert_eq!(store.get_web(id).unwrap().unwrap().title, "Renamed");
        // No conversation: nothing stored, nothing named.
        assert!(matches!(store.append_naming(999, &asked, "t"), Err(SessionError::NotFound(999))));
        assert_eq!(store.get_web(999).unwrap(), None);
    });
}

#[test]
fn a_users_conversations_come_in_pages_that_follow_each_other() {
    each_db(|db| {
        let store = db.open();
        let ids: Vec<_> = (0..5).map(|n| store.create(&web("alice", None, &format!("c{n}"))).unwrap()).collect();
        store.create(&web("bob", None, "not alice's")).unwrap();
        assert_eq!(store.count_for_user("alice").unwrap(), 5);
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let (page, next) = store.page_for_user("alice", 2, before).unwrap();
            assert!(page.len() <= 2);
            seen.extend(page.iter().map(|c| c.id));
            match next {
                Some(cursor) => before = Some(cursor.to_string().parse::<Cursor>().unwrap()),
                None => break,
            }
        }
        let all: Vec<_> = store.list_for_user("alice").unwrap().iter().map(|c| c.id).collect();
        assert_eq!(seen, all, "the pages, in order, are the whole list");
        assert_eq!(seen.len(), ids.len());
        assert!("12_x".parse::<Cursor>().is_err() && "nonsense".parse::<Cursor>().is_err());
    });
}
