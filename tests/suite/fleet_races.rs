//! The edges between steps of a remote run, on real sshd on loopback: a cancel that comes while a
//! host is still connecting (nothing ran there, so it is not run), the remote sandbox probe
//! remembered per destination (two servers on one address are two hosts), and the terminal's
//! Ctrl-C on a single `--ssh-host` being opsai's cancel, as on a fleet.

use std::time::Duration;

use opsai::exec::ssh::SshTransport;
use opsai::exec::ssh::sandbox::{RemoteSandbox, probe};
use opsai::fleet::fanout::{Fanout, FanoutConfig, FleetRequest, Outcome, Skip};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::TestEnv;
use crate::support::fleet::{Fleet, Kind, processes_with};
use crate::support::mock_llm::*;
use crate::support::sshd::{HOST, Sshd, require, user};

/// A Ctrl-C while one host runs and another still connects: the running one is cancelled (its
/// command ended), the connecting one is not run (nothing started there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_a_host_connects_leaves_it_not_run() {
    if !require() {
        return;
    }
    let fleet = Fleet::start(&[("up-1", Kind::Up("a")), ("hangs-1", Kind::Hangs)]);
    let mut config = FanoutConfig::new(&fleet.path().join("ssh"));
    config.timeout = Duration::from_secs(60);
    config.connect_timeout = Duration::from_secs(50);
    config.ssh_options = fleet.ssh_options();
    let fanout = Fanout::new(config);
    let sleep = format!("sleep 1000.{}7", std::process::id());
    let cancel = CancellationToken::new();
    let canceller = {
        let (cancel, sleep) = (cancel.clone(), sleep.clone());
        tokio::task::spawn_blocking(move || {
            let running = opsai::testing::wait_until(Duration::from_secs(30), || processes_with(&sleep) >= 1);
            cancel.cancel();
            running
        })
    };
    let result = fanout.run(&fleet.hosts(), &FleetRequest::new(sleep.clone(), "/"), &cancel).await;
    assert!(canceller.await.unwrap(), "the command never started on up-1");
    let outcome = |host: &str| result.run(host).map(|run| run.outcome);
    assert_eq!(outcome("up-1"), Some(Outcome::Cancelled), "{result:#?}");
    assert_eq!(outcome("hangs-1"), Some(Outcome::NotRun(Skip::Cancelled)), "{result:#?}");
    let gone = opsai::testing::wait_until(Duration::from_secs(10), || processes_with(&sleep) == 0);
    assert!(gone, "left behind: {}", processes_with(&sleep));
    fanout.disconnect_all().await;
}

/// One client config for two servers on 127.0.0.1: both user keys, both host keys pinned.
fn shared_config(dir: &std::path::Path, servers: &[&Sshd]) -> std::path::PathBuf {
    let mut known = String::new();
    let mut identities = String::new();
    for server in servers {
        known.push_str(&std::fs::read_to_string(server.dir().join("known_hosts")).unwrap());
        identities.push_str(&format!("  IdentityFile {}\n", server.dir().join("user_key").display()));
    }
    std::fs::write(dir.join("known_hosts"), known).unwrap();
    let config = format!(
        "Host 127.0.0.1\n  User {}\n{identities}  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
         StrictHostKeyChecking yes\n  BatchMode yes\n",
        user(),
        dir.join("known_hosts").display()
    );
    std::fs::write(dir.join("ssh_config"), config).unwrap();
    dir.join("ssh_config")
}

/// Two hosts on one address, told apart only by their port: each gets its own probe result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_probe_is_remembered_per_destination_not_per_address() {
    if !require() {
        return;
    }
    let plain = Sshd::start();
    // Every session there prints one line: its probe finds "forced-by-the-test" and no sandbox.
    let forced = Sshd::start_with("ForceCommand echo 'note forced-by-the-test'\n");
    let dir = tempfile::tempdir().unwrap();
    let config = shared_config(dir.path(), &[&plain, &forced]);
    let transport = |port: u16| {
        let options = vec!["-F".into(), config.display().to_string(), "-p".into(), port.to_string()];
        SshTransport::new("127.0.0.1", &dir.path().join("ssh"), 30, options).unwrap()
    };
    let first = probe(&transport(plain.port)).await;
    let second = probe(&transport(forced.port)).await;
    assert_eq!(second, RemoteSandbox::None { reason: "forced-by-the-test".into() }, "first: {first:?}");
    assert_ne!(first, second);
}

/// The terminal's Ctrl-C during a command on one `--ssh-host` is opsai's cancel: the remote
/// command ends, the turn goes on, and the model hears it was interrupted.
#[test]
fn ctrl_c_on_a_single_ssh_host_ends_the_remote_command_and_the_turn_goes_on() {
    use crate::support::pty::PtySession;
    if !require() {
        return;
    }
    let limit = Duration::from_secs(60);
    let sshd = Sshd::start();
    let sleep = format!("sleep 1000.{}9", std::process::id());
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": sleep, "why": "test"})),
        reply_text("It was stopped."),
    ]);
    std::fs::write(env.config_path(), sshd.opsai_config("")).unwrap();
    let vars = env.terminal_vars(&mock.base_url());
    let args = ["--ssh-host", HOST, "-y", "wait"];
    let mut session =
        PtySession::spawn(env!("CARGO_BIN_EXE_opsai"), &args, &vars, env.user_home()).answer_cursor_queries();
    let running = opsai::testing::wait_until(limit, || processes_with(&sleep) >= 1);
    assert!(running, "the command never ran: {}", session.screen());
    session.send("\x03");
    session.expect("It was stopped.", limit);
    assert_eq!(session.wait(limit), 0, "the turn goes on after a cancelled command");
    let gone = opsai::testing::wait_until(Duration::from_secs(10), || processes_with(&sleep) == 0);
    assert!(gone, "left behind on the host: {}", processes_with(&sleep));
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.to_lowercase().contains("interrupt"), "{observation}");
    sshd.disconnect(env.opsai_home());
}
