//! Fixtures shared by the integration suites.
//!
//! Tests never change their own process environment: everything the child needs is set on the
//! child's `Command`, starting from a cleared environment so the developer's own `OPSAI_*`,
//! `CLICOLOR_FORCE` or `~/.opsai` cannot leak into a test.

pub mod fleet;
pub mod inspect;
pub mod killed_rewrites;
pub mod mock_llm;
pub mod nginx;
pub mod oidc;
pub mod pty;
pub mod serve;
pub mod sshd;
pub mod tmux;

use std::io::Write;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

/// Variables passed through from the test process: what a child needs to start at all, and
/// what coverage or debugging tools rely on. Everything else is cleared.
const PASS_THROUGH: &[&str] = &["PATH", "TMPDIR", "LANG", "LC_ALL", "RUST_BACKTRACE", "LLVM_PROFILE_FILE"];

/// Reports a skipped test with its reason on the real stderr. `eprintln!` would not do: the test
/// harness captures it and drops it when the test passes, so `cargo test` would show a skipped
/// test as an ordinary `ok` with no reason anywhere. The harness has no "skipped" result, so the
/// skips are also counted and listed once more after its summary, when the test binary exits.
pub fn skipped(reason: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let _ = writeln!(std::io::stderr(), "skipped {test}: {reason}");
    let mut skips = SKIPPED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if skips.is_empty() {
        // SAFETY: `atexit` only stores the pointer of a function that takes and returns nothing;
        // the function runs once, after libtest printed its summary and before the process ends.
        #[allow(unsafe_code)]
        unsafe {
            nix::libc::atexit(report_skipped);
        }
    }
    skips.push(format!("{test}: {reason}"));
}

static SKIPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The line after libtest's `test result:` that says how many of its "passed" were not run.
extern "C" fn report_skipped() {
    let skips = SKIPPED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "\ntest result: {} skipped (not run; `cargo test` counts them as passed above). Install what each \
         names, or run under CI=true to make a missing program fail the test:",
        skips.len()
    );
    for skip in skips.iter() {
        let _ = writeln!(err, "    {skip}");
    }
}

/// A private `OPSAI_HOME` and `HOME` for one test, removed when the value is dropped.
pub struct TestEnv {
    opsai_home: TempDir,
    user_home: TempDir,
}

impl TestEnv {
    /// `opsai sandbox --status`'s text when the sandbox works here; otherwise `None`, after failing
    /// under `CI=true` (the sandbox is required there) or printing why the test is skipped.
    pub fn sandbox_available(&self) -> Option<String> {
        let out = self.cmd().args(["sandbox", "--status"]).output().expect("run opsai sandbox --status");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() {
            return Some(text);
        }
        assert!(std::env::var("CI").as_deref() != Ok("true"), "the sandbox is required under CI=true: {text}");
        skipped(&format!("no sandbox on this machine: {}", text.trim_end()));
        None
    }

    pub fn new() -> Self {
        Self {
            opsai_home: tempfile::Builder::new()
                .prefix("opsai-home-")
                .tempdir()
                .expect("create a temporary OPSAI_HOME"),
            user_home: tempfile::Builder::new().prefix("opsai-user-").tempdir().expect("create a temporary HOME"),
        }
    }

    /// `$OPSAI_HOME` as the child sees it.
    pub fn opsai_home(&self) -> &Path {
        self.opsai_home.path()
    }

    /// `$HOME` as the child sees it (never the developer's real home).
    pub fn user_home(&self) -> &Path {
        self.user_home.path()
    }

    pub fn config_path(&self) -> PathBuf {
        self.opsai_home().join("config.json")
    }

    /// The `opsai` binary with a clean environment: `OPSAI_HOME` and `HOME` pointing at this
    /// test's directories and `NO_COLOR=1`. Remove or override variables on the result.
    pub fn cmd(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.std_cmd())
    }

    /// The same child as [`TestEnv::cmd`] as a `std` command, so its stdio can be anything and it
    /// can be signalled or killed while it runs.
    pub fn std_cmd(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_opsai"));
        cmd.env_clear();
        for name in PASS_THROUGH {
            if let Some(value) = std::env::var_os(name) {
                cmd.env(name, value);
            }
        }
        cmd.env("OPSAI_HOME", self.opsai_home())
            .env("HOME", self.user_home())
            .env("NO_COLOR", "1")
            .current_dir(self.user_home());
        cmd
    }

    /// [`TestEnv::std_cmd`] without `OPSAI_HOME`, so opsai chooses its directories from `HOME`
    /// (this test's) and the `XDG_*` variables (none unless the test sets them).
    pub fn std_cmd_without_opsai_home(&self) -> std::process::Command {
        let mut cmd = self.std_cmd();
        cmd.env_remove("OPSAI_HOME");
        cmd
    }

    /// The whole environment a terminal test (tmux, PTY) starts opsai with, talking to `base_url`.
    pub fn terminal_vars(&self, base_url: &str) -> Vec<(&'static str, String)> {
        vec![
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("OPSAI_HOME", self.opsai_home().display().to_string()),
            ("HOME", self.user_home().display().to_string()),
            ("OPSAI_BASE_URL", base_url.to_owned()),
            ("NO_COLOR", "1".to_owned()),
        ]
    }

    /// Writes `$OPSAI_HOME/config.json` verbatim (no reformatting, so tests can compare bytes).
    pub fn write_config(&self, json: &str) {
        std::fs::write(self.config_path(), json).expect("write config.json");
    }

    /// Names of the entries directly inside `dir`, sorted; empty for a missing directory.
    pub fn entries(dir: &Path) -> Vec<String> {
        let Ok(read) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> =
            read.map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }
}

/// Skips with a reason when `OPSAI_SKIP_PROBE` is set (only the test below sets it, on a child).
#[test]
fn skip_probe() {
    if std::env::var_os("OPSAI_SKIP_PROBE").is_some() {
        skipped("the probe was asked to skip");
    }
}

/// The reason must reach the terminal through the harness's output capture, as under `cargo test`.
#[test]
fn a_skipped_test_shows_its_reason_under_cargo_test() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "support::skip_probe", "--test-threads=1"])
        .env("OPSAI_SKIP_PROBE", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("skipped support::skip_probe: the probe was asked to skip\n"), "{stderr}");
    // The summary counts it as skipped, after libtest's own line.
    assert!(String::from_utf8_lossy(&out.stdout).contains("test result: ok. 1 passed"), "{out:?}");
    let summary = stderr.find("test result: 1 skipped (not run").expect("the skip is in the summary");
    assert!(stderr[summary..].contains("\n    support::skip_probe: the probe was asked to skip\n"), "{stderr}");
}

/// A run where nothing is skipped prints no skip summary.
#[test]
fn a_run_without_skips_prints_no_skip_summary() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "support::skip_probe", "--test-threads=1"])
        .env_remove("OPSAI_SKIP_PROBE")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("skipped"), "{out:?}");
}
