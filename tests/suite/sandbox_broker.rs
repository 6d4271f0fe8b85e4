//! What makes the sandbox cheap, from outside: opsai builds a view's ruleset once and hands it to
//! its helpers (a file written with the user's rights since is not covered by the older ruleset, and
//! no process but opsai's own helpers gets a ruleset); the small helper executable is used only when
//! it is of opsai's own build.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

#[test]
fn a_file_written_by_an_approved_command_is_closed_to_the_next_auto_run() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let project = env.user_home().join("proj");
    std::fs::create_dir_all(project.join("sub")).unwrap();
    std::fs::write(project.join("sub/notes.txt"), "ORDINARY-NOTES\n").unwrap();
    // Outside the project, so its content never appears in what the model writes.
    let source = tempfile::tempdir().unwrap();
    std::fs::write(source.path().join("s"), "CANARY-BROKER-7731\n").unwrap();
    std::fs::set_permissions(source.path().join("s"), std::fs::Permissions::from_mode(0o600)).unwrap();
    // Present from the start, so every command's view has the same inputs (a deny path that does
    // not exist yet is left out of them) and the broker keeps one ruleset.
    std::fs::write(env.opsai_home().join("audit.log"), "").unwrap();
    let run = |command: String| json!({"command": command, "why": "test"});
    let mock = MockLlm::start([
        // Safe: auto-runs in the sandbox, whose ruleset (the project granted whole) opsai keeps.
        reply_tool_call("c1", "run_command", run("cat sub/notes.txt".into())),
        // Medium, approved up front (-y): runs with the user's rights, in a subdirectory, so the
        // working directory's own modification time does not change.
        reply_tool_call("c2", "run_command", run(format!("cp {} sub/app.tfvars", source.path().join("s").display()))),
        reply_tool_call("c3", "run_command", run("cat sub/app.tfvars".into())),
        reply_text("done"),
    ]);
    env.cmd()
        .current_dir(&project)
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .timeout(Duration::from_secs(60))
        .args(["-y", "look"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(project.join("sub/app.tfvars")).unwrap(), "CANARY-BROKER-7731\n", "c2 ran");
    let last = mock.chat_requests().last().cloned().unwrap();
    assert!(last.tool_result("c1").unwrap_or_default().contains("ORDINARY-NOTES"), "{:?}", last.tool_result("c1"));
    let third = last.tool_result("c3").unwrap_or_default();
    assert!(third.contains("Permission denied"), "the new secret file is closed: {third}");
    mock.assert_never_sent("CANARY-BROKER-7731");
    let audit = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap();
    assert!(audit.contains(r#"CMD: "cat sub/app.tfvars" | RISK: safe | CONFIRMED: auto"#), "{audit}");
}

#[test]
fn no_process_but_opsais_own_helper_gets_a_ruleset() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let mut opsai = env
        .std_cmd()
        .args(["sandbox", "--", "sh", "-c", "echo started; read line"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(opsai.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert_eq!(first, "started\n", "the sandboxed command runs");
    // The helper (opsai's child) names the broker in its arguments.
    let socket = broker_socket_of(opsai.id());
    // This test process is not opsai's child: it must get nothing, whatever it asks.
    let mut stranger = UnixStream::connect(&socket).unwrap();
    stranger.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let request = b"opsai-broker-1\0C/tmp\0";
    let _ = stranger.write_all(&(request.len() as u32).to_le_bytes());
    let _ = stranger.write_all(request);
    let mut answer = Vec::new();
    let _ = stranger.read_to_end(&mut answer);
    assert!(answer.is_empty(), "a stranger got an answer: {answer:?}");
    opsai.stdin.take().unwrap().write_all(b"\n").unwrap();
    assert!(opsai.wait().unwrap().success());
}

#[test]
fn the_small_helper_is_used_only_when_it_is_of_this_build() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let status = env.cmd().args(["sandbox", "--status"]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout).into_owned();
    let beside = std::path::Path::new(env!("CARGO_BIN_EXE_opsai")).with_file_name("opsai-sandbox-helper");
    assert!(text.contains(&format!("helper: {}", beside.display())), "{text}");
    // An opsai whose neighbour answers the probe for another build re-executes itself instead.
    let dir = tempfile::tempdir().unwrap();
    let opsai = dir.path().join("opsai");
    opsai::testing::copy_program(env!("CARGO_BIN_EXE_opsai"), &opsai);
    let foreign = dir.path().join("opsai-sandbox-helper");
    opsai::testing::write_program(&foreign, "#!/bin/sh\necho 'sandbox-ok opsai-0.0.1/helper-0 profile strict'\n");
    let status = like(&env, &opsai).args(["sandbox", "--status"]).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(status.status.success(), "{text}");
    assert!(text.contains(&format!("helper: {}", opsai.display())), "{text}");
    // And its commands still run contained.
    let script = "echo inside > /tmp/opsai-broker-test-write; echo ran";
    let out = like(&env, &opsai).args(["sandbox", "--", "sh", "-c", script]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
    assert!(!std::path::Path::new("/tmp/opsai-broker-test-write").exists());
}

/// [`TestEnv::std_cmd`]'s environment and directory for another copy of opsai.
fn like(env: &TestEnv, exe: &std::path::Path) -> std::process::Command {
    let template = env.std_cmd();
    let mut cmd = std::process::Command::new(exe);
    cmd.env_clear();
    for (key, value) in template.get_envs() {
        if let Some(value) = value {
            cmd.env(key, value);
        }
    }
    if let Some(dir) = template.get_current_dir() {
        cmd.current_dir(dir);
    }
    cmd
}

/// The broker socket a running helper of opsai `pid` was given (`--broker PATH`).
fn broker_socket_of(pid: u32) -> PathBuf {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|raw| raw.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect::<Vec<_>>())
        .filter_map(|args| Some(PathBuf::from(args.iter().skip_while(|a| *a != "--broker").nth(1)?)))
        .find(|socket| socket.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&format!("sandbox-{pid}-"))))
        .expect("a helper started with --broker")
}
