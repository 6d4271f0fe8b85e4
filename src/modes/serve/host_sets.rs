//! A conversation's host set (`opsai serve --hosts PATTERN`, repeatable; docs/serve.md "Host
//! sets"): the fleets the server offers, each an inventory pattern read from the server's own
//! sources (docs/fleet.md). A conversation names one when it is made, or none (the server itself);
//! its commands then run on every host the pattern selects, through the same gate, canary and
//! audit as `opsai --hosts`. Only the offered patterns can be named: a browser user reaches the
//! hosts the admin chose, not whatever the server's ssh config or inventory knows.

use serde_json::{Value, json};

use crate::cli::FleetOptions;
use crate::config::Config;
use crate::home::Paths;
use crate::tools::fleet::FleetTarget;

/// One host set the page offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offered {
    pub pattern: String,
    /// `3 hosts: web-[1:3]`, as read at start (a turn reads the pattern again).
    pub label: String,
}

pub struct HostSets {
    offered: Vec<Offered>,
    paths: Paths,
    options: FleetOptions,
}

impl HostSets {
    /// Reads every pattern once: one that is not valid or selects nothing stops the start, with
    /// the same message `opsai --hosts` gives (sources read, near names).
    pub fn load(paths: &Paths, config: &Config, patterns: &[String], options: &FleetOptions) -> Result<Self, String> {
        let mut offered: Vec<Offered> = Vec::new();
        if patterns.is_empty() {
            return Ok(Self { offered, paths: paths.clone(), options: options.clone() });
        }
        // The sources are read once for every pattern (an inventory program can take a second).
        let catalog =
            crate::modes::fleet::catalog(paths, config, options).map_err(|message| format!("--hosts: {message}"))?;
        for pattern in patterns {
            let pattern = pattern.trim();
            if pattern.is_empty() {
                return Err("--hosts needs a pattern (`web-*`, `@prod`, `db:&eu`)".to_owned());
            }
            if offered.iter().any(|set| set.pattern == pattern) {
                continue;
            }
            let selection = catalog
                .select(pattern)
                .map_err(|error| error.to_string())
                .and_then(|selection| crate::modes::fleet::some_hosts(selection, pattern))
                .map_err(|message| format!("--hosts {pattern}: {message}"))?;
            offered.push(Offered { pattern: pattern.to_owned(), label: crate::tools::fleet::label(&selection.hosts) });
        }
        Ok(Self { offered, paths: paths.clone(), options: options.clone() })
    }

    pub fn offered(&self) -> &[Offered] {
        &self.offered
    }

    pub fn patterns(&self) -> Vec<String> {
        self.offered.iter().map(|set| set.pattern.clone()).collect()
    }

    pub fn is_offered(&self, pattern: &str) -> bool {
        self.offered.iter().any(|set| set.pattern == pattern)
    }

    /// `/me`'s `host_sets`: each pattern with what it selected at start.
    pub fn json(&self) -> Value {
        self.offered.iter().map(|set| json!({"pattern": set.pattern, "label": set.label})).collect()
    }

    /// The patterns, for a message naming what may be chosen.
    pub fn names(&self) -> String {
        if self.offered.is_empty() {
            return "none are offered (opsai serve --hosts PATTERN)".to_owned();
        }
        self.offered.iter().map(|set| format!("`{}`", set.pattern)).collect::<Vec<_>>().join(", ")
    }

    /// The fleet a turn on `pattern` runs on, read again now: the inventory may have changed
    /// since the start, and a turn must not run on hosts taken out of it.
    pub fn select(&self, config: &Config, pattern: &str) -> Result<FleetTarget, String> {
        crate::modes::fleet::select(&self.paths, config, &self.options, pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(dir: &std::path::Path) -> Paths {
        Paths::one_dir(dir.to_owned(), Some(dir.to_owned()), crate::home::Layout::OpsaiHome)
    }

    fn names_file(dir: &std::path::Path, names: &str) -> FleetOptions {
        let file = dir.join("hosts.txt");
        std::fs::write(&file, names).unwrap();
        FleetOptions { hosts_file: Some(file), ..FleetOptions::default() }
    }

    #[test]
    fn offered_sets_are_read_at_start_and_a_pattern_that_selects_nothing_stops_it() {
        let dir = tempfile::tempdir().unwrap();
        let options = names_file(dir.path(), "web-1\nweb-2\ndb-1\n");
        let config = Config::default();
        let patterns = ["web-*".to_owned(), " db-1 ".to_owned(), "web-*".to_owned()];
        let sets = HostSets::load(&paths(dir.path()), &config, &patterns, &options).unwrap();
        let offered: Vec<(&str, &str)> =
            sets.offered().iter().map(|set| (set.pattern.as_str(), set.label.as_str())).collect();
        assert_eq!(offered, [("web-*", "2 hosts: web-[1:2]"), ("db-1", "1 host: db-1")], "trimmed, once each");
        assert!(sets.is_offered("db-1") && !sets.is_offered("db-*") && !sets.is_offered("all"));
        assert_eq!(sets.json()[0], json!({"pattern": "web-*", "label": "2 hosts: web-[1:2]"}));
        assert_eq!(sets.names(), "`web-*`, `db-1`");

        let typo = HostSets::load(&paths(dir.path()), &config, &["wbe-*".to_owned()], &options).err().unwrap();
        assert!(typo.starts_with("--hosts wbe-*: ") && typo.contains("wbe-*"), "{typo}");
        let empty = HostSets::load(&paths(dir.path()), &config, &[" ".to_owned()], &options).err().unwrap();
        assert!(empty.contains("needs a pattern"), "{empty}");
        let none = HostSets::load(&paths(dir.path()), &config, &[], &options).unwrap();
        assert_eq!(none.names(), "none are offered (opsai serve --hosts PATTERN)");
    }

    #[test]
    fn a_turn_reads_the_pattern_again() {
        let dir = tempfile::tempdir().unwrap();
        let options = names_file(dir.path(), "web-1\nweb-2\n");
        let config = Config::default();
        let sets = HostSets::load(&paths(dir.path()), &config, &["web-*".to_owned()], &options).unwrap();
        std::fs::write(dir.path().join("hosts.txt"), "web-1\nweb-2\nweb-3\n").unwrap();
        assert_eq!(sets.select(&config, "web-*").unwrap().label(), "3 hosts: web-[1:3]");
        std::fs::write(dir.path().join("hosts.txt"), "db-1\n").unwrap();
        assert!(sets.select(&config, "web-*").is_err(), "a set that now selects nothing runs nowhere");
    }
}
