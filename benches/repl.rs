//! REPL start-up (`cargo bench --bench repl`): process start → `Agent >` drawn on a real PTY, with a
//! 10,000-entry history file (target: median ≤ 50 ms). The baseline, measured in the same run on
//! the same PTY harness, is `/bin/sh` printing the same prompt, so the ratio shows opsai's own cost.
//!
//! The harness answers the terminal's cursor-position query (`ESC [6n`) the way a terminal does;
//! without an answer the line editor would wait for it. Without `--bench` (as `cargo test
//! --all-targets` runs it) it does one quick pass and exits. The last line is for `bench/run.sh`.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

mod support;
use support::{median, spread};

const HISTORY_ENTRIES: usize = 10_000;

/// Milliseconds from spawn until `needle` has been drawn, or `None` when it never was.
fn until_prompt(program: &str, args: &[&str], env: &[(&str, &str)], needle: &str) -> Option<f64> {
    let pair = native_pty_system().openpty(PtySize { rows: 40, cols: 120, pixel_width: 0, pixel_height: 0 }).ok()?;
    let mut cmd = CommandBuilder::new(program);
    cmd.args(args);
    cmd.env_clear();
    cmd.env("TERM", "xterm-256color");
    for (key, value) in env {
        cmd.env(key, value);
    }
    let started = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).ok()?;
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().ok()?;
    let mut writer = pair.master.take_writer().ok()?;
    let (found, seen) = std::sync::mpsc::channel();
    let needle = needle.to_owned();
    let reading = std::thread::spawn(move || {
        let mut screen = Vec::new();
        let mut buf = [0u8; 4096];
        let mut reported = false;
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            screen.extend_from_slice(&buf[..n]);
            // Answer each cursor-position query, as a terminal does.
            let queries = buf[..n].windows(4).filter(|w| w == b"\x1b[6n").count();
            for _ in 0..queries {
                let _ = writer.write_all(b"\x1b[1;1R");
            }
            if !reported && contains(&screen, needle.as_bytes()) {
                reported = true;
                let _ = found.send(started.elapsed());
                // Ctrl-D leaves the REPL; the baseline reads one line.
                let _ = writer.write_all(b"\x04\n");
            }
        }
    });
    let elapsed = seen.recv_timeout(Duration::from_secs(10)).ok();
    if elapsed.is_none() {
        let _ = child.kill();
    }
    let _ = child.wait();
    drop(pair.master);
    let _ = reading.join();
    elapsed.map(|e| e.as_secs_f64() * 1000.0)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let Ok(dir) = tempfile::tempdir() else { return };
    let home = dir.path().to_string_lossy().into_owned();
    let history: String =
        (0..HISTORY_ENTRIES).map(|i| format!("list the pods in namespace team-{i} that restarted today\n")).collect();
    if std::fs::write(dir.path().join("history"), history).is_err() {
        return;
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let env = [("OPSAI_HOME", home.as_str()), ("HOME", home.as_str()), ("PATH", path.as_str()), ("NO_COLOR", "1")];
    let runs = if full { 30 } else { 1 };
    // One unmeasured run creates config.json and warms the environment probes' cache.
    let _ = until_prompt(env!("CARGO_BIN_EXE_opsai"), &[], &env, "Agent > ");
    let mut opsai: Vec<f64> = Vec::new();
    let mut shell: Vec<f64> = Vec::new();
    for _ in 0..runs {
        opsai.extend(until_prompt(env!("CARGO_BIN_EXE_opsai"), &[], &env, "Agent > "));
        shell.extend(until_prompt("/bin/sh", &["-c", "printf 'Agent > '; read line"], &env, "Agent > "));
    }
    if opsai.is_empty() || shell.is_empty() {
        println!("repl bench: the prompt never appeared");
        std::process::exit(1);
    }
    let (o_min, o_max) = spread(&opsai);
    let (s_min, s_max) = spread(&shell);
    let (o_median, s_median) = (median(&mut opsai), median(&mut shell));
    println!(
        "REPL ready (prompt drawn, {HISTORY_ENTRIES}-entry history): median {o_median:.2} ms (min {o_min:.2}, max {o_max:.2}, {runs} runs)"
    );
    println!("baseline /bin/sh prompt on the same PTY: median {s_median:.2} ms (min {s_min:.2}, max {s_max:.2})");
    println!(
        "BENCH repl_ready_ms median={o_median:.2} min={o_min:.2} max={o_max:.2} baseline_median={s_median:.2} ratio={:.1}",
        o_median / s_median
    );
}
