//! `--hosts PATTERN` (and `/hosts`): the hosts a fleet turn runs on, read from the sources the
//! user has (docs/fleet.md) before any model call, so a pattern that selects nothing is an error
//! that costs no request.

use crate::cli::FleetOptions;
use crate::config::Config;
use crate::fleet::fanout::{Fanout, FanoutConfig};
use crate::fleet::hosts::{self, Sources};
use crate::home::Paths;
use crate::tools::fleet::FleetTarget;

/// The host sources for `args`, from the process environment and the user's home.
pub(crate) fn sources(paths: &Paths, config: &Config, args: &FleetOptions) -> Sources {
    let home = paths.user_home.clone();
    // ssh reads `-F FILE` instead of `~/.ssh/config`; hosts are read from where ssh reads them.
    let given = config.ssh.options.iter().position(|option| option == "-F").and_then(|i| config.ssh.options.get(i + 1));
    let ssh_config = match given {
        Some(file) => Some(std::path::PathBuf::from(file)),
        None => home.as_ref().map(|home| home.join(".ssh").join("config")),
    };
    Sources {
        inventory: args.inventory.clone(),
        ansible_inventory_env: std::env::var("ANSIBLE_INVENTORY").ok().filter(|value| !value.trim().is_empty()),
        ansible_inventory: hosts::find_program("ansible-inventory", std::env::var_os("PATH").as_deref()),
        ssh_config,
        names_file: args.hosts_file.clone(),
        home,
        ..Sources::new()
    }
}

/// The fleet `pattern` selects, with one connection table for the whole run; or what to tell
/// the user (the pattern, the sources read, near names).
/// Reads the user's host sources once, for several patterns (`opsai serve --hosts …` at start).
pub(crate) fn catalog(paths: &Paths, config: &Config, args: &FleetOptions) -> Result<hosts::Catalog, String> {
    hosts::Catalog::load(&sources(paths, config, args)).map_err(|error| error.to_string())
}

/// The selection, or (it selects nothing) what to tell the user: the pattern and the sources read.
pub(crate) fn some_hosts(selection: hosts::Selection, pattern: &str) -> Result<hosts::Selection, String> {
    if selection.hosts.is_empty() {
        let read: Vec<String> = selection.sources.iter().map(ToString::to_string).collect();
        return Err(format!("`{pattern}` selects no host (read: {}); check the pattern", read.join("; ")));
    }
    Ok(selection)
}

pub(crate) fn select(
    paths: &Paths,
    config: &Config,
    args: &FleetOptions,
    pattern: &str,
) -> Result<FleetTarget, String> {
    let selection = hosts::select(&sources(paths, config, args), pattern).map_err(|error| error.to_string())?;
    let selection = some_hosts(selection, pattern)?;
    let mut fanout = FanoutConfig::new(&paths.ssh_control_dir());
    fanout.forks = args.forks.max(1);
    fanout.timeout = std::time::Duration::from_secs(config.exec.timeout_s);
    fanout.persist_s = config.ssh.control_persist_s;
    fanout.ssh_options = config.ssh.options.clone();
    fanout.capture_head = config.exec.capture_head;
    fanout.capture_tail = config.exec.capture_tail;
    Ok(FleetTarget {
        hosts: selection.hosts,
        fanout: Fanout::new(fanout),
        serial: args.serial,
        max_fail: args.max_fail,
        pattern: pattern.to_owned(),
    })
}
