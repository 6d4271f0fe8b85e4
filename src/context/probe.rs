//! The fast probes: files and `PATH` only, no subprocess. Plus the one helper that runs a slow
//! probe (`git status`, `docker info`) with a hard time limit.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde::Serialize;

/// The programs whose presence the model is told about, in the order rendered.
pub const TOOLS: &[&str] = &["ss", "lsof", "docker", "kubectl", "systemctl", "journalctl"];

/// `(os, kernel)`: `("Ubuntu 24.04.1 LTS", "Linux 6.8.0-45-generic")`, from files only.
pub(crate) fn os_and_kernel() -> (String, String) {
    let family = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        other => other,
    };
    let kernel = read_trimmed("/proc/sys/kernel/osrelease").map(|r| format!("{family} {r}")).unwrap_or_default();
    let os_release = || read_trimmed("/etc/os-release").or_else(|| read_trimmed("/usr/lib/os-release"));
    let mac = || {
        let plist = read_trimmed("/System/Library/CoreServices/SystemVersion.plist")?;
        Some(plist_value(&plist, "ProductVersion").map_or("macOS".to_owned(), |v| format!("macOS {v}")))
    };
    let os = os_release().and_then(|text| os_release_name(&text)).or_else(mac).unwrap_or_else(|| family.to_owned());
    (os, kernel)
}

/// `PRETTY_NAME`, else `NAME VERSION_ID`, from os-release text.
pub(crate) fn os_release_name(text: &str) -> Option<String> {
    let field = |key: &str| {
        text.lines().find_map(|line| {
            let value = line.strip_prefix(key)?.strip_prefix('=')?;
            Some(value.trim().trim_matches(['"', '\'']).to_owned()).filter(|v| !v.is_empty())
        })
    };
    field("PRETTY_NAME").or_else(|| Some(format!("{} {}", field("NAME")?, field("VERSION_ID").unwrap_or_default())))
}

fn plist_value(plist: &str, key: &str) -> Option<String> {
    let after = &plist[plist.find(&format!("<key>{key}</key>"))?..];
    let start = after.find("<string>")? + "<string>".len();
    let end = after[start..].find("</string>")? + start;
    Some(after[start..end].to_owned())
}

pub(crate) fn hostname(env_hostname: Option<&str>) -> String {
    read_trimmed("/proc/sys/kernel/hostname")
        .or_else(|| env_hostname.map(str::to_owned))
        .or_else(|| read_trimmed("/etc/hostname"))
        .unwrap_or_default()
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|text| text.trim().to_owned()).filter(|text| !text.is_empty())
}

/// The full path of `program` in `path_var` (`PATH` syntax), if an executable file is there.
pub(crate) fn find_on_path(program: &str, path_var: &str) -> Option<PathBuf> {
    std::env::split_paths(path_var).filter(|dir| dir.is_absolute()).map(|dir| dir.join(program)).find(|candidate| {
        std::fs::metadata(candidate).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    })
}

/// The current branch, read from `.git/HEAD` of the nearest repository at or above `dir`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GitInfo {
    /// The work tree's top directory.
    pub root: PathBuf,
    pub head: GitHead,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum GitHead {
    Branch(String),
    /// Detached HEAD: the abbreviated commit.
    Detached(String),
    Unknown,
}

/// Walks up from `dir` to the first `.git` (a directory, or a `gitdir:` file as in worktrees and
/// submodules) and reads its `HEAD`. No subprocess.
pub(crate) fn find_git(dir: &Path) -> Option<GitInfo> {
    for root in dir.ancestors().take(256) {
        let dot_git = root.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else { continue };
        let git_dir = if meta.is_dir() {
            dot_git
        } else {
            let text = std::fs::read_to_string(&dot_git).ok()?;
            let target = text.trim().strip_prefix("gitdir:")?.trim();
            root.join(target)
        };
        let head = std::fs::read_to_string(git_dir.join("HEAD")).map_or(GitHead::Unknown, |text| parse_head(&text));
        return Some(GitInfo { root: root.to_owned(), head });
    }
    None
}

fn parse_head(text: &str) -> GitHead {
    let text = text.trim();
    if let Some(reference) = text.strip_prefix("ref:") {
        let reference = reference.trim();
        return GitHead::Branch(reference.strip_prefix("refs/heads/").unwrap_or(reference).to_owned());
    }
    if text.len() >= 7 && text.chars().all(|c| c.is_ascii_hexdigit()) {
        return GitHead::Detached(text[..7].to_owned());
    }
    GitHead::Unknown
}

/// What a bounded probe printed.
#[derive(Debug)]
pub(crate) struct ProbeOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` in its own process group with stdin closed, keeping at most 64 KiB of each
/// stream; kills the whole group and returns `None` when it runs past `limit`.
pub(crate) fn output_within(mut command: Command, limit: Duration) -> Option<ProbeOutput> {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = command.spawn().ok()?;
    let stdout = child.stdout.take().map(read_capped);
    let stderr = child.stderr.take().map(read_capped);
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            _ => {
                if let Ok(pid) = i32::try_from(child.id()) {
                    let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                }
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    // A grandchild that left the group may still hold a pipe: never wait long for the rest.
    let collect = |reader: Option<Receiver<String>>| {
        reader.and_then(|r| r.recv_timeout(Duration::from_millis(200)).ok()).unwrap_or_default()
    };
    let (stdout, stderr) = (collect(stdout), collect(stderr));
    status.map(|status| ProbeOutput { success: status.success(), stdout, stderr })
}

fn read_capped(stream: impl Read + Send + 'static) -> Receiver<String> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("probe-output".to_owned()).spawn(move || {
        let mut bytes = Vec::new();
        let _ = stream.take(64 * 1024).read_to_end(&mut bytes);
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    drop(spawned);
    receiver
}
