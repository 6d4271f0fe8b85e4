//! Per-command overhead of `--ssh-host` to a real sshd on 127.0.0.1 (`cargo bench --bench ssh`).
//!
//! `true` run three ways, rounds interleaved so load changes hit all alike:
//! - `mux`: through opsai's `SshExecutor` (ssh -tt inside the PTY executor, as a real run does)
//!   over the shared master connection;
//! - `direct`: the same without a master (a new connection, key exchange and authentication per
//!   command);
//! - `local`: through the local `PtyExecutor`, the baseline.
//!
//! The overhead is `mux − local`: what running a command over ssh costs on top of running it here.
//! Target: ≤ 20 ms median. `floor` is the bare `ssh -tt HOST true` over the same master in the
//! same PTY executor, without opsai's `cd … && env … bash --norc -c` wrapper: the part of the
//! overhead that is ssh's and sshd's own.
//!
//! The server is configured as a server normally is (no PAM, no DNS lookups, no motd; see
//! `tests/support/sshd.rs`), and its sessions get `SHLVL=1` so the login shell does not read the
//! user's `~/.bashrc` for a non-interactive command: that is upstream bash's behaviour (Debian's bash
//! reads it when `SSH_CLIENT` is set), and what the user's rc costs is the user's, not opsai's (on
//! a host with `pyenv init` in root's `~/.bashrc` it was ~270 ms per command). That cost is still
//! measured, on a second server without the setting, and reported on its own line (`rc_mux_ms`).
//!
//! `SSH_BENCH_RUNS` (default 30) sets the rounds. Without `--bench` it makes 2 rounds. No sshd
//! installed: it says so and exits 0. Last lines:
//! `BENCH ssh_mux_ms=… ssh_direct_ms=… local_ms=… floor_ms=… overhead_ms=…` and
//! `BENCH_RC rc_mux_ms=…`.

#[path = "../tests/support/sshd.rs"]
mod sshd;
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use opsai::exec::Executor;
use opsai::exec::pty::PtyExecutor;
use opsai::exec::ssh::{SshExecutor, SshTransport, remote_line};
use opsai::protocol::CommandRequest;
use tokio_util::sync::CancellationToken;

type Runtime = tokio::runtime::Runtime;

/// The milliseconds one `request` takes through `executor`.
fn time(
    runtime: &Runtime,
    executor: &dyn Executor,
    request: &CommandRequest,
) -> Result<f64, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let mut sink = |_: &[u8]| {};
    let result = runtime.block_on(executor.run(request, &mut sink, CancellationToken::new()))?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(result.exit_code, Some(0), "{}: {}", request.command, result.output.text());
    Ok(ms)
}

fn transport(server: &sshd::Sshd, dir: &Path) -> Result<SshTransport, Box<dyn std::error::Error>> {
    let options = vec!["-F".to_owned(), server.client_config().display().to_string()];
    Ok(SshTransport::new(sshd::HOST, dir, 60, options)?)
}

fn report(name: &str, values: &mut [f64], runs: usize) -> f64 {
    let (min, max) = support::spread(values);
    let median = support::median(values);
    println!("{name:>8}: median {median:.2} ms (min {min:.2}, max {max:.2}, {runs} runs)");
    median
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let full = std::env::args().any(|arg| arg == "--bench");
    let runs: usize =
        if full { std::env::var("SSH_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(30) } else { 2 };
    if !sshd::require() {
        println!("ssh bench skipped: no sshd");
        return Ok(());
    }
    let server = sshd::Sshd::start_with("SetEnv SHLVL=1\n");
    // The same server without the setting: the login shell reads the user's ~/.bashrc.
    let rc_server = sshd::Sshd::start();
    let home = tempfile::tempdir()?;
    let mux = transport(&server, &home.path().join("ssh"))?;
    // Its own control directory, never connected: every command is a new connection.
    let direct = transport(&server, &home.path().join("direct"))?;
    let rc_mux = transport(&rc_server, &home.path().join("rc"))?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(mux.connect())?;
    runtime.block_on(rc_mux.connect())?;
    let local = PtyExecutor::new().with_size(24, 80);
    // The transport's cost, not a sandbox's: requests here carry none.
    let none = || opsai::exec::ssh::RemoteSandbox::None { reason: "benchmark".into() };
    let executors: [(&str, Box<dyn Executor>); 4] = [
        ("mux", Box::new(SshExecutor::new(mux.clone(), local.clone(), none()))),
        ("direct", Box::new(SshExecutor::new(direct, local.clone(), none()))),
        ("local", Box::new(local.clone())),
        ("rc mux", Box::new(SshExecutor::new(rc_mux.clone(), local.clone(), none()))),
    ];
    let request = CommandRequest {
        call_id: "bench".into(),
        command: "true".into(),
        cwd: PathBuf::from("/"),
        timeout: Duration::from_secs(30),
        why: None,
        sandbox: None,
    };
    let bare = CommandRequest { command: mux.terminal_command("true"), ..request.clone() };
    // Round 0 is a warm-up (the first direct connection also fills caches).
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); executors.len()];
    let mut floor = Vec::new();
    for round in 0..=runs {
        let ms = time(&runtime, &local, &bare)?;
        if round > 0 {
            floor.push(ms);
        }
        for (index, (_, executor)) in executors.iter().enumerate() {
            let ms = time(&runtime, executor.as_ref(), &request)?;
            if round > 0 {
                times[index].push(ms);
            }
        }
    }
    runtime.block_on(mux.disconnect());
    runtime.block_on(rc_mux.disconnect());
    let medians: Vec<f64> =
        executors.iter().zip(times.iter_mut()).map(|((name, _), values)| report(name, values, runs)).collect();
    let floor = report("floor", &mut floor, runs);
    println!("   floor = bare `ssh -tt {} true` over the master in the PTY executor", sshd::HOST);
    println!("  rc mux = mux against a server whose login shell reads the user's ~/.bashrc");
    println!("remote line for `true`: {}", remote_line(Path::new("/"), "true"));
    let overhead = medians[0] - medians[2];
    println!("overhead (opsai over multiplexed ssh − opsai local): {overhead:.2} ms (target ≤ 20 ms)");
    println!(
        "BENCH ssh_mux_ms={:.2} ssh_direct_ms={:.2} local_ms={:.2} floor_ms={floor:.2} overhead_ms={overhead:.2}",
        medians[0], medians[1], medians[2],
    );
    println!("BENCH_RC rc_mux_ms={:.2}", medians[3]);
    Ok(())
}
