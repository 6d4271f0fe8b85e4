//! Runs the real binary on a real pseudo-terminal, so tests can answer its prompts and press
//! Ctrl-C the way a person does.

use std::io::{Read, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{ChildKiller, CommandBuilder, MasterPty, PtySize, native_pty_system};

pub struct PtySession {
    // Kept open for the session's life: dropping it hangs up the terminal.
    _master: Box<dyn MasterPty + Send>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    killer: Box<dyn ChildKiller + Send + Sync>,
    exited: std::sync::mpsc::Receiver<u32>,
    screen: Arc<(Mutex<String>, Condvar)>,
    /// Answer a cursor-position query the way a terminal does ([`PtySession::answer_cursor_queries`]).
    answer_queries: Arc<std::sync::atomic::AtomicBool>,
}

impl PtySession {
    /// Starts `program` with exactly `env` (plus TERM) in `cwd`, on a fresh 40x120 terminal.
    pub fn spawn(program: &str, args: &[&str], env: &[(&str, String)], cwd: &std::path::Path) -> PtySession {
        let pair = native_pty_system()
            .openpty(PtySize { rows: 40, cols: 120, pixel_width: 0, pixel_height: 0 })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.env_clear();
        cmd.env("TERM", "xterm");
        for (key, value) in env {
            cmd.env(key, value);
        }
        cmd.cwd(cwd);
        let mut child = pair.slave.spawn_command(cmd).expect("spawn on the pty");
        let killer = child.clone_killer();
        let (done, exited) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let code = child.wait().map(|status| status.exit_code()).unwrap_or(u32::MAX);
            let _ = done.send(code);
        });
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let screen = Arc::new((Mutex::new(String::new()), Condvar::new()));
        let sink = screen.clone();
        let answers = writer.clone();
        let answer_queries = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let answering = answer_queries.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                // A line editor asks where the cursor is; a real terminal answers (row 1, column 1
                // will do: the editor only needs an answer).
                if answering.load(std::sync::atomic::Ordering::SeqCst) && buf[..n].windows(4).any(|w| w == b"\x1b[6n") {
                    let mut answer = answers.lock().unwrap();
                    let _ = answer.write_all(b"\x1b[1;1R");
                    let _ = answer.flush();
                }
                let (text, ready) = &*sink;
                text.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
                ready.notify_all();
            }
        });
        PtySession { _master: pair.master, writer, killer, exited, screen, answer_queries }
    }

    /// From now on every cursor-position query (`ESC [ 6 n`, sent by a line editor before it
    /// draws) is answered at once, as a terminal emulator does.
    pub fn answer_cursor_queries(self) -> Self {
        self.answer_queries.store(true, std::sync::atomic::Ordering::SeqCst);
        self
    }

    /// Waits until the screen text contains `needle`; panics with the screen after `limit`.
    pub fn expect(&self, needle: &str, limit: Duration) {
        self.expect_count(needle, 1, limit);
    }

    /// Waits until the screen text contains `needle` at least `count` times.
    pub fn expect_count(&self, needle: &str, count: usize, limit: Duration) {
        let deadline = Instant::now() + limit;
        let (text, ready) = &*self.screen;
        let mut guard = text.lock().unwrap();
        while guard.matches(needle).count() < count {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "timed out waiting for {needle:?}; the screen was:\n{guard}");
            guard = ready.wait_timeout(guard, left).unwrap().0;
        }
    }

    pub fn send(&mut self, keys: &str) {
        let mut writer = self.writer.lock().unwrap();
        writer.write_all(keys.as_bytes()).unwrap();
        writer.flush().unwrap();
    }

    pub fn screen(&self) -> String {
        self.screen.0.lock().unwrap().clone()
    }

    /// Waits for the program to exit (at most `limit`) and returns its exit code.
    pub fn wait(&mut self, limit: Duration) -> u32 {
        match self.exited.recv_timeout(limit) {
            Ok(code) => code,
            Err(_) => {
                let _ = self.killer.kill();
                panic!("the program did not exit; the screen was:\n{}", self.screen());
            }
        }
    }
}
