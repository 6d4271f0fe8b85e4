//! `opsai sandbox --status --ssh-host HOST`: which sandbox contains the commands that run without
//! a human yes on that host (`exec::ssh::sandbox`), probed the way a run probes it.

use std::io::Write;

use crate::exec::ssh::{RemoteSandbox, SshTransport, sandbox};
use crate::home::Paths;

/// Prints the host's sandbox; 0 when one applies there, 1 when none does (then only plain words
/// run without asking) or the host cannot be reached.
pub fn remote_status(paths: &Paths, host: &str) -> anyhow::Result<u8> {
    let config = crate::runner::load_config_without_key(paths)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let found = runtime.block_on(async {
        let transport = SshTransport::open(
            host,
            &paths.ssh_control_dir(),
            config.ssh.control_persist_s,
            config.ssh.options.clone(),
        )
        .await?;
        Ok::<RemoteSandbox, crate::exec::ssh::SshError>(sandbox::probe(&transport).await)
    });
    let mut out = std::io::stdout().lock();
    let code = match found {
        Ok(found @ (RemoteSandbox::Opsai { .. } | RemoteSandbox::Bubblewrap { .. })) => {
            writeln!(out, "sandbox on {host}: available")?;
            writeln!(out, "  {}", found.describe())?;
            0
        }
        Ok(none) => {
            writeln!(out, "sandbox on {host}: unavailable")?;
            writeln!(out, "  {}", none.describe())?;
            1
        }
        Err(error) => {
            writeln!(out, "sandbox on {host}: unknown: {error}")?;
            writeln!(out, "  nothing would run there without asking until the host can be reached")?;
            1
        }
    };
    out.flush()?;
    Ok(code)
}
