//! Issue 23: the API key from `llm.api_key_env`, `llm.api_key_cmd` and the OS keyring reaches the
//! endpoint's Authorization header, and never the audit log, the session store or the request
//! bodies; `config show`/`get` say where it comes from without printing it.

use std::path::Path;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

/// Not a provider's shape, so only the learned value (not a token pattern) can redact it.
const KEY: &str = "zq7-opsai-test-key-4f9a8b7c6d5e";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every file under `dir`, as bytes.
fn all_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(all_files(&path));
        } else {
            out.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

fn assert_nowhere_in(dir: &Path, secret: &str) {
    for (path, bytes) in all_files(dir) {
        assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "the key is in {path}");
    }
}

/// A one-shot whose model echoes the key in a command and in its answer; checks the header and
/// that the key is stored nowhere and sent in no body. (The terminal shows the model's command as
/// it is, key and all: what runs is what was shown.) `extra` sets the child's environment.
fn run_and_check(env: &TestEnv, mock: &MockLlm, extra: &[(&str, &str)]) {
    set_base_url(env, &mock.base_url());
    let mut cmd = env.cmd();
    cmd.args(["--dry-run", "print the key"]);
    for (name, value) in extra {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let chats = mock.chat_requests();
    assert!(!chats.is_empty());
    for chat in &chats {
        assert_eq!(chat.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    }
    mock.assert_never_sent(KEY);
    assert!(env.opsai_home().join("audit.log").exists(), "the run was audited");
    assert_nowhere_in(env.opsai_home(), KEY);
}

/// Points the file at `url`. The endpoint must be the file's own: a key is never sent to an
/// endpoint moved for one run (OPSAI_BASE_URL, --base-url), which the last test checks; and
/// `config set llm.base_url` to another server would drop the key settings.
fn set_base_url(env: &TestEnv, url: &str) {
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.config_path()).unwrap()).unwrap();
    config["llm"]["base_url"] = json!(url);
    std::fs::write(env.config_path(), config.to_string()).unwrap();
}

fn echo_script() -> Vec<Reply> {
    vec![
        reply_tool_call("c1", "run_command", json!({"command": format!("echo {KEY}")})),
        reply_text(&format!("The key is {KEY}.")),
    ]
}

#[test]
fn the_key_from_a_named_variable_is_sent_and_stored_nowhere() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"model": "m1", "api_key_env": "MY_PROVIDER_TOKEN_X"}}"#);
    let mock = MockLlm::start(echo_script());
    run_and_check(&env, &mock, &[("MY_PROVIDER_TOKEN_X", KEY)]);

    let out = env.cmd().args(["config", "show"]).output().unwrap();
    assert!(text(&out.stderr).contains("the API key comes from the environment variable MY_PROVIDER_TOKEN_X"));
    let out = env.cmd().args(["config", "get", "llm.api_key"]).env("MY_PROVIDER_TOKEN_X", KEY).output().unwrap();
    assert!(!text(&out.stdout).contains(KEY));
    assert!(text(&out.stderr).contains("MY_PROVIDER_TOKEN_X (llm.api_key_env)"), "{}", text(&out.stderr));

    // Unset, the run stops at start with the variable's name.
    set_base_url(&env, "http://127.0.0.1:9/v1");
    let out = env.cmd().args(["-q", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("MY_PROVIDER_TOKEN_X is not set"), "{}", text(&out.stderr));
}

#[test]
fn the_key_from_a_command_is_sent_and_its_failure_is_a_clear_error() {
    let env = TestEnv::new();
    let secrets = tempfile::tempdir().unwrap();
    let file = secrets.path().join("key");
    std::fs::write(&file, format!("{KEY}\nnote: a second line is not the key\n")).unwrap();
    let cmd = format!("cat '{}'", file.display());
    let out = env.cmd().args(["config", "set", "llm.api_key_cmd", &cmd]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mock = MockLlm::start(echo_script());
    run_and_check(&env, &mock, &[]);

    let out =
        env.cmd().args(["config", "set", "llm.api_key_cmd", "echo 'gpg: decryption failed' >&2; exit 2"]).output();
    assert_eq!(out.unwrap().status.code(), Some(0));
    set_base_url(&env, "http://127.0.0.1:9/v1");
    let out = env.cmd().args(["-q", "hi"]).output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("gpg: decryption failed") && stderr.contains("llm.api_key_cmd"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Gives this test thread (and so the opsai processes it starts) a session keyring of its own, as a
/// login session has: keys stored there are found by the next process and vanish with the last
/// one. The harness's thread may have none (then the kernel lends the user's session keyring, in
/// which a key cannot be read back by number). `false`, after saying why, when keyutils is unusable.
fn join_a_session_keyring() -> bool {
    use linux_keyutils::{KeyRing, KeyRingIdentifier};
    let name = format!("opsai-test-probe-{}", std::process::id());
    let tried = KeyRing::from_special_id(KeyRingIdentifier::Session, true).and_then(|ring| {
        let key = ring.add_key(&name, b"probe")?;
        let read = ring.search(&name).and_then(|found| found.read_to_vec());
        let _ = key.invalidate();
        read
    });
    match tried {
        Ok(_) => true,
        Err(err) => {
            let why = format!("the kernel keyutils keyring is not usable here: {err:?}");
            assert!(std::env::var("CI").as_deref() != Ok("true"), "required under CI=true: {why}");
            crate::support::skipped(&why);
            false
        }
    }
}

#[test]
fn the_key_from_the_keyring_is_stored_by_set_llm_and_sent() {
    if !join_a_session_keyring() {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start(echo_script());
    let url = mock.base_url();
    let out = env
        .cmd()
        .args(["config", "set-llm", "--base-url", &url, "--model", "m1", "--api-key-keyring"])
        .write_stdin(format!("{KEY}\n"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let account = url.trim_start_matches("http://").trim_end_matches("/v1").to_owned();
    assert!(text(&out.stderr).contains(&format!("account {account}")), "{}", text(&out.stderr));
    run_and_check(&env, &mock, &[]);
    let out = env.cmd().args(["config", "show"]).output().unwrap();
    assert!(text(&out.stderr).contains(&format!("the OS keyring, service opsai, account {account}")));
    assert!(!text(&out.stdout).contains(KEY));
    let removed = linux_keyutils::KeyRing::from_special_id(linux_keyutils::KeyRingIdentifier::Session, false)
        .and_then(|ring| ring.search(&format!("keyring-rs:{account}@opsai")))
        .and_then(|key| key.invalidate());
    assert!(removed.is_ok(), "the key was in the session keyring: {removed:?}");

    // No entry: a clear error that says how to store one.
    let out = env.cmd().args(["-q", "hi"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no key is stored there"), "{}", text(&out.stderr));
}

/// The file's key stays home when this run's endpoint is moved to another server.
#[test]
fn the_files_key_is_not_sent_to_an_endpoint_moved_for_one_run() {
    let env = TestEnv::new();
    env.write_config(
        &json!({"llm": {"base_url": "https://api.example.com/v1", "api_key_env": "MY_PROVIDER_TOKEN_X"}}).to_string(),
    );
    let mock = MockLlm::start([reply_text("hello"), reply_text("hello")]);
    for moved in [&["--base-url", mock.base_url().as_str()][..], &[][..]] {
        let mut cmd = env.cmd();
        cmd.env("MY_PROVIDER_TOKEN_X", KEY).args(moved).args(["-q", "say hello"]);
        if moved.is_empty() {
            cmd.env("OPSAI_BASE_URL", mock.base_url());
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let chats = mock.chat_requests();
    assert_eq!(chats.len(), 2);
    for chat in &chats {
        assert_eq!(chat.header("authorization"), None, "no key of the file's goes to another server");
    }
    mock.assert_never_sent(KEY);
}
