//! Issue 25 "Sign-on": OpenID Connect login end to end in headless Chromium against a real
//! provider (`oidc-provider` on Node, tests/support/oidc.rs), beside the password users: the role
//! comes from the `groups` claim, a user in no allowed group is refused, and a callback that this
//! browser did not start logs nobody in.

use reqwest::StatusCode;

use super::driver::*;
use crate::support::TestEnv;
use crate::support::oidc::{self, CLIENT_ID, CLIENT_SECRET, Provider};
use crate::support::serve::{Server, add_user};

const PASSWORD: &str = "correct horse battery staple";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A users-mode server with one password user and single sign-on against `provider`.
fn server(env: &TestEnv, provider: &Provider, port: u16) -> Server {
    let users = env.opsai_home().join("users.json");
    add_user(env, &users, "alice", "operator", PASSWORD);
    Server::builder(env)
        .listen(&format!("127.0.0.1:{port}"))
        .users(&users)
        .env("OPSAI_OIDC_CLIENT_SECRET", CLIENT_SECRET)
        .arg("--oidc-issuer")
        .arg(&provider.issuer)
        .args([
            "--oidc-client-id", CLIENT_ID, "--oidc-operator", "ops", "--oidc-viewer", "dev", "--oidc-scope", "groups",
        ])
        .start()
}

/// Through the provider's own login and consent pages, as a person would.
async fn sign_in_at_the_provider(c: &fantoccini::Client, login: &str) {
    wait_for(c, "the provider's login form", "document.querySelector('input[name=login]')").await;
    type_into(c, "input[name=login]", login).await;
    type_into(c, "input[name=password]", "any password").await;
    click(c, "button[type=submit]").await;
    // The consent page, or (already consented) straight back. The login page has a submit button
    // under `/interaction` too, and stays shown while its form is posted: consent is the page
    // without the login field.
    let consent = "!document.querySelector('input[name=login]') && document.querySelector('button[type=submit]') \
                   && location.pathname.includes('interaction')";
    let back = "location.port && !location.pathname.includes('interaction') && !location.pathname.includes('auth')";
    wait_for(c, "consent or the way back", &format!("({consent}) || ({back})")).await;
    if js(c, consent).await == true {
        click(c, "button[type=submit]").await;
    }
}

/// Single sign-on from opsai's login page as `login`, through to the chat; who the page says is in.
async fn signed_in_as(c: &fantoccini::Client, login: &str) -> String {
    click(c, "#sso-login").await;
    sign_in_at_the_provider(c, login).await;
    wait_for(c, &format!("the chat after single sign-on as {login}"), "!document.getElementById('main-view').hidden")
        .await;
    let who = js(c, "document.getElementById('who').textContent").await;
    who.as_str().unwrap_or_else(|| panic!("no name shown: {who}")).to_owned()
}

/// Logs out of opsai and forgets the provider's own session (cookies are per host, not per port:
/// both servers' go), so the next login asks at the provider again.
async fn forget_the_provider_session(c: &fantoccini::Client, base: &str) {
    click(c, "#logout").await;
    wait_for(c, "the login form", "!document.getElementById('login-view').hidden").await;
    c.delete_all_cookies().await.expect("delete the cookies");
    c.goto(base).await.expect("open the page again");
    wait_for(c, "the SSO button", "!document.getElementById('sso-login').hidden").await;
}

#[test]
fn a_user_logs_in_with_single_sign_on_and_gets_the_role_of_their_group() {
    if !browser_installed() || !oidc::require() {
        return;
    }
    let port = free_port();
    let provider = Provider::start(&format!("http://127.0.0.1:{port}/api/v2/auth/sso/callback"));
    let env = TestEnv::new();
    let server = server(&env, &provider, port);
    let base = &server.base;
    // The server's log goes with a failure in the browser: a refused callback says why there.
    let browsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        with_browser(|c| async move {
            c.goto(base).await.expect("open the page");
            wait_for(&c, "the SSO button", "!document.getElementById('sso-login').hidden").await;
            assert_eq!(js(&c, "document.getElementById('login-form').hidden").await, false, "passwords still work");
            let who = signed_in_as(&c, "opsam").await;
            assert!(who.starts_with("sso:opsam.") && who.ends_with(" · operator"), "{who}");
            assert_eq!(js(&c, "location.pathname").await, "/", "back on the page, nothing in the address bar");

            forget_the_provider_session(&c, base).await;
            let who = signed_in_as(&c, "devon").await;
            assert!(who.starts_with("sso:devon.") && who.ends_with(" · viewer"), "{who}");

            forget_the_provider_session(&c, base).await;
            click(&c, "#sso-login").await;
            sign_in_at_the_provider(&c, "sally").await;
            wait_for(&c, "the refusal", "document.body.textContent.includes('may not use this server')").await;
            let page = js(&c, "document.body.textContent").await;
            assert!(
                page.as_str().unwrap().contains("sso:sally.") && page.as_str().unwrap().contains("sales"),
                "{page}"
            );
        })
    }));
    let log = server.stderr();
    if let Err(panic) = browsed {
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n");
        let what = panic.downcast_ref::<String>().map(String::as_str).or_else(|| panic.downcast_ref::<&str>().copied());
        // The failure last: a CI report shows the end of the log.
        panic!("the server's log (last 20 lines):\n{tail}\n{}", what.unwrap_or("the browser part failed"));
    }
    assert!(log.contains("single sign-on: sso:opsam.") && log.contains("logged in (operator)"), "{log}");
    assert!(!log.contains(CLIENT_SECRET), "the secret is never logged");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_callback_this_browser_did_not_start_logs_nobody_in() {
    if !oidc::require() {
        return;
    }
    let port = free_port();
    let provider = Provider::start(&format!("http://127.0.0.1:{port}/api/v2/auth/sso/callback"));
    let env = TestEnv::new();
    let server = server(&env, &provider, port);
    let client = server.client();
    let offered = client.get(server.url("/api/v2/auth/sso")).send().await.unwrap().text().await.unwrap();
    assert_eq!(offered, r#"{"enabled":true}"#);
    // Started by someone (an attacker's browser): the provider's URL and a binding cookie.
    let started = client.get(server.url("/api/v2/auth/sso/start")).send().await.unwrap();
    assert_eq!(started.status(), StatusCode::SEE_OTHER);
    let location = started.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(&provider.issuer) && location.contains("code_challenge="), "{location}");
    let state =
        reqwest::Url::parse(&location).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();
    // The victim's browser, sent the callback without the binding cookie: refused, no session.
    let callback = server.url(&format!("/api/v2/auth/sso/callback?code=stolen&state={state}"));
    let answer = client.get(&callback).send().await.unwrap();
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    let cookies: Vec<String> =
        answer.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_owned()).collect();
    assert!(!cookies.iter().any(|c| c.starts_with("opsai_session=") && !c.contains("Max-Age=0")), "{cookies:?}");
    let text = answer.text().await.unwrap();
    assert!(text.contains("not started here"), "{text}");
    // The provider's own error, with markup in it, stays text.
    let error =
        server.url("/api/v2/auth/sso/callback?error=access_denied&error_description=%3Cscript%3Ex%3C%2Fscript%3E");
    let text = client.get(&error).send().await.unwrap().text().await.unwrap();
    assert!(text.contains("access_denied") && !text.contains("script"), "only the OAuth code is shown: {text}");
    server.stop();
}

#[test]
fn an_issuer_that_cannot_be_read_stops_the_start_and_sso_is_off_without_one() {
    let env = TestEnv::new();
    let port = free_port();
    let out = env
        .cmd()
        .args(["serve", "--listen", "127.0.0.1:0", "--oidc-issuer", &format!("http://127.0.0.1:{port}")])
        .args(["--oidc-client-id", "opsai", "--oidc-viewer", "*"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("could not be read") && stderr.contains("--oidc-issuer"), "{stderr}");
    let out = env.cmd().args(["serve", "--oidc-issuer", "http://127.0.0.1:1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "an issuer needs a client id: {}", String::from_utf8_lossy(&out.stderr));
    let nobody = ["serve", "--listen", "127.0.0.1:0", "--oidc-issuer", "http://127.0.0.1:1", "--oidc-client-id", "x"];
    let out = env.cmd().args(nobody).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nobody would get in"), "SSO lets nobody in by default");
}
