use std::sync::Arc;

use futures_util::StreamExt;
use serde_json::json;

use super::*;
use crate::testing::postgres::PgServer;

async fn replica(server: &PgServer, db: &str) -> Arc<Replicas> {
    Replicas::start(DatabaseUrl::parse(&server.url(db)).unwrap()).await.unwrap()
}

/// The sessions store's tables in database `db`, with a conversation of `user`'s under each id
/// (a claim checks the owner).
fn conversations(server: &PgServer, db: &str, owned: &[(i64, &str)]) {
    tokio::task::block_in_place(|| {
        let url = DatabaseUrl::parse(&server.url(db)).unwrap();
        crate::store::sessions::SessionStore::open_database(&url, Arc::new(crate::redact::Redactor::default()))
            .unwrap();
        let mut client = postgres::Client::connect(&server.url(db), postgres::NoTls).unwrap();
        for (id, user) in owned {
            client
                .execute(
                    "INSERT INTO conversations \
                     (id, title, cwd, host, model, created_at, updated_at, user_id, cluster_id, hosts) \
                     OVERRIDING SYSTEM VALUE VALUES ($1, '', '/', 'web', 'm', 0, 0, $2, NULL, NULL)",
                    &[id, user],
                )
                .unwrap();
        }
    });
}

/// Anywhere: no cluster or host set configured.
const ANYWHERE: Usable<'static> = Usable { clusters: &[], host_sets: &[] };

/// Whether `user`'s claim of `conversation` was made.
async fn claimed(replicas: &Replicas, conversation: i64, user: &str, claim: &Arc<str>) -> bool {
    replicas.claim(conversation, user, claim, ANYWHERE).await.unwrap().is_some_and(|found| found.claimed)
}

/// The data of every event a stream gives.
async fn datas(
    stream: impl futures_util::Stream<Item = Result<axum::response::sse::Event, std::convert::Infallible>>,
) -> Vec<String> {
    let events: Vec<_> = tokio::time::timeout(Duration::from_secs(20), stream.collect::<Vec<_>>()).await.unwrap();
    events.into_iter().map(|event| format!("{:?}", event.unwrap())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_login_on_one_replica_is_one_on_the_other_and_a_logout_ends_it_on_both() {
    let Some(server) = PgServer::start() else { return };
    tokio::task::block_in_place(|| server.database("r"));
    let (a, b) = (replica(&server, "r").await, replica(&server, "r").await);
    let login = StoredLogin {
        user: "alice".into(),
        role: crate::cli::ServeRole::Operator,
        credential: Some(u64::MAX - 3),
        sso: false,
        csrf: "c".into(),
        opened_ms: crate::store::unix_ms(),
    };
    a.open_login(LoginKind::Session, "tok-1", &login).await.unwrap();
    let seen = b.login(LoginKind::Session, "tok-1", 0).await.unwrap().unwrap();
    assert_eq!((seen.user.as_str(), seen.credential, seen.csrf.as_str()), ("alice", Some(u64::MAX - 3), "c"));
    assert!(b.login(LoginKind::Token, "tok-1", 0).await.unwrap().is_none(), "a session is no API token");
    assert!(
        b.login(LoginKind::Session, "tok-1", crate::store::unix_ms() + 1000).await.unwrap().is_none(),
        "idle past the cutoff"
    );
    let stored: String =
        a.client().await.unwrap().query_one("SELECT token_hash FROM web_logins", &[]).await.unwrap().get(0);
    assert!(!stored.contains("tok-1"), "only a hash is kept");
    b.close_login("tok-1").await.unwrap();
    assert!(a.login(LoginKind::Session, "tok-1", 0).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_turn_per_conversation_across_replicas_and_a_reader_elsewhere_sees_every_event_in_order() {
    let Some(server) = PgServer::start() else { return };
    tokio::task::block_in_place(|| server.database("r"));
    conversations(&server, "r", &[(7, "alice")]);
    let (a, b) = (replica(&server, "r").await, replica(&server, "r").await);
    let (first, second, third): (Arc<str>, Arc<str>, Arc<str>) = ("claim-1".into(), "claim-2".into(), "claim-3".into());
    assert!(claimed(&a, 7, "alice", &first).await);
    assert!(!claimed(&b, 7, "alice", &second).await, "busy on the other replica");
    assert!(!claimed(&a, 7, "alice", &third).await, "busy here too");
    assert_eq!(b.running(7).await.unwrap().as_deref(), Some(a.id.as_str()));
    a.event(7, &first, 0, json!({"type": "start"}).to_string().into());
    a.event(7, &first, 1, json!({"type": "token", "content": "hi"}).to_string().into());
    // A write under another claim (a turn the others already ended) changes nothing.
    a.event(7, &second, 2, json!({"type": "token", "content": "stale"}).to_string().into());
    let follower = tokio::spawn(datas(b.clone().follow(7)));
    // The last event and the release in one write: once it returns, the next claim succeeds.
    a.finish(7, &first, 2, json!({"type": "done", "outcome": "answer"}).to_string().into()).await;
    let seen = follower.await.unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen[0].contains("start") && seen[1].contains("hi") && seen[2].contains("done"), "{seen:?}");
    assert!(claimed(&b, 7, "alice", &second).await, "taken at once after the finish");
    let (events, running) = b.events_after(7, 0).await.unwrap();
    assert!(
        events.is_empty() && running.as_deref() == Some("claim-2"),
        "the old turn's events went with the new claim"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_is_made_only_on_the_callers_conversation_usable_here_and_says_what_it_found() {
    let Some(server) = PgServer::start() else { return };
    tokio::task::block_in_place(|| server.database("c"));
    conversations(&server, "c", &[(1, "alice"), (2, "bob"), (3, "alice"), (4, "alice")]);
    let a = replica(&server, "c").await;
    let client = a.client().await.unwrap();
    client
        .batch_execute(
            "UPDATE conversations SET title = 'disk' WHERE id = 1;
             UPDATE conversations SET cluster_id = 'staging' WHERE id = 3;
             UPDATE conversations SET hosts = 'web-*' WHERE id = 4;",
        )
        .await
        .unwrap();
    let rows = || async { client.query_one("SELECT count(*) FROM web_turns", &[]).await.unwrap().get::<_, i64>(0) };
    let claim: Arc<str> = "k".into();

    assert!(a.claim(2, "alice", &claim, ANYWHERE).await.unwrap().is_none(), "another's is not found");
    assert!(a.claim(99, "alice", &claim, ANYWHERE).await.unwrap().is_none(), "as one that does not exist");
    assert_eq!(rows().await, 0, "and nothing is claimed");

    let (staging, prod, fleet) = (vec!["staging".to_owned()], vec!["prod".to_owned()], vec!["web-*".to_owned()]);
    let found = a.claim(3, "alice", &claim, Usable { clusters: &prod, host_sets: &[] }).await.unwrap().unwrap();
    assert_eq!((found.cluster.as_deref(), found.claimed), (Some("staging"), false), "its cluster is gone: {found:?}");
    let found = a.claim(4, "alice", &claim, ANYWHERE).await.unwrap().unwrap();
    assert_eq!((found.hosts.as_deref(), found.claimed), (Some("web-*"), false), "its host set is gone: {found:?}");
    assert_eq!(rows().await, 0, "an unusable conversation is not claimed");
    assert!(!a.lock_claims().contains(&claim), "nor kept alive by the heartbeat");

    for (id, usable) in
        [(3, Usable { clusters: &staging, host_sets: &[] }), (4, Usable { clusters: &[], host_sets: &fleet })]
    {
        let found = a.claim(id, "alice", &format!("k{id}").into(), usable).await.unwrap().unwrap();
        assert!(found.claimed, "{id}: {found:?}");
    }
    let found = a.claim(1, "alice", &claim, ANYWHERE).await.unwrap().unwrap();
    assert_eq!((found.title.as_str(), found.claimed), ("disk", true), "{found:?}");
    let again = a.claim(1, "alice", &"k2".into(), ANYWHERE).await.unwrap().unwrap();
    assert!(!again.claimed, "busy");
    assert_eq!(rows().await, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gone_replicas_turn_ends_interrupted_for_its_readers_and_takes_a_new_message() {
    let Some(server) = PgServer::start() else { return };
    tokio::task::block_in_place(|| server.database("r"));
    conversations(&server, "r", &[(9, "alice")]);
    let (a, b) = (replica(&server, "r").await, replica(&server, "r").await);
    // A replica that stopped saying it is alive long ago, mid-turn, with an approval waiting.
    // In one transaction: the replicas' own heartbeats reap too, and must see all of it or none.
    let client = a.client().await.unwrap();
    let old = crate::store::unix_ms() - 60_000;
    client
        .batch_execute(&format!(
            "BEGIN;
             INSERT INTO web_replicas (id, seen_ms) VALUES ('gone', {old});
             INSERT INTO web_turns (conversation, replica, claim, owner, started_ms) VALUES (9, 'gone', 'k', 'alice', {old});
             INSERT INTO web_turn_events (conversation, seq, data) VALUES (9, 0, '{{\"type\":\"start\"}}');
             INSERT INTO web_pendings (request_id, replica, conversation, call_id, owner, request, since)
                 VALUES ('r1', 'gone', 9, 'c1', 'alice', '{{}}', 0);
             COMMIT;"
        ))
        .await
        .unwrap();
    let follower = tokio::spawn(datas(b.clone().follow(9)));
    a.reap().await.unwrap();
    let seen = follower.await.unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen[1].contains("interrupted") && seen[2].contains("\\\"outcome\\\":\\\"interrupted\\\""), "{seen:?}");
    assert!(b.queue().await.unwrap().is_empty(), "its approvals went with it");
    assert!(claimed(&b, 9, "alice", &"claim-9".into()).await, "a new message is taken");
    // A live replica's turn is left alone.
    a.reap().await.unwrap();
    assert_eq!(a.running(9).await.unwrap().as_deref(), Some(b.id.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_approvals_are_one_queue_for_every_replica() {
    let Some(server) = PgServer::start() else { return };
    tokio::task::block_in_place(|| server.database("r"));
    let (a, b) = (replica(&server, "r").await, replica(&server, "r").await);
    a.pending_added("r-a", 1, "c1", "alice", &json!({"request_id": "r-a", "command": "touch x"}), 10);
    b.pending_added("r-b", 2, "c1", "bob", &json!({"request_id": "r-b", "command": "touch y"}), 5);
    a.leave().await;
    b.leave().await;
    let queue = a.queue().await.unwrap();
    let order: Vec<_> = queue
        .iter()
        .map(|entry| (entry["request_id"].as_str().unwrap(), entry["asked_by"].as_str().unwrap()))
        .collect();
    assert_eq!(order, [("r-b", "bob"), ("r-a", "alice")]);
    b.pending_gone("r-b");
    b.leave().await;
    assert_eq!(a.queue().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_sign_on_login_started_on_one_replica_finishes_once_on_the_other_from_its_browser_only() {
    let Some(server) = PgServer::start() else { return };
    tokio::task::block_in_place(|| server.database("r"));
    let (a, b) = (replica(&server, "r").await, replica(&server, "r").await);
    let hour = Duration::from_secs(3600);
    a.sso_put("state-1", "verifier-1", "nonce-1", "browser-1").await.unwrap();
    assert_eq!(b.sso_take("state-1", "another browser", hour).await.unwrap(), None);
    let taken = b.sso_take("state-1", "browser-1", hour).await.unwrap();
    assert_eq!(taken, Some(("verifier-1".to_owned(), "nonce-1".to_owned())), "another browser cancelled nothing");
    assert_eq!(a.sso_take("state-1", "browser-1", hour).await.unwrap(), None, "a login finishes once");
    a.sso_put("state-2", "v", "n", "browser-2").await.unwrap();
    assert_eq!(b.sso_take("state-2", "browser-2", Duration::ZERO).await.unwrap(), None, "too old");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_is_parsed_once_per_connection_and_requests_spread_over_the_connections() {
    let Some(server) = PgServer::start() else { return };
    tokio::task::block_in_place(|| server.database("p"));
    let a = replica(&server, "p").await;
    // Per backend, the name its prepared copy of this very query has: one name for every call
    // (prepared once and reused), where a statement prepared per call gets a new name each time.
    let mut names: HashMap<i32, std::collections::HashSet<String>> = HashMap::new();
    for _ in 0..3 * CONNECTIONS {
        let conn = a.client().await.unwrap();
        let row = conn
            .query_one(
                "SELECT pg_backend_pid(), (SELECT string_agg(name, ',') FROM pg_prepared_statements
                 WHERE statement LIKE 'SELECT pg_backend_pid(), (SELECT string_agg(name%')",
                &[],
            )
            .await
            .unwrap();
        names.entry(row.get(0)).or_default().insert(row.get(1));
    }
    assert_eq!(names.len(), CONNECTIONS, "requests at once do not queue behind one connection: {names:?}");
    assert!(names.values().all(|seen| seen.len() == 1), "prepared once per connection: {names:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_kept_on_one_replica_are_the_next_turns_on_another_while_the_turn_held_its_claim() {
    let Some(server) = PgServer::start() else { return };
    tokio::task::block_in_place(|| server.database("g"));
    conversations(&server, "g", &[(7, "alice")]);
    let (a, b) = (replica(&server, "g").await, replica(&server, "g").await);
    let claim: Arc<str> = "claim-1".into();
    assert!(claimed(&a, 7, "alice", &claim).await);
    let given = std::collections::HashSet::from(["run_command:touch".to_owned(), "run_command:rm".to_owned()]);
    a.keep_grants(7, "alice", Some(9), &claim, &given).await.unwrap();
    assert_eq!(b.grants(7, "alice", Some(9)).await.unwrap(), given, "the next turn, on the other replica");
    assert!(b.grants(7, "bob", Some(9)).await.unwrap().is_empty(), "an operator's own");
    assert!(b.grants(7, "alice", Some(10)).await.unwrap().is_empty(), "given under her old password");
    let fewer = std::collections::HashSet::from(["run_command:touch".to_owned()]);
    a.keep_grants(7, "alice", Some(9), &claim, &fewer).await.unwrap();
    assert_eq!(b.grants(7, "alice", Some(9)).await.unwrap(), fewer, "replaced, not added to");
    // The conversation deleted (on the other replica) while the turn still runs: its grants go,
    // and the turn, no longer holding a claim, keeps nothing after.
    b.forget_conversation(7).await.unwrap();
    assert!(a.grants(7, "alice", Some(9)).await.unwrap().is_empty(), "a deleted conversation's grants go");
    a.keep_grants(7, "alice", Some(9), &claim, &given).await.unwrap();
    assert!(b.grants(7, "alice", Some(9)).await.unwrap().is_empty(), "kept by a turn without its claim");
}
