//! Issue 23: where opsai keeps its files. `OPSAI_HOME` overrides everything (one directory); an
//! existing `~/.opsai` keeps everything; otherwise the XDG base directories. The sandbox hides
//! every directory opsai uses.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A one-shot that plans one command (`--dry-run`, so an audit line is written and a conversation
/// saved) against a fresh mock.
fn dry_run(mut cmd: Command) {
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "rm -rf ./build"})),
        reply_text("planned"),
    ]);
    let out = cmd.env("OPSAI_BASE_URL", mock.base_url()).args(["--dry-run", "clean the build"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

fn layout(mut cmd: Command) -> String {
    let out = cmd.args(["config", "path", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

fn exists(path: &Path) -> bool {
    path.exists()
}

#[test]
fn without_opsai_home_or_dot_opsai_files_go_to_the_xdg_directories() {
    let env = TestEnv::new();
    let home = env.user_home();
    dry_run(env.std_cmd_without_opsai_home());
    assert!(exists(&home.join(".config/opsai/config.json")));
    assert!(exists(&home.join(".local/share/opsai/sessions.db")));
    let audit = std::fs::read_to_string(home.join(".local/state/opsai/audit.log")).unwrap();
    assert!(audit.contains("CONFIRMED: dry-run"), "{audit}");
    assert!(!exists(&home.join(".opsai")), "no ~/.opsai is created");
    assert_eq!(TestEnv::entries(env.opsai_home()), Vec::<String>::new(), "OPSAI_HOME was not used");

    let shown = layout(env.std_cmd_without_opsai_home());
    let expected = format!(
        "layout: XDG base directories\nconfig: {h}/.config/opsai\ndata: {h}/.local/share/opsai\n\
         state: {h}/.local/state/opsai\ncache: {h}/.cache/opsai\n",
        h = home.display()
    );
    assert_eq!(shown, expected);

    // The variables move each directory (a relative one is ignored, as the spec says).
    let mut cmd = env.std_cmd_without_opsai_home();
    cmd.env("XDG_CONFIG_HOME", home.join("cfg")).env("XDG_STATE_HOME", "relative/state");
    let shown = layout(cmd);
    assert!(shown.contains(&format!("config: {}/cfg/opsai\n", home.display())), "{shown}");
    assert!(shown.contains(&format!("state: {}/.local/state/opsai\n", home.display())), "{shown}");
}

#[test]
fn an_existing_dot_opsai_keeps_everything() {
    let env = TestEnv::new();
    let home = env.user_home();
    std::fs::create_dir(home.join(".opsai")).unwrap();
    let mut cmd = env.std_cmd_without_opsai_home();
    cmd.env("XDG_DATA_HOME", home.join("xdg-data"));
    dry_run(cmd);
    for file in ["config.json", "sessions.db", "audit.log"] {
        assert!(exists(&home.join(".opsai").join(file)), "{file} in ~/.opsai");
    }
    for dir in [".config", ".local", ".cache", "xdg-data"] {
        assert!(!exists(&home.join(dir)), "{dir} was created");
    }
    assert!(layout(env.std_cmd_without_opsai_home()).starts_with("layout: ~/.opsai exists (one directory)\n"));
}

#[test]
fn opsai_home_overrides_dot_opsai_and_xdg() {
    let env = TestEnv::new();
    let home = env.user_home();
    std::fs::create_dir(home.join(".opsai")).unwrap();
    let mut cmd = env.std_cmd();
    cmd.env("XDG_CONFIG_HOME", home.join("cfg"));
    let shown = layout(cmd);
    let o = env.opsai_home().display();
    assert_eq!(
        shown,
        format!("layout: OPSAI_HOME (one directory)\nconfig: {o}\ndata: {o}\nstate: {o}\ncache: {o}/cache\n")
    );
}

/// Canaries in each XDG directory opsai uses stay unreadable to a sandboxed command, while an
/// ordinary file beside them is readable. The directories are moved out of the home's hidden
/// directories (which the sandbox's view keeps closed anyway), so only opsai's own list hides them.
#[test]
fn the_sandbox_hides_every_xdg_directory() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let xdg = env.user_home().join("xdg");
    let planted = ["config/opsai/serve-users.json", "data/opsai/canary", "state/opsai/audit.log", "cache/opsai/canary"];
    for (i, rel) in planted.iter().enumerate() {
        let path = xdg.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("CANARY-XDG-{i}\n")).unwrap();
    }
    std::fs::write(xdg.join("config/opsai/config.json"), r#"{"llm": {"api_key": "sk-XDG-CONFIG-KEY-0000"}}"#).unwrap();
    std::fs::write(xdg.join("notes.txt"), "ORDINARY-CONTENT\n").unwrap();
    let script: String = planted
        .iter()
        .chain(&["config/opsai/config.json", "notes.txt"])
        .map(|rel| format!("cat '{}'; ", xdg.join(rel).display()))
        .collect();
    let mut cmd = env.std_cmd_without_opsai_home();
    for (var, dir) in [("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state")] {
        cmd.env(var, xdg.join(dir));
    }
    cmd.env("XDG_CACHE_HOME", xdg.join("cache"));
    let out = cmd.args(["sandbox", "--", "sh", "-c", &script]).output().unwrap();
    let stdout = text(&out.stdout);
    assert!(stdout.contains("ORDINARY-CONTENT"), "{stdout} {}", text(&out.stderr));
    assert!(!stdout.contains("CANARY-XDG") && !stdout.contains("sk-XDG"), "{stdout}");
}
