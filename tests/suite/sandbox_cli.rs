//! The OS sandbox (issue 13 §1), checked from outside it: `opsai sandbox -- CMD` and commands the
//! agent auto-runs cannot write, read secrets or reach the network; what a human approved can.
//! Needs a kernel with Landlock (ABI ≥ 3): under `CI=true` a missing sandbox fails, elsewhere the
//! tests are skipped with the reason printed.

use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;

/// The observation line a sandboxed failure adds for the model.
const HINT: &str = "ran in the read-only sandbox";

/// Whether the sandbox works here; `false` (skip) only outside CI.
fn sandbox_available(env: &TestEnv) -> bool {
    let Some(text) = env.sandbox_available() else { return false };
    assert!(text.starts_with("sandbox: available\n"), "{text}");
    true
}

/// A directory with `python3` in it, to put first on PATH (a version manager's shim would need
/// the real HOME); `None` (skip) when there is no system python3 outside CI.
fn python_dir(env: &TestEnv) -> Option<PathBuf> {
    let python = ["/usr/bin/python3", "/usr/local/bin/python3"].into_iter().map(Path::new).find(|p| p.exists());
    let Some(python) = python else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "python3 is required under CI=true");
        crate::support::skipped("no /usr/bin/python3");
        return None;
    };
    let dir = env.user_home().join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(python, dir.join("python3")).unwrap();
    Some(dir)
}

fn path_with(dir: &Path) -> String {
    format!("{}:{}", dir.display(), std::env::var("PATH").unwrap_or_default())
}

/// The secrets a command must not see, planted in the test's HOME and working directory.
fn plant_secrets(env: &TestEnv) -> (PathBuf, PathBuf) {
    let ssh = env.user_home().join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    std::fs::write(ssh.join("id_x"), "SSH-PRIVATE-KEY-CONTENT\n").unwrap();
    let dotenv = env.user_home().join(".env");
    std::fs::write(&dotenv, "DB_PASSWORD=DOTENV-SECRET-CONTENT\n").unwrap();
    (ssh.join("id_x"), dotenv)
}

fn sandboxed_sh(env: &TestEnv, script: &str) -> std::process::Output {
    env.std_cmd().args(["sandbox", "--", "sh", "-c", script]).output().unwrap()
}

#[test]
fn status_names_what_is_applied() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let out = env.cmd().args(["sandbox", "--status"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("landlock: ABI"), "{text}");
    assert!(text.contains("seccomp: on"), "{text}");
    assert!(text.contains("network: denied"), "{text}");
}

#[test]
fn status_says_off_when_the_config_opts_out() {
    let env = TestEnv::new();
    env.write_config(r#"{"safety": {"sandbox": "off"}}"#);
    let out = env.cmd().args(["sandbox", "--status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("sandbox: off"));
    // And `opsai sandbox -- CMD` refuses rather than running it unsandboxed.
    let marker = env.user_home().join("ran");
    let out = env.std_cmd().args(["sandbox", "--", "touch"]).arg(&marker).output().unwrap();
    assert_eq!(out.status.code(), Some(121));
    assert!(!marker.exists());
}

#[test]
fn a_bad_sandbox_value_names_the_key() {
    let env = TestEnv::new();
    env.write_config(r#"{"safety": {"sandbox": "maybe"}}"#);
    let out = env.cmd().args(["sandbox", "--status"]).output().unwrap();
    // The sandbox reads the config itself and stays on when the file is unusable; the agent's own
    // load reports the key.
    let shown = env.cmd().args(["config", "show"]).output().unwrap();
    assert_eq!(shown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&shown.stderr).contains("safety.sandbox"), "{shown:?}");
    assert!(!String::from_utf8_lossy(&out.stdout).starts_with("sandbox: off"));
}

#[test]
fn cannot_write_anywhere_and_the_exit_code_passes_through() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let target = env.user_home().join("written.txt");
    let tmp = tempfile::tempdir().unwrap();
    let tmp_target = tmp.path().join("t");
    let out = sandboxed_sh(
        &env,
        &format!(
            "echo x > '{}'; echo x > '{}'; mkdir '{}/d'; rm -f '{}/.bashrc'; echo fine > /dev/null; exit 7",
            target.display(),
            tmp_target.display(),
            tmp.path().display(),
            env.user_home().display()
        ),
    );
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    assert!(!target.exists());
    assert!(!tmp_target.exists());
    assert!(!tmp.path().join("d").exists());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Permission denied"), "{stderr}");
}

#[test]
fn cannot_read_secrets_but_reads_everything_else() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let (key, dotenv) = plant_secrets(&env);
    std::fs::write(env.user_home().join("notes.txt"), "ORDINARY-CONTENT\n").unwrap();
    env.write_config(r#"{"llm": {"api_key": "sk-CONFIG-KEY-CONTENT"}}"#);
    let out = sandboxed_sh(
        &env,
        &format!(
            "cat '{}'; cat .env; cat '{}'; cat notes.txt; cat /proc/$PPID/environ; ls -d .ssh; cat '{}'",
            key.display(),
            dotenv.display(),
            env.config_path().display()
        ),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("ORDINARY-CONTENT"), "ordinary files stay readable: {stdout} {stderr}");
    assert!(!stdout.contains("SSH-PRIVATE-KEY-CONTENT"), "{stdout}");
    assert!(!stdout.contains("DOTENV-SECRET-CONTENT"), "{stdout}");
    assert!(!stdout.contains("sk-CONFIG-KEY-CONTENT"), "opsai's own config (the API key): {stdout}");
    // The parent (opsai) has OPSAI_HOME in its environment: its environ is not readable.
    assert!(!stdout.contains("OPSAI_HOME="), "{stdout}");
    assert!(stderr.contains(&format!("{}: Permission denied", key.display())), "{stderr}");
    assert!(stderr.contains("cat: .env: Permission denied"), "{stderr}");
    assert!(stderr.contains("environ: Permission denied"), "{stderr}");
}

#[test]
fn secret_looking_variables_are_removed() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let out = env
        .std_cmd()
        .env("GITHUB_TOKEN", "ghp_not_for_you")
        .env("PGPASSWORD", "pw")
        .env("KEEP_ME", "kept")
        .args(["sandbox", "--", "sh", "-c", "echo ${GITHUB_TOKEN:-none} ${PGPASSWORD:-none} $KEEP_ME $PWD"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("none none kept {}\n", env.user_home().display()),
        "{out:?}"
    );
}

/// TCP to a listener, UDP to a socket and a Unix-domain listener (what the docker daemon, systemd
/// and D-Bus listen on) this test owns; all are checked after the command exited (`connect` and a
/// loopback `sendto` complete before it can exit).
struct Listeners {
    tcp: TcpListener,
    udp: UdpSocket,
    unix: UnixListener,
    _dir: tempfile::TempDir,
}

impl Listeners {
    fn open() -> Self {
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_nonblocking(true).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let unix = UnixListener::bind(dir.path().join("daemon.sock")).unwrap();
        unix.set_nonblocking(true).unwrap();
        Self { tcp, udp, unix, _dir: dir }
    }

    fn script(&self) -> String {
        let tcp = self.tcp.local_addr().unwrap().port();
        let udp = self.udp.local_addr().unwrap().port();
        let unix = self.unix.local_addr().unwrap().as_pathname().unwrap().display().to_string();
        format!(
            "import socket\n\
             for name, family, kind, addr in (('tcp', socket.AF_INET, socket.SOCK_STREAM, ('127.0.0.1', {tcp})),\n\
             \x20                              ('udp', socket.AF_INET, socket.SOCK_DGRAM, ('127.0.0.1', {udp})),\n\
             \x20                              ('unix', socket.AF_UNIX, socket.SOCK_STREAM, {unix:?})):\n\
             \x20   try:\n\
             \x20       s = socket.socket(family, kind)\n\
             \x20       s.connect(addr)\n\
             \x20       s.send(b'leak')\n\
             \x20       print(name, 'sent')\n\
             \x20   except OSError as e:\n\
             \x20       print(name, 'blocked', e)\n"
        )
    }

    fn assert_nothing_arrived(&self) {
        assert_eq!(
            self.tcp.accept().map(|_| ()).unwrap_err().kind(),
            ErrorKind::WouldBlock,
            "a TCP connection came in"
        );
        let mut buf = [0u8; 16];
        assert_eq!(self.udp.recv(&mut buf).unwrap_err().kind(), ErrorKind::WouldBlock, "a datagram came in");
        assert_eq!(
            self.unix.accept().map(|_| ()).unwrap_err().kind(),
            ErrorKind::WouldBlock,
            "a Unix-socket connection came in"
        );
    }

    fn assert_both_arrived(&self) {
        assert!(self.tcp.accept().is_ok(), "the TCP connection should have come in");
        let mut buf = [0u8; 16];
        assert_eq!(self.udp.recv(&mut buf).unwrap(), 4);
        assert!(self.unix.accept().is_ok(), "the Unix-socket connection should have come in");
    }
}

#[test]
fn cannot_connect_or_send_anywhere() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let Some(bin) = python_dir(&env) else { return };
    let listeners = Listeners::open();
    let out = env
        .std_cmd()
        .env("PATH", path_with(&bin))
        .args(["sandbox", "--", "python3", "-c", &listeners.script()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("tcp blocked"), "{out:?}");
    assert!(stdout.contains("udp blocked"), "{out:?}");
    assert!(stdout.contains("unix blocked"), "{out:?}");
    listeners.assert_nothing_arrived();
    // The same script outside the sandbox reaches both: the test can see a leak.
    let out = std::process::Command::new(bin.join("python3")).args(["-c", &listeners.script()]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("tcp sent"), "{out:?}");
    listeners.assert_both_arrived();
}

/// The sandboxed attack: python3 made Safe by a user rule, secrets planted, listeners open, the
/// script written. `None` (skip) where the sandbox or python3 is missing outside CI.
fn hostile_setup(env: &TestEnv) -> Option<(PathBuf, Listeners)> {
    if !sandbox_available(env) {
        return None;
    }
    let bin = python_dir(env)?;
    env.write_config(ALLOW_PYTHON);
    plant_secrets(env);
    let listeners = Listeners::open();
    attack_script(env, &listeners);
    Some((bin, listeners))
}

fn agent(env: &TestEnv, mock: &MockLlm, bin: &Path) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .env("PATH", path_with(bin))
        .env("GITHUB_TOKEN", "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB")
        .timeout(Duration::from_secs(60));
    cmd
}

/// A user rule makes `python3` Safe, standing in for any command line the policy misjudges: the
/// sandbox must hold whatever the classifier said.
const ALLOW_PYTHON: &str =
    r#"{"safety": {"allow": [{"pattern": ["python3"], "reason": "stands in for a misjudged command"}]}}"#;

fn attack_script(env: &TestEnv, listeners: &Listeners) -> PathBuf {
    let written = env.user_home().join("written-by-model.txt");
    let script = format!(
        "{net}\
         import os\n\
         for path in ({key:?}, '.env'):\n\
         \x20   try:\n\
         \x20       print(open(path).read())\n\
         \x20   except OSError as e:\n\
         \x20       print('read blocked', e)\n\
         try:\n\
         \x20   open({written:?}, 'w').write('x')\n\
         except OSError as e:\n\
         \x20   print('write blocked', e)\n\
         print('token', os.environ.get('GITHUB_TOKEN', 'none'))\n\
         open('/dev/tty', 'w').write('the-terminal-is-writable\\n')\n\
         raise SystemExit(1)\n",
        net = listeners.script(),
        key = env.user_home().join(".ssh/id_x").display().to_string(),
        written = written.display().to_string(),
    );
    let path = env.user_home().join("attack.py");
    std::fs::write(&path, script).unwrap();
    path
}

#[test]
fn an_auto_run_command_cannot_write_read_secrets_or_connect() {
    let env = TestEnv::new();
    let Some((bin, listeners)) = hostile_setup(&env) else { return };
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "python3 attack.py", "why": "test"})),
        reply_text("done"),
    ]);
    agent(&env, &mock, &bin).arg("look around").assert().success();
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(!env.user_home().join("written-by-model.txt").exists(), "{observation}");
    listeners.assert_nothing_arrived();
    assert!(!observation.contains("SSH-PRIVATE-KEY-CONTENT"), "{observation}");
    assert!(!observation.contains("DOTENV-SECRET-CONTENT"), "{observation}");
    assert!(observation.contains("token none"), "{observation}");
    assert!(observation.contains("write blocked"), "{observation}");
    // The command's own terminal (the PTY) stays writable.
    assert!(observation.contains("the-terminal-is-writable"), "{observation}");
    assert!(observation.contains(HINT), "the model is told why: {observation}");
    assert!(observation.contains("\"sandbox\": false"), "{observation}");
    let log = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap();
    assert!(log.contains("CMD: \"python3 attack.py\" | RISK: safe | CONFIRMED: auto | EXIT: 1"), "{log}");
}

#[test]
fn a_command_approved_with_yes_runs_unsandboxed() {
    let env = TestEnv::new();
    let Some(bin) = python_dir(&env) else { return };
    let listeners = Listeners::open();
    attack_script(&env, &listeners);
    // No allow rule: `python3 attack.py` is Medium, approved up front by -y.
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "python3 attack.py", "why": "test"})),
        reply_text("done"),
    ]);
    agent(&env, &mock, &bin).args(["-y", "do it"]).assert().success();
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(env.user_home().join("written-by-model.txt").exists(), "{observation}");
    listeners.assert_both_arrived();
    assert!(!observation.contains(HINT), "{observation}");
}

#[test]
fn asking_for_no_sandbox_only_adds_a_prompt() {
    let env = TestEnv::new();
    let Some(bin) = python_dir(&env) else { return };
    let marker = env.user_home().join("ran.txt");
    let mock = MockLlm::start([
        reply_tool_call(
            "c1",
            "run_command",
            json!({"command": format!("ls > '{}'", marker.display()), "sandbox": false}),
        ),
        reply_tool_call("c2", "run_command", json!({"command": "echo still-safe", "sandbox": true})),
        reply_text("done"),
    ]);
    agent(&env, &mock, &bin).arg("list").assert().code(3);
    let first: Value = mock.chat_requests()[1].tool_result("c1").unwrap().into();
    let first = first.as_str().unwrap().to_owned();
    assert!(first.starts_with("refused:"), "{first}");
    assert!(!marker.exists());
    let second = mock.chat_requests()[2].tool_result("c2").unwrap();
    assert!(second.contains("still-safe"), "{second}");
}

#[test]
fn with_the_sandbox_off_auto_runs_are_unsandboxed_and_it_says_so() {
    let env = TestEnv::new();
    let Some(bin) = python_dir(&env) else { return };
    env.write_config(r#"{"safety": {"sandbox": "off", "allow": [{"pattern": ["python3"], "reason": "test"}]}}"#);
    let listeners = Listeners::open();
    attack_script(&env, &listeners);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "python3 attack.py"})),
        reply_text("done"),
    ]);
    let out = agent(&env, &mock, &bin).arg("go").assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert_eq!(stderr.matches("safety.sandbox is \"off\"").count(), 1, "{stderr}");
    assert!(env.user_home().join("written-by-model.txt").exists());
    listeners.assert_both_arrived();
}

#[test]
fn a_safe_command_asking_for_no_sandbox_says_why_and_a_yes_runs_it_unsandboxed() {
    use crate::support::pty::PtySession;
    let env = TestEnv::new();
    let Some(bin) = python_dir(&env) else { return };
    env.write_config(ALLOW_PYTHON);
    let listeners = Listeners::open();
    attack_script(&env, &listeners);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "python3 attack.py", "sandbox": false})),
        reply_text("done"),
    ]);
    let mut vars = env.terminal_vars(&mock.base_url());
    vars.retain(|(name, _)| *name != "PATH");
    vars.push(("PATH", path_with(&bin)));
    let mut session = PtySession::spawn(env!("CARGO_BIN_EXE_opsai"), &["go"], &vars, env.user_home());
    session.expect("[n] no", Duration::from_secs(30));
    let screen = session.screen();
    assert!(screen.contains("python3 attack.py"), "{screen}");
    assert!(screen.contains("read-only, but asks: the command asked to run outside the sandbox"), "{screen}");
    session.send("y\r");
    session.expect("done", Duration::from_secs(30));
    assert_eq!(session.wait(Duration::from_secs(30)), 0);
    assert!(env.user_home().join("written-by-model.txt").exists(), "the human yes ran it unsandboxed");
    listeners.assert_both_arrived();
}

#[test]
fn a_widget_probe_runs_in_the_sandbox() {
    let env = TestEnv::new();
    let Some((bin, listeners)) = hostile_setup(&env) else { return };
    let mock = MockLlm::start([
        reply_tool_call("p1", "run_command", json!({"command": "python3 attack.py", "why": "look"})),
        reply_tool_call("c1", "propose_command", json!({"command": "ls", "explanation": "test"})),
    ]);
    let out = env
        .std_cmd()
        .arg("widget")
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_SHELL", "zsh")
        .env("OPSAI_SHELL_VERSION", "5.9")
        .env("OPSAI_BUFFER", "look around")
        .env("PATH", path_with(&bin))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ls", "{out:?}");
    let observation = mock.chat_requests()[1].tool_result("p1").unwrap();
    assert!(!env.user_home().join("written-by-model.txt").exists(), "{observation}");
    listeners.assert_nothing_arrived();
    assert!(!observation.contains("SSH-PRIVATE-KEY-CONTENT"), "{observation}");
    assert!(observation.contains("write blocked"), "{observation}");
}

#[test]
fn where_no_sandbox_can_be_applied_auto_runs_ask_and_it_is_said_once() {
    // A running opsai whose executable was deleted cannot start its sandbox helper (it re-executes
    // itself): the same situation as a kernel without Landlock, as far as the agent can tell.
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("opsai");
    opsai::testing::copy_program(env!("CARGO_BIN_EXE_opsai"), &copy);
    let marker = env.user_home().join("ran.txt");
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo first"})),
        reply_tool_call("c2", "run_command", json!({"command": "echo second"})),
        reply_text("done"),
    ]);
    let child = std::process::Command::new(&copy)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPSAI_HOME", env.opsai_home())
        .env("HOME", env.user_home())
        .env("NO_COLOR", "1")
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .current_dir(env.user_home())
        .arg("say something")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // `spawn` returns once the exec happened.
    std::fs::remove_file(&copy).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let first = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(
        first.starts_with("refused: no sandbox on this machine (opsai's executable was replaced or deleted"),
        "{first}"
    );
    assert!(first.contains("needs confirmation in a terminal"), "{first}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("commands that would run without asking ask first").count(), 1, "said once: {stderr}");
    assert!(stderr.contains("opsai sandbox --status"), "{stderr}");
    assert!(!marker.exists());
    let log = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap();
    assert!(log.contains("CMD: \"echo first\" | RISK: safe | CONFIRMED: no"), "{log}");
}

#[test]
fn another_terminal_and_raw_devices_are_not_readable() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    // A terminal with a typed line waiting in it, as the user's other shell would have.
    let pty = nix::pty::openpty(None, None).unwrap();
    let slave = std::fs::read_link(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&pty.slave))).unwrap();
    nix::unistd::write(&pty.master, b"typed-password\n").unwrap();
    let out = sandboxed_sh(&env, &format!("head -c 5 '{}'; head -c 5 /dev/urandom | wc -c", slave.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("typed"), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"), "{out:?}");
    assert!(stdout.trim_end().ends_with('5'), "/dev/urandom stays readable: {out:?}");
}

/// A process started inside the sandbox (a pipeline stage, a subshell) sees `/proc` as any process
/// does — `ps aux | grep x` and `df` work — while the parent's environment, opsai's, stays closed
/// and the kernel-memory files do not open.
#[test]
fn processes_started_inside_read_proc_but_not_other_environments() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let out = sandboxed_sh(
        &env,
        "(cat /proc/self/stat >/dev/null && echo child-proc-ok) | cat; \
         grep -c . /proc/self/mounts >/dev/null && echo mounts-ok; \
         cat /proc/$PPID/environ >/dev/null 2>&1 || echo parent-environ-closed; \
         cat /proc/kmsg >/dev/null 2>&1 || echo kmsg-closed; \
         cat /proc/kcore >/dev/null 2>&1 || echo kcore-closed",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for line in ["child-proc-ok", "mounts-ok", "parent-environ-closed", "kmsg-closed", "kcore-closed"] {
        assert!(stdout.lines().any(|l| l == line), "{line} missing: {out:?}");
    }
}
