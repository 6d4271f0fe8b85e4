//! The Landlock grants' shape, `/dev` and `/proc` (the rest of the read view is [`super::view`]),
//! and the named secret paths the macOS profile denies (Seatbelt can deny, so it keeps a list).
//!
//! Symbolic links are never granted: the kernel checks the file they resolve to, at its real place,
//! so a link into `~/.ssh` stays unreadable and a link to `/usr/bin` is readable through `/usr`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::protocol::SandboxProfile;

/// Under the home directory, never readable in any profile.
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".password-store",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".bash_history",
    ".zsh_history",
    ".histfile",
    ".local/share/fish/fish_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".sqlite_history",
    ".node_repl_history",
    ".lesshst",
    ".viminfo",
];
/// Under the home directory, unreadable in the strict profile; opsai's own kube and container tools
/// need them (the tool profile).
pub(crate) const HOME_TOOL_CREDENTIALS: &[&str] =
    &[".aws", ".kube", ".docker/config.json", ".config/gcloud", ".azure", ".config/doctl", ".terraform.d"];

/// System files that are secrets in themselves (root can read them; nothing read-only needs them).
const SYSTEM_SECRETS: &[&str] =
    &["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssl/private", "/etc/sudoers.d"];
/// The cluster-admin credentials of a Kubernetes control-plane node; opsai's kube tools may be
/// pointed at `admin.conf` (`KUBECONFIG`), so only the strict profile closes them.
const SYSTEM_TOOL_CREDENTIALS: &[&str] = &["/etc/kubernetes/admin.conf", "/etc/kubernetes/pki", "/var/lib/kubelet/pki"];

/// What `/dev` offers a command: the data sources and sinks, not a device with data behind it.
const DEV_READABLE: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];
/// `/proc` files that read physical or kernel memory, or consume the kernel log.
const PROC_HIDDEN: &[&str] = &["kcore", "kmsg", "kpage", "vmcore"];

/// The secret paths of `profile` for the user whose home is `home` (`$HISTFILE` included).
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(crate) fn secret_paths(profile: SandboxProfile, home: Option<&Path>, histfile: Option<&OsStr>) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    if let Some(home) = home {
        paths.extend(HOME_SECRETS.iter().map(|rel| home.join(rel)));
        if profile == SandboxProfile::Strict {
            paths.extend(HOME_TOOL_CREDENTIALS.iter().map(|rel| home.join(rel)));
        }
    }
    paths.extend(SYSTEM_SECRETS.iter().map(PathBuf::from));
    paths.extend(ssh_host_keys());
    if profile == SandboxProfile::Strict {
        paths.extend(SYSTEM_TOOL_CREDENTIALS.iter().map(PathBuf::from));
    }
    if let Some(histfile) = histfile.filter(|h| !h.is_empty()) {
        let histfile = PathBuf::from(histfile);
        if histfile.is_absolute() {
            paths.push(histfile);
        } else if let Some(home) = home {
            paths.push(home.join(histfile));
        }
    }
    paths
}

#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
/// The ssh server's private host keys (`/etc/ssh/ssh_host_*_key`; the `.pub` halves and the
/// configuration stay readable).
fn ssh_host_keys() -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir("/etc/ssh") else { return Vec::new() };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|name| name.starts_with("ssh_host_") && name.ends_with("_key"))
        })
        .collect()
}

/// The paths that get read access beneath them, and the directories that may only be listed.
/// Directories and other files are apart because their access rights differ, and the walk already
/// knows which is which (no `stat` per rule).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Grants {
    /// Directories readable beneath.
    pub read: Vec<PathBuf>,
    /// Files (and devices, sockets, fifos) readable.
    pub read_files: Vec<PathBuf>,
    pub list: Vec<PathBuf>,
}

/// In `/proc/<pid>` of a process outside the sandbox, what `ps` and `pgrep` read (without `status`
/// `ps aux` shows 0 for VSZ and RSS: a wrong answer, not an error). Not
/// `environ` (the whole point: other processes' secrets), nor `maps`, `task` (its threads have an
/// `environ` too), `fd` or `mem`.
const PID_FILES: &[&str] = &["stat", "status", "cmdline"];

/// How `/proc` is granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProcGrant {
    /// Entry by entry, without the kernel-memory files ([`PROC_HIDDEN`]).
    Walked,
    /// One rule for all of it, present and future processes alike: the kernel-memory files are
    /// closed by the capabilities the sandbox drops (CAP_SYS_RAWIO, CAP_SYSLOG, CAP_SYS_ADMIN).
    Whole,
    /// Walked, and each process directory split ([`PID_FILES`]) except this one's.
    PerPid(u32),
}

/// `/dev` (its allowlist) and `/proc` (as `proc` says) into `grants`.
pub(crate) fn dev_and_proc(proc: ProcGrant, grants: &mut Grants) {
    grants.list.push(PathBuf::from("/dev"));
    if let Ok(entries) = std::fs::read_dir("/dev") {
        for entry in entries.flatten() {
            let name = entry.file_name();
            // Disks, memory, input devices and other terminals read around every path rule (a raw
            // `/dev/sda` holds `~/.ssh` too; another `/dev/pts/N` is someone's keystrokes): only
            // these, and the command's own terminal (granted with it).
            if DEV_READABLE.contains(&name.to_string_lossy().as_ref())
                && entry.file_type().is_ok_and(|kind| !kind.is_symlink())
            {
                grants.read_files.push(entry.path());
            }
        }
    }
    let own_pid = match proc {
        ProcGrant::Whole => {
            grants.read.push(PathBuf::from("/proc"));
            return;
        }
        ProcGrant::PerPid(pid) => Some(pid),
        ProcGrant::Walked => None,
    };
    grants.list.push(PathBuf::from("/proc"));
    let Ok(entries) = std::fs::read_dir("/proc") else { return };
    let euid = nix::unistd::geteuid();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if PROC_HIDDEN.iter().any(|hidden| name.starts_with(hidden)) {
            continue;
        }
        if own_pid.is_some()
            && let Ok(pid) = name.parse::<u32>()
        {
            if Some(pid) == own_pid || environ_is_closed(&entry, euid) {
                grants.read.push(path);
            } else {
                // Not listable: `ps` opens these by name, and one rule less per process counts.
                grants.read_files.extend(PID_FILES.iter().map(|file| path.join(file)));
            }
            continue;
        }
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => grants.read.push(path),
            Ok(kind) if !kind.is_symlink() => grants.read_files.push(path),
            _ => {}
        }
    }
}

/// Whether a process's `environ` is out of reach anyway, so its `/proc` directory can be granted in
/// one rule instead of one per file: a kernel thread (no executable, empty environment), or, for a
/// user other than root, a process of another user (the kernel requires ptrace rights to read it).
fn environ_is_closed(entry: &std::fs::DirEntry, euid: nix::unistd::Uid) -> bool {
    use std::os::unix::fs::MetadataExt;
    if !euid.is_root() {
        return entry.metadata().is_ok_and(|meta| meta.uid() != euid.as_raw());
    }
    std::fs::read_link(entry.path().join("exe")).is_err_and(|err| err.kind() == std::io::ErrorKind::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered(grants: &Grants, path: &str) -> bool {
        grants.read.iter().chain(&grants.read_files).any(|granted| Path::new(path).starts_with(granted))
    }

    #[test]
    fn devices_are_an_allowlist_and_proc_loses_kernel_memory() {
        let mut grants = Grants::default();
        dev_and_proc(ProcGrant::Walked, &mut grants);
        assert!(covered(&grants, "/dev/null") && covered(&grants, "/dev/urandom"));
        assert!(!covered(&grants, "/dev/pts/0"), "another terminal's keystrokes");
        assert!(!covered(&grants, "/dev/sda") && !covered(&grants, "/dev/vda") && !covered(&grants, "/dev/mem"));
        assert!(!covered(&grants, "/proc/kcore"));
        assert!(covered(&grants, "/proc/1/environ"), "without own_pid (the tool profile) /proc pids are whole");
    }

    #[test]
    fn proc_is_readable_but_other_processes_environ_is_not() {
        let own = std::process::id();
        let mut grants = Grants::default();
        dev_and_proc(ProcGrant::PerPid(own), &mut grants);
        assert!(covered(&grants, &format!("/proc/{own}/environ")));
        assert!(covered(&grants, "/proc/1/stat"));
        assert!(covered(&grants, "/proc/1/cmdline"));
        assert!(!covered(&grants, "/proc/1/environ"));
        assert!(!covered(&grants, "/proc/1/task/1/environ"));
        assert!(covered(&grants, "/proc/meminfo"));
        assert!(!grants.read.contains(&PathBuf::from("/proc")));
    }

    #[test]
    fn proc_whole_is_one_rule_that_covers_future_processes() {
        let mut grants = Grants::default();
        dev_and_proc(ProcGrant::Whole, &mut grants);
        assert!(grants.read.contains(&PathBuf::from("/proc")));
        assert!(!grants.list.contains(&PathBuf::from("/proc")));
    }

    #[test]
    fn histfile_and_home_secrets_are_listed() {
        let home = Path::new("/home/u");
        let paths = secret_paths(SandboxProfile::Strict, Some(home), Some(OsStr::new("/var/h/hist")));
        assert!(paths.contains(&PathBuf::from("/home/u/.ssh")));
        assert!(paths.contains(&PathBuf::from("/home/u/.docker/config.json")));
        assert!(paths.contains(&PathBuf::from("/var/h/hist")));
        assert!(paths.contains(&PathBuf::from("/etc/shadow")));
        let tool = secret_paths(SandboxProfile::Tool, Some(home), None);
        assert!(!tool.contains(&PathBuf::from("/home/u/.kube")));
    }
}
