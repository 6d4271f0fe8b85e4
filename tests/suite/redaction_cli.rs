//! Issue 13 §5 end to end: a credential the model writes into a command line runs as written, but
//! the audit log and the session store keep it redacted. The "programs" are scripts on PATH that
//! exit 42 only when they received the password, so the audit line's exit code proves what ran.

use std::path::Path;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

const PASSWORD: &str = "hunter2xyz";

/// A fake `name` in `dir` that exits 42 when argument `index` is `expected`, else 1.
fn fake_program(dir: &Path, name: &str, index: usize, expected: &str) {
    let path = dir.join(name);
    opsai::testing::write_program(&path, format!("#!/bin/sh\n[ \"${index}\" = '{expected}' ] && exit 42\nexit 1\n"));
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
    // The password the model wrote is not sent back to it in the history's copy of its call.
    mock.assert_never_sent(PASSWORD);
    let show = env.cmd().args(["sessions", "show", "1"]).output().unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    assert!(show.contains("curl -u admin:[REDACTED:password]"), "{show}");
}

/// Issue 21 §7 end to end: a secret typed in the task, secrets in a file the model reads (XML, a
/// `.pgpass` line, a bare AWS key, base64 of a password, a token folded over two lines) and one
/// the model writes into a command never reach a request body, the audit log or the session store,
/// while the command that ran (approved) held it byte for byte and `curl -u`'s password is not
/// sent back inside the history's copy of the model's tool call.
#[test]
fn secrets_in_the_task_a_file_and_the_model_s_commands_never_leave_or_land_on_disk() {
    let env = TestEnv::new();
    let work = tempfile::tempdir().unwrap();
    let aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq1xPLtK3u";
    let token = "ghp_Zq8f3kLm2Np4Rs6Tu8Vw0Xy2Az4Bc6De8Fg0";
    std::fs::write(
        work.path().join("notes.txt"),
        format!(
            "<config><password>XmlPw1234</password></config>\ndb.example.com:5432:app:alice:PgPw98765\n{aws}\n\
             blob: cGFzc3dvcmQ9QjY0cHc1NTU1\n{}\n{}\n",
            &token[..20],
            &token[20..]
        ),
    )
    .unwrap();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "cat notes.txt"})),
        reply_tool_call(
            "c2",
            "run_command",
            json!({"command": "echo pass=EchoPw12345;echo Authorization: Bearer tok3n42 > out.txt"}),
        ),
        reply_text("done"),
    ]);
    let out = env
        .cmd()
        .current_dir(work.path())
        .env("OPSAI_BASE_URL", mock.base_url())
        .args(["-y", "read my notes; my password is Hunter2task and DB_PASS=TaskPw4242"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The approved command ran as written: its redirect wrote what the model asked for.
    assert_eq!(std::fs::read_to_string(work.path().join("out.txt")).unwrap(), "Authorization: Bearer tok3n42\n");
    let audit = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap();
    assert!(
        audit.contains(
            r#"CMD: "echo pass=[REDACTED:password];echo Authorization: Bearer [REDACTED:authorization] > out.txt""#
        ),
        "the audit line keeps every operator: {audit}"
    );
    let secrets = [
        "Hunter2task",
        "TaskPw4242",
        "XmlPw1234",
        "PgPw98765",
        aws,
        "cGFzc3dvcmQ9QjY0cHc1NTU1",
        &token[20..],
        "EchoPw12345",
        "tok3n42",
    ];
    let stored = all_bytes(env.opsai_home());
    assert!(stored.iter().any(|(name, _)| name.ends_with("sessions.db")), "{stored:?}");
    for secret in secrets {
        mock.assert_never_sent(secret);
        for (name, bytes) in &stored {
            assert!(!contains(bytes, secret), "{name} holds {secret}");
        }
    }
    // The model did read the file (its observation is there, redacted).
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap_or_default();
    assert!(observation.contains("<password>[REDACTED:password]</password>"), "{observation}");
}
