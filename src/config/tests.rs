//! Loading, first-run creation, validation, env overrides and saving.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::from_json_text(text, Path::new("/h/config.json"))
}

fn invalid_key(text: &str) -> String {
    match parse(text) {
        Err(ConfigError::Invalid { key, .. }) => key,
        other => panic!("{text}: expected an invalid key, got {other:?}"),
    }
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |name| map.get(name).cloned()
}

#[test]
fn first_run_creates_a_private_file_with_the_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("new-home");
    let (config, path) = Config::load_or_create(&home).unwrap();
    assert_eq!(config, Config::default());
    assert_eq!(path, home.join("config.json"));
    assert_eq!((mode(&home), mode(&path)), (0o700, 0o600));
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(written["llm"]["base_url"], "http://localhost:11434/v1");
    assert_eq!(written["llm"]["model"], "qwen2.5:7b");
    assert_eq!(written["agent"]["max_iterations"], 10);
    assert_eq!(written["exec"], json!({"timeout_s": 30, "capture_head": 2000, "capture_tail": 2000}));
    assert_eq!(TestDir::names(&home), ["config.json"], "no temp file left behind");
    let (again, _) = Config::load_or_create(&home).unwrap();
    assert_eq!(again.llm, config.llm);
}

struct TestDir;
impl TestDir {
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }
}

#[test]
fn every_section_and_field_is_optional() {
    let config = parse(r#"{"llm": {"model": "llama3"}, "safety": {"auto_approve_safe": false}}"#).unwrap();
    assert_eq!(config.llm.model, "llama3");
    assert_eq!(config.llm.base_url, "http://localhost:11434/v1");
    assert!(!config.safety.auto_approve_safe);
    assert!(config.safety.deny.is_empty());
    // Keys of older versions that were never enforced (`cli_max_risk`, `tui_max_risk`) still load.
    let old = r#"{"safety": {"cli_max_risk": "medium", "tui_max_risk": "extreme"}}"#;
    assert_eq!(parse(old).unwrap().safety, SafetyConfig::default());
    assert_eq!((config.audit.max_log_size_mb, config.audit.retain_days), (10, 90));
    assert_eq!(parse("{}").unwrap(), Config::default());
    assert_eq!(parse(r#"{"llm": null, "llm2": 1}"#).unwrap().llm, LlmConfig::default());
    assert_eq!(parse(r#"{"llm": {"api_key": ""}}"#).unwrap().llm.api_key, None);
}

#[test]
fn a_syntax_error_names_line_and_column() {
    let err = parse("{\n  \"llm\": {\n    \"model\": qwen\n  }\n}").unwrap_err();
    let ConfigError::Syntax { line, column, .. } = &err else { panic!("{err:?}") };
    assert_eq!((*line, *column), (3, 14));
    assert!(err.to_string().starts_with("/h/config.json:3:14: not valid JSON"), "{err}");
}

#[test]
fn a_corrupt_file_is_an_error_and_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(&path, "{ nope").unwrap();
    assert!(matches!(Config::load_or_create(dir.path()), Err(ConfigError::Syntax { .. })));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ nope");
}

#[test]
fn bad_values_name_their_key() {
    assert_eq!(invalid_key(r#"{"llm": {"timeout": "60"}}"#), "llm.timeout");
    assert_eq!(invalid_key(r#"{"llm": {"model": "x", "max_tokens": -1}}"#), "llm.max_tokens");
    assert_eq!(invalid_key(r#"{"llm": {"base_url": "localhost:11434"}}"#), "llm.base_url");
    assert_eq!(invalid_key(r#"{"llm": {"model": " "}}"#), "llm.model");
    assert_eq!(invalid_key(r#"{"llm": {"ca_file": "certs/ca.pem"}}"#), "llm.ca_file");
    assert_eq!(invalid_key(r#"{"safety": {"sandbox": "extreme"}}"#), "safety.sandbox");
    assert_eq!(invalid_key(r#"{"agent": {"max_iterations": 0}}"#), "agent.max_iterations");
    assert_eq!(invalid_key(r#"{"exec": 30}"#), "exec");
    assert_eq!(invalid_key(r#"{"files": {"base_dirs": "~/src"}}"#), "files.base_dirs");
    assert_eq!(invalid_key("[]"), "(top level)");
    let err = parse(r#"{"llm": {"timeout": "60"}}"#).unwrap_err().to_string();
    assert!(err.starts_with("/h/config.json: `llm.timeout` invalid type: string \"60\", expected u64"), "{err}");
}

/// Issue 22: sampling settings and `llm.tool_mode`, each checked and named when wrong.
#[test]
fn sampling_and_tool_mode_are_read_and_checked() {
    let llm = parse(r#"{"llm": {"temperature": 0, "top_p": 0.95, "top_k": 40, "tool_mode": "text"}}"#).unwrap().llm;
    assert_eq!((llm.temperature, llm.top_p, llm.top_k), (Some(0.0), Some(0.95), Some(40)));
    assert_eq!(llm.tool_mode, super::ToolMode::Text);
    let defaults = parse("{}").unwrap().llm;
    assert_eq!((defaults.temperature, defaults.top_p, defaults.top_k), (None, None, None));
    assert_eq!(defaults.tool_mode, super::ToolMode::Auto);
    assert_eq!(invalid_key(r#"{"llm": {"temperature": 2.5}}"#), "llm.temperature");
    assert_eq!(invalid_key(r#"{"llm": {"temperature": -0.1}}"#), "llm.temperature");
    assert_eq!(invalid_key(r#"{"llm": {"top_p": 0}}"#), "llm.top_p");
    assert_eq!(invalid_key(r#"{"llm": {"top_p": 1.5}}"#), "llm.top_p");
    assert_eq!(invalid_key(r#"{"llm": {"top_k": 0}}"#), "llm.top_k");
    assert_eq!(invalid_key(r#"{"llm": {"tool_mode": "json"}}"#), "llm.tool_mode");
    let err = parse(r#"{"llm": {"top_p": 0}}"#).unwrap_err().to_string();
    assert!(err.contains("above 0 to 1, or null"), "{err}");
}

#[test]
fn bad_rules_are_rule_errors_and_good_ones_reach_the_policy() {
    let err = parse(r#"{"safety": {"deny": [{"pattern": "rm -rf *"}]}}"#).unwrap_err();
    assert!(matches!(err, ConfigError::Rule { .. }), "{err:?}");
    let config = parse(r#"{"safety": {"deny": [{"pattern": "terraform apply *", "reason": "CI"}]}}"#).unwrap();
    assert_eq!(config.policy().unwrap().deny.len(), 1);
}

#[test]
fn load_policy_reads_rules_without_creating_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    assert_eq!(load_policy(&path).unwrap(), PolicyConfig::default());
    assert!(!path.exists());
    std::fs::write(&path, r#"{"llm": {"timeout": "ignored here"}, "safety": {"allow": []}}"#).unwrap();
    assert_eq!(load_policy(&path).unwrap(), PolicyConfig::default());
}

#[test]
fn env_overrides_apply_and_are_recorded() {
    let mut config = Config::default();
    let vars =
        env(&[("OPSAI_BASE_URL", "https://api.openai.com/v1/"), ("OPSAI_MODEL", "gpt-4o"), ("OPENAI_API_KEY", "sk-o")]);
    config.apply_env(vars).unwrap();
    assert_eq!(config.llm.base_url, "https://api.openai.com/v1");
    assert_eq!(config.llm.model, "gpt-4o");
    assert_eq!(config.llm.api_key.as_deref(), Some("sk-o"), "OpenAI endpoint, no key in the file");
    let sources: Vec<(&str, &str)> = config.overrides().iter().map(|o| (o.field.key(), o.source.as_str())).collect();
    assert_eq!(
        sources,
        [("llm.base_url", "OPSAI_BASE_URL"), ("llm.model", "OPSAI_MODEL"), ("llm.api_key", "OPENAI_API_KEY")]
    );
}

#[test]
fn opsai_api_key_wins_and_an_openai_key_never_goes_elsewhere() {
    let mut config = Config::default();
    config.apply_env(env(&[("OPENAI_API_KEY", "sk-o"), ("OPSAI_MODEL", "")])).unwrap();
    assert_eq!(config.llm.api_key, None, "Ollama endpoint: OPENAI_API_KEY is not sent there");
    assert!(config.overrides().is_empty(), "empty values are ignored");
    config.apply_env(env(&[("OPENAI_API_KEY", "sk-o"), ("OPSAI_API_KEY", "sk-mine")])).unwrap();
    assert_eq!(config.llm.api_key.as_deref(), Some("sk-mine"));
    let err = Config::default().apply_env(env(&[("OPSAI_BASE_URL", "localhost")])).unwrap_err();
    assert!(err.to_string().starts_with("OPSAI_BASE_URL `localhost` is not an http"), "{err}");
}

#[test]
fn a_key_source_in_the_file_comes_before_openai_api_key() {
    for set in [
        |llm: &mut LlmConfig| llm.api_key_cmd = Some("pass show openai".to_owned()),
        |llm: &mut LlmConfig| llm.api_key_env = Some("MY_KEY".to_owned()),
        |llm: &mut LlmConfig| llm.api_key_keyring = Some("api.openai.com".to_owned()),
    ] {
        let mut config = Config::default();
        config.llm.base_url = "https://api.openai.com/v1".to_owned();
        set(&mut config.llm);
        config.apply_env(env(&[("OPENAI_API_KEY", "sk-stale")])).unwrap();
        assert_eq!(config.llm.api_key, None, "the file's source is used, not the stale variable");
        assert!(config.overrides().is_empty());
    }
}

#[test]
fn save_keeps_unknown_keys_and_order_and_never_saves_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let original = r#"{"zeta": 1, "llm": {"model": "m1", "x": [1, 2]}, "safety": {"deny": [], "note": "mine"}}"#;
    std::fs::write(&path, original).unwrap();
    let (mut config, _) = Config::load_or_create(dir.path()).unwrap();
    config.apply_env(env(&[("OPSAI_MODEL", "from-env"), ("OPSAI_API_KEY", "sk-env")])).unwrap();
    config.agent.max_iterations = 12;
    config.save(&path).unwrap();
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(saved["zeta"], 1);
    assert_eq!(saved["llm"]["x"], json!([1, 2]));
    assert_eq!(saved["safety"]["note"], "mine");
    assert_eq!(saved["llm"]["model"], "m1", "the env value is not saved");
    assert_eq!(saved["llm"]["api_key"], Value::Null);
    assert_eq!(saved["agent"]["max_iterations"], 12);
    let keys: Vec<&String> = saved.as_object().unwrap().keys().collect();
    assert_eq!(keys[..3], ["zeta", "llm", "safety"], "the user's order first");
    assert_eq!(std::fs::read_to_string(dir.path().join("config.json.bak")).unwrap(), original);
    assert_eq!((mode(&path), mode(&dir.path().join("config.json.bak"))), (0o600, 0o600));
    assert_eq!(TestDir::names(dir.path()), ["config.json", "config.json.bak"]);
}

#[test]
fn a_field_changed_after_an_override_is_saved() {
    let mut config = Config::default();
    config.set_override(LlmField::Model, "cli-model".to_owned(), "--model");
    config.llm.model = "chosen".to_owned();
    let saved: Value = serde_json::from_str(&config.to_json_text().unwrap()).unwrap();
    assert_eq!(saved["llm"]["model"], "chosen");
    config.set_override(LlmField::Model, "again".to_owned(), "OPSAI_MODEL");
    let saved: Value = serde_json::from_str(&config.to_json_text().unwrap()).unwrap();
    assert_eq!(saved["llm"]["model"], "qwen2.5:7b", "the file's value from before the first override");
}

#[test]
fn paths_expand_home_and_default_under_opsai_home() {
    let mut config = Config::default();
    let (opsai, user) = (Path::new("/o"), Some(Path::new("/u")));
    assert_eq!(config.audit_log_path(opsai, user), Path::new("/o/audit.log"));
    config.audit.log_path = Some("~/logs/opsai.log".to_owned());
    assert_eq!(config.audit_log_path(opsai, user), Path::new("/u/logs/opsai.log"));
    config.audit.log_path = Some("/var/log/opsai.log".to_owned());
    assert_eq!(config.audit_log_path(opsai, user), Path::new("/var/log/opsai.log"));
    assert_eq!(expand_path("rel.log", opsai, user), Path::new("/o/rel.log"));
}

#[test]
fn first_run_never_replaces_a_file_created_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(&path, "{\"mine\": 1}").unwrap();
    assert!(!file::write_new(&path, "{}").unwrap());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"mine\": 1}");
    assert_eq!(TestDir::names(dir.path()), ["config.json"]);
    let fresh = dir.path().join("other.json");
    assert!(file::write_new(&fresh, "{}").unwrap());
    assert_eq!((std::fs::read_to_string(&fresh).unwrap().as_str(), mode(&fresh)), ("{}", 0o600));
}

#[test]
fn a_base_url_needs_http_or_https_a_host_and_only_one_scheme() {
    for good in ["http://localhost:11434/v1", "https://api.openai.com/v1", "http://[::1]:8000/v1", "http://gpu-box"] {
        assert_eq!(check_base_url(good), Ok(()), "{good}");
    }
    for bad in [
        "http://localhost:11434/v1http://gpu-box:8000/v1",
        "http://localhost:11434/v1https://api.openai.com/v1",
        "localhost:11434",
        "ftp://example.com/v1",
        "http://",
        "http:///v1",
        "http://exa mple.com/v1",
        "http://:8000/v1",
    ] {
        assert!(check_base_url(bad).is_err(), "{bad} was accepted");
    }
}

#[test]
fn the_ca_file_is_absolute_or_under_home_and_absent_by_default() {
    assert_eq!(parse("{}").unwrap().llm.ca_file, None);
    assert_eq!(parse(r#"{"llm": {"ca_file": ""}}"#).unwrap().llm.ca_path(), None, "empty is none");
    let config = parse(r#"{"llm": {"ca_file": "/etc/corp/ca.pem"}}"#).unwrap();
    assert_eq!(config.llm.ca_path(), Some(PathBuf::from("/etc/corp/ca.pem")));
    let home = parse(r#"{"llm": {"ca_file": "~/corp-ca.pem"}}"#).unwrap().llm.ca_path().unwrap();
    assert!(home.is_absolute() && home.ends_with("corp-ca.pem"), "{home:?}");
    assert!(!Config::default().to_json_text().unwrap().contains("ca_file"), "not written when unset");
}
