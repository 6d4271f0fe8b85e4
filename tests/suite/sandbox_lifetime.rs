//! A sandboxed command's effects end with it (issue 21 §2), checked from outside with real
//! processes: nothing it starts survives it (`setsid`, `nohup`, double forks; when it ends, times
//! out or is interrupted), it cannot change a process outside (nice, limits, I/O class, CPU
//! affinity, scheduling), no IPC object or file lock outlives it or blocks another program, and a
//! fork bomb, memory hog or CPU spinner is stopped by its limit. As root, and as `nobody` through
//! `setpriv` where that can be done. Skipped outside CI where the sandbox is missing.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::TestEnv;
use crate::support::inspect::processes_with;
use crate::support::mock_llm::*;
use crate::support::pty::PtySession;
use opsai::testing::wait_until;

const LIMIT: Duration = Duration::from_secs(30);

fn status(env: &TestEnv) -> (bool, String) {
    let out = env.cmd().args(["sandbox", "--status"]).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether `opsai sandbox --status` says every one of `wanted`; else the test is skipped with
/// `missing` and the status.
fn status_says(env: &TestEnv, wanted: &[&str], missing: &str) -> bool {
    let (_, described) = status(env);
    let says = wanted.iter().all(|word| described.contains(word));
    if !says {
        crate::support::skipped(&format!("{missing}: {}", described.trim_end()));
    }
    says
}

fn sandbox_available(env: &TestEnv) -> bool {
    let Some(text) = env.sandbox_available() else { return false };
    assert!(text.contains("processes: end with the command"), "{text}");
    true
}

/// A number no other process has in its command line, for `sleep` and `/proc` searches.
fn marker() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    format!("2000.{}{:03}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Kills and reports whatever is still running with `marker` in its command line.
fn assert_none_left(marker: &str) {
    // The poll only absorbs the kernel's reaping: the helper has killed them before it exited.
    if wait_until(Duration::from_secs(5), || processes_with(marker).is_empty()) {
        return;
    }
    let left = processes_with(marker);
    for pid in &left {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(*pid as i32), nix::sys::signal::SIGKILL);
    }
    panic!("processes of `{marker}` outlived their command: {left:?}");
}

/// Live processes running exactly `sleep DURATION` (the command lines around them, the helper's
/// and the shell's, contain the duration too).
fn sleeping(duration: &str) -> Vec<u32> {
    let exact = format!("sleep\0{duration}\0");
    processes_with(duration)
        .into_iter()
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default() == exact.as_bytes())
        .collect()
}

/// The ways a command detaches a process from itself.
fn escapes(m: &str) -> String {
    format!(
        "setsid -f sleep {m}1; nohup sleep {m}2 >/dev/null 2>&1 & disown; (sleep {m}3 &); \
         sh -c 'sleep {m}4 & exit 0'; echo started"
    )
}

/// `nobody` running opsai through `setpriv`, when this test runs as root and has setpriv.
fn as_nobody(env: &TestEnv) -> Option<Command> {
    if !nix::unistd::geteuid().is_root() || !Path::new("/usr/bin/setpriv").exists() {
        crate::support::skipped("needs root and setpriv to run as nobody");
        return None;
    }
    for dir in [env.user_home(), env.opsai_home()] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut cmd = Command::new("/usr/bin/setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "env"])
        .arg(format!("HOME={}", env.user_home().display()))
        .arg(format!("OPSAI_HOME={}", env.opsai_home().display()))
        .arg(format!("PATH={}", std::env::var("PATH").unwrap_or_default()))
        .arg(env!("CARGO_BIN_EXE_opsai"))
        .current_dir(env.user_home());
    Some(cmd)
}

fn sandboxed(mut opsai: Command, script: &str) -> Output {
    opsai.args(["sandbox", "--", "sh", "-c", script]).stdin(Stdio::null()).output().unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn nothing_a_command_starts_outlives_it() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let m = marker();
    let out = sandboxed(env.std_cmd(), &escapes(&m));
    assert!(out.status.success() && text(&out).contains("started"), "{}", text(&out));
    assert_none_left(&m);
}

#[test]
fn nothing_a_command_starts_outlives_it_as_a_user() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let Some(opsai) = as_nobody(&env) else { return };
    let m = marker();
    let out = sandboxed(opsai, &escapes(&m));
    assert!(out.status.success() && text(&out).contains("started"), "{}", text(&out));
    assert_none_left(&m);
}

/// After many processes (so its own pid is far from 1 in any PID namespace): `$$` names the shell
/// in `/proc`, `ps` finds itself (procps exits "fatal library error, lookup self" when `getpid()`
/// and `/proc` disagree) and shows the shell by the same pid.
const PROCESS_TOOLS: &str = "for i in $(seq 80); do /bin/true; done; echo pid=$$; echo comm=$(cat /proc/$$/comm); \
     ps -o pid= -p $$ | tr -d ' ' | sed 's/^/ps=/'; ps aux >/dev/null && echo ps-aux-ok";

fn assert_process_tools_agree(out: &Output) {
    let all = text(out);
    let pid = all.lines().find_map(|l| l.strip_prefix("pid=")).unwrap_or_else(|| panic!("{all}"));
    assert!(all.contains("comm=sh") || all.contains("comm=dash") || all.contains("comm=bash"), "{all}");
    assert!(all.contains(&format!("ps={pid}")), "{all}");
    assert!(all.contains("ps-aux-ok") && !all.contains("fatal library error"), "{all}");
}

#[test]
fn ps_and_proc_name_the_command_by_its_own_pid() {
    let env = TestEnv::new();
    // The namespace is kept where Landlock cannot scope signals, or pid_max is root's only bound.
    if !sandbox_available(&env) || !status_says(&env, &["subreaper"], "the command gets its own PID namespace here") {
        return;
    }
    assert_process_tools_agree(&sandboxed(env.std_cmd(), PROCESS_TOOLS));
    let Some(opsai) = as_nobody(&env) else { return };
    assert_process_tools_agree(&sandboxed(opsai, PROCESS_TOOLS));
}

/// The one gap of a subreaper: a helper SIGKILLed from outside cannot kill what its command left.
/// With a pids cgroup, the next sandboxed command's helper does.
#[test]
fn what_a_killed_helper_left_is_ended_by_the_next_command() {
    let env = TestEnv::new();
    if !sandbox_available(&env)
        || !status_says(&env, &["(pids cgroup)", "subreaper"], "no pids cgroup for the command here")
    {
        return;
    }
    let m = marker();
    let script = format!("setsid -f sleep {m}1; sleep {m}2");
    let mut opsai = env.std_cmd().args(["sandbox", "--", "sh", "-c", &script]).stdin(Stdio::null()).spawn().unwrap();
    let escaped = wait_until(LIMIT, || sleeping(&format!("{m}1")).len() == 1 && sleeping(&format!("{m}2")).len() == 1);
    assert!(escaped, "the command never ran");
    let helper = processes_with(&m)
        .into_iter()
        .find(|pid| parent_of(*pid) == Some(opsai.id()))
        .unwrap_or_else(|| panic!("no helper under opsai {}", opsai.id()));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(helper as i32), nix::sys::signal::SIGKILL).unwrap();
    opsai.wait().unwrap();
    // The escapee is left running now (another test's helper may already have ended it: the same
    // cleanup); the next sandboxed command ends it.
    let out = sandboxed(env.std_cmd(), "echo next");
    assert!(text(&out).contains("next"), "{}", text(&out));
    assert_none_left(&m);
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; the fields after its last `)` do not.
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

fn agent(env: &TestEnv, mock: &MockLlm) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url()).env("OPSAI_NONINTERACTIVE", "1").timeout(Duration::from_secs(60));
    cmd
}

#[test]
fn an_auto_run_command_leaves_nothing_running() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let m = marker();
    let command = format!("setsid -f sleep {m}1; echo started");
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": command, "why": "test"})),
        reply_text("done"),
    ]);
    agent(&env, &mock).args(["-q", "start it"]).assert().success();
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("started"), "{observation}");
    let log = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap();
    assert!(log.contains("RISK: safe | CONFIRMED: auto"), "it ran without a yes, so sandboxed: {log}");
    assert_none_left(&m);
}

#[test]
fn a_timed_out_command_takes_its_escaped_processes_with_it() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    env.write_config(r#"{"exec": {"timeout_s": 2}}"#);
    let m = marker();
    let command = format!("setsid -f sleep {m}1; echo started; sleep {m}2");
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": command, "why": "test"})),
        reply_text("done"),
    ]);
    let started = Instant::now();
    agent(&env, &mock).args(["-q", "wait"]).assert().success();
    assert!(started.elapsed() < LIMIT, "{:?}", started.elapsed());
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap();
    assert!(observation.contains("timed out"), "{observation}");
    assert_none_left(&m);
}

#[test]
fn ctrl_c_takes_the_escaped_processes_too() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let m = marker();
    let command = format!("setsid -f sleep {m}1; echo started; sleep {m}2");
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": command})),
        reply_text("The command was interrupted."),
    ]);
    let mut session = PtySession::spawn(
        env!("CARGO_BIN_EXE_opsai"),
        &["wait"],
        &env.terminal_vars(&mock.base_url()),
        env.user_home(),
    );
    session.expect("│ started", LIMIT);
    let running = wait_until(LIMIT, || sleeping(&format!("{m}2")).len() == 1);
    assert!(running, "the command never ran: {}", session.screen());
    // `setsid -f` returns before its child has exec'd `sleep`, so the escapee may come second.
    let escaped = wait_until(LIMIT, || sleeping(&format!("{m}1")).len() == 1);
    assert!(escaped, "the escapee never ran: {}", session.screen());
    session.send("\x03");
    session.expect("The command was interrupted.", LIMIT);
    assert_eq!(session.wait(LIMIT), 0);
    assert_none_left(&m);
}

/// What a process's neighbours could change: stopped or not, nice, scheduling policy, CPU time
/// limit, allowed CPUs.
fn observable(pid: u32) -> (bool, String, String, String, String) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name: state is the 3rd field, nice the 19th, policy the 41st.
    let after = stat.rsplit_once(") ").map(|(_, rest)| rest).unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let cpu = limits.lines().find(|l| l.starts_with("Max cpu time")).unwrap_or_default().to_owned();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let cpus = status.lines().find(|l| l.starts_with("Cpus_allowed_list")).unwrap_or_default().to_owned();
    (fields[0] == "T", fields[16].to_owned(), fields[38].to_owned(), cpu, cpus)
}

fn io_class(pid: u32) -> String {
    Command::new("ionice")
        .args(["-p", &pid.to_string()])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default()
}

fn assert_cannot_change(opsai: Command, outside: &mut Child) {
    let pid = outside.id();
    let before = (observable(pid), io_class(pid));
    let script = format!(
        "renice -n 7 -p {pid}; renice -n 7 -u $(id -u); prlimit --pid {pid} --cpu=1; ionice -c 3 -p {pid}; \
         taskset -p 1 {pid}; chrt -i -p 0 {pid}; chrt -b -p 0 {pid}; kill -STOP {pid}; echo tried"
    );
    let out = sandboxed(opsai, &script);
    let after = (observable(pid), io_class(pid));
    let _ = outside.kill();
    let _ = outside.wait();
    assert!(text(&out).contains("tried"), "{}", text(&out));
    assert_eq!(before, after, "a process outside was changed: {}", text(&out));
}

#[test]
fn a_process_outside_cannot_be_changed() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let mut outside = Command::new("sleep").arg(marker()).spawn().unwrap();
    assert_cannot_change(env.std_cmd(), &mut outside);
}

#[test]
fn a_process_outside_cannot_be_changed_as_a_user() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let Some(opsai) = as_nobody(&env) else { return };
    // The same user's own process: only the sandbox stands between them.
    let mut outside = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "sleep"])
        .arg(marker())
        .spawn()
        .unwrap();
    assert_cannot_change(opsai, &mut outside);
}

#[test]
fn no_ipc_object_is_created() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let out = sandboxed(
        env.std_cmd(),
        "ipcmk -M 4096 && echo made-shm; ipcmk -S 1 && echo made-sem; ipcmk -Q && echo made-msg; ipcs -m | head -3",
    );
    let all = text(&out);
    assert!(!all.contains("made-"), "{all}");
    // Reading the machine's IPC table still works.
    assert!(all.contains("Shared Memory Segments"), "{all}");
}

#[test]
fn a_file_lock_taken_inside_does_not_block_anyone() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let file = env.user_home().join("shared.lock");
    std::fs::write(&file, "x").unwrap();
    let m = marker();
    let script = format!("flock {f} sleep {m}1 || flock -s {f} sleep {m}1 || sleep {m}2", f = file.display());
    let mut inside = env.std_cmd().args(["sandbox", "--", "sh", "-c", &script]).stdin(Stdio::null()).spawn().unwrap();
    // Once either sleep runs, the lock attempts are over; a sleep under a lock would be {m}1.
    let settled =
        wait_until(LIMIT, || !sleeping(&format!("{m}1")).is_empty() || !sleeping(&format!("{m}2")).is_empty());
    assert!(settled, "the sandboxed command never ran");
    let outside = Command::new("flock").args(["-n"]).arg(&file).arg("true").status().unwrap();
    let holding = sleeping(&format!("{m}1"));
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(inside.id() as i32), nix::sys::signal::SIGTERM);
    let _ = inside.wait();
    assert!(outside.success(), "a lock taken in the sandbox blocks others (held by {holding:?})");
    assert!(holding.is_empty(), "the sandbox got the lock");
    assert_none_left(&m);
}

const SMALL_LIMITS: &str =
    r#"{"safety": {"sandbox_limits": {"pids": 32, "memory_mb": 256, "cpu_s": 1, "file_size_mb": 1}}}"#;

#[test]
fn the_limits_are_the_configured_ones() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    env.write_config(SMALL_LIMITS);
    // dash's `ulimit`: data in KiB, CPU in seconds, file size in 512-byte blocks, core in blocks.
    let out = sandboxed(env.std_cmd(), "echo data $(ulimit -d) cpu $(ulimit -t) file $(ulimit -f) core $(ulimit -c)");
    assert!(text(&out).contains("data 262144 cpu 1 file 2048 core 0"), "{}", text(&out));
}

#[test]
fn a_cpu_spinner_is_stopped_with_a_message() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    env.write_config(SMALL_LIMITS);
    let started = Instant::now();
    let out = sandboxed(env.std_cmd(), "exec sh -c 'while :; do :; done'");
    assert!(started.elapsed() < LIMIT, "{:?}", started.elapsed());
    // 128 + SIGXCPU
    assert_eq!(out.status.code(), Some(152), "{}", text(&out));
    assert!(text(&out).contains("CPU time (1 s per process, safety.sandbox_limits.cpu_s)"), "{}", text(&out));
}

fn python() -> Option<&'static str> {
    let found = ["/usr/bin/python3", "/usr/local/bin/python3"].into_iter().find(|p| Path::new(p).exists());
    if found.is_none() {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "python3 is required under CI=true");
        crate::support::skipped("no python3");
    }
    found
}

#[test]
fn a_memory_hog_is_stopped() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let Some(python) = python() else { return };
    env.write_config(SMALL_LIMITS);
    let out = env
        .std_cmd()
        .args(["sandbox", "--", python, "-c", "x = bytearray(512 * 1024 * 1024); print('allocated')"])
        .output()
        .unwrap();
    assert!(!text(&out).contains("allocated") && text(&out).contains("MemoryError"), "{}", text(&out));
}

#[test]
fn a_fork_bomb_is_stopped_by_the_process_limit() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let Some(python) = python() else { return };
    env.write_config(SMALL_LIMITS);
    let (_, described) = status(&env);
    // A user's RLIMIT_NPROC counts the user's processes machine-wide, and root ignores it.
    let (bound, said) = if described.contains("32 processes (pids cgroup)") {
        (32, true)
    } else if described.contains("32 to 331 processes (the PID namespace's pid_max)") {
        (332, false)
    } else {
        crate::support::skipped(&format!("no exact process bound here: {}", described.trim_end()));
        return;
    };
    let m = marker();
    // Bounded, so a broken limit fails the test instead of the machine.
    let bomb = "import os, sys, time\nn = 0\ntry:\n    for _ in range(600):\n        if os.fork() == 0:\n            \
         time.sleep(float(sys.argv[1]))\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n    \
         print('stopped after', n, e.strerror)\nelse:\n    print('all', n)\n";
    let out = env.std_cmd().args(["sandbox", "--", python, "-c", bomb, &m]).output().unwrap();
    let all = text(&out);
    let stopped = all.lines().find_map(|l| l.strip_prefix("stopped after ")).and_then(|r| r.split(' ').next());
    let count: u32 = stopped.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("not stopped: {all}"));
    assert!(count < bound, "{all}");
    if said {
        assert!(all.contains("reached its process limit (32 processes"), "{all}");
    }
    assert_none_left(&m);
}

#[test]
fn when_opsai_is_killed_the_command_and_its_escapees_go_too() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let m = marker();
    let script = format!("setsid -f sleep {m}1; sleep {m}2");
    let mut opsai = env.std_cmd().args(["sandbox", "--", "sh", "-c", &script]).stdin(Stdio::null()).spawn().unwrap();
    let running = wait_until(LIMIT, || sleeping(&format!("{m}1")).len() == 1 && sleeping(&format!("{m}2")).len() == 1);
    assert!(running, "the command never ran");
    opsai.kill().unwrap();
    let _ = opsai.wait();
    assert_none_left(&m);
}

#[test]
fn ps_and_pgrep_inside_still_see_the_machines_processes() {
    let env = TestEnv::new();
    if !sandbox_available(&env) {
        return;
    }
    let m = marker();
    let mut outside = Command::new("sleep").arg(&m).spawn().unwrap();
    let script = format!(
        "ps -e -o pid=,args= | awk '$2 == \"sleep\" && $3 == \"{m}\" {{print \"ps\", $1}}'; pgrep -x sleep | sed 's/^/pgrep /'"
    );
    let out = sandboxed(env.std_cmd(), &script);
    let _ = outside.kill();
    let _ = outside.wait();
    let all = text(&out);
    let pid = outside.id();
    assert!(all.lines().any(|l| l == format!("ps {pid}")), "ps shows the machine's pid: {all}");
    assert!(all.lines().any(|l| l == format!("pgrep {pid}")), "pgrep finds it: {all}");
}
