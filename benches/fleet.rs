//! The fleet fan-out as one process, for `bench/fleet.sh` to time against Ansible and
//! parallel-ssh (not a timed bench itself: the script times whole processes, as it does theirs).
//!
//! `cargo bench --bench fleet -- --ssh-config FILE --control DIR [--forks N] --hosts h01,h02,… -- CMD`
//!
//! Runs CMD on every host with `opsai::fleet::fanout` (read-only: all at once, `forks` at a time),
//! prints the model's view of the result and exits 0 when every host ran it with exit 0. Masters
//! are left up (ControlPersist) for the next process, as a turn's later commands find them.
//! Without arguments (`cargo bench` runs every bench) it says how to use it and exits 0.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use opsai::fleet::Host;
use opsai::fleet::fanout::{Fanout, FanoutConfig, FleetRequest, for_model};
use tokio_util::sync::CancellationToken;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| args.iter().position(|arg| arg == name).and_then(|i| args.get(i + 1)).cloned();
    let command = args.iter().position(|arg| arg == "--").map(|i| args[i + 1..].join(" "));
    let (Some(config), Some(control), Some(hosts), Some(command)) =
        (value("--ssh-config"), value("--control"), value("--hosts"), command)
    else {
        // `cargo bench` passes `--bench` alone: nothing to do without a fleet (bench/fleet.sh makes one).
        let mut err = std::io::stderr();
        let _ = std::io::Write::write_all(&mut err, b"fleet bench: run through bench/fleet.sh\n");
        return ExitCode::SUCCESS;
    };
    let mut fanout = FanoutConfig::new(&PathBuf::from(control));
    fanout.forks = value("--forks").and_then(|n| n.parse().ok()).unwrap_or(fanout.forks);
    fanout.timeout = Duration::from_secs(60);
    fanout.persist_s = 600;
    fanout.ssh_options = vec!["-F".into(), config];
    let hosts: Vec<Host> = hosts.split(',').map(Host::named).collect();
    let request = FleetRequest::new(command, "/");
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread().enable_all().build() else {
        return ExitCode::FAILURE;
    };
    let fanout = Fanout::new(fanout);
    let result = runtime.block_on(fanout.run(&hosts, &request, &CancellationToken::new()));
    let mut out = std::io::stdout();
    let _ = std::io::Write::write_all(&mut out, for_model(&result, &|text| text.to_owned()).as_bytes());
    if result.runs.iter().all(|run| run.outcome.succeeded()) { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
