//! Safe commands that need a daemon get the right sandbox, and every built-in analysis command
//! succeeds where it runs (issue 21 §3), through the real binary with the real sandbox on.
//! Needs the sandbox (Landlock): under CI=true a missing one fails, elsewhere the test is skipped.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

fn agent(env: &TestEnv, mock: &MockLlm, path: &str) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .env("PATH", path)
        .timeout(Duration::from_secs(90));
    cmd
}

/// What a failure caused by the sandbox prints (the observation hint's own marks).
fn denied(text: &str) -> bool {
    let lower = text.to_lowercase();
    ["permission denied", "operation not permitted", "read-only file system", "opsai sandbox:", "eacces", "eperm"]
        .iter()
        .any(|mark| lower.contains(mark))
}

#[test]
fn a_plain_safe_docker_line_reaches_the_daemon_socket_and_anything_more_stays_strict() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let Some(python) = ["/usr/bin/python3", "/usr/local/bin/python3"].into_iter().find(|p| Path::new(p).exists())
    else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "python3 is required under CI=true");
        crate::support::skipped("no /usr/bin/python3");
        return;
    };
    // A stand-in daemon on a Unix socket, and a `docker` that talks to it.
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("docker.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.write_all(b"daemon-says-hello");
            let mut rest = Vec::new();
            let _ = stream.read_to_end(&mut rest);
        }
    });
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let docker = bin.join("docker");
    opsai::testing::write_program(
        &docker,
        format!(
            "#!/bin/sh\nexec {python} -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); \
             print(\"CONNECTED\", s.recv(64).decode())' {}\n",
            socket.display()
        ),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "docker ps -a"})),
        reply_tool_call("c2", "run_command", json!({"command": "docker ps -a | head -n 5"})),
        reply_text("done"),
    ]);
    agent(&env, &mock, &path).arg("containers?").assert().success();
    let requests = mock.chat_requests();
    let routed = requests[1].tool_result("c1").unwrap();
    assert!(routed.contains("CONNECTED daemon-says-hello"), "{routed}");
    let strict = requests[2].tool_result("c2").unwrap();
    assert!(!strict.contains("CONNECTED") && denied(&strict), "a piped line keeps the strict sandbox: {strict}");
}

#[test]
fn every_builtin_analysis_command_runs_without_a_sandbox_denial() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let work = tempfile::tempdir().unwrap();
    let mut sleeper = std::process::Command::new("sleep").arg("60").current_dir(work.path()).spawn().unwrap();
    let notes = work.path().join("notes.txt");
    std::fs::write(&notes, "remember the milk\n").unwrap();
    let targets = [
        ("port", port.to_string()),
        ("process", sleeper.id().to_string()),
        ("file", notes.display().to_string()),
        ("service", "ssh".to_owned()),
        ("container", "web".to_owned()),
    ];
    let mut replies: Vec<_> = targets
        .iter()
        .enumerate()
        .map(|(i, (kind, target))| {
            reply_tool_call(&format!("c{i}"), "analyze", json!({"target": target, "type": kind}))
        })
        .collect();
    replies.push(reply_text("done"));
    let mock = MockLlm::start(replies);
    let path = std::env::var("PATH").unwrap_or_default();
    agent(&env, &mock, &path).arg("what are these?").assert().success();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let requests = mock.chat_requests();
    for (i, (kind, _)) in targets.iter().enumerate() {
        let report = requests[i + 1].tool_result(&format!("c{i}")).unwrap();
        assert!(!denied(&report), "a {kind} analysis command failed in its sandbox: {report}");
        match *kind {
            "port" => {
                let me = std::process::id();
                assert!(report.contains(&format!("127.0.0.1:{port} LISTEN")), "{report}");
                assert!(report.contains(&format!("pid {me} ")), "the owner is named: {report}");
            }
            "process" => {
                let cwd = work.path().canonicalize().unwrap();
                assert!(report.contains(&format!("working directory: {}", cwd.display())), "{report}");
            }
            "file" => assert!(report.contains("$ stat ") && report.contains("notes.txt"), "{report}"),
            _ => {}
        }
    }
    drop(listener);
}
