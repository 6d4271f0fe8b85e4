//! Ansible's YAML inventory format, read as its `yaml` plugin reads it: groups with `hosts`,
//! `vars` and `children`, host keys with ranges and `:port`, host vars below them.

use std::path::Path;

use super::error::HostsError;
use super::inventory::Inventory;
use super::range;
use super::yaml_tree::{self, Kind, Node};

/// Whether `text` is a YAML inventory (a mapping), so a file without extension can be tried as
/// YAML first and as INI otherwise, as Ansible does.
pub(crate) fn looks_like_inventory(text: &str) -> bool {
    matches!(yaml_tree::parse(text), Ok(Some(Node { kind: Kind::Map(_), .. })))
}

/// Reads `text` (the file at `path`) into `inventory`.
pub(crate) fn read(path: &Path, text: &str, inventory: &mut Inventory) -> Result<(), HostsError> {
    let fail = |line: usize, message: String| HostsError::Malformed { path: path.to_owned(), line, message };
    let root = match yaml_tree::parse(text) {
        Ok(Some(root)) => root,
        Ok(None) => {
            return Err(HostsError::Invalid { path: path.to_owned(), message: "the YAML inventory is empty".into() });
        }
        Err((line, message)) => return Err(fail(line, format!("not valid YAML: {message}"))),
    };
    let Kind::Map(_) = root.kind else {
        return Err(fail(root.line, format!("a YAML inventory is a mapping of groups, this is {}", root.describe())));
    };
    let entries = root.entries();
    if let Some((_, plugin)) = entries.iter().find(|(key, _)| key == "plugin") {
        let name = plugin.as_text().unwrap_or_default();
        return Err(fail(
            plugin.line,
            format!(
                "this is the configuration of the inventory plugin `{name}`, which only Ansible can run: \
                 install ansible-core (ansible-inventory) to use it"
            ),
        ));
    }
    for (name, data) in entries {
        group(&name, data, inventory, &fail)?;
    }
    Ok(())
}

fn group(
    name: &str,
    data: &Node,
    inventory: &mut Inventory,
    fail: &dyn Fn(usize, String) -> HostsError,
) -> Result<(), HostsError> {
    if !matches!(data.kind, Kind::Map(_)) && !data.is_null() {
        return Err(fail(
            data.line,
            format!("group {name} must be a mapping (hosts, vars, children), not {}", data.describe()),
        ));
    }
    inventory.group(name);
    for (key, value) in data.entries() {
        // A single name is allowed where a mapping is expected (`hosts: web1`), as in Ansible.
        let single = value.as_text();
        match key.as_str() {
            "hosts" | "children" | "vars" if value.is_null() => {}
            "hosts" | "children" if single.is_some() => {
                let name_of_entry = single.unwrap_or_default();
                if key == "hosts" {
                    host(name, &name_of_entry, None, value.line, inventory, fail)?;
                } else {
                    inventory.add_child(name, &name_of_entry).map_err(|message| fail(value.line, message))?;
                }
            }
            "hosts" | "children" | "vars" if !matches!(value.kind, Kind::Map(_)) => {
                return Err(fail(
                    value.line,
                    format!("`{key}` of group {name} must be a mapping, not {}", value.describe()),
                ));
            }
            "vars" => {
                for (var, node) in value.entries() {
                    inventory.set_group_var(name, &var, node.value());
                }
            }
            "children" => {
                for (child, node) in value.entries() {
                    group(&child, node, inventory, fail)?;
                    inventory.add_child(name, &child).map_err(|message| fail(node.line, message))?;
                }
            }
            "hosts" => {
                for (pattern, vars) in value.entries() {
                    host(name, &pattern, Some(vars), vars.line, inventory, fail)?;
                }
            }
            // Ansible warns and skips other keys; so do we (quietly).
            _ => {}
        }
    }
    Ok(())
}

fn host(
    group: &str,
    pattern: &str,
    vars: Option<&Node>,
    line: usize,
    inventory: &mut Inventory,
    fail: &dyn Fn(usize, String) -> HostsError,
) -> Result<(), HostsError> {
    let (pattern, port) = range::split_port(pattern).map_err(|message| fail(line, message))?;
    let names = range::expand(&pattern).map_err(|message| fail(line, message))?;
    if let Some(vars) = vars
        && !vars.is_null()
        && !matches!(vars.kind, Kind::Map(_))
    {
        return Err(fail(vars.line, format!("the vars of host {pattern} must be a mapping, not {}", vars.describe())));
    }
    for name in names {
        inventory.add_host(group, &name);
        if let Some(port) = port {
            inventory.set_host_var(&name, "ansible_port", port.into());
        }
        for (key, node) in vars.map(Node::entries).unwrap_or_default() {
            inventory.set_host_var(&name, &key, node.value());
        }
    }
    Ok(())
}
