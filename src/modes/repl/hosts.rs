//! `/hosts PATTERN`, `/hosts`, `/hosts off` (and `opsai --hosts PATTERN` with no task): the fleet
//! every command of the next turns runs on. A fleet and `/host` are one or the other: choosing one
//! ends the other.

use super::Repl;
use crate::modes::common::{note, warn};

impl Repl<'_> {
    /// `/hosts` (and `/host` while a fleet is active): where commands run.
    pub(super) fn show_fleet(&self) {
        match &self.parts.fleet {
            Some(fleet) => {
                note(&format!("commands run on {} (`{}`; `/hosts off` to come back)", fleet.label(), fleet.pattern))
            }
            None => note("no fleet: `/hosts PATTERN` runs every command on the hosts it selects"),
        }
    }

    /// `cd DIR` on a fleet: a directory on every host (relative to each login directory, where `~`
    /// is), checked when the next command runs there.
    pub(super) fn fleet_cd(&mut self, dir: &str) {
        let login = std::path::PathBuf::from(".");
        self.state.cwd = match dir.strip_prefix('~') {
            Some("") => login,
            Some(rest) if rest.starts_with('/') => login.join(rest.trim_start_matches('/')),
            _ => self.state.cwd.join(dir),
        };
        note(&format!("commands now run in {} on every host", self.state.cwd.display()));
    }
    /// `None`: show the fleet; `Some(None)`: back to this machine; `Some(Some(pattern))`: select.
    /// False when the pattern selects nothing (nothing changed then).
    pub(super) async fn hosts(&mut self, hosts: Option<Option<String>>) -> bool {
        let pattern = match hosts {
            None => {
                self.show_fleet();
                return true;
            }
            Some(None) => {
                if self.parts.fleet.take().is_none() {
                    note("no fleet was active");
                    return true;
                }
                return self.host(Some(None)).await;
            }
            Some(Some(pattern)) => pattern,
        };
        let fleet =
            match crate::modes::fleet::select(self.paths, &self.parts.config, &self.fleet_args.options, &pattern) {
                Ok(fleet) => fleet,
                Err(message) => {
                    warn(&message);
                    return false;
                }
            };
        // One machine over ssh and a fleet are one or the other: back here first.
        if self.parts.host.is_some() || self.parts.fleet.is_some() {
            self.parts.fleet = None;
            if !self.host(Some(None)).await {
                return false;
            }
        }
        // An "always" grant given for one target does not cover another.
        self.state.grants.clear();
        self.environment.push_str(&fleet.environment());
        self.prompt.cwd = format!("[{}]", fleet.label());
        // Each host starts in its login directory.
        self.state.cwd = std::path::PathBuf::from(".");
        note(&format!("every command now runs on {} (`/hosts off` to come back)", fleet.label()));
        self.parts.fleet = Some(fleet);
        true
    }
}
