use super::*;

#[test]
fn a_single_sign_on_session_ends_at_its_lifetime_however_busy_and_a_password_one_only_when_idle() {
    let opened = Instant::now();
    let session = |sso: bool| Session {
        principal: Principal { user: "u".into(), role: ServeRole::Operator, credential: None, sso },
        csrf: String::new(),
        last_seen: opened + SSO_LIFETIME,
        opened,
    };
    let later = opened + SSO_LIFETIME + Duration::from_secs(1);
    assert!(!session(true).alive_at(later), "used a second ago, opened 8 h ago: over");
    assert!(session(false).alive_at(later), "a password session lives while it is used");
    assert!(session(true).alive_at(opened + Duration::from_secs(3600)));
    assert!(!session(false).alive_at(opened + SSO_LIFETIME + IDLE), "idle for 12 h: over");
}
