//! `opsai config path|show|set-llm` (DESIGN §3, §4), through the real binary.

use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::support::TestEnv;

fn stdout_of(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stdout.clone()).unwrap()
}

fn stderr_of(assert: &assert_cmd::assert::Assert) -> String {
    String::from_utf8(assert.get_output().stderr.clone()).unwrap()
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn config_path_prints_the_file_and_creates_nothing() {
    let env = TestEnv::new();
    let assert = env.cmd().args(["config", "path"]).assert().success();
    assert_eq!(stdout_of(&assert), format!("{}\n", env.config_path().display()));
    assert!(!env.config_path().exists(), "`config path` must not create the file");
}

#[test]
fn config_show_creates_the_defaults_on_first_run() {
    let env = TestEnv::new();
    let assert = env.cmd().args(["config", "show"]).assert().success();
    let shown: Value = serde_json::from_str(&stdout_of(&assert)).expect("stdout is one JSON document");
    assert_eq!(shown["llm"]["base_url"], "http://localhost:11434/v1");
    assert_eq!(shown["llm"]["model"], "qwen2.5:7b");
    assert_eq!(shown["agent"]["max_iterations"], 10);
    assert_eq!(shown["audit"]["log_path"], env.opsai_home().join("audit.log").display().to_string());
    assert_eq!(mode(&env.config_path()), 0o600);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(env.config_path()).unwrap()).unwrap();
    assert_eq!(saved["llm"]["model"], "qwen2.5:7b");
}

/// Every key the first run writes is in docs/configuration.md's table, so no setting exists that a
/// user cannot learn of.
#[test]
fn every_config_key_is_documented() {
    let env = TestEnv::new();
    env.cmd().args(["config", "show"]).assert().success();
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(env.config_path()).unwrap()).unwrap();
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md")).unwrap();
    let start = page.find("\n## Keys\n").expect("docs/configuration.md has a Keys section");
    let section = &page[start + 1..];
    let table: String =
        section.lines().skip(1).take_while(|l| !l.starts_with("## ")).filter(|l| l.starts_with('|')).collect();
    let mut missing = Vec::new();
    for (name, fields) in saved.as_object().unwrap() {
        for key in fields.as_object().unwrap().keys() {
            // A nested section (`safety.sandbox_limits`) is documented by its own keys.
            if !table.contains(&format!("`{name}.{key}`")) && !table.contains(&format!("`{name}.{key}.")) {
                missing.push(format!("{name}.{key}"));
            }
        }
    }
    assert!(missing.is_empty(), "undocumented config keys: {missing:?}");
    assert!(!saved["safety"].as_object().unwrap().contains_key("cli_max_risk"), "{saved}");
}

#[test]
fn config_show_masks_the_key_and_names_env_overrides() {
    let env = TestEnv::new();
    let file = r#"{"llm": {"base_url": "https://api.deepseek.com/v1", "model": "deepseek-chat", "api_key": "sk-file-secret-0000abcd"}, "mine": 1}"#;
    env.write_config(file);
    let assert = env
        .cmd()
        .args(["config", "show"])
        .env("OPSAI_MODEL", "deepseek-reasoner")
        .env("OPSAI_API_KEY", "sk-env-secret-9999wxyz")
        .assert()
        .success();
    let (stdout, stderr) = (stdout_of(&assert), stderr_of(&assert));
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(shown["llm"]["model"], "deepseek-reasoner");
    assert_eq!(shown["llm"]["api_key"], "sk-…wxyz");
    for secret in ["sk-file-secret", "sk-env-secret", "0000abcd"] {
        assert!(!stdout.contains(secret) && !stderr.contains(secret), "{secret} leaked:\n{stdout}\n{stderr}");
    }
    assert!(stderr.contains("llm.model comes from OPSAI_MODEL"), "{stderr}");
    assert!(stderr.contains("llm.api_key comes from OPSAI_API_KEY"), "{stderr}");
    assert_eq!(std::fs::read_to_string(env.config_path()).unwrap(), file, "overrides are never saved");
}

#[test]
fn a_corrupt_config_is_exit_2_with_line_and_column_and_stays_untouched() {
    let env = TestEnv::new();
    let corrupt = "{\n  \"llm\": {\n    \"model\": qwen\n  }\n}\n";
    env.write_config(corrupt);
    let assert = env.cmd().args(["config", "show"]).assert().code(2);
    let stderr = stderr_of(&assert);
    let prefix = format!("opsai: {}:3:14: not valid JSON (", env.config_path().display());
    assert!(stderr.starts_with(&prefix), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one message: {stderr}");
    assert!(stdout_of(&assert).is_empty());
    assert_eq!(std::fs::read(env.config_path()).unwrap(), corrupt.as_bytes(), "byte for byte");
    assert_eq!(TestEnv::entries(env.opsai_home()), ["config.json"], "no backup, no temp file");
}

#[test]
fn a_bad_value_is_exit_2_naming_the_key() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"timeout": "sixty"}}"#);
    let assert = env.cmd().args(["config", "show"]).assert().code(2);
    let stderr = stderr_of(&assert);
    assert!(stderr.starts_with(&format!("opsai: {}: `llm.timeout` ", env.config_path().display())), "{stderr}");
}

#[test]
fn a_bad_env_override_is_exit_2_naming_the_variable() {
    let env = TestEnv::new();
    let assert = env.cmd().args(["config", "show"]).env("OPSAI_BASE_URL", "localhost:11434").assert().code(2);
    assert!(stderr_of(&assert).starts_with("opsai: OPSAI_BASE_URL `localhost:11434` is not an http"));
}

#[test]
fn set_llm_without_a_terminal_refuses_with_exit_2() {
    if std::fs::File::open("/dev/tty").is_ok() {
        crate::support::skipped("this test process has a controlling terminal, so set-llm would prompt on it");
        return;
    }
    let env = TestEnv::new();
    let assert = env.cmd().args(["config", "set-llm"]).write_stdin("").assert().code(2);
    let stderr = stderr_of(&assert);
    assert!(stderr.contains("needs a terminal"), "{stderr}");
    assert!(!env.config_path().exists() || std::fs::read_to_string(env.config_path()).unwrap().contains("qwen2.5:7b"));
}

/// issue 14: the pre-filled Base URL was editable text that typing appended to, and the key line
/// showed `********` when nothing was typed. On a real terminal now: typing replaces the default.
#[test]
fn set_llm_on_a_terminal_takes_a_typed_url_as_typed_and_shows_no_stars_for_no_key() {
    use std::time::Duration;

    use crate::support::mock_llm::{MockLlm, reply_models, reply_text};
    use crate::support::tmux::{Tmux, require};

    if !require("tmux") {
        return;
    }
    const LIMIT: Duration = Duration::from_secs(30);
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_models(&["m1"]), reply_text("OK")]);
    let url = mock.base_url();
    env.write_config(&format!(r#"{{"llm": {{"base_url": "{url}", "model": "m1"}}}}"#));
    // The saved file is what is being set up, so no OPSAI_BASE_URL override.
    let vars: Vec<_> = env.terminal_vars(&url).into_iter().filter(|(k, _)| *k != "OPSAI_BASE_URL").collect();
    let term = Tmux::start(env!("CARGO_BIN_EXE_opsai"), &["config", "set-llm"], &vars, env.user_home());
    term.wait_for("LLM provider", LIMIT);
    term.press(&["Enter"]); // the custom endpoint, preselected for a URL no provider has
    term.wait_for("Base URL", LIMIT);
    term.line(&url);
    let screen = term.wait_for("API key", LIMIT);
    assert!(!screen.contains("holds a second"), "the typed URL was appended to the default:\n{screen}");
    term.press(&["Enter"]);
    term.wait_for("Model", LIMIT);
    term.press(&["Enter"]);
    assert_eq!(term.wait_exit(LIMIT), 0, "{}", term.screen());
    let screen = term.screen();
    assert!(screen.contains("✓ API key: none"), "{screen}");
    assert!(!screen.contains("***"), "stars for a key nobody typed:\n{screen}");
    assert!(screen.contains("✓ m1 answered"), "{screen}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(env.config_path()).unwrap()).unwrap();
    assert_eq!(saved["llm"]["base_url"], url.as_str());
}
