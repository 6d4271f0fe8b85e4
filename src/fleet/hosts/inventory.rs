//! The inventory every reader fills (Ansible's model: groups with hosts, child groups and vars) and
//! its resolution into `Host`s: group vars merged as Ansible merges them, `all` and `ungrouped`
//! completed, hosts put in the order Ansible walks them.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::Value;

use crate::fleet::Host;

/// The only variables opsai honours: how ssh reaches a host. Everything else is ignored.
const CONNECTION_VARS: [&str; 6] =
    ["ansible_host", "ansible_ssh_host", "ansible_port", "ansible_ssh_port", "ansible_user", "ansible_ssh_user"];

type Vars = BTreeMap<String, Value>;

struct Group {
    name: String,
    hosts: Vec<usize>,
    children: Vec<usize>,
    vars: Vars,
    /// From `group_vars/` files, which rank above every inventory-file group var.
    file_vars: Vars,
}

struct Entry {
    name: String,
    vars: Vars,
    /// From `host_vars/` files, which rank above the inventory file's host vars.
    file_vars: Vars,
    /// Which source defined it first (0 = the inventory): a later source's hosts come after.
    rank: u8,
}

/// Groups and hosts in the order they were first defined, as the readers find them.
pub(crate) struct Inventory {
    groups: Vec<Group>,
    group_index: HashMap<String, usize>,
    hosts: Vec<Entry>,
    host_index: HashMap<String, usize>,
    /// (group, host) pairs already in a group's list: membership checks stay O(1) on big groups.
    members: HashSet<(usize, usize)>,
    rank: u8,
}

pub(crate) const ALL: usize = 0;
const UNGROUPED: usize = 1;

impl Inventory {
    pub(crate) fn new() -> Self {
        let mut inventory = Self {
            groups: Vec::new(),
            group_index: HashMap::new(),
            hosts: Vec::new(),
            host_index: HashMap::new(),
            members: HashSet::new(),
            rank: 0,
        };
        inventory.group("all");
        inventory.group("ungrouped");
        inventory.groups[ALL].children.push(UNGROUPED);
        inventory
    }

    /// The group's index, creating it when new.
    pub(crate) fn group(&mut self, name: &str) -> usize {
        if let Some(&index) = self.group_index.get(name) {
            return index;
        }
        self.groups.push(Group {
            name: name.to_owned(),
            hosts: Vec::new(),
            children: Vec::new(),
            vars: Vars::new(),
            file_vars: Vars::new(),
        });
        self.group_index.insert(name.to_owned(), self.groups.len() - 1);
        self.groups.len() - 1
    }

    /// Hosts added from now on come from a later source (ssh config, a names file): in every
    /// group's order they follow the hosts of earlier sources.
    pub(crate) fn next_source(&mut self) {
        self.rank = self.rank.saturating_add(1);
    }

    pub(crate) fn has_host(&self, name: &str) -> bool {
        self.host_index.contains_key(name)
    }

    pub(crate) fn group_names(&self) -> Vec<String> {
        self.groups.iter().map(|group| group.name.clone()).collect()
    }

    pub(crate) fn host_names(&self) -> Vec<String> {
        self.hosts.iter().map(|host| host.name.clone()).collect()
    }

    pub(crate) fn host_count(&self) -> usize {
        self.hosts.len()
    }

    /// Adds `child` under `parent`; refuses a loop (Ansible does too).
    pub(crate) fn add_child(&mut self, parent: &str, child: &str) -> Result<(), String> {
        let (parent, child) = (self.group(parent), self.group(child));
        if child == ALL || parent == child || self.descends(child, parent) {
            return Err(format!(
                "adding group {} as a child of {} makes a loop",
                self.groups[child].name, self.groups[parent].name
            ));
        }
        if !self.groups[parent].children.contains(&child) {
            self.groups[parent].children.push(child);
        }
        Ok(())
    }

    /// Whether `target` is `from` or below it.
    fn descends(&self, from: usize, target: usize) -> bool {
        let mut stack = vec![from];
        let mut seen = HashSet::new();
        while let Some(group) = stack.pop() {
            if group == target {
                return true;
            }
            if seen.insert(group) {
                stack.extend(&self.groups[group].children);
            }
        }
        false
    }

    /// Adds `host` to `group` (creating both as needed).
    pub(crate) fn add_host(&mut self, group: &str, host: &str) {
        let group = self.group(group);
        let host = self.host(host);
        if self.members.insert((group, host)) {
            self.groups[group].hosts.push(host);
        }
    }

    fn host(&mut self, name: &str) -> usize {
        if let Some(&index) = self.host_index.get(name) {
            return index;
        }
        self.hosts.push(Entry { name: name.to_owned(), vars: Vars::new(), file_vars: Vars::new(), rank: self.rank });
        self.host_index.insert(name.to_owned(), self.hosts.len() - 1);
        self.hosts.len() - 1
    }

    pub(crate) fn set_host_var(&mut self, host: &str, key: &str, value: Value) {
        if CONNECTION_VARS.contains(&key) {
            let host = self.host(host);
            self.hosts[host].vars.insert(key.to_owned(), value);
        }
    }

    pub(crate) fn set_group_var(&mut self, group: &str, key: &str, value: Value) {
        if CONNECTION_VARS.contains(&key) {
            let group = self.group(group);
            self.groups[group].vars.insert(key.to_owned(), value);
        }
    }

    /// A var from a `group_vars/` file.
    pub(crate) fn set_group_file_var(&mut self, group: &str, key: &str, value: Value) {
        if CONNECTION_VARS.contains(&key) {
            let group = self.group(group);
            self.groups[group].file_vars.insert(key.to_owned(), value);
        }
    }

    pub(crate) fn set_host_file_var(&mut self, host: &str, key: &str, value: Value) {
        if CONNECTION_VARS.contains(&key) {
            let host = self.host(host);
            self.hosts[host].file_vars.insert(key.to_owned(), value);
        }
    }

    /// Completes `all` and `ungrouped` as Ansible's reconciliation does and resolves every host.
    pub(crate) fn resolve(mut self) -> Resolved {
        self.reconcile();
        let parents = self.parents();
        let depth = self.depths();
        let order = self.walk(ALL);
        let position: HashMap<usize, usize> = order.iter().enumerate().map(|(at, &host)| (host, at)).collect();
        let mut member_of: Vec<Vec<usize>> = vec![Vec::new(); self.hosts.len()];
        for (index, group) in self.groups.iter().enumerate() {
            for &host in &group.hosts {
                member_of[host].push(index);
            }
        }
        let mut hosts = Vec::with_capacity(order.len());
        let mut problems = Vec::with_capacity(order.len());
        for &host in &order {
            let groups = ancestors(&member_of[host], &parents);
            let mut by_precedence = groups.clone();
            by_precedence.sort_by(|&a, &b| (depth[a], &self.groups[a].name).cmp(&(depth[b], &self.groups[b].name)));
            // Ansible's precedence: inventory-file group vars (`all` first, then by depth and name),
            // then group_vars files in the same order, then the host's own, then host_vars files.
            let mut vars = Vars::new();
            for &group in &by_precedence {
                vars.extend(self.groups[group].vars.clone());
            }
            for &group in &by_precedence {
                vars.extend(self.groups[group].file_vars.clone());
            }
            vars.extend(self.hosts[host].vars.clone());
            vars.extend(self.hosts[host].file_vars.clone());
            let mut resolved = Host::named(&self.hosts[host].name);
            resolved.groups =
                groups.iter().filter(|&&g| g != ALL && g != UNGROUPED).map(|&g| self.groups[g].name.clone()).collect();
            problems.push(apply_connection_vars(&mut resolved, &vars).err());
            hosts.push(resolved);
        }
        let groups = self
            .groups
            .iter()
            .enumerate()
            .map(|(index, group)| {
                let members = self.walk(index).iter().filter_map(|host| position.get(host).copied()).collect();
                (group.name.clone(), members)
            })
            .collect();
        let defined = (0..self.hosts.len()).filter_map(|host| position.get(&host).copied()).collect();
        Resolved { hosts, groups, problems, defined }
    }

    /// Ansible's reconciliation: groups without a parent hang under `all`; a host in no group but
    /// `all` is in `ungrouped`, and one in a real group is not.
    fn reconcile(&mut self) {
        let mut has_parent = vec![false; self.groups.len()];
        for group in &self.groups {
            for &child in &group.children {
                has_parent[child] = true;
            }
        }
        for (index, parented) in has_parent.iter().enumerate() {
            if index != ALL && !parented && !self.groups[ALL].children.contains(&index) {
                self.groups[ALL].children.push(index);
            }
        }
        let mut grouped = vec![false; self.hosts.len()];
        for group in self.groups.iter().skip(UNGROUPED + 1) {
            for &host in &group.hosts {
                grouped[host] = true;
            }
        }
        self.groups[UNGROUPED].hosts.retain(|&host| !grouped[host]);
        for (host, grouped) in grouped.iter().enumerate() {
            if !grouped && self.members.insert((UNGROUPED, host)) {
                self.groups[UNGROUPED].hosts.push(host);
            }
        }
    }

    fn parents(&self) -> Vec<Vec<usize>> {
        let mut parents = vec![Vec::new(); self.groups.len()];
        for (index, group) in self.groups.iter().enumerate() {
            for &child in &group.children {
                parents[child].push(index);
            }
        }
        parents
    }

    /// Each group's depth: its longest path from `all` (Ansible's var precedence key).
    fn depths(&self) -> Vec<usize> {
        let mut depth = vec![0; self.groups.len()];
        // The graph has no loops (add_child refuses them), so this settles in at most n rounds.
        for _ in 0..self.groups.len() {
            let mut changed = false;
            for (index, group) in self.groups.iter().enumerate() {
                for &child in &group.children {
                    if depth[child] < depth[index] + 1 {
                        depth[child] = depth[index] + 1;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        depth
    }

    /// A group's hosts in Ansible's order: its own, then its children's level by level.
    fn walk(&self, group: usize) -> Vec<usize> {
        let mut hosts = Vec::new();
        let mut seen_hosts = HashSet::new();
        let mut seen_groups = HashSet::from([group]);
        let mut level = vec![group];
        while !level.is_empty() {
            let mut next = Vec::new();
            for &g in &level {
                for &host in &self.groups[g].hosts {
                    if seen_hosts.insert(host) {
                        hosts.push(host);
                    }
                }
                for &child in &self.groups[g].children {
                    if seen_groups.insert(child) {
                        next.push(child);
                    }
                }
            }
            level = next;
        }
        hosts.sort_by_key(|&host| self.hosts[host].rank);
        hosts
    }
}

/// The groups `direct` and every group above them, in group order.
fn ancestors(direct: &[usize], parents: &[Vec<usize>]) -> Vec<usize> {
    let mut seen: HashSet<usize> = HashSet::new();
    let mut stack = direct.to_vec();
    while let Some(group) = stack.pop() {
        if seen.insert(group) {
            stack.extend(&parents[group]);
        }
    }
    let mut groups: Vec<usize> = seen.into_iter().collect();
    groups.sort_unstable();
    groups
}

/// Fills address, port and user; the `ansible_ssh_*` spelling wins as in Ansible's ssh plugin.
fn apply_connection_vars(host: &mut Host, vars: &Vars) -> Result<(), String> {
    // A null value (`ansible_host:` left empty) is no value, as for Ansible.
    let get = |key: &'static str| vars.get(key).filter(|value| !value.is_null()).map(|value| (key, value));
    let pick = |new: &'static str, old: &'static str| get(old).or_else(|| get(new));
    if let Some((key, value)) = pick("ansible_host", "ansible_ssh_host") {
        let address = text(key, value)?;
        if !super::chars::is_address(&address) {
            return Err(format!(
                "{key} `{}` is not a host name or address (letters, digits, `.-_:[]%` only); fix it in the inventory",
                address.escape_debug()
            ));
        }
        host.address = Some(address);
    }
    if let Some((key, value)) = pick("ansible_user", "ansible_ssh_user") {
        let user = text(key, value)?;
        if !super::chars::is_user(&user) {
            return Err(format!(
                "{key} `{}` is not a user name (letters, digits, `._-@` only); fix it in the inventory",
                user.escape_debug()
            ));
        }
        host.user = Some(user);
    }
    if let Some((key, value)) = pick("ansible_port", "ansible_ssh_port") {
        let port = match value {
            Value::Number(number) => number.as_u64().and_then(|n| u16::try_from(n).ok()),
            Value::String(text) => text.trim().parse::<u16>().ok(),
            _ => None,
        };
        match port {
            Some(port) if port > 0 => host.port = Some(port),
            _ => return Err(format!("{key} is {value}, not a port number (1-65535); fix it in the inventory")),
        }
    }
    Ok(())
}

fn text(key: &str, value: &Value) -> Result<String, String> {
    let text = match value {
        Value::String(text) => text.trim().to_owned(),
        Value::Number(number) => number.to_string(),
        other => return Err(format!("{key} is {other}, not a name or address; fix it in the inventory")),
    };
    if text.contains("{{") || text.contains("{%") {
        return Err(format!(
            "{key} is the template `{text}`, which opsai does not render; give a literal value in the inventory"
        ));
    }
    if text.is_empty() || text.starts_with('-') || text.chars().any(|c| c.is_whitespace() || super::chars::is_hidden(c))
    {
        return Err(format!(
            "{key} `{}` is not a usable name or address; fix it in the inventory",
            text.escape_debug()
        ));
    }
    Ok(text)
}

/// An inventory resolved: hosts in `all`'s order, every group's members as indexes into them.
pub(crate) struct Resolved {
    pub(crate) hosts: Vec<Host>,
    pub(crate) groups: Vec<(String, Vec<usize>)>,
    /// Per host, why its connection vars cannot be used (reported when the host is selected).
    pub(crate) problems: Vec<Option<String>>,
    /// Indexes into `hosts` in the order the sources defined them: the order Ansible matches a
    /// host wildcard in.
    pub(crate) defined: Vec<usize>,
}
