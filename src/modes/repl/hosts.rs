//! Where commands run: `/host` (this machine or one host over ssh), `cd`, and `/hosts PATTERN`,
//! `/hosts`, `/hosts off` (and `opsai --hosts PATTERN` with no task): the fleet every command of
//! the next turns runs on. A fleet and `/host` are one or the other: choosing one ends the other.

use std::path::PathBuf;

use super::Repl;
use super::dirs::{display_dir, resolve_dir};
use crate::context::EnvContext;
use crate::modes::common::{self, note, warn};
use crate::runner;
use crate::tools::Offer;

impl Repl<'_> {
    /// `/host`: show where commands run, or move them to a host (`Some(Some)`) or back here.
    /// False when the host cannot be reached (nothing changed then).
    pub(super) async fn host(&mut self, host: Option<Option<String>>) -> bool {
        let Some(host) = host else {
            if self.parts.fleet.is_some() {
                self.show_fleet();
                return true;
            }
            match &self.parts.host {
                Some(host) => {
                    note(&format!("commands and file tools run on {host} over ssh (`/host local` to come back)"))
                }
                None => note("commands run on this machine (`/host HOST` to use ssh)"),
            }
            return true;
        };
        let switched = self.parts.set_host(self.paths, host.as_deref()).await;
        if switched.is_ok() {
            // Commands go to one machine from here: a fleet is over only once that is true (a
            // failed `/host` leaves the fleet as it was), and no grant carries to the new target.
            if self.parts.fleet.take().is_some() {
                note("the fleet is off: commands go to one machine now");
            }
            self.state.grants.clear();
        }
        match switched {
            Ok(Some(remote)) => {
                let name = host.unwrap_or_default();
                self.environment = runner::remote_environment(&name, &remote, self.parts.remote_sandbox.as_ref());
                self.offer = Offer::for_context(&remote);
                self.prompt.cwd = format!("{name}:{}", remote.cwd.display());
                self.state.cwd = remote.cwd;
                note(&format!("commands and file tools now run on {name} over ssh"));
                true
            }
            Ok(None) => {
                let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
                let mut input = common::context_input(self.paths.cache_dir());
                input.cwd = cwd.clone();
                let context = EnvContext::start(&input).finish();
                self.environment = context.render();
                self.offer = Offer::for_context(&context);
                self.prompt.cwd = display_dir(&cwd, self.paths.user_home.as_deref());
                self.state.cwd = cwd;
                note("commands run on this machine again");
                true
            }
            Err(err) => {
                warn(&err.to_string());
                false
            }
        }
    }

    pub(super) fn cd(&mut self, dir: &str) {
        if self.parts.fleet.is_some() {
            return self.fleet_cd(dir);
        }
        if let Some(host) = &self.parts.host {
            // The directory is on the host: it is checked when the next command runs there.
            let target = resolve_dir(&self.state.cwd, dir, self.parts.files.home().as_deref());
            self.prompt.cwd = format!("{host}:{}", target.display());
            self.state.cwd = target;
            note(&format!("now in {}", self.prompt.cwd));
            return;
        }
        let target = resolve_dir(&self.state.cwd, dir, self.paths.user_home.as_deref());
        match std::fs::canonicalize(&target) {
            Ok(path) if path.is_dir() => {
                // The process follows too, so relative paths everywhere mean the same directory.
                let _ = std::env::set_current_dir(&path);
                self.prompt.cwd = display_dir(&path, self.paths.user_home.as_deref());
                let mut input = common::context_input(self.paths.cache_dir());
                input.cwd = path.clone();
                let context = EnvContext::start(&input).finish();
                self.environment = context.render();
                self.offer = Offer::for_context(&context);
                self.state.cwd = path;
                note(&format!("now in {}", self.prompt.cwd));
            }
            Ok(path) => warn(&format!("{} is not a directory", path.display())),
            Err(err) => warn(&format!("cannot change to {}: {err}", target.display())),
        }
    }

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
