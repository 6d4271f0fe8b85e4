//! Which hosts a fleet turn runs on: the hosts of an Ansible inventory (read by `ansible-inventory`
//! when it is installed, else by a static INI/YAML reader), of `~/.ssh/config` and of a plain file
//! of names, selected with Ansible's host pattern language.
//!
//! The caller hands in every path and environment value (`Sources`); nothing here reads the
//! process environment.

mod ansible;
mod chars;
mod error;
mod files;
mod ini;
mod inventory;
mod json;
mod names;
mod near;
mod pattern;
mod range;
mod run;
mod ssh_config;
mod yaml;
mod yaml_tree;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

pub use error::HostsError;
pub(crate) use pattern::glob_matches;

use crate::fleet::Host;
use inventory::{Inventory, Resolved};
use pattern::PatternError;

/// Where hosts come from, in precedence order: an inventory, then `~/.ssh/config`, then a file of
/// names. A name defined by an earlier source keeps that definition; hosts from a later source come
/// after the earlier ones in every result. Leave a field `None` to leave that source out.
#[derive(Debug, Clone)]
pub struct Sources {
    /// `--inventory`: a file or directory, or Ansible's comma list of host names (`web1,web2,`).
    /// It replaces `ansible_inventory_env` when both are given, as `-i` does in Ansible.
    pub inventory: Option<String>,
    /// The value of `ANSIBLE_INVENTORY`: inventory paths separated by commas.
    pub ansible_inventory_env: Option<String>,
    /// The `ansible-inventory` program to read inventories with (see [`find_program`]); `None`
    /// uses the built-in static reader.
    pub ansible_inventory: Option<PathBuf>,
    /// An OpenSSH client config, usually `~/.ssh/config`; a missing file has no hosts.
    pub ssh_config: Option<PathBuf>,
    /// A file of host names, one per line (`[user@]name[:port]`, `#` comments).
    pub names_file: Option<PathBuf>,
    /// The user's home: expands `~/`, is where ssh's relative `Include`s start (`~/.ssh`), and is
    /// `HOME` for `ansible-inventory`.
    pub home: Option<PathBuf>,
    /// How long an inventory program (`ansible-inventory`, a script) may run.
    pub timeout: Duration,
}

impl Sources {
    /// No sources, the default time limit.
    pub fn new() -> Self {
        Self {
            inventory: None,
            ansible_inventory_env: None,
            ansible_inventory: None,
            ssh_config: None,
            names_file: None,
            home: None,
            timeout: Duration::from_secs(120),
        }
    }
}

impl Default for Sources {
    fn default() -> Self {
        Self::new()
    }
}

/// `name` as found on the `PATH` value given (the caller reads the environment, not this module).
pub fn find_program(name: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path_var = path_var?;
    std::env::split_paths(path_var).map(|dir| dir.join(name)).find(|candidate| {
        std::fs::metadata(candidate).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    })
}

/// How a source was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    AnsibleInventory,
    Static,
    SshConfig,
    NamesFile,
}

/// One source that was read and how many hosts it gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceReport {
    pub label: String,
    pub reader: Reader,
    pub hosts: usize,
}

impl fmt::Display for SourceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match self.reader {
            Reader::AnsibleInventory => " (read by ansible-inventory)",
            Reader::Static => " (read by opsai's static reader: ansible-inventory is not installed)",
            Reader::SshConfig | Reader::NamesFile => "",
        };
        let plural = if self.hosts == 1 { "" } else { "s" };
        write!(f, "{}{how}: {} host{plural}", self.label, self.hosts)
    }
}

/// Every host the sources define, ready to be selected from (by more than one pattern, say).
pub struct Catalog {
    resolved: Resolved,
    sources: Vec<SourceReport>,
    notes: Vec<String>,
}

/// The hosts a pattern selected, in inventory order, each once.
#[derive(Debug, Clone)]
pub struct Selection {
    pub hosts: Vec<Host>,
    /// The sources read, for a summary ("37 of 120 hosts from inventory prod.ini").
    pub sources: Vec<SourceReport>,
    /// What the user may want to know (warnings of ansible-inventory, skipped vault files).
    pub notes: Vec<String>,
}

/// Reads `sources` and selects the hosts `pattern` names.
pub fn select(sources: &Sources, pattern: &str) -> Result<Selection, HostsError> {
    Catalog::load(sources)?.select(pattern)
}

impl Catalog {
    /// Reads every source given.
    pub fn load(sources: &Sources) -> Result<Self, HostsError> {
        let mut inventory = Inventory::new();
        let mut reports = Vec::new();
        let mut notes = Vec::new();
        let given = sources.inventory.is_some()
            || sources.ansible_inventory_env.is_some()
            || sources.ssh_config.is_some()
            || sources.names_file.is_some();
        if !given {
            return Err(HostsError::NoSources);
        }
        read_inventory(sources, &mut inventory, &mut reports, &mut notes)?;
        if let Some(config) = &sources.ssh_config {
            inventory.next_source();
            let before = inventory.host_count();
            for name in ssh_config::names(config, sources.home.as_deref())? {
                if !inventory.has_host(&name) {
                    inventory.add_host("ungrouped", &name);
                }
            }
            let label = format!("ssh config {}", config.display());
            reports.push(SourceReport { label, reader: Reader::SshConfig, hosts: inventory.host_count() - before });
        }
        if let Some(file) = &sources.names_file {
            inventory.next_source();
            let before = inventory.host_count();
            for host in names::read(file)? {
                if inventory.has_host(&host.name) {
                    continue;
                }
                inventory.add_host("ungrouped", &host.name);
                if let Some(user) = host.user {
                    inventory.set_host_var(&host.name, "ansible_user", user.into());
                }
                if let Some(port) = host.port {
                    inventory.set_host_var(&host.name, "ansible_port", port.into());
                }
            }
            let label = format!("host file {}", file.display());
            reports.push(SourceReport { label, reader: Reader::NamesFile, hosts: inventory.host_count() - before });
        }
        let mut resolved = inventory.resolve();
        for (host, problem) in resolved.hosts.iter().zip(resolved.problems.iter_mut()) {
            if problem.is_none() && !usable_name(&host.name) {
                *problem = Some("the name is not one ssh can be given (empty, starting with `-`, or with spaces, control or invisible characters)".into());
            } else if problem.is_none() && host.address.is_none() && !chars::is_address(&host.name) {
                // With no ansible_host the name is what ssh connects to, and what `%h` expands to.
                *problem = Some("the name is what ssh connects to but is not a host name or address (letters, digits, `.-_:[]%`); give it an ansible_host".into());
            }
        }
        Ok(Self { resolved, sources: reports, notes })
    }

    /// Every host, in inventory order.
    pub fn hosts(&self) -> &[Host] {
        &self.resolved.hosts
    }

    /// Every group name (with `all` and `ungrouped`), in the order the inventory defines them.
    pub fn groups(&self) -> impl Iterator<Item = &str> {
        self.resolved.groups.iter().map(|(name, _)| name.as_str())
    }

    pub fn sources(&self) -> &[SourceReport] {
        &self.sources
    }

    /// The hosts `pattern` selects (Ansible's language, plus `@group`).
    pub fn select(&self, pattern: &str) -> Result<Selection, HostsError> {
        let chosen = pattern::evaluate(pattern, &self.resolved).map_err(|error| match error {
            PatternError::Invalid(reason) => HostsError::BadPattern { pattern: pattern.to_owned(), reason },
            PatternError::Unmatched(term) => self.no_match(pattern, &term),
        })?;
        for &host in &chosen {
            if let Some(problem) = &self.resolved.problems[host] {
                return Err(HostsError::HostVars {
                    host: self.resolved.hosts[host].name.clone(),
                    message: problem.clone(),
                });
            }
        }
        Ok(Selection {
            hosts: chosen.into_iter().map(|host| self.resolved.hosts[host].clone()).collect(),
            sources: self.sources.clone(),
            notes: self.notes.clone(),
        })
    }

    fn no_match(&self, pattern: &str, term: &str) -> HostsError {
        let sources = if self.sources.is_empty() {
            "no source".to_owned()
        } else {
            self.sources.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
        };
        let known = self.resolved.hosts.iter().map(|h| h.name.as_str()).chain(self.groups());
        let near = near::near(term, known);
        let near = if near.is_empty() { String::new() } else { format!(". Did you mean {}?", near.join(", ")) };
        let within = if term == pattern.trim() { String::new() } else { format!(" (in `{pattern}`)") };
        HostsError::NoMatch { term: term.to_owned(), within, sources, near }
    }
}

/// ssh takes a host as one argument; one starting with `-` would be read as an option.
fn usable_name(name: &str) -> bool {
    !name.is_empty() && !name.starts_with('-') && !name.chars().any(|c| c.is_whitespace() || chars::is_hidden(c))
}

/// What `--inventory`/`ANSIBLE_INVENTORY` name: paths, or a comma list of host names.
enum Entry {
    Path(PathBuf),
    Names(Vec<String>),
}

fn entries(sources: &Sources) -> Vec<Entry> {
    let home = sources.home.as_deref();
    let expand = |text: &str| -> PathBuf {
        match (text.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(text),
        }
    };
    if let Some(value) = &sources.inventory {
        let path = expand(value.trim());
        if path.exists() || !value.contains(',') {
            return vec![Entry::Path(path)];
        }
        let names = value.split(',').map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned).collect();
        return vec![Entry::Names(names)];
    }
    let Some(value) = &sources.ansible_inventory_env else { return Vec::new() };
    value.split(',').map(str::trim).filter(|p| !p.is_empty()).map(|p| Entry::Path(expand(p))).collect()
}

fn read_inventory(
    sources: &Sources,
    inventory: &mut Inventory,
    reports: &mut Vec<SourceReport>,
    notes: &mut Vec<String>,
) -> Result<(), HostsError> {
    let entries = entries(sources);
    if entries.is_empty() {
        return Ok(());
    }
    let mut paths = Vec::new();
    let mut labels = Vec::new();
    for entry in &entries {
        match entry {
            Entry::Path(path) => {
                // Ansible only warns about a missing source (and reads an empty inventory).
                std::fs::metadata(path).map_err(|source| HostsError::Unreadable { path: path.clone(), source })?;
                paths.push(path.clone());
                labels.push(path.display().to_string());
            }
            Entry::Names(names) => labels.push(format!("{},", names.join(","))),
        }
    }
    let reader = match &sources.ansible_inventory {
        Some(program) => {
            ansible::read(program, &labels, inventory, sources.timeout, sources.home.as_deref(), notes)?;
            Reader::AnsibleInventory
        }
        None => {
            for entry in &entries {
                match entry {
                    Entry::Path(path) => files::read_path(path, inventory, sources.timeout)?,
                    Entry::Names(names) => add_names(names, inventory)?,
                }
            }
            files::apply_vars_dirs(&paths, inventory, notes)?;
            Reader::Static
        }
    };
    let label = format!("inventory {}", labels.join(", "));
    reports.push(SourceReport { label, reader, hosts: inventory.host_count() });
    Ok(())
}

/// Ansible's `host_list` source: `web1,web2:2222,` on the command line.
fn add_names(names: &[String], inventory: &mut Inventory) -> Result<(), HostsError> {
    for name in names {
        let (host, port) = range::split_port(name)
            .map_err(|message| HostsError::BadPattern { pattern: name.clone(), reason: message })?;
        inventory.add_host("ungrouped", &host);
        if let Some(port) = port {
            inventory.set_host_var(&host, "ansible_port", port.into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
