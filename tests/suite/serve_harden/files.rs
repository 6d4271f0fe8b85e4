//! What the server reads and writes on disk going wrong: a hand-edited users file with names no
//! user may have, a users file briefly missing, and a store that cannot write (a full disk).

use reqwest::StatusCode;
use serde_json::Value;

use super::alice_file;
use crate::support::mock_llm::*;
use crate::support::serve::*;
use crate::support::{TestEnv, skipped};

#[tokio::test(flavor = "multi_thread")]
async fn hand_edited_names_no_user_may_have_are_left_out_with_a_log_line() {
    let env = TestEnv::new();
    let file = alice_file(&env);
    let mut users: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let alice = users["users"][0].clone();
    let bad = ["", "ali\u{7}ce", "bo\u{202e}b", "two words", "owner", "alice"];
    for name in bad {
        let mut user = alice.clone();
        user["name"] = name.into();
        users["users"].as_array_mut().unwrap().push(user);
    }
    std::fs::write(&file, users.to_string()).unwrap();
    let server = Server::builder(&env).users(&file).start();
    for name in &bad[..5] {
        let answer = server.post_credentials("/api/v2/auth/login", name, "alice-password").await;
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED, "{name:?} logs in");
    }
    server.login("alice", "alice-password").await;
    let log = server.stderr();
    assert!(log.matches("ignoring the user").count() >= bad.len(), "{log}");
    assert!(log.contains(r#"ignoring the user "bo\u{202e}b""#), "{log}");
    assert!(log.contains("a second entry with this name"), "{log}");
    assert!(!log.contains('\u{202e}'), "the log shows the character escaped: {log}");
    let listed = env.cmd().args(["serve", "user", "list", "--users"]).arg(&file).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(listed.contains("not a valid name") && !listed.contains('\u{202e}'), "{listed}");
    server.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_briefly_missing_users_file_logs_nobody_out() {
    let env = TestEnv::new();
    let file = alice_file(&env);
    let server = Server::builder(&env).users(&file).start();
    let alice = server.login("alice", "alice-password").await;
    let aside = env.opsai_home().join("users.json.moved");
    std::fs::rename(&file, &aside).unwrap();
    assert_eq!(alice.list().await.0, StatusCode::OK, "still logged in while the file is away");
    assert_eq!(server.post_credentials("/api/v2/auth/login", "alice", "alice-password").await.status(), StatusCode::OK);
    assert!(server.stderr().contains("is missing: keeping the 1 users last read"), "{}", server.stderr());
    std::fs::rename(&aside, &file).unwrap();
    assert_eq!(alice.list().await.0, StatusCode::OK, "and after it is back");
    assert!(server.stderr().contains("is back"), "{}", server.stderr());
    // Removing the user still logs them out.
    let removed = env.cmd().args(["serve", "user", "remove", "alice", "--users"]).arg(&file).output().unwrap();
    assert!(removed.status.success());
    assert_eq!(alice.list().await.0, StatusCode::UNAUTHORIZED);
    server.stop();
}

/// A tmpfs of `size` mounted on `dir` for the life of the value.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &std::path::Path, size: &str) -> Result<Self, String> {
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|err| err.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
        }
        Ok(Self(dir.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_reaches_the_browser_and_the_log() {
    let env = TestEnv::new();
    let disk = env.user_home().join("small-disk");
    std::fs::create_dir_all(&disk).unwrap();
    let _mounted = match Tmpfs::mount(&disk, "2m") {
        Ok(mounted) => mounted,
        Err(why) => {
            skipped(&format!("cannot mount a small tmpfs here (root and mount(8) are needed): {why}"));
            return;
        }
    };
    let mock = MockLlm::start([reply_text("Everything is fine.")]);
    let server = Server::builder(&env).mock(&mock).env("OPSAI_HOME", disk.to_str().unwrap()).start();
    let api = server.api();
    let id = api.new_conversation().await;
    // Fill what is left of the disk.
    let filler = disk.join("filler");
    let mut written = std::fs::File::create(&filler).unwrap();
    let block = vec![b'x'; 64 * 1024];
    while std::io::Write::write_all(&mut written, &block).is_ok() {}
    let events = api.chat(id, "how is it?").await.collect().await;
    let failed = events.iter().find(|e| e["kind"] == "store_failed").unwrap_or_else(|| panic!("{events:#?}"));
    assert_eq!(failed["type"], "error");
    assert!(failed["content"].as_str().unwrap().contains("not stored"), "{failed}");
    assert_eq!(events.last().unwrap()["type"], "done", "done is still last");
    assert!(
        server.stderr().contains(&format!("conversation {id}: this conversation is no longer being saved")),
        "{}",
        server.stderr()
    );
    drop(written);
    std::fs::remove_file(&filler).unwrap();
    server.stop();
}
