//! `opsai serve --database postgres://…` (issue 25): a wrong or unreachable database stops the
//! start with a word that names it without its password, and servers with different homes on one
//! database show the same conversations. (The conversation routes on both back ends are the
//! `Storage::each` tests in serve_api and serve_harden.)

use reqwest::StatusCode;
use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::serve::*;

#[test]
fn a_bad_or_unreachable_database_stops_the_start_and_says_which_without_the_password() {
    let env = TestEnv::new();
    let start = |url: &str| {
        env.cmd().args(["serve", "--listen", "127.0.0.1:0"]).env("OPSAI_DATABASE_URL", url).output().unwrap()
    };

    let bad = start("mysql://ops:s3cret@db.example/opsai");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(stderr.contains("--database: `mysql://ops:***@db.example/opsai` is not a Postgres URL"), "{stderr}");
    assert!(!stderr.contains("s3cret") && bad.stdout.is_empty(), "{bad:?}");

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let unreachable = start(&format!("postgres://ops:s3cret@127.0.0.1:{port}/opsai"));
    let stderr = String::from_utf8_lossy(&unreachable.stderr);
    assert_eq!(unreachable.status.code(), Some(1), "{unreachable:?}");
    let said = format!("cannot connect to the database postgres://ops:***@127.0.0.1:{port}/opsai");
    assert!(stderr.contains(&said) && stderr.contains("check that it runs"), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
    assert!(unreachable.stdout.is_empty(), "no URL is printed: nothing was started");

    // Nothing was left behind: the same home serves at once.
    Server::builder(&env).start().stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_with_different_homes_on_one_database_show_the_same_conversations() {
    let Some(storage) = Storage::postgres() else { return };
    let token = "one-token-for-both-servers-0123456789";
    let (home_a, home_b) = (TestEnv::new(), TestEnv::new());
    let mock = MockLlm::start([reply_text("Disk is 40% full.")]);
    let a = Server::builder(&home_a).mock(&mock).env("OPSAI_SERVE_TOKEN", token).storage(&storage).start();
    let b = Server::builder(&home_b).mock(&mock).env("OPSAI_SERVE_TOKEN", token).storage(&storage).start();
    assert!(a.stderr().contains("conversations are kept in postgres://opsai@127.0.0.1:"), "{}", a.stderr());
    let (api_a, api_b) = (a.api(), b.api());

    let first = api_a.create(json!({"title": "disk"})).await["id"].as_i64().unwrap();
    let events = api_a.chat(first, "how full is the disk?").await.collect().await;
    assert_eq!(events.last().unwrap()["type"], "done", "{events:#?}");
    let second = api_b.create(json!({"title": "made on b"})).await["id"].as_i64().unwrap();
    assert!(second > first, "ids increase across servers");

    let (status, list) = api_b.list().await;
    assert_eq!(status, StatusCode::OK);
    let listed: Vec<(i64, i64)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_i64().unwrap(), c["message_count"].as_i64().unwrap()))
        .collect();
    assert_eq!(listed, [(second, 0), (first, 2)], "{list}");
    let (_, messages) = api_b.messages(first).await;
    let contents: Vec<&str> = messages.as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(contents, ["how full is the disk?", "Disk is 40% full."]);

    assert_eq!(api_b.delete(first).await, StatusCode::NO_CONTENT);
    assert_eq!(api_a.messages(first).await.0, StatusCode::NOT_FOUND);
    a.stop();
    b.stop();
    // Neither home has a sessions.db: the conversations were only ever in the database.
    for home in [&home_a, &home_b] {
        assert!(!home.opsai_home().join("sessions.db").exists());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn on_postgres_a_user_sees_only_their_own_conversations() {
    let Some(storage) = Storage::postgres() else { return };
    let env = TestEnv::new();
    let file = env.opsai_home().join("users.json");
    add_user(&env, &file, "alice", "operator", "alice-password");
    add_user(&env, &file, "bob", "viewer", "bob-password");
    let mock = MockLlm::start([reply_text("hello alice")]);
    let server = Server::builder(&env).mock(&mock).users(&file).storage(&storage).start();
    let alice = server.login("alice", "alice-password").await;
    let bob = server.api_token("bob", "bob-password").await;
    let id = alice.new_conversation().await;
    alice.chat(id, "hi").await.collect().await;
    assert_eq!(bob.messages(id).await.0, StatusCode::NOT_FOUND);
    assert_eq!(bob.delete(id).await, StatusCode::NOT_FOUND);
    assert_eq!(bob.list().await.1, json!([]));
    let (_, mine) = alice.list().await;
    assert_eq!((mine[0]["id"].as_i64(), mine[0]["user_id"].as_str()), (Some(id), Some("alice")), "{mine}");
    server.stop();
}
