use super::*;
use serde_json::json;

fn sso(operators: &[&str], viewers: &[&str]) -> Sso {
    let config = SsoConfig {
        issuer: "http://idp.test".into(),
        client_id: "opsai".into(),
        client_secret: None,
        redirect_url: "http://127.0.0.1:8765/api/v2/auth/sso/callback".into(),
        role_claim: "groups".into(),
        operators: operators.iter().map(|s| (*s).to_owned()).collect(),
        viewers: viewers.iter().map(|s| (*s).to_owned()).collect(),
        scopes: vec!["groups".into()],
    };
    let discovery = Discovery {
        issuer: "http://idp.test".into(),
        authorization_endpoint: "http://idp.test/auth".into(),
        token_endpoint: "http://idp.test/token".into(),
        jwks_uri: "http://idp.test/jwks".into(),
    };
    Sso {
        config,
        discovery,
        authorize: reqwest::Url::parse("http://idp.test/auth").unwrap(),
        keys: Mutex::new(JwkSet { keys: vec![] }),
        pending: Mutex::default(),
        starts: crate::modes::serve::throttle::Throttle::new(Duration::from_secs(60)),
        http: reqwest::Client::new(),
        shared: std::sync::OnceLock::new(),
    }
}

#[test]
fn the_role_comes_from_the_claim_and_a_user_outside_every_group_is_refused() {
    let sso = sso(&["ops"], &["dev"]);
    let alice = sso.principal(&json!({"sub": "1", "preferred_username": "alice", "groups": ["dev", "ops"]})).unwrap();
    assert!(alice.user.starts_with("sso:alice.") && alice.user.len() == "sso:alice.".len() + 12, "{}", alice.user);
    assert_eq!((alice.role, alice.sso), (ServeRole::Operator, true));
    let bob = sso.principal(&json!({"sub": "2", "email": "bob@example.com", "groups": "dev"})).unwrap();
    assert!(bob.user.starts_with("sso:bob@example.com.") && bob.role == ServeRole::Viewer, "{}", bob.user);
    let eve = sso.principal(&json!({"sub": "3", "preferred_username": "eve", "groups": ["sales"]})).err().unwrap();
    assert!(eve.to_string().contains("sso:eve.") && eve.to_string().contains("sales"), "{eve}");
    // The same name from another subject is another user: a reused name takes nothing over.
    let other = sso.principal(&json!({"sub": "9", "preferred_username": "alice", "groups": ["ops"]})).unwrap();
    assert_ne!(other.user, alice.user);
    let again = sso.principal(&json!({"sub": "1", "preferred_username": "alice", "groups": ["ops"]})).unwrap();
    assert_eq!(again.user, alice.user, "stable for one subject");
    let open = super::tests::sso(&["ops"], &["*"]);
    assert_eq!(open.principal(&json!({"sub": "4"})).unwrap().role, ServeRole::Viewer, "`*`: everyone");
    assert!(open.principal(&json!({"preferred_username": "x"})).is_err(), "no subject, no user");
    let hostile = open.principal(&json!({"sub": "x", "preferred_username": "a\u{202e}b c;rm\n"})).unwrap();
    assert!(hostile.user.starts_with("sso:user."), "a name with other characters is not shown: {}", hostile.user);
    assert_eq!(scope(&["groups".into(), "email groups".into()]), "openid profile email groups");
}

#[test]
fn a_login_starts_with_pkce_and_only_the_browser_that_started_it_may_finish_it() {
    let sso = sso(&["ops"], &[]);
    let client = std::net::IpAddr::from([192, 0, 2, 1]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let started = runtime.block_on(sso.start(client)).unwrap();
    for _ in 1..STARTS_PER_ADDRESS {
        runtime.block_on(sso.start(client)).unwrap();
    }
    assert!(runtime.block_on(sso.start(client)).is_err(), "a flood from one address is stopped");
    assert!(runtime.block_on(sso.start(std::net::IpAddr::from([192, 0, 2, 2]))).is_ok(), "others still start");
    let url = reqwest::Url::parse(&started.location).unwrap();
    let query: HashMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(query["response_type"], "code");
    assert_eq!(query["code_challenge_method"], "S256");
    assert_eq!(query["redirect_uri"], "http://127.0.0.1:8765/api/v2/auth/sso/callback");
    let pending = sso.pending.lock().unwrap();
    let login = &pending[&query["state"]];
    assert_eq!(query["code_challenge"], base64url(&sha2::Sha256::digest(login.verifier.as_bytes())));
    assert_eq!((query["nonce"].as_str(), login.binding.as_str()), (login.nonce.as_str(), started.binding.as_str()));
    drop(pending);
    let wrong = runtime.block_on(sso.finish("code", &query["state"], Some("another browser")));
    assert!(matches!(wrong, Err(SsoError::UnknownLogin)));
    assert!(sso.pending.lock().unwrap().contains_key(&query["state"]), "another browser cannot cancel it");
    // The right browser: the code goes to the token endpoint (unreachable here: refused).
    let ours = runtime.block_on(sso.finish("code", &query["state"], Some(&started.binding)));
    assert!(matches!(ours, Err(SsoError::Refused(_))), "{:?}", ours.err());
    let again = runtime.block_on(sso.finish("code", &query["state"], Some(&started.binding)));
    assert!(matches!(again, Err(SsoError::UnknownLogin)), "a state is used once, whatever happened");
}
