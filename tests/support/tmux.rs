//! Drives a program in a real terminal emulator: tmux, on a private server per test. The screen is
//! what tmux draws (line editor repaints, cursor moves and all), read with `capture-pane`.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

static SERVERS: AtomicUsize = AtomicUsize::new(0);

/// Whether `program` is on PATH. Under `CI=true` a missing program fails the test loudly; elsewhere
/// the test is skipped with the reason printed.
pub fn require(program: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{program} is required under CI=true (.ci/run installs it)"
        );
        super::skipped(&format!("{program} is not installed"));
    }
    found
}

pub struct Tmux {
    socket: String,
    /// The tmux config and the file the program's exit status is written to.
    dir: tempfile::TempDir,
}

impl Tmux {
    /// Starts `program args` on a 120x40 terminal with exactly `env` (plus TERM), in `cwd`.
    pub fn start(program: &str, args: &[&str], env: &[(&str, String)], cwd: &Path) -> Tmux {
        let socket = format!("opsai-test-{}-{}", std::process::id(), SERVERS.fetch_add(1, Ordering::SeqCst));
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("tmux.conf");
        // The pane stays after the program exits, so the last screen can be read.
        std::fs::write(&config, "set -g remain-on-exit on\nset -g history-limit 5000\n").unwrap();
        // tmux's own #{pane_dead_status} is not reliable (the pane can read as dead before the
        // server reaps the child), so a shell writes the status to a file. Its no-op INT trap keeps
        // a Ctrl-C aimed at the program from ending the shell (the program starts with the default).
        let status_file = dir.path().join("status");
        let mut command = vec!["env".to_owned(), "-i".to_owned(), "TERM=xterm-256color".to_owned()];
        command.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        command.extend([
            "/bin/sh".to_owned(),
            "-c".to_owned(),
            "trap : INT; \"$@\"; echo $? > \"$STATUS_FILE\"".to_owned(),
        ]);
        command.insert(3, format!("STATUS_FILE={}", status_file.display()));
        command.push("sh".to_owned());
        command.push(program.to_owned());
        command.extend(args.iter().map(|a| (*a).to_owned()));
        let status = Command::new("tmux")
            .args(["-L", &socket, "-f"])
            .arg(&config)
            .args(["new-session", "-d", "-x", "120", "-y", "40", "-c"])
            .arg(cwd)
            .args(&command)
            .status()
            .unwrap();
        assert!(status.success(), "tmux new-session failed");
        Tmux { socket, dir }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").args(["-L", &self.socket]).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Any tmux command on this test's server (`display -p '#{pane_title}'`), its stdout.
    pub fn run(&self, args: &[&str]) -> String {
        self.tmux(args)
    }

    /// The visible screen plus what scrolled off, as text.
    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-S", "-2000"])
    }

    /// Only what the terminal shows now, without what scrolled off (a cleared screen is empty here,
    /// while tmux may keep its old contents in the scrollback).
    pub fn visible(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-J"])
    }

    /// Waits until the screen shows `needle`; panics with the screen after `limit`.
    pub fn wait_for(&self, needle: &str, limit: Duration) -> String {
        self.wait_until(limit, needle, |screen| screen.contains(needle))
    }

    /// Waits until `done(screen)`; panics with the screen and `what` after `limit`. The screen is
    /// polled: tmux has no "screen changed" signal.
    pub fn wait_until(&self, limit: Duration, what: &str, done: impl Fn(&str) -> bool) -> String {
        let mut screen = String::new();
        let shown = opsai::testing::wait_until(limit, || {
            screen = self.screen();
            done(&screen)
        });
        assert!(shown, "timed out waiting for {what:?}; the screen was:\n{screen}");
        screen
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "0", "-l", text]);
    }

    /// Presses keys by tmux name: `Enter`, `C-c`, `C-d`, `Up`, `Tab`.
    pub fn press(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Types a line and presses Enter.
    pub fn line(&self, text: &str) {
        self.type_text(text);
        self.press(&["Enter"]);
    }

    /// Waits for the program to exit and returns its exit status.
    pub fn wait_exit(&self, limit: Duration) -> i32 {
        let mut code = None;
        let exited = opsai::testing::wait_until(limit, || {
            code = std::fs::read_to_string(self.dir.path().join("status")).ok().and_then(|c| c.trim().parse().ok());
            code.is_some()
        });
        assert!(exited, "the program did not exit; the screen was:\n{}", self.screen());
        code.unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).output();
    }
}
