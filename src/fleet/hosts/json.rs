//! The JSON that `ansible-inventory --list` and inventory scripts print: groups (each a list of
//! hosts or an object with `hosts`, `children`, `vars`) and `_meta.hostvars`.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::HostsError;
use super::inventory::Inventory;

/// Reads the JSON `text` (printed by `origin`) into `inventory`.
pub(crate) fn read(origin: &Path, text: &str, inventory: &mut Inventory) -> Result<(), HostsError> {
    let invalid = |message: String| HostsError::Invalid { path: origin.to_owned(), message };
    let root: Value = serde_json::from_str(text).map_err(|error| HostsError::Malformed {
        path: origin.to_owned(),
        line: error.line(),
        message: format!("not valid inventory JSON: {error}"),
    })?;
    let Value::Object(root) = root else {
        return Err(invalid("inventory JSON must be an object of groups".into()));
    };
    // Groups in the order Ansible walks them from `all` (its `children` lists), so hosts are
    // defined in that order rather than in the alphabetical order the JSON keys come in.
    let mut order: Vec<&str> = vec!["all"];
    let mut at = 0;
    while at < order.len() {
        let children = root.get(order[at]).and_then(|group| group.get("children")).and_then(Value::as_array);
        for child in children.into_iter().flatten().filter_map(Value::as_str) {
            if !order.contains(&child) {
                order.push(child);
            }
        }
        at += 1;
    }
    order.extend(
        root.keys().map(String::as_str).filter(|name| *name != "_meta" && !order.contains(name)).collect::<Vec<_>>(),
    );
    for name in order {
        if let Some(data) = root.get(name) {
            group(name, data, inventory).map_err(invalid)?;
        }
    }
    if let Some(Value::Object(hostvars)) = root.get("_meta").and_then(|meta| meta.get("hostvars")) {
        for (host, vars) in hostvars {
            if let (true, Value::Object(vars)) = (inventory.has_host(host), vars) {
                for (key, value) in vars {
                    inventory.set_host_var(host, key, value.clone());
                }
            }
        }
    }
    Ok(())
}

fn group(name: &str, data: &Value, inventory: &mut Inventory) -> Result<(), String> {
    inventory.group(name);
    let empty = Map::new();
    let (hosts, object) = match data {
        Value::Array(hosts) => (Some(hosts), &empty),
        Value::Object(object) => (object.get("hosts").and_then(Value::as_array), object),
        Value::Null => (None, &empty),
        other => return Err(format!("group {name} must be a list of hosts or an object, not {other}")),
    };
    for host in hosts.into_iter().flatten() {
        match host.as_str() {
            Some(host) => inventory.add_host(name, host),
            None => return Err(format!("group {name} lists {host}, which is not a host name")),
        }
    }
    for child in object.get("children").and_then(Value::as_array).into_iter().flatten() {
        let Some(child) = child.as_str() else {
            return Err(format!("group {name} has the child {child}, which is not a group name"));
        };
        inventory.add_child(name, child)?;
    }
    if let Some(Value::Object(vars)) = object.get("vars") {
        for (key, value) in vars {
            inventory.set_group_var(name, key, value.clone());
        }
    }
    Ok(())
}
