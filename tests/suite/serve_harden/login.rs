//! Logins under attack: a stranger failing for a name does not lock its owner out, many failed
//! checks do not grow the server's memory, and a hostile page's token requests neither count nor
//! lock the owner out of the token URL.

use reqwest::StatusCode;
use serde_json::json;

use super::alice_file;
use super::client_from;
use crate::support::TestEnv;
use crate::support::serve::*;

async fn login_from(server: &Server, source: &str, name: &str, password: &str) -> StatusCode {
    let request = client_from(source)
        .post(server.url("/api/v2/auth/login"))
        .json(&json!({"username": name, "password": password}));
    within(request.send()).await.unwrap().status()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stranger_failing_for_a_name_does_not_lock_its_owner_out() {
    let env = TestEnv::new();
    let file = alice_file(&env);
    let server = Server::builder(&env).users(&file).start();
    let mut answers = Vec::new();
    for _ in 0..12 {
        answers.push(login_from(&server, "127.0.0.2", "alice", "wrong-password").await);
    }
    assert_eq!(answers.iter().filter(|s| **s == StatusCode::UNAUTHORIZED).count(), 5, "{answers:?}");
    assert!(answers[5..].iter().all(|s| *s == StatusCode::TOO_MANY_REQUESTS), "{answers:?}");
    assert_eq!(
        login_from(&server, "127.0.0.2", "alice", "alice-password").await,
        StatusCode::TOO_MANY_REQUESTS,
        "the failing address waits"
    );
    // Many addresses guessing the one name: each one that failed waits once the name has had
    // enough, and alice's own address, which has not been failing, logs in.
    for n in 3..12 {
        login_from(&server, &format!("127.0.0.{n}"), "alice", "wrong-password").await;
    }
    assert_eq!(login_from(&server, "127.0.0.11", "alice", "alice-password").await, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(login_from(&server, "127.0.0.1", "alice", "alice-password").await, StatusCode::OK);
    assert_eq!(login_from(&server, "127.0.0.50", "alice", "alice-password").await, StatusCode::OK);
    // One address trying many names is limited as an address.
    let mut limited = false;
    for n in 0..25 {
        if login_from(&server, "127.0.0.60", &format!("name{n}"), "wrong-password").await
            == StatusCode::TOO_MANY_REQUESTS
        {
            limited = n >= 20;
            break;
        }
    }
    assert!(limited, "20 failures from one address for different names then 429");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_logins_do_not_grow_the_servers_memory() {
    let env = TestEnv::new();
    let file = alice_file(&env);
    let server = Server::builder(&env).users(&file).start();
    let pid = server.pid();
    let rss = || {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap().to_owned();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() / 1024
    };
    // Warm: the kept buffers and the unknown names' hash exist after the first checks.
    for n in 0..4 {
        login_from(&server, &format!("127.0.1.{n}"), &format!("warm{n}"), "wrong-password").await;
    }
    let before = rss();
    // 200 checks, 16 at once, each from its own address and for its own name (no throttle).
    let attempts = (0..200).map(|n| {
        let server = &server;
        async move { login_from(server, &format!("127.0.2.{n}"), &format!("user{n}"), "wrong-password").await }
    });
    let mut statuses = Vec::new();
    let mut attempts = futures_util::stream::iter(attempts).buffer_unordered(16);
    use futures_util::StreamExt;
    while let Some(status) = attempts.next().await {
        statuses.push(status);
    }
    drop(attempts);
    assert!(statuses.iter().all(|s| *s == StatusCode::UNAUTHORIZED), "{statuses:?}");
    let after = rss();
    // Before the fix each check could keep its 19 MiB: hundreds of MiB after 200.
    assert!(after < before + 64, "RSS grew from {before} MiB to {after} MiB over 200 failed logins");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_pages_token_requests_neither_count_nor_lock_the_owner_out() {
    let env = TestEnv::new();
    let server = Server::builder(&env).start();
    let token = server.token.clone().unwrap();
    let client = server.client();
    // What `<img src="http://127.0.0.1:PORT/?token=guess">` on another site sends.
    let image = |token: &str| {
        client
            .get(server.url(&format!("/?token={token}")))
            .header("Sec-Fetch-Site", "cross-site")
            .header("Sec-Fetch-Mode", "no-cors")
            .header("Sec-Fetch-Dest", "image")
            .header("Referer", "https://evil.example/")
    };
    for _ in 0..30 {
        assert_eq!(within(image("wrong").send()).await.unwrap().status(), StatusCode::FORBIDDEN);
    }
    let right_from_elsewhere = within(image(&token).send()).await.unwrap();
    assert_eq!(right_from_elsewhere.status(), StatusCode::FORBIDDEN, "no login from another site's page");
    assert!(session_cookie(&right_from_elsewhere).is_none());
    // The owner opens the printed URL in the address bar.
    let opened = client
        .get(server.url(&format!("/?token={token}")))
        .header("Sec-Fetch-Site", "none")
        .header("Sec-Fetch-Mode", "navigate")
        .header("Sec-Fetch-Dest", "document");
    let opened = within(opened.send()).await.unwrap();
    assert_eq!(opened.status(), StatusCode::SEE_OTHER);
    assert!(session_cookie(&opened).is_some());
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn behind_a_trusted_proxy_each_client_is_limited_by_its_own_address() {
    let env = TestEnv::new();
    let file = alice_file(&env);
    // Every request comes from 127.0.0.1, as through a reverse proxy on this machine.
    let server = Server::builder(&env).users(&file).args(["--trusted-proxy", "127.0.0.1"]).start();
    let via_proxy = |client: &str, password: &str| {
        let request = server
            .client()
            .post(server.url("/api/v2/auth/login"))
            .header("X-Forwarded-For", format!("6.6.6.6, {client}"))
            .json(&json!({"username": "alice", "password": password}));
        async move { within(request.send()).await.unwrap().status() }
    };
    for _ in 0..25 {
        via_proxy("203.0.113.5", "wrong-password").await;
    }
    assert_eq!(via_proxy("203.0.113.5", "alice-password").await, StatusCode::TOO_MANY_REQUESTS, "the stranger waits");
    assert_eq!(via_proxy("198.51.100.7", "alice-password").await, StatusCode::OK, "alice, through the same proxy");
    server.stop();
}
