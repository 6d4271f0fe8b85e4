//! The static reader: inventory files and directories read without Ansible, as Ansible's `ini`,
//! `yaml` and `script` plugins and its `host_vars`/`group_vars` files would read them.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::{HostsError, excerpt, file_text};
use super::inventory::Inventory;
use super::run::{RunError, run};
use super::yaml_tree::{self, Node};
use super::{ini, json, yaml};

/// Extensions Ansible skips inside an inventory directory (`INVENTORY_IGNORE_EXTS`).
const IGNORED_EXTENSIONS: [&str; 13] =
    [".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig", ".ini", ".cfg", ".retry"];
/// Directory levels followed inside an inventory directory.
const MAX_DEPTH: usize = 32;
const YAML_EXTENSIONS: [&str; 3] = [".yml", ".yaml", ".json"];

/// Reads one inventory path (file or directory) into `inventory`.
pub(crate) fn read_path(path: &Path, inventory: &mut Inventory, limit: Duration) -> Result<(), HostsError> {
    read_at(path, inventory, limit, 0)
}

fn read_at(path: &Path, inventory: &mut Inventory, limit: Duration, depth: usize) -> Result<(), HostsError> {
    if depth > MAX_DEPTH {
        let message = format!("inventory directories nest more than {MAX_DEPTH} deep (a symlink loop?)");
        return Err(HostsError::Invalid { path: path.to_owned(), message });
    }
    let meta = std::fs::metadata(path).map_err(|source| HostsError::Unreadable { path: path.to_owned(), source })?;
    if meta.is_dir() {
        let entries =
            std::fs::read_dir(path).map_err(|source| HostsError::Unreadable { path: path.to_owned(), source })?;
        let mut names: Vec<_> = entries.filter_map(Result::ok).map(|entry| entry.file_name()).collect();
        names.sort();
        for name in names {
            let text = name.to_string_lossy();
            let ignored = text.starts_with('.')
                || matches!(text.as_ref(), "host_vars" | "group_vars" | "vars_plugins")
                || IGNORED_EXTENSIONS.iter().any(|ext| text.ends_with(ext));
            if !ignored {
                read_at(&path.join(&name), inventory, limit, depth + 1)?;
            }
        }
        return Ok(());
    }
    if meta.permissions().mode() & 0o111 != 0 {
        return script(path, inventory, limit);
    }
    let bytes = std::fs::read(path).map_err(|source| HostsError::Unreadable { path: path.to_owned(), source })?;
    let text = file_text(&bytes);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let extension = name.rfind('.').filter(|&at| at > 0).map(|at| &name[at..]);
    match extension {
        Some(ext) if YAML_EXTENSIONS.contains(&ext) => yaml::read(path, &text, inventory),
        None if yaml::looks_like_inventory(&text) => yaml::read(path, &text, inventory),
        _ => ini::read(path, &text, inventory),
    }
}

/// An executable inventory: run with `--list`, its JSON read (hosts' vars from `_meta`).
fn script(path: &Path, inventory: &mut Inventory, limit: Duration) -> Result<(), HostsError> {
    let invalid = |message: String| HostsError::Invalid { path: path.to_owned(), message };
    let done = match run(path, &["--list"], &[], limit) {
        Ok(done) => done,
        Err(RunError::Spawn(error)) => return Err(invalid(format!("the inventory script could not run: {error}"))),
        Err(RunError::TimedOut) => {
            return Err(invalid(format!("the inventory script ran longer than {limit:?} and was stopped")));
        }
    };
    if !done.status.success() {
        return Err(invalid(format!("the inventory script failed ({}): {}", done.status, excerpt(&done.stderr, 2000))));
    }
    json::read(path, &String::from_utf8_lossy(&done.stdout), inventory)
}

/// Applies `group_vars/` and `host_vars/` beside each inventory source, as Ansible's
/// `host_group_vars` plugin does (ranked above the inventory file's vars, see `Inventory::resolve`).
pub(crate) fn apply_vars_dirs(
    sources: &[PathBuf],
    inventory: &mut Inventory,
    notes: &mut Vec<String>,
) -> Result<(), HostsError> {
    for source in sources {
        let base =
            if source.is_dir() { source.clone() } else { source.parent().map(Path::to_path_buf).unwrap_or_default() };
        for group in inventory.group_names() {
            for (key, value) in vars_for(&base.join("group_vars"), &group, notes)? {
                inventory.set_group_file_var(&group, &key, value);
            }
        }
        for host in inventory.host_names() {
            for (key, value) in vars_for(&base.join("host_vars"), &host, notes)? {
                inventory.set_host_file_var(&host, &key, value);
            }
        }
    }
    Ok(())
}

/// The vars of `name` under `dir`: `dir/name`, `dir/name.yml|.yaml|.json`, or files in `dir/name/`.
fn vars_for(dir: &Path, name: &str, notes: &mut Vec<String>) -> Result<Vec<(String, serde_json::Value)>, HostsError> {
    if name.contains('/') || name.starts_with('.') || !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for ext in std::iter::once("").chain(YAML_EXTENSIONS) {
        let candidate = dir.join(format!("{name}{ext}"));
        if candidate.is_dir() {
            collect_dir(&candidate, &mut files);
        } else if candidate.is_file() {
            files.push(candidate);
        }
    }
    let mut vars = Vec::new();
    for file in files {
        let bytes = std::fs::read(&file).map_err(|source| HostsError::Unreadable { path: file.clone(), source })?;
        let text = file_text(&bytes);
        if text.starts_with("$ANSIBLE_VAULT") {
            notes.push(format!(
                "{} is vault-encrypted: the static reader skipped it (install ansible-core to read it)",
                file.display()
            ));
            continue;
        }
        match yaml_tree::parse(&text) {
            Ok(Some(node)) => {
                vars.extend(node.entries().into_iter().map(|(key, value): (String, &Node)| (key, value.value())))
            }
            Ok(None) => {}
            Err((line, message)) => {
                return Err(HostsError::Malformed { path: file, line, message: format!("not valid YAML: {message}") });
            }
        }
    }
    Ok(vars)
}

fn collect_dir(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|entry| entry.path()).collect();
    paths.sort();
    for path in paths {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') || name.ends_with('~') {
            continue;
        }
        let extension = name.rfind('.').filter(|&at| at > 0).map(|at| &name[at..]);
        if path.is_dir() && extension.is_none() {
            collect_dir(&path, files);
        } else if path.is_file() && extension.is_none_or(|ext| YAML_EXTENSIONS.contains(&ext)) {
            files.push(path);
        }
    }
}
