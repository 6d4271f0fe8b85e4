//! Issue 15, start-up work that is not the user's: the `docker info` probe behind the environment
//! block is cached across runs and detached from opsai (never its descendant, never waited for).
//! Issue 23: it writes its result only while that opsai still runs, so nothing lands in the home
//! after opsai has exited.

use std::path::Path;
use std::time::Duration;

use opsai::testing::wait_until;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

/// Generous: a loaded 2-core machine runs many of these at once.
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// A `docker` that logs each call (its pid, its parent and its grandparent) and answers only once
/// `release` exists, so it is still running when a fast opsai run ends.
fn slow_docker(dir: &Path) {
    let script = format!(
        "#!/bin/sh\n\
         grand=$(awk '{{print $4}}' /proc/$PPID/stat 2>/dev/null)\n\
         echo \"$$ $PPID $grand\" >> '{dir}/calls'\n\
         while [ ! -e '{dir}/release' ]; do sleep 0.02; done\n\
         echo '27.1.1|3|1'\n",
        dir = dir.display()
    );
    let path = dir.join("docker");
    opsai::testing::write_program(&path, script);
}

fn calls(dir: &Path) -> Vec<Vec<u32>> {
    let text = std::fs::read_to_string(dir.join("calls")).unwrap_or_default();
    text.lines().map(|line| line.split_whitespace().filter_map(|pid| pid.parse().ok()).collect()).collect()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

/// One `opsai -q hello` against `mock` with `path`, waited for; returns its pid.
fn run_once(env: &TestEnv, path: &str, mock: &MockLlm, label: &str, while_running: impl FnOnce()) -> u32 {
    let mut cmd = env.std_cmd();
    cmd.env("PATH", path).env("OPSAI_BASE_URL", mock.base_url()).args(["-q", "hello"]);
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    while_running();
    let finished = wait_until(RUN_LIMIT, || child.try_wait().unwrap().is_some());
    assert!(finished, "{label}: opsai did not exit");
    assert_eq!(child.wait().unwrap().code(), Some(0), "{label}");
    pid
}

#[test]
fn the_docker_probe_is_detached_and_writes_nothing_after_a_fast_run_exits() {
    let env = TestEnv::new();
    let bin = tempfile::tempdir().unwrap();
    slow_docker(bin.path());
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let mock = MockLlm::start([reply_text("one"), reply_text("two")]);

    let first = run_once(&env, &path, &mock, "first run", || {});
    // The detached helper may start docker only after opsai has exited (a loaded machine).
    assert!(wait_until(RUN_LIMIT, || !calls(bin.path()).is_empty()), "the first run started no probe");
    let probe = calls(bin.path());
    assert_eq!(probe.len(), 1, "the first run starts one probe: {probe:?}");
    let (docker, parent, grandparent) = (probe[0][0], probe[0][1], probe[0].get(2).copied());
    assert!(alive(docker), "opsai exited without waiting for the slow docker");
    assert_ne!(parent, first, "docker is not opsai's child");
    assert_ne!(grandparent, Some(first), "nor its grandchild: the helper detached");

    run_once(&env, &path, &mock, "second run, probe under way", || {});
    assert_eq!(calls(bin.path()).len(), 1, "a run while the probe is under way starts none");

    let cache = env.opsai_home().join("cache/context.json");
    let before = std::fs::read_to_string(&cache).unwrap();
    let modified = std::fs::metadata(&cache).unwrap().modified().unwrap();
    std::fs::write(bin.path().join("release"), "").unwrap();
    let marker = cache.display().to_string();
    assert!(
        wait_until(RUN_LIMIT, || crate::support::inspect::processes_with(&marker).is_empty()),
        "the probe helper ended"
    );
    assert!(!alive(docker), "docker ended with it");
    assert_eq!(std::fs::read_to_string(&cache).unwrap(), before, "nothing was written after opsai exited");
    assert_eq!(std::fs::metadata(&cache).unwrap().modified().unwrap(), modified);
    assert!(before.contains("refreshing_since") && before.contains("\"checking\""), "{before}");
}

#[test]
fn the_docker_probe_stores_its_result_while_opsai_runs_and_the_cache_serves_the_next_run() {
    let env = TestEnv::new();
    let bin = tempfile::tempdir().unwrap();
    slow_docker(bin.path());
    std::fs::write(bin.path().join("release"), "").unwrap();
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let gate = Gate::new();
    let mock = MockLlm::start([reply_text("one").held_after(0, &gate), reply_text("two")]);
    let cache = env.opsai_home().join("cache/context.json");
    let stored = || std::fs::read_to_string(&cache).unwrap_or_default();
    run_once(&env, &path, &mock, "first run, held by the model", || {
        let done = wait_until(RUN_LIMIT, || stored().contains("checked_at") && !stored().contains("refreshing_since"));
        // Open the gate either way, so a failure is reported rather than a hang.
        gate.open();
        assert!(done, "the probe stored its result while opsai ran: {}", stored());
    });
    // Under heavy load the 2 s probe limit may have cut the fake short: either result is stored.
    assert!(stored().contains("\"running\"") || stored().contains("\"unreachable\""), "{}", stored());
    run_once(&env, &path, &mock, "second run, fresh cache", || {});
    assert_eq!(calls(bin.path()).len(), 1, "a fresh cache starts no probe");
}
