//! Per-command overhead of `--ssh-host` to a real sshd on 127.0.0.1 (`cargo bench --bench ssh`):
//! `true` run through opsai's `SshExecutor` (ssh -tt inside the PTY executor, as a real run does)
//! with the shared master connection and without one (a new connection, key exchange and
//! authentication per command), and through the local `PtyExecutor` as the baseline; and the floor
//! any tool running `ssh -tt` in a terminal pays on this host: the bare `ssh -tt HOST true` over the
//! same master in the same PTY executor (sshd's session and terminal setup, the login shell's rc
//! files), without opsai's `cd … && env … bash -c` wrapper. Rounds are interleaved so load changes hit all
//! alike. Target: multiplexed ≤ 20 ms median of opsai's own overhead (multiplexed − floor).
//!
//! `SSH_BENCH_RUNS` (default 30) sets the rounds. Without `--bench` it makes 2 rounds. No sshd
//! installed: it says so and exits 0. Last line: `BENCH ssh_mux_ms=… ssh_direct_ms=… local_ms=…`.

#[path = "../tests/support/sshd.rs"]
mod sshd;
mod support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use opsai::exec::Executor;
use opsai::exec::pty::PtyExecutor;
use opsai::exec::ssh::{SshExecutor, SshTransport, remote_line};
use opsai::protocol::CommandRequest;
use tokio_util::sync::CancellationToken;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let full = std::env::args().any(|arg| arg == "--bench");
    let runs: usize =
        if full { std::env::var("SSH_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(30) } else { 2 };
    if !sshd::require() {
        println!("ssh bench skipped: no sshd");
        return Ok(());
    }
    let server = sshd::Sshd::start();
    let home = tempfile::tempdir()?;
    let options = vec!["-F".to_owned(), server.client_config().display().to_string()];
    let mux = SshTransport::new(sshd::HOST, &home.path().join("ssh"), 60, options.clone())?;
    // Its own control directory, never connected: every command is a new connection.
    let direct = SshTransport::new(sshd::HOST, &home.path().join("direct"), 60, options)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(mux.connect())?;
    let local = PtyExecutor::new().with_size(24, 80);
    let executors: [(&str, Box<dyn Executor>); 3] = [
        ("mux", Box::new(SshExecutor::new(mux.clone(), local.clone()))),
        ("direct", Box::new(SshExecutor::new(direct, local.clone()))),
        ("local", Box::new(local)),
    ];
    let request = CommandRequest {
        call_id: "bench".into(),
        command: "true".into(),
        cwd: PathBuf::from("/"),
        timeout: Duration::from_secs(30),
        why: None,
    };
    // One warm-up each (the first direct connection also fills caches).
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); executors.len()];
    let mut floor = Vec::new();
    let bare = CommandRequest { command: mux.terminal_command("true"), ..request.clone() };
    let pty = PtyExecutor::new().with_size(24, 80);
    for round in 0..=runs {
        let started = Instant::now();
        let mut sink = |_: &[u8]| {};
        let result = runtime.block_on(pty.run(&bare, &mut sink, CancellationToken::new()))?;
        assert_eq!(result.exit_code, Some(0), "bare ssh: {}", result.output);
        if round > 0 {
            floor.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        for (index, (name, executor)) in executors.iter().enumerate() {
            let started = Instant::now();
            let mut sink = |_: &[u8]| {};
            let result = runtime.block_on(executor.run(&request, &mut sink, CancellationToken::new()))?;
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            assert_eq!(result.exit_code, Some(0), "{name}: {}", result.output);
            if round > 0 {
                times[index].push(ms);
            }
        }
    }
    runtime.block_on(mux.disconnect());
    let mut medians = Vec::new();
    for ((name, _), values) in executors.iter().zip(times.iter_mut()) {
        let (min, max) = support::spread(values);
        let median = support::median(values);
        println!("{name:>6}: median {median:.2} ms (min {min:.2}, max {max:.2}, {runs} runs)");
        medians.push(median);
    }
    let (floor_min, floor_max) = support::spread(&floor);
    let floor = support::median(&mut floor);
    println!(
        " floor: median {floor:.2} ms (min {floor_min:.2}, max {floor_max:.2}): bare `ssh -tt {} true` in the PTY",
        sshd::HOST
    );
    println!("remote line for `true`: {}", remote_line(&PathBuf::from("/"), "true"));
    println!(
        "BENCH ssh_mux_ms={:.2} ssh_direct_ms={:.2} local_ms={:.2} floor_ms={floor:.2} overhead_ms={:.2}",
        medians[0],
        medians[1],
        medians[2],
        medians[0] - floor
    );
    Ok(())
}
