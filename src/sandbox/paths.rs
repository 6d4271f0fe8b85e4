//! What the sandbox must not let a command read, and the Landlock grants that allow everything else.
//!
//! Landlock rules only add access, beneath a path. So "all of the filesystem except these paths" is
//! built by walking from `/` towards each forbidden path: a directory that contains no forbidden
//! path gets read access beneath it in one rule; a directory that does (an *ancestor*) gets only
//! "list" on itself, and each of its entries is handled the same way, except the forbidden ones.
//! Symbolic links are never granted: the kernel checks the file they resolve to, at its real place,
//! so a link into `~/.ssh` stays unreadable and a link to `/usr/bin` is readable through `/usr`.

use std::collections::HashSet;
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
const HOME_TOOL_CREDENTIALS: &[&str] =
    &[".aws", ".kube", ".docker/config.json", ".config/gcloud", ".azure", ".config/doctl", ".terraform.d"];

/// System files that are secrets in themselves (root can read them; nothing read-only needs them).
const SYSTEM_SECRETS: &[&str] =
    &["/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssl/private", "/etc/sudoers.d"];
/// The cluster-admin credentials of a Kubernetes control-plane node; opsai's kube tools may be
/// pointed at `admin.conf` (`KUBECONFIG`), so only the strict profile closes them.
const SYSTEM_TOOL_CREDENTIALS: &[&str] = &["/etc/kubernetes/admin.conf", "/etc/kubernetes/pki", "/var/lib/kubelet/pki"];

/// `.env*` files are looked for this deep below the working directory (`apps/web/.env`)…
const ENV_WALK_DEPTH: usize = 2;
/// …among at most this many entries, so a huge tree costs a bounded time (about 0.3 ms).
const ENV_WALK_ENTRIES: usize = 1500;
/// What `/dev` offers a command: the data sources and sinks, not a device with data behind it.
const DEV_READABLE: &[&str] = &["null", "zero", "full", "random", "urandom", "tty"];
/// `/proc` files that read physical or kernel memory, or consume the kernel log.
const PROC_HIDDEN: &[&str] = &["kcore", "kmsg", "kpage", "vmcore"];

/// Kernel file systems where no project lives, slow to list (a command run from `/`).
const KERNEL_DIRS: &[&str] = &["/proc", "/sys", "/dev", "/run"];
/// Directories the `.env` walk does not enter (large, and not where a project keeps its secrets).
const ENV_WALK_SKIP: &[&str] = &[".git", "node_modules", "target", ".venv", "venv", "__pycache__", ".cache"];

/// The secret paths of `profile` for the user whose home is `home` (`$HISTFILE` included).
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

/// `.env`, `.env.local`, `.envrc`… in `cwd` and below it (bounded: see [`ENV_WALK_DEPTH`]).
pub(crate) fn env_files(cwd: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut queue = vec![(cwd.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = queue.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            seen += 1;
            if seen > ENV_WALK_ENTRIES {
                return found;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else { continue };
            if name.starts_with(".env") && !kind.is_dir() {
                found.push(entry.path());
            } else if kind.is_dir()
                && depth < ENV_WALK_DEPTH
                && !ENV_WALK_SKIP.contains(&name.as_ref())
                && !KERNEL_DIRS.iter().any(|dir| entry.path() == Path::new(dir))
            {
                queue.push((entry.path(), depth + 1));
            }
        }
    }
    found
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

/// The grants that make everything readable except `forbidden` (paths that do not exist are
/// ignored: nothing can create them, the sandbox denies writes). Symbolic links in `forbidden` are
/// resolved, so the file itself is what stays unreadable.
///
/// With `own_pid`, `/proc` is split too: every process's directory can be listed and its
/// [`PID_FILES`] read, only `own_pid`'s directory is readable whole. Landlock's own ptrace rule
/// keeps `/proc/<pid>/mem` closed, but not `environ` (tested on Linux 6.18), hence this. Processes
/// started inside the sandbox get new pids without a rule: their `/proc/self` is unreadable.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn grants(forbidden: &[PathBuf], proc: ProcGrant) -> Grants {
    let own_pid = match proc {
        ProcGrant::PerPid(pid) => Some(pid),
        ProcGrant::Walked | ProcGrant::Whole => None,
    };
    let forbidden: HashSet<PathBuf> = forbidden
        .iter()
        // Most secret paths do not exist: one `lstat` rather than a `readlink` per component.
        .filter(|path| std::fs::symlink_metadata(path).is_ok())
        // Nor is one this user cannot read anyway (`/etc/shadow` when not root) worth the rules
        // that carving it out costs (every entry of `/etc`). Its mode cannot change inside.
        .filter(|path| nix::unistd::access(path.as_path(), nix::unistd::AccessFlags::R_OK).is_ok())
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .filter(|path| path.is_absolute())
        .collect();
    let root = PathBuf::from("/");
    let mut grants = Grants::default();
    if forbidden.contains(&root) {
        return grants;
    }
    let mut ancestors: HashSet<PathBuf> =
        forbidden.iter().flat_map(|path| path.ancestors().skip(1).map(Path::to_path_buf)).collect();
    // `/dev` always gets its allowlist, and `/proc` loses its raw-memory files.
    ancestors.insert(root.clone());
    ancestors.insert(PathBuf::from("/dev"));
    if proc != ProcGrant::Whole {
        ancestors.insert(PathBuf::from("/proc"));
    }
    walk(&root, &forbidden, &ancestors, own_pid, &mut grants);
    grants
}

fn walk(
    dir: &Path,
    forbidden: &HashSet<PathBuf>,
    ancestors: &HashSet<PathBuf>,
    own_pid: Option<u32>,
    grants: &mut Grants,
) {
    grants.list.push(dir.to_path_buf());
    // An unlistable directory grants nothing below it: failing closed.
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let in_dev = dir == Path::new("/dev");
    let in_proc = dir == Path::new("/proc");
    let euid = nix::unistd::geteuid();
    for entry in entries.flatten() {
        let path = entry.path();
        if forbidden.contains(&path) {
            continue;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if in_dev {
            // Disks, memory, input devices and other terminals read around every path rule (a raw
            // `/dev/sda` holds `~/.ssh` too; another `/dev/pts/N` is someone's keystrokes): only
            // these, and the command's own terminal (granted with it).
            if DEV_READABLE.contains(&name.as_ref()) && entry.file_type().is_ok_and(|kind| !kind.is_symlink()) {
                grants.read_files.push(path);
            }
            continue;
        }
        if in_proc && PROC_HIDDEN.iter().any(|hidden| name.starts_with(hidden)) {
            continue;
        }
        if in_proc
            && own_pid.is_some()
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
        if ancestors.contains(&path) {
            walk(&path, forbidden, ancestors, own_pid, grants);
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

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    /// Whether `grants` let `path` be read, as Landlock decides it: a read rule on the path or an
    /// ancestor of it.
    fn readable(grants: &Grants, path: &Path) -> bool {
        let path = std::fs::canonicalize(path).unwrap();
        grants.read.iter().chain(&grants.read_files).any(|granted| path.starts_with(granted))
    }

    #[test]
    fn everything_but_the_forbidden_paths_stays_readable() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        for rel in [".ssh/id_x", ".bashrc", "notes/a.txt", ".config/gh/hosts.yml", ".config/git/config", ".kube/config"]
        {
            touch(&home.join(rel));
        }
        let forbidden = secret_paths(SandboxProfile::Strict, Some(&home), None);
        let grants = grants(&forbidden, ProcGrant::Walked);
        assert!(!readable(&grants, &home.join(".ssh/id_x")));
        assert!(!readable(&grants, &home.join(".config/gh/hosts.yml")));
        assert!(!readable(&grants, &home.join(".kube/config")));
        assert!(readable(&grants, &home.join(".bashrc")));
        assert!(readable(&grants, &home.join("notes/a.txt")));
        assert!(readable(&grants, &home.join(".config/git/config")));
        assert!(readable(&grants, Path::new("/usr")));
        // The ancestors can be listed, not read beneath.
        assert!(grants.list.contains(&home));
        assert!(grants.list.contains(&home.join(".config")));
        assert!(!grants.read.contains(&home));
        assert!(!grants.read.iter().any(|p| p == &home.join(".ssh")));
    }

    #[test]
    fn the_tool_profile_keeps_the_kube_config_readable() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        touch(&home.join(".kube/config"));
        touch(&home.join(".ssh/id_x"));
        let grants = grants(&secret_paths(SandboxProfile::Tool, Some(&home), None), ProcGrant::Walked);
        assert!(readable(&grants, &home.join(".kube/config")));
        assert!(!readable(&grants, &home.join(".ssh/id_x")));
    }

    #[test]
    fn a_symlink_into_a_secret_grants_nothing() {
        let home = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(home.path()).unwrap();
        touch(&home.join(".ssh/id_x"));
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("innocent")).unwrap();
        let grants = grants(&secret_paths(SandboxProfile::Strict, Some(&home), None), ProcGrant::Walked);
        assert!(!grants.read.contains(&home.join("innocent")));
        assert!(!readable(&grants, &home.join("innocent/id_x")));
    }

    #[test]
    fn a_forbidden_symlink_forbids_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(dir.path()).unwrap();
        touch(&dir.join("real/secret"));
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
        let grants = grants(&[dir.join("link")], ProcGrant::Walked);
        assert!(!readable(&grants, &dir.join("real/secret")));
    }

    #[test]
    fn devices_are_an_allowlist_and_missing_paths_are_ignored() {
        let grants = grants(&[PathBuf::from("/no/such/opsai/path")], ProcGrant::Walked);
        let covered = |path: &str| {
            grants.read.iter().chain(&grants.read_files).any(|granted| Path::new(path).starts_with(granted))
        };
        assert!(covered("/dev/null") && covered("/dev/urandom"));
        assert!(!covered("/dev/pts/0"), "another terminal's keystrokes");
        assert!(!covered("/dev/sda") && !covered("/dev/vda") && !covered("/dev/mem"));
        assert!(!covered("/proc/kcore"));
        assert!(covered("/usr/bin") && covered("/etc/hostname"));
        assert!(covered("/proc/1/environ"), "without own_pid (the tool profile) /proc pids are whole");
    }

    #[test]
    fn proc_is_readable_but_other_processes_environ_is_not() {
        let own = std::process::id();
        let grants = grants(&[], ProcGrant::PerPid(own));
        let proc_covered = |path: &str| {
            grants.read.iter().chain(&grants.read_files).any(|granted| Path::new(path).starts_with(granted))
        };
        assert!(proc_covered(&format!("/proc/{own}/environ")));
        assert!(proc_covered("/proc/1/stat"));
        assert!(proc_covered("/proc/1/cmdline"));
        assert!(!proc_covered("/proc/1/environ"));
        assert!(!proc_covered("/proc/1/task/1/environ"));
        assert!(proc_covered("/proc/meminfo"));
        assert!(proc_covered("/usr/bin"));
        assert!(!grants.read.contains(&PathBuf::from("/proc")));
    }

    #[test]
    fn env_files_are_found_below_the_working_directory_within_bounds() {
        let dir = tempfile::tempdir().unwrap();
        for rel in [".env", "app/.env.local", "a/b/.envrc", "a/b/c/.env", "node_modules/x/.env", "src/main.rs"] {
            touch(&dir.path().join(rel));
        }
        let mut found: Vec<String> =
            env_files(dir.path()).iter().map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string()).collect();
        found.sort();
        assert_eq!(found, [".env", "a/b/.envrc", "app/.env.local"]);
    }

    #[test]
    fn histfile_and_home_secrets_are_listed() {
        let home = Path::new("/home/u");
        let paths = secret_paths(SandboxProfile::Strict, Some(home), Some(OsStr::new("/var/h/hist")));
        assert!(paths.contains(&PathBuf::from("/home/u/.ssh")));
        assert!(paths.contains(&PathBuf::from("/home/u/.docker/config.json")));
        assert!(paths.contains(&PathBuf::from("/var/h/hist")));
        assert!(paths.contains(&PathBuf::from("/etc/shadow")));
        assert!(paths.contains(&PathBuf::from("/etc/kubernetes/admin.conf")));
        let tool = secret_paths(SandboxProfile::Tool, Some(home), None);
        assert!(!tool.contains(&PathBuf::from("/home/u/.kube")));
        assert!(tool.contains(&PathBuf::from("/etc/shadow")));
        assert!(!tool.contains(&PathBuf::from("/etc/kubernetes/admin.conf")));
    }

    #[test]
    fn proc_whole_is_one_rule_that_covers_future_processes() {
        let grants = grants(&[], ProcGrant::Whole);
        assert!(grants.read.contains(&PathBuf::from("/proc")));
        let inside: Vec<_> = grants
            .read
            .iter()
            .chain(&grants.read_files)
            .filter(|p| p.starts_with("/proc") && p.as_path() != Path::new("/proc"))
            .collect();
        assert!(inside.is_empty(), "{inside:?}");
        assert!(!grants.list.contains(&PathBuf::from("/proc")));
    }
}
