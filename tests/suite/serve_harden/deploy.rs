//! Running it for real: one server per home (a second is refused, naming the first), the session
//! cookie's `Secure` behind a TLS proxy or on request, and `/healthz` for a load balancer.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::alice_file;
use crate::support::TestEnv;
use crate::support::serve::*;

#[test]
fn a_second_server_on_the_same_home_is_refused_naming_the_first() {
    let env = TestEnv::new();
    let first = Server::builder(&env).start();
    let mut second = env
        .std_cmd()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("OPSAI_SANDBOX", "off")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = second.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = second.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = second.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.and_then(|s| s.code()), Some(1), "the second server kept running: {stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).is_empty(), "no URL printed");
    let port = first.base.rsplit(':').next().unwrap();
    assert!(stderr.contains("another opsai serve (pid ") && stderr.contains(&format!(":{port})")), "{stderr}");
    assert!(stderr.contains("OPSAI_HOME"), "{stderr}");
    first.stop();
    // Once the first is gone, the home is free again.
    Server::builder(&env).start().stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_cookie_is_secure_over_https_through_the_proxy_or_when_asked() {
    let env = TestEnv::new();
    let server = Server::builder(&env).arg("--public-host").arg("chat.example").start();
    let token = server.token.clone().unwrap();
    let open = |host: &str, proto: Option<&str>| {
        let mut request = server.client().get(server.url(&format!("/?token={token}"))).header("Host", host);
        if let Some(proto) = proto {
            request = request.header("X-Forwarded-Proto", proto);
        }
        request.send()
    };
    let cookie = |response: &reqwest::Response| response.headers()["set-cookie"].to_str().unwrap().to_owned();
    let direct = address(&server);
    let proxied = within(open("chat.example", Some("https"))).await.unwrap();
    assert_eq!(proxied.status(), StatusCode::SEE_OTHER);
    assert!(cookie(&proxied).contains("; Secure"), "{}", cookie(&proxied));
    let plain = within(open("chat.example", Some("http"))).await.unwrap();
    assert!(!cookie(&plain).contains("Secure"), "{}", cookie(&plain));
    // A client reaching the port directly cannot make its own cookie Secure by claiming https.
    let forged = within(open(&direct, Some("https"))).await.unwrap();
    assert!(!cookie(&forged).contains("Secure"), "{}", cookie(&forged));
    let forwarded = server
        .client()
        .get(server.url(&format!("/?token={token}")))
        .header("Host", "chat.example")
        .header("Forwarded", "for=10.0.0.9;proto=https;host=chat.example");
    assert!(cookie(&within(forwarded.send()).await.unwrap()).contains("; Secure"));
    server.stop();

    let env = TestEnv::new();
    let file = alice_file(&env);
    let server = Server::builder(&env).users(&file).arg("--secure-cookies").start();
    let login = server.post_credentials("/api/v2/auth/login", "alice", "alice-password").await;
    assert!(cookie(&login).contains("; Secure"), "{}", cookie(&login));
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn healthz_answers_a_load_balancer_without_login_or_data() {
    let env = TestEnv::new();
    let file = alice_file(&env);
    let server = Server::builder(&env).users(&file).start();
    for host in [address(&server), "lb-check.internal".to_owned()] {
        let response = within(server.client().get(server.url("/healthz")).header("Host", host.clone()).send());
        let response = response.await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{host}");
        assert_eq!(response.headers()["cache-control"], "no-store");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body, json!({"status": "ok"}), "nothing but the status");
    }
    // Everything else still needs a login and this server's name.
    let me = within(server.client().get(server.url("/api/v2/auth/me")).send()).await.unwrap();
    assert_eq!(me.status(), StatusCode::UNAUTHORIZED);
    server.stop();
}

fn address(server: &Server) -> String {
    server.base.trim_start_matches("http://").to_owned()
}
