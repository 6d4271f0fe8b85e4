//! Issue 23: `opsai config set|get|unset` and scripted `config set-llm`, through the real binary.

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn saved(env: &TestEnv) -> Value {
    serde_json::from_str(&std::fs::read_to_string(env.config_path()).unwrap()).unwrap()
}

/// `opsai config ARGS…` with stdin closed; (exit code, stdout, stderr).
fn config(env: &TestEnv, args: &[&str]) -> (Option<i32>, String, String) {
    let out = env.cmd().arg("config").args(args).write_stdin("").output().unwrap();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn set_get_unset_round_trip_keeps_the_users_other_keys() {
    let env = TestEnv::new();
    env.write_config(r#"{"mine": {"note": "kept"}, "llm": {"model": "m0", "extra": 1}}"#);
    let (code, _, stderr) = config(&env, &["set", "exec.timeout_s", "60"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("exec.timeout_s saved"), "{stderr}");
    let (code, _, stderr) = config(&env, &["set", "safety.sandbox_limits.memory_mb", "512"]);
    assert_eq!(code, Some(0), "{stderr}");
    config(&env, &["set", "llm.model", "qwen3:8b"]);
    let file = saved(&env);
    assert_eq!(file["exec"]["timeout_s"], 60);
    assert_eq!(file["safety"]["sandbox_limits"]["memory_mb"], 512);
    assert_eq!(file["llm"]["model"], "qwen3:8b");
    assert_eq!(file["mine"]["note"], "kept", "a key opsai does not know stays");
    assert_eq!(file["llm"]["extra"], 1);
    assert!(env.opsai_home().join("config.json.bak").exists(), "the previous file is kept");

    let (code, stdout, stderr) = config(&env, &["get", "exec.timeout_s"]);
    assert_eq!((code, stdout.as_str()), (Some(0), "60\n"));
    assert!(stderr.contains(&format!("comes from the config file {}", env.config_path().display())), "{stderr}");

    let out = env.cmd().args(["config", "get", "llm.model"]).env("OPSAI_MODEL", "from-env").output().unwrap();
    assert_eq!(text(&out.stdout), "from-env\n");
    assert!(text(&out.stderr).contains("llm.model comes from OPSAI_MODEL"), "{}", text(&out.stderr));

    let (code, _, stderr) = config(&env, &["unset", "exec.timeout_s"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(saved(&env)["exec"].get("timeout_s").is_none());
    let (_, stdout, stderr) = config(&env, &["get", "exec.timeout_s"]);
    assert_eq!(stdout, "30\n");
    assert!(stderr.contains("comes from the default"), "{stderr}");
    let (code, _, stderr) = config(&env, &["unset", "exec.timeout_s"]);
    assert_eq!(code, Some(0));
    assert!(stderr.contains("nothing changed"), "{stderr}");
}

/// The same value is refused with the same words whether it was typed or found in the file.
#[test]
fn a_bad_value_is_refused_with_the_message_a_bad_file_gives() {
    let cases = [
        ("exec.timeout_s", "0", r#"{"exec": {"timeout_s": 0}}"#),
        ("exec.timeout_s", "soon", r#"{"exec": {"timeout_s": "soon"}}"#),
        ("llm.tool_mode", "sometimes", r#"{"llm": {"tool_mode": "sometimes"}}"#),
        ("llm.temperature", "3", r#"{"llm": {"temperature": 3}}"#),
        ("llm.base_url", "localhost:1", r#"{"llm": {"base_url": "localhost:1"}}"#),
        ("safety.sandbox_limits.memory_mb", "10", r#"{"safety": {"sandbox_limits": {"memory_mb": 10}}}"#),
        ("llm.api_key_env", "NOT A NAME", r#"{"llm": {"api_key_env": "NOT A NAME"}}"#),
    ];
    for (key, value, file) in cases {
        let env = TestEnv::new();
        let (code, stdout, by_set) = config(&env, &["set", key, value]);
        assert_eq!(code, Some(2), "{key}={value}: {by_set}");
        assert!(stdout.is_empty());
        assert!(by_set.contains(&format!("`{key}`")), "{key}: {by_set}");
        assert!(!env.config_path().exists(), "{key}: a refused value writes nothing");
        env.write_config(file);
        let (code, _, by_file) = config(&env, &["show"]);
        assert_eq!(code, Some(2));
        assert_eq!(by_set, by_file, "{key}={value}");
    }
}

#[test]
fn two_key_sources_are_refused_and_unknown_keys_name_near_matches() {
    let env = TestEnv::new();
    config(&env, &["set", "llm.api_key_env", "MY_KEY"]);
    let (code, _, stderr) = config(&env, &["set", "llm.api_key_cmd", "pass show x"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("`llm.api_key_cmd` is set together with `llm.api_key_env`"), "{stderr}");

    let (code, _, stderr) = config(&env, &["set", "model", "x"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("`model` is not a configuration key; did you mean `llm.model`"), "{stderr}");
    let (code, _, stderr) = config(&env, &["get", "exec.timeout"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("`exec.timeout_s`"), "{stderr}");
}

#[test]
fn scripted_set_llm_asks_nothing_and_checks_only_when_told() {
    let env = TestEnv::new();
    // No mock is listening: without --check nothing goes over the network.
    let (code, _, stderr) = config(
        &env,
        &["set-llm", "--base-url", "http://127.0.0.1:9/v1/", "--model", "m1", "--api-key-env", "MY_PROVIDER_KEY"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let llm = &saved(&env)["llm"];
    assert_eq!(llm["base_url"], "http://127.0.0.1:9/v1");
    assert_eq!(llm["model"], "m1");
    assert_eq!(llm["api_key_env"], "MY_PROVIDER_KEY");

    // --check against a dead endpoint: nothing saved, exit 1.
    let before = std::fs::read_to_string(env.config_path()).unwrap();
    let out = env
        .cmd()
        .args(["config", "set-llm", "--model", "m2", "--check"])
        .env("MY_PROVIDER_KEY", "k-123456")
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("nothing saved"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(env.config_path()).unwrap(), before);

    // --check against a working one sends the key from the variable and saves.
    let mock = MockLlm::start([reply_text("OK")]);
    let url = mock.base_url();
    let out = env
        .cmd()
        .args(["config", "set-llm", "--base-url", &url, "--model", "m3", "--api-key-env", "MY_PROVIDER_KEY"])
        .arg("--check")
        .env("MY_PROVIDER_KEY", "k-checked-0001")
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(mock.chat_requests()[0].header("authorization"), Some("Bearer k-checked-0001"));
    assert_eq!(saved(&env)["llm"]["model"], "m3");
    assert!(!std::fs::read_to_string(env.config_path()).unwrap().contains("k-checked-0001"));

    // A new endpoint without a key flag does not inherit the old provider's key source.
    let (code, _, stderr) = config(&env, &["set-llm", "--base-url", "http://127.0.0.1:10/v1"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(saved(&env)["llm"].get("api_key_env").is_none(), "{}", saved(&env));
    assert!(stderr.contains("is cleared"), "{stderr}");
}

/// docs/configuration.md's table names every key `config set` accepts, so no setting exists that a
/// user cannot learn of, and every `set-llm` flag.
#[test]
fn every_key_and_set_llm_flag_is_documented() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md")).unwrap();
    let start = docs.find("\n## Keys\n").expect("docs/configuration.md has a Keys section");
    let table: String = docs[start..].lines().skip(2).take_while(|l| !l.starts_with("## ")).collect();
    let missing: Vec<&str> = opsai::config::keys::KEYS
        .iter()
        .map(|(key, _)| *key)
        .filter(|key| !table.contains(&format!("| `{key}` |")))
        .collect();
    assert!(missing.is_empty(), "keys missing from docs/configuration.md: {missing:?}");
    let env = TestEnv::new();
    let help = text(&env.cmd().args(["config", "set-llm", "--help"]).output().unwrap().stdout);
    let flags: Vec<&str> = help.split_whitespace().filter(|w| w.starts_with("--") && *w != "--help").collect();
    assert!(flags.len() >= 7, "{help}");
    for flag in flags {
        let flag = flag.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
        assert!(docs.contains(&format!("`{flag}")), "{flag} is not in docs/configuration.md");
    }
}
