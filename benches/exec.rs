//! Throughput of the PTY executor against `script(1)` on the same machine, and the process's peak RSS
//! (`cargo bench --bench exec`).
//!
//! Workload: `head -c 200M /dev/zero | base64` (about 283 MB through the PTY, with ONLCR's `\r`).
//! Each round runs it once through `PtyExecutor` (live output written to /dev/null, as a terminal
//! would receive it, plus the bounded capture) and once as `script -qc '<same>' /dev/null >
//! /dev/null`, interleaved so that load changes hit both alike; the median of the rounds is reported.
//! Peak RSS is this process's `VmHWM` (reset through `/proc/self/clear_refs` before the first run).
//!
//! `EXEC_BENCH_SIZE` (default `200M`) and `EXEC_BENCH_RUNS` (default 3) override the workload. Run
//! without `--bench` (as `cargo test --all-targets` does) it makes one small pass and exits. The last
//! line is machine-readable: `BENCH exec_mb_s=… script_mb_s=… ratio=… peak_rss_mb=…`.

use std::fs::File;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use opsai::exec::Executor;
use opsai::exec::pty::PtyExecutor;
use opsai::protocol::CommandRequest;
use tokio_util::sync::CancellationToken;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let full = std::env::args().any(|arg| arg == "--bench");
    let size = if full { std::env::var("EXEC_BENCH_SIZE").unwrap_or_else(|_| "200M".into()) } else { "1M".into() };
    let runs: usize =
        if full { std::env::var("EXEC_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(3) } else { 1 };
    let command = format!("head -c {size} /dev/zero | base64");
    let have_script = Command::new("script").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success());

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let executor = PtyExecutor::new().with_size(24, 80);
    // Start the peak-RSS measurement here: the runtime exists, no command has run.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let rss_start = status_kb("VmHWM").unwrap_or(0);

    let mut exec_runs = Vec::new();
    let mut script_runs = Vec::new();
    let mut bytes = 0;
    for round in 1..=runs {
        let (elapsed, pty_bytes, truncated) = runtime.block_on(run_executor(&executor, &command))?;
        bytes = pty_bytes;
        exec_runs.push(elapsed);
        let mut line =
            format!("round {round}/{runs}: executor {:.2} s ({pty_bytes} bytes, {truncated} truncated)", secs(elapsed));
        if have_script {
            let elapsed = run_script(&command)?;
            script_runs.push(elapsed);
            line.push_str(&format!(", script {:.2} s", secs(elapsed)));
        }
        println!("{line}");
    }
    let peak_kb = status_kb("VmHWM").unwrap_or(0);

    let exec_mb_s = mb_per_s(bytes, median(&mut exec_runs));
    let script_mb_s = (!script_runs.is_empty()).then(|| mb_per_s(bytes, median(&mut script_runs)));
    let ratio = script_mb_s.map(|script| exec_mb_s / script);
    println!("workload: `{command}`, {bytes} bytes through the PTY, median of {runs}");
    println!("executor: {exec_mb_s:.1} MB/s (live output to /dev/null + {}-char capture)", 2000 + 2000);
    match (script_mb_s, ratio) {
        (Some(script), Some(ratio)) => {
            println!("script -qc: {script:.1} MB/s; executor/script = {ratio:.2} (target >= 0.8)")
        }
        _ => println!("script -qc: not available"),
    }
    println!(
        "peak RSS (VmHWM) of this process: {:.1} MB; {:.1} MB before the first run (target <= 20 MB)",
        kb_to_mb(peak_kb),
        kb_to_mb(rss_start)
    );
    if !full {
        println!("exec bench: quick pass only (run `cargo bench --bench exec` for figures)");
        return Ok(());
    }
    let script = script_mb_s.map_or("na".into(), |v| format!("{v:.1}"));
    let ratio = ratio.map_or("na".into(), |v| format!("{v:.2}"));
    println!("BENCH exec_mb_s={exec_mb_s:.1} script_mb_s={script} ratio={ratio} peak_rss_mb={:.1}", kb_to_mb(peak_kb));
    Ok(())
}

/// One run through the executor: wall time, raw PTY bytes, truncated capture bytes.
async fn run_executor(
    executor: &PtyExecutor,
    command: &str,
) -> Result<(Duration, u64, u64), Box<dyn std::error::Error>> {
    let request = CommandRequest {
        call_id: "bench".into(),
        command: command.into(),
        cwd: std::env::temp_dir(),
        timeout: Duration::from_secs(600),
        why: None,
        sandbox: None,
    };
    let mut sink = File::create("/dev/null")?;
    let mut bytes = 0u64;
    let mut on_output = |chunk: &[u8]| {
        bytes += chunk.len() as u64;
        let _ = sink.write_all(chunk);
    };
    let started = Instant::now();
    let result = executor.run(&request, &mut on_output, CancellationToken::new()).await?;
    let elapsed = started.elapsed();
    if result.exit_code != Some(0) {
        return Err(format!("executor run failed: {result:?}").into());
    }
    Ok((elapsed, bytes, result.output.truncated_bytes))
}

fn run_script(command: &str) -> Result<Duration, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let status = Command::new("script")
        .args(["-qc", command, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    if !status.success() {
        return Err(format!("script failed: {status}").into());
    }
    Ok(started.elapsed())
}

/// A `kB` line of /proc/self/status.
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with(field) && line[field.len()..].starts_with(':'))?;
    line[field.len() + 1..].trim().trim_end_matches("kB").trim().parse().ok()
}

fn median(values: &mut [Duration]) -> Duration {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

fn secs(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

fn mb_per_s(bytes: u64, elapsed: Duration) -> f64 {
    bytes as f64 / 1e6 / elapsed.as_secs_f64().max(1e-9)
}

fn kb_to_mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}
