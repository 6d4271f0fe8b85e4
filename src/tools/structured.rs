//! The structured tools of seed 003 §2.2: `find`, `grep`, `wget`, `ps`, `ss`, `lsof`. The model fills
//! in fields; opsai builds the argv itself and quotes every word, so an argument value can never
//! become code. A value starting with `-` where a path or pattern belongs goes after `--` or `-e`,
//! or is rejected. The command line built is then sanitized, assessed, approved, run and audited
//! exactly like a `run_command` call, so the policy sees what really runs.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::family::Family;
use super::run_command::{self, Caller};
use super::{Tool, ToolContext, ToolEffect, invalid_arguments};
use crate::policy::quote_word;
use crate::protocol::ToolSpec;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Structured {
    Find,
    Grep,
    Wget,
    Ps,
    Ss,
    Lsof,
}

impl Structured {
    pub(crate) const ALL: [Structured; 6] =
        [Structured::Find, Structured::Grep, Structured::Wget, Structured::Ps, Structured::Ss, Structured::Lsof];
}

/// The six tools as one `cli` schema: `action` is the program; the description says whose each
/// argument is, which is shorter than saying it in every argument.
pub fn family() -> Family {
    let text = || json!({"type": "string"});
    let number = || json!({"type": "integer"});
    let flag = || json!({"type": "boolean"});
    Family::new(
        "cli",
        "find (name: '*.log', path, type, maxdepth), grep (pattern, file, recursive, ignore_case, count_only), ps \
         (user, name, pid, options), ss (port, protocol, options), lsof (path, port, user, options), wget (url, \
         output_file), with checked, quoted arguments.",
        json!({
            "name": text(),
            "path": text(),
            "type": {"type": "string", "enum": ["f", "d"]},
            "maxdepth": number(),
            "pattern": text(),
            "file": text(),
            "recursive": flag(),
            "ignore_case": flag(),
            "count_only": flag(),
            "user": text(),
            "pid": text(),
            "port": number(),
            "protocol": {"type": "string", "enum": ["tcp", "udp"]},
            "options": {"type": "array", "items": {"type": "string"}, "description": "Flags ('aux')."},
            "url": text(),
            "output_file": text()
        }),
        Structured::ALL.into_iter().map(|tool| (tool.name(), Arc::new(tool) as Arc<dyn Tool>)).collect(),
    )
}

impl Tool for Structured {
    fn name(&self) -> &'static str {
        match self {
            Structured::Find => "find",
            Structured::Grep => "grep",
            Structured::Wget => "wget",
            Structured::Ps => "ps",
            Structured::Ss => "ss",
            Structured::Lsof => "lsof",
        }
    }

    fn spec(&self) -> ToolSpec {
        let (description, parameters) = match self {
            Structured::Find => (
                "Find files or directories by name (wildcards allowed); returns their paths. Searches the current \
                 directory recursively unless `path` is given.",
                json!({"type": "object", "properties": {
                    "name": {"type": "string", "description": "Name or wildcard pattern, e.g. '*.log'."},
                    "path": {"type": "string", "description": "Where to start, e.g. '.' or '/var/log'."},
                    "type": {"type": "string", "enum": ["f", "d"], "description": "'f' files, 'd' directories."},
                    "maxdepth": {"type": "integer", "description": "How deep to search; 1 = this directory only."}
                }, "required": ["name"]}),
            ),
            Structured::Grep => (
                "Search files for lines matching a pattern; returns the matching lines.",
                json!({"type": "object", "properties": {
                    "pattern": {"type": "string", "description": "Regular expression or text to search for."},
                    "file": {"type": "string", "description": "File or directory; several separated by spaces."},
                    "recursive": {"type": "boolean", "description": "Search directories recursively (grep -r)."},
                    "ignore_case": {"type": "boolean", "description": "Ignore case (grep -i)."},
                    "count_only": {"type": "boolean", "description": "Only count matching lines (grep -c)."}
                }, "required": ["pattern", "file"]}),
            ),
            Structured::Wget => (
                "Download a file from an http(s) or ftp URL into the current directory or `output_file`.",
                json!({"type": "object", "properties": {
                    "url": {"type": "string", "description": "The URL to download."},
                    "output_file": {"type": "string", "description": "Where to save it (optional)."}
                }, "required": ["url"]}),
            ),
            Structured::Ps => (
                "List running processes, optionally filtered by user, process name or PID. On macOS a `name` is \
                 matched with pgrep, which also honours `user` but cannot be combined with `pid` or `options`.",
                json!({"type": "object", "properties": {
                    "user": {"type": "string", "description": "Only this user's processes."},
                    "name": {"type": "string", "description": "Only processes with this name."},
                    "pid": {"type": "string", "description": "Only this process id (or comma-separated ids)."},
                    "options": {"type": "array", "items": {"type": "string"}, "description": "Extra ps options, e.g. '-ef' or 'aux'."}
                }, "required": []}),
            ),
            Structured::Ss => (
                "Show sockets (network connections), optionally only one port or protocol. On macOS, where ss \
                 does not exist, lsof is used for a port.",
                json!({"type": "object", "properties": {
                    "options": {"type": "array", "items": {"type": "string"}, "description": "ss options, e.g. '-l', '-t', '-u', '-n', '-p', '-a'."},
                    "port": {"type": "integer", "description": "Only connections on this port."},
                    "protocol": {"type": "string", "enum": ["tcp", "udp"], "description": "Only this protocol."}
                }, "required": []}),
            ),
            Structured::Lsof => (
                "List open files: which processes have a file open, or which process holds a port.",
                json!({"type": "object", "properties": {
                    "path": {"type": "string", "description": "Processes that have this file open."},
                    "port": {"type": "integer", "description": "The process holding this port."},
                    "user": {"type": "string", "description": "Files this user has open."},
                    "options": {"type": "array", "items": {"type": "string"}, "description": "Extra lsof options, e.g. '-i'."}
                }, "required": []}),
            ),
        };
        ToolSpec { name: self.name().into(), description: description.into(), parameters }
    }

    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect> {
        Box::pin(async move {
            let argv = match build(*self, args, cfg!(target_os = "macos")) {
                Ok(argv) => argv,
                Err(message) => return ToolEffect::Observe(invalid_arguments(id, message)),
            };
            let command = argv.iter().map(|word| quote_word(word)).collect::<Vec<_>>().join(" ");
            let why = format!("the {} tool", self.name());
            let delegated = json!({"command": command, "why": why});
            // Which process holds a port: `ss -p` and `lsof` cannot see other processes from the
            // sandbox, so opsai reads it (`analyze::procfs`), on this machine.
            let owner = match (self, port(args)) {
                (Structured::Ss | Structured::Lsof, Ok(Some(port))) if ctx.services.host.is_none() => {
                    Some((port, ctx.services.redactor.redact(&crate::analyze::procfs::port_owner(port))))
                }
                _ => None,
            };
            let effect = run_command::run(Caller { tool: self.name(), worker: "shell" }, id, &delegated, ctx).await;
            match (effect, owner) {
                (ToolEffect::Observe(mut observation), Some((port, owner)))
                    if observation.status == crate::protocol::ObservationStatus::Ran =>
                {
                    observation.text.push_str(&format!("\n[read by opsai from /proc] owner of port {port}:\n{owner}"));
                    ToolEffect::Observe(observation)
                }
                (effect, _) => effect,
            }
        })
    }
}

/// The argv for one call (`macos`: the fallbacks the seed describes).
pub fn build(tool: Structured, args: &Value, macos: bool) -> Result<Vec<String>, String> {
    let text = |name: &str| -> Result<Option<String>, String> {
        match args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("`{name}` must be a string, got {other}")),
        }
    };
    let flag = |name: &str| args.get(name).and_then(Value::as_bool).unwrap_or(false);
    let required = |name: &str| text(name)?.ok_or_else(|| format!("missing required argument `{name}`"));
    let mut argv: Vec<String> = vec![program(tool, macos).into()];
    match tool {
        Structured::Find => {
            let path = text("path")?.unwrap_or_else(|| ".".into());
            argv.push(path_word("path", &path)?);
            if let Some(depth) = args.get("maxdepth") {
                let depth = depth.as_u64().ok_or("`maxdepth` must be a whole number")?;
                argv.extend(["-maxdepth".into(), depth.to_string()]);
            }
            match text("type")?.as_deref() {
                None => {}
                Some(kind @ ("f" | "d")) => argv.extend(["-type".into(), kind.into()]),
                Some(other) => return Err(format!("`type` must be \"f\" or \"d\", got {other:?}")),
            }
            argv.extend(["-name".into(), required("name")?]);
        }
        Structured::Grep => {
            for (name, option) in [("recursive", "-r"), ("ignore_case", "-i"), ("count_only", "-c")] {
                if flag(name) {
                    argv.push(option.into());
                }
            }
            argv.extend(["-e".into(), required("pattern")?, "--".into()]);
            argv.extend(required("file")?.split_whitespace().map(str::to_owned));
        }
        Structured::Wget => {
            let url = required("url")?;
            if !["http://", "https://", "ftp://"].iter().any(|scheme| url.starts_with(scheme)) {
                return Err(format!("`url` must start with http://, https:// or ftp://, got {url:?}"));
            }
            if let Some(output) = text("output_file")? {
                argv.extend(["-O".into(), path_word("output_file", &output)?]);
            }
            argv.extend(["--".into(), url]);
        }
        Structured::Ps if macos && text("name")?.is_some() => {
            // macOS ps has no -C: pgrep matches the name (as the seed's grep filter did) and takes
            // `user` as -u; it cannot also filter by pid or take ps options, so those are refused
            // rather than silently dropped.
            let name = required("name")?;
            if text("pid")?.is_some() || !options(args)?.is_empty() {
                return Err("on macOS `name` is matched with pgrep, which cannot also apply `pid` or ps `options`: \
                            call ps with `name` (and `user`) alone, or with `pid`/`options` and no `name`"
                    .into());
            }
            argv = vec!["pgrep".into(), "-il".into()];
            if let Some(user) = text("user")? {
                argv.extend(["-u".into(), name_word("user", &user)?]);
            }
            argv.extend(["--".into(), name]);
        }
        Structured::Ps => {
            argv.extend(options(args)?);
            if let Some(user) = text("user")? {
                argv.extend(["-u".into(), name_word("user", &user)?]);
            }
            if let Some(pid) = text("pid")? {
                if pid.is_empty() || !pid.split(',').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
                    return Err(format!("`pid` must be a process id or ids separated by commas, got {pid:?}"));
                }
                argv.extend(["-p".into(), pid]);
            }
            if let Some(name) = text("name")? {
                argv.extend(["-C".into(), name_word("name", &name)?]);
            }
            if argv.len() == 1 {
                argv.extend(["-eo".into(), "pid,user,%cpu,%mem,etime,cmd".into()]);
            }
        }
        Structured::Ss if macos => {
            let port = port(args)?.ok_or("on macOS ss does not exist; give a `port` and lsof is used")?;
            argv.extend(["-nP".into(), format!("-i:{port}")]);
        }
        Structured::Ss => {
            argv.extend(options(args)?);
            match text("protocol")?.as_deref() {
                None => {}
                Some("tcp") => argv.push("-t".into()),
                Some("udp") => argv.push("-u".into()),
                Some(other) => return Err(format!("`protocol` must be \"tcp\" or \"udp\", got {other:?}")),
            }
            if argv.len() == 1 {
                argv.push("-tunap".into());
            }
            if let Some(port) = port(args)? {
                argv.push(format!("( sport = :{port} or dport = :{port} )"));
            }
        }
        Structured::Lsof => {
            argv.push("-nP".into());
            argv.extend(options(args)?);
            if let Some(port) = port(args)? {
                argv.push(format!("-i:{port}"));
            }
            if let Some(user) = text("user")? {
                argv.extend(["-u".into(), name_word("user", &user)?]);
            }
            if let Some(path) = text("path")? {
                argv.extend(["--".into(), path]);
            }
        }
    }
    Ok(argv)
}

fn program(tool: Structured, macos: bool) -> &'static str {
    match tool {
        Structured::Find => "find",
        Structured::Grep => "grep",
        Structured::Wget => "wget",
        Structured::Ps => "ps",
        Structured::Ss if macos => "lsof",
        Structured::Ss => "ss",
        Structured::Lsof => "lsof",
    }
}

/// Options the model may add: flags only (`-ef`, `aux`, `-l`), never a value that could be a path.
fn options(args: &Value) -> Result<Vec<String>, String> {
    let Some(list) = args.get("options") else { return Ok(Vec::new()) };
    let items = match list {
        Value::Array(items) => items.clone(),
        Value::String(text) => text.split_whitespace().map(|s| Value::String(s.to_owned())).collect(),
        Value::Null => Vec::new(),
        other => return Err(format!("`options` must be a list of flags, got {other}")),
    };
    items
        .iter()
        .map(|item| match item.as_str() {
            Some(flag) if is_flag(flag) => Ok(flag.to_owned()),
            _ => Err(format!("`options` may only hold flags such as \"-l\" or \"aux\", got {item}")),
        })
        .collect()
}

fn is_flag(word: &str) -> bool {
    let letters = word.strip_prefix('-').unwrap_or(word);
    !letters.is_empty() && letters.len() <= 8 && letters.chars().all(|c| c.is_ascii_alphabetic())
}

fn port(args: &Value) -> Result<Option<u16>, String> {
    match args.get("port") {
        None | Some(Value::Null) => Ok(None),
        Some(value) => {
            let number = value.as_u64().or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()));
            match number.and_then(|n| u16::try_from(n).ok()).filter(|&n| n > 0) {
                Some(port) => Ok(Some(port)),
                None => Err(format!("`port` must be a number from 1 to 65535, got {value}")),
            }
        }
    }
}

/// A path where an option could be mistaken for it: `-rf` is rejected (write `./-rf`).
fn path_word(field: &str, path: &str) -> Result<String, String> {
    if path.starts_with('-') {
        return Err(format!("`{field}` {path:?} starts with '-' and would be read as an option; write ./{path}"));
    }
    Ok(path.to_owned())
}

/// A user or process name: no option-looking or empty values.
fn name_word(field: &str, name: &str) -> Result<String, String> {
    if name.starts_with('-') || name.chars().any(char::is_whitespace) {
        return Err(format!("`{field}` must be one name, got {name:?}"));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests;
