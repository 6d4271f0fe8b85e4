//! Issue 13 §5 end to end: a credential the model writes into a command line runs as written, but
//! the audit log and the session store keep it redacted. The "programs" are scripts on PATH that
//! exit 42 only when they received the password, so the audit line's exit code proves what ran.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

const PASSWORD: &str = "hunter2xyz";

/// A fake `name` in `dir` that exits 42 when argument `index` is `expected`, else 1.
fn fake_program(dir: &Path, name: &str, index: usize, expected: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n[ \"${index}\" = '{expected}' ] && exit 42\nexit 1\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Every file under `dir` (the SQLite database, its WAL, the audit log), as bytes.
fn all_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(all_bytes(&path));
        } else {
            out.push((path.display().to_string(), std::fs::read(&path).unwrap()));
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|window| window == needle.as_bytes())
}

#[test]
fn credentials_in_commands_run_as_written_and_are_stored_redacted() {
    let env = TestEnv::new();
    let bin = tempfile::tempdir().unwrap();
    fake_program(bin.path(), "curl", 2, &format!("admin:{PASSWORD}"));
    fake_program(bin.path(), "mysql", 2, &format!("-p{PASSWORD}"));
    let mock = MockLlm::start([
        reply_tool_call(
            "c1",
            "run_command",
            json!({"command": format!("curl -u admin:{PASSWORD} https://api.example.com/health")}),
        ),
        reply_tool_call("c2", "run_command", json!({"command": format!("mysql -uroot -p{PASSWORD} -h db app")})),
        reply_text("both checked"),
    ]);
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let out = env
        .cmd()
        .env("PATH", path)
        .env("OPSAI_BASE_URL", mock.base_url())
        .args(["-y", "check the api and the database"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let audit = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap();
    // Both programs got the password (exit 42)…
    assert!(
        audit.contains("CMD: \"curl -u admin:[REDACTED:password] https://api.example.com/health\"")
            && audit.contains("CMD: \"mysql -uroot -p[REDACTED:password] -h db app\""),
        "{audit}"
    );
    assert_eq!(audit.matches("EXIT: 42").count(), 2, "{audit}");
    // …and nothing opsai stored holds it.
    let stored = all_bytes(env.opsai_home());
    assert!(stored.iter().any(|(name, _)| name.ends_with("sessions.db")), "{stored:?}");
    for (name, bytes) in &stored {
        assert!(!contains(bytes, PASSWORD), "{name} holds the password");
    }
    let show = env.cmd().args(["sessions", "show", "1"]).output().unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(show.contains("curl -u admin:[REDACTED:password]"), "{show}");
}
