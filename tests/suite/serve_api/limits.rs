//! What bounds a caller: logins in parallel, a turn's output, turns per user, credentials that
//! changed, the Host a request names, guessed tokens.

use reqwest::StatusCode;

use super::two_users;
use crate::support::TestEnv;
use crate::support::serve::*;

#[tokio::test(flavor = "multi_thread")]
async fn parallel_wrong_logins_are_limited_like_sequential_ones() {
    let env = TestEnv::new();
    let file = two_users(&env);
    let server = Server::builder(&env).users(&file).start();
    let attempts = (0..20).map(|_| server.post_credentials("/api/v2/auth/login", "alice", "wrong-password"));
    let answers = futures_util::future::join_all(attempts).await;
    let statuses: Vec<StatusCode> = answers.iter().map(reqwest::Response::status).collect();
    let checked = statuses.iter().filter(|s| **s == StatusCode::UNAUTHORIZED).count();
    assert!((1..=5).contains(&checked), "{statuses:?}");
    assert_eq!(checked + statuses.iter().filter(|s| **s == StatusCode::TOO_MANY_REQUESTS).count(), 20);
    assert!(answers.iter().filter(|a| a.status() == 429).all(|a| a.headers().contains_key("retry-after")));
    server.stop();
}
