//! `--ssh-host` against a real sshd on 127.0.0.1 (keys generated per test, host key pinned, strict
//! checking on): commands with live output and exit codes, timeouts that end the remote command,
//! the remote environment in the prompt, the audit `HOST:` field, and multiplexing.

use std::time::{Duration, Instant};

use opsai::testing::wait_until;
use predicates::prelude::*;
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::killed_rewrites::KilledRewrites;
use crate::support::mock_llm::*;
use crate::support::sshd::{HOST, Sshd, require};

fn opsai(env: &TestEnv, mock: &MockLlm, sshd: &Sshd, extra_config: &str) -> assert_cmd::Command {
    std::fs::write(env.config_path(), sshd.opsai_config(extra_config)).unwrap();
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .args(["--ssh-host", HOST])
        .timeout(Duration::from_secs(90));
    cmd
}

fn run(command: &str) -> Value {
    json!({"command": command, "why": "test"})
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

#[test]
fn a_command_runs_on_the_host_with_its_output_exit_code_and_audit_host() {
    if !require() {
        return;
    }
    let sshd = Sshd::start();
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("echo \"via $SSH_CONNECTION\"; ls /no-such-dir-opsai")),
        reply_text("It ran remotely."),
    ]);
    opsai(&env, &mock, &sshd, "")
        .arg("where am I")
        .assert()
        .success()
        .stdout("It ran remotely.\n")
        // Live output is shown while it runs.
        .stderr(predicate::str::contains("via 127.0.0.1"));
    let requests = mock.chat_requests();
    let system = requests[0].messages()[0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.contains(&format!("runs on `{HOST}` over ssh")), "{system}");
    let observation = requests[1].tool_result("c1").unwrap();
    assert!(observation.contains("via 127.0.0.1"), "the command ran over ssh: {observation}");
    assert!(observation.contains("exit code: 2") || observation.contains("exit 2"), "{observation}");
    let log = audit(&env);
    assert!(log.contains(&format!("| TOOL: shell.run_command | HOST: {HOST} | CMD:")), "{log}");
    assert!(log.contains("EXIT: 2"), "{log}");
    // The master connection stays for the next run.
    // (Under a TMPDIR too deep for a socket path they share a directory in /tmp: at least one.)
    let preferred = env.opsai_home().join("ssh");
    let dir = opsai::exec::ssh::socket_dir(&preferred);
    let sockets: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(sockets.len() == 1 || (dir != preferred && !sockets.is_empty()), "one control socket in {dir:?}");
    sshd.disconnect(env.opsai_home());
}

#[test]
fn a_timeout_ends_the_remote_command() {
    if !require() {
        return;
    }
    let sshd = Sshd::start();
    let env = TestEnv::new();
    let marker = format!("{}.{}", 40 + rand::random::<u16>() % 1000, rand::random::<u16>() % 1000);
    let mock =
        MockLlm::start([reply_tool_call("c1", "run_command", run(&format!("sleep {marker}"))), reply_text("done")]);
    opsai(&env, &mock, &sshd, r#", "exec": {"timeout_s": 2}"#).arg("wait").assert().success();
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("timed out"), "{observation}");
    // The remote sleep goes away with the hung-up terminal.
    let running = || {
        std::process::Command::new("pgrep").args(["-f", &format!("sleep {marker}")]).output().unwrap().status.success()
    };
    assert!(wait_until(Duration::from_secs(15), || !running()), "the remote `sleep {marker}` is still running");
    sshd.disconnect(env.opsai_home());
}

#[test]
fn an_unreachable_host_is_a_clear_error() {
    if !require() {
        return;
    }
    let sshd = Sshd::start();
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("never")]);
    std::fs::write(env.config_path(), sshd.opsai_config("")).unwrap();
    env.cmd()
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .args(["--ssh-host", "no-such-host.invalid", "hello"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("cannot connect to no-such-host.invalid with ssh"));
    assert!(mock.chat_requests().is_empty());
    env.cmd()
        .args(["--ssh-host", "-oProxyCommand=touch /tmp/pwned", "hello"])
        .timeout(Duration::from_secs(30))
        .assert()
        .failure();
    assert!(!std::path::Path::new("/tmp/pwned").exists());
}

#[test]
fn files_on_the_host_are_read_and_replaced_atomically_keeping_the_mode() {
    use opsai::exec::fs::FileSystem;
    use opsai::exec::ssh::{SshFs, SshTransport};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if !require() {
        return;
    }
    let sshd = Sshd::start();
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("a.sh");
    std::fs::write(&script, "echo 1\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    std::os::unix::fs::symlink(&script, dir.path().join("link.sh")).unwrap();
    let options = vec!["-F".to_owned(), sshd.client_config().display().to_string()];
    let transport = SshTransport::new(HOST, &env.opsai_home().join("ssh"), 5, options).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        transport.connect().await.unwrap();
        assert!(transport.check().await, "the master connection is up");
        let fs = SshFs::new(transport.clone(), None);
        let real = std::fs::canonicalize(&script).unwrap();
        assert_eq!(fs.canonicalize(&dir.path().join("link.sh")).await.unwrap(), real, "symlinks resolved");
        let new = fs.canonicalize(&dir.path().join("new.txt")).await.unwrap();
        assert_eq!(new, std::fs::canonicalize(dir.path()).unwrap().join("new.txt"));
        let meta = fs.metadata(&real).await.unwrap().unwrap();
        assert_eq!((meta.size, meta.mode, meta.is_file), (7, 0o750, true));
        assert!(fs.metadata(&new).await.unwrap().is_none());
        assert_eq!(fs.read(&real, 100).await.unwrap(), b"echo 1\n");
        // Over the limit: the same refusal as on this machine.
        let err = fs.read(&real, 3).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::FileTooLarge, "{err}");
        assert_eq!(err.to_string(), opsai::exec::fs::LocalFs::read_now(&real, 3).unwrap_err().to_string());
        fs.replace(&real, b"echo 2\n").await.unwrap();
        assert_eq!(std::fs::read_to_string(&script).unwrap(), "echo 2\n");
        assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o777, 0o750, "mode kept");
        fs.replace(&new, b"fresh\n").await.unwrap();
        assert_eq!(std::fs::read_to_string(&new).unwrap(), "fresh\n");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains(".opsai.")), "no temp file left: {names:?}");
        assert!(fs.read(&dir.path().join("missing"), 10).await.unwrap_err().kind() == std::io::ErrorKind::NotFound);
        // A directory (or a symlink to one) is refused as on this machine, not written into.
        let sub = real.with_file_name("sub");
        std::fs::create_dir(&sub).unwrap();
        std::os::unix::fs::symlink(&sub, real.with_file_name("sub-link")).unwrap();
        for target in [sub.clone(), real.with_file_name("sub-link")] {
            let err = fs.replace(&target, b"x").await.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{err}");
            assert_eq!(
                err.to_string(),
                format!("on {HOST}: {} is not a regular file; it is left as it is", target.display())
            );
        }
        assert_eq!(std::fs::read_dir(&sub).unwrap().count(), 0, "nothing moved into the directory");
        if is_root() {
            // Another user's set-uid file keeps its owner and all its mode bits (chown, then chmod).
            let theirs = real.with_file_name("theirs.sh");
            std::fs::write(&theirs, "echo 1\n").unwrap();
            std::os::unix::fs::chown(&theirs, Some(4242), Some(4343)).unwrap();
            std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o4750)).unwrap();
            fs.replace(&theirs, b"echo 2\n").await.unwrap();
            let meta = std::fs::metadata(&theirs).unwrap();
            assert_eq!(std::fs::read_to_string(&theirs).unwrap(), "echo 2\n");
            assert_eq!((meta.uid(), meta.gid(), meta.mode() & 0o7777), (4242, 4343, 0o4750), "owner and mode kept");
        }
        transport.disconnect().await;
    });
}

/// Extra opsai config that lets the file tools write under /tmp, where the tests' files are.
const FILES_UNDER_TMP: &str = r#", "files": {"base_dirs": ["/tmp"]}"#;

/// A remote edit's setup: the server, this test's environment, `a.sh` printing 1 in a fresh
/// directory under /tmp, and the `edit_file` arguments that make it print 2.
struct RemoteEdit {
    sshd: Sshd,
    env: TestEnv,
    _dir: tempfile::TempDir,
    script: std::path::PathBuf,
    edit: Value,
}

impl RemoteEdit {
    fn start() -> Self {
        let sshd = Sshd::start();
        let env = TestEnv::new();
        let dir = tempfile::tempdir().unwrap();
        let script = std::fs::canonicalize(dir.path()).unwrap().join("a.sh");
        std::fs::write(&script, "echo 1\n").unwrap();
        let edit = json!({"path": script.display().to_string(), "search": "echo 1", "replace": "echo 2"});
        Self { sshd, env, _dir: dir, script, edit }
    }
}

#[test]
fn a_remote_edit_keeps_a_local_backup_is_audited_with_the_host_and_undo_restores_it_there() {
    if !require() {
        return;
    }
    let RemoteEdit { sshd, env, _dir, script, edit } = RemoteEdit::start();
    let mock = MockLlm::start([
        reply_tool_call("c1", "edit_file", edit),
        reply_tool_call("c2", "run_command", run(&format!("bash {}", script.display()))),
        reply_text("It prints 2 now."),
    ]);
    // A REPL fed from a pipe: one task, then /undo in the same conversation, on the same host.
    opsai(&env, &mock, &sshd, FILES_UNDER_TMP)
        .arg("-y")
        .write_stdin("make a.sh print 2\n/undo\n")
        .assert()
        .success()
        .stderr(predicate::str::contains(format!("restored {}", script.display())));
    let observation = mock.chat_requests()[2].tool_result("c2").unwrap();
    assert!(observation.contains('2'), "the edited script ran on the host: {observation}");
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "echo 1\n", "undone on the host");
    let log = audit(&env);
    assert!(log.contains(&format!("TOOL: file.edit_file | HOST: {HOST} |")), "{log}");
    // The backup is on this machine, under the host's name.
    let backups = walk(&env.opsai_home().join("backups"));
    let saved: Vec<_> = backups.iter().filter(|p| p.ends_with("a.sh") && p.to_string_lossy().contains(HOST)).collect();
    assert_eq!(saved.len(), 1, "{backups:?}");
    assert_eq!(std::fs::read_to_string(saved[0]).unwrap(), "echo 1\n");
    sshd.disconnect(env.opsai_home());
}

#[test]
fn opsai_undo_restores_a_one_shot_remote_edit_on_its_host_refusing_later_changes_without_force() {
    if !require() {
        return;
    }
    let RemoteEdit { sshd, env, _dir, script, edit } = RemoteEdit::start();
    let mock = MockLlm::start([reply_tool_call("c1", "edit_file", edit), reply_text("It prints 2 now.")]);
    opsai(&env, &mock, &sshd, FILES_UNDER_TMP).args(["-y", "make a.sh print 2"]).assert().success();
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "echo 2\n");
    // The master connection is gone: `opsai undo` reaches the recorded host on its own.
    sshd.disconnect(env.opsai_home());
    // Changed on the host after opsai wrote it: refused, with what to do.
    std::fs::write(&script, "echo 2 # tuned by hand\n").unwrap();
    let undo = || {
        let mut cmd = env.cmd();
        cmd.arg("undo").timeout(Duration::from_secs(60));
        cmd
    };
    undo()
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!("{} on {HOST} changed after opsai wrote it", script.display())))
        .stderr(predicate::str::contains("--force`"));
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "echo 2 # tuned by hand\n");
    std::fs::write(&script, "echo 2\n").unwrap();
    undo()
        .assert()
        .success()
        .stdout(predicate::str::starts_with(format!("restored {} on {HOST} (changed at ", script.display())));
    assert_eq!(std::fs::read_to_string(&script).unwrap(), "echo 1\n", "restored on the host");
    let log = audit(&env);
    let undo_lines: Vec<&str> = log.lines().filter(|line| line.contains("| TOOL: file.undo |")).collect();
    assert_eq!(undo_lines.len(), 2, "{log}");
    assert!(
        undo_lines
            .iter()
            .all(|line| line.contains(&format!("INPUT: \"opsai undo\" | TOOL: file.undo | HOST: {HOST} |")))
    );
    assert!(undo_lines[0].contains("CONFIRMED: no") && undo_lines[1].contains("CONFIRMED: yes | EXIT: 0"), "{log}");
    undo().assert().code(1).stderr(predicate::str::contains("nothing to undo"));
    sshd.disconnect(env.opsai_home());
}

#[test]
fn the_approval_prompt_names_the_host_before_the_answer() {
    if !require() || !crate::support::tmux::require("tmux") {
        return;
    }
    let sshd = Sshd::start();
    let env = TestEnv::new();
    let marker = env.user_home().join(format!("ran-{}", rand::random::<u32>()));
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run(&format!("touch {} && echo touched", marker.display()))),
        reply_text("Done on the host."),
    ]);
    std::fs::write(env.config_path(), sshd.opsai_config("")).unwrap();
    let term = crate::support::tmux::Tmux::start(
        env!("CARGO_BIN_EXE_opsai"),
        &["--ssh-host", HOST, "touch the marker"],
        &env.terminal_vars(&mock.base_url()),
        env.user_home(),
    );
    let limit = Duration::from_secs(60);
    let screen = term.wait_for("[y] run once", limit);
    assert!(screen.contains(&format!("] on {HOST}: touch {}", marker.display())), "{screen}");
    assert!(!marker.exists(), "nothing ran before the answer");
    term.type_text("y");
    term.wait_for("Done on the host.", limit);
    assert_eq!(term.wait_exit(limit), 0);
    assert!(marker.exists(), "it ran after the answer");
    sshd.disconnect(env.opsai_home());
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

#[test]
fn kill_9_during_a_remote_write_leaves_the_old_or_the_new_file_and_no_temp() {
    if !require() {
        return;
    }
    let sshd = Sshd::start();
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(dir.path()).unwrap();
    let path = dir.join("big.txt");
    let temps = || TestEnv::entries(&dir).into_iter().filter(|name| name.contains(".opsai.")).collect::<Vec<_>>();
    let mut rewrites = KilledRewrites::of_big_files();
    for round in 0..8u64 {
        std::fs::write(&path, &rewrites.old).unwrap();
        let mock = MockLlm::start([
            reply_tool_call("c1", "write_file", json!({"path": path.display().to_string(), "content": rewrites.new})),
            reply_text("written"),
        ]);
        std::fs::write(env.config_path(), sshd.opsai_config(FILES_UNDER_TMP)).unwrap();
        let mut child = env
            .std_cmd()
            .env("OPSAI_BASE_URL", mock.base_url())
            .env("OPSAI_NONINTERACTIVE", "1")
            .args(["--ssh-host", HOST, "-y", "-q", "write the big file"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Once the remote temp file exists, 0–35 ms into the transfer.
        let deadline = Instant::now() + Duration::from_secs(60);
        while temps().is_empty() && Instant::now() < deadline && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_micros(500));
        }
        // Where in the transfer the kill lands is what the rounds vary.
        std::thread::sleep(Duration::from_millis(round * 5));
        child.kill().unwrap();
        child.wait().unwrap();
        // The remote side sees its stdin end, finds the copy short, and removes it.
        let _ = wait_until(Duration::from_secs(15), || temps().is_empty());
        assert_eq!(temps(), Vec::<String>::new(), "round {round}: a temp file was left");
        rewrites.check(round, &path);
    }
    rewrites.report();
    assert!(rewrites.kept_old > 0, "no kill landed mid-transfer");
    sshd.disconnect(env.opsai_home());
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn host_in_the_repl_moves_commands_to_the_host_and_back() {
    if !require() {
        return;
    }
    let sshd = Sshd::start();
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", run("echo \"[$SSH_CONNECTION]\"")),
        reply_text("remote"),
        reply_tool_call("c2", "run_command", run("echo \"[$SSH_CONNECTION]\"")),
        reply_text("local"),
    ]);
    std::fs::write(env.config_path(), sshd.opsai_config("")).unwrap();
    env.cmd()
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .timeout(Duration::from_secs(90))
        .write_stdin(format!("/host\n/host {HOST}\nwhere am I\n/host local\nand now\n"))
        .assert()
        .success()
        .stderr(predicate::str::contains("commands run on this machine (`/host HOST` to use ssh)"))
        .stderr(predicate::str::contains(format!("commands and file tools now run on {HOST} over ssh")))
        .stderr(predicate::str::contains("commands run on this machine again"));
    let requests = mock.chat_requests();
    let remote = requests[1].tool_result("c1").unwrap();
    assert!(remote.contains("[127.0.0.1 "), "{remote}");
    let local = requests[3].tool_result("c2").unwrap();
    assert!(local.contains("[]"), "{local}");
    let system = |i: usize| requests[i].messages()[0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system(0).contains("over ssh") && !system(2).contains("over ssh"));
    sshd.disconnect(env.opsai_home());
}
