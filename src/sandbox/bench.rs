//! `opsai sandbox --bench RUNS -- CMD…`: the sandbox's cost per command as the agent pays it, from
//! one long-lived opsai process (whose broker keeps the prepared ruleset), against the same
//! command spawned plainly by the same process; alternating, so both see the same machine.

use std::ffi::OsString;
use std::io::Write;
use std::time::{Duration, Instant};

use super::{Availability, SandboxProfile, availability, wrap};

/// Runs before the measured ones, of each kind (page cache, the first ruleset build).
const WARM_UP: u32 = 20;

pub(crate) fn run(command: &[OsString], runs: u32) -> anyhow::Result<u8> {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let Some((program, args)) = command.split_first() else {
        anyhow::bail!("give the command to measure: `opsai sandbox --bench 200 -- sh -c true`");
    };
    if let Availability::Unavailable(reason) = availability() {
        anyhow::bail!("no sandbox on this machine: {reason}");
    }
    let plain: Vec<OsString> = command.to_vec();
    let sandboxed = wrap(SandboxProfile::Strict, program, args)?;
    let mut times = (Vec::new(), Vec::new());
    let mut cpu = (Vec::new(), Vec::new());
    for round in 0..WARM_UP + runs {
        let a = once(&plain, false)?;
        let b = once(&sandboxed, true)?;
        if round >= WARM_UP {
            times.0.push(a.0);
            times.1.push(b.0);
            cpu.0.push(a.1);
            cpu.1.push(b.1);
        }
    }
    let (pc, sc) = (ms(median(&mut cpu.0)), ms(median(&mut cpu.1)));
    let (pm, sm) = (ms(median(&mut times.0)), ms(median(&mut times.1)));
    let (smin, smax) = (times.1.first().map_or(0.0, |d| ms(*d)), times.1.last().map_or(0.0, |d| ms(*d)));
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "BENCH sandbox_spawn_ms median={sm:.3} min={smin:.3} max={smax:.3} plain_median={pm:.3} \
         path=opsai-process runs={runs} cpu_median={sc:.3} plain_cpu_median={pc:.3} cpu_added={:.3} added={:.3} \
         ratio={:.2}",
        sc - pc,
        sm - pm,
        sm / pm.max(f64::MIN_POSITIVE)
    )?;
    Ok(0)
}

/// The wall time of one run, and the CPU time (user and system) of the processes it reaped: less
/// moved by a busy machine than the wall time.
fn once(argv: &[OsString], through_helper: bool) -> anyhow::Result<(Duration, Duration)> {
    use nix::sys::resource::{UsageWho, getrusage};
    let Some((program, args)) = argv.split_first() else { anyhow::bail!("empty command") };
    let cpu = || {
        getrusage(UsageWho::RUSAGE_CHILDREN).map_or(Duration::ZERO, |u| {
            let t = |tv: nix::sys::time::TimeVal| {
                Duration::from_secs(u64::try_from(tv.tv_sec()).unwrap_or(0))
                    + Duration::from_micros(u64::try_from(tv.tv_usec()).unwrap_or(0))
            };
            t(u.user_time()) + t(u.system_time())
        })
    };
    let cpu_before = cpu();
    let started = Instant::now();
    let mut child = std::process::Command::new(program).args(args).stdin(std::process::Stdio::null()).spawn()?;
    // Registered as the executor registers the helpers it starts (a plain command is not).
    if through_helper {
        super::helper_started(child.id());
    }
    let status = child.wait()?;
    let elapsed = started.elapsed();
    if !status.success() {
        anyhow::bail!(
            "{} exited with {status}",
            argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
        );
    }
    Ok((elapsed, cpu().saturating_sub(cpu_before)))
}

/// Sorts `times` and returns the middle one.
fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}
