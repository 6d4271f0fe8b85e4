//! Applying the sandbox to this (single-threaded, about to `exec`) process: Landlock, then seccomp.
//!
//! What must hold, or nothing runs (the caller exits with `EXIT_NOT_APPLIED`):
//! - Landlock ABI ≥ 3 handles every filesystem write right, truncation included; the ruleset is
//!   created with those as a hard requirement and `no_new_privs` must be set.
//! - Landlock confines `ptrace` and `/proc/<pid>/mem` to processes inside the sandbox (ABI 1); it
//!   does not close `/proc/<pid>/environ` (Linux 6.18 lets it be read), which the path rules do
//!   instead (`paths::dev_and_proc`; the rest of the read view is `view`).
//! - The seccomp filter loads (it is what denies sockets, so UDP, DNS and the local daemons too).
//!
//! Applied where the kernel has them, reported by `opsai sandbox --status`: TCP bind/connect rules
//! (ABI 4, on top of seccomp), device ioctls (ABI 5), signal and abstract-socket scopes (ABI 6).

use std::path::{Path, PathBuf};

use super::bpf::{self, Check};
use super::paths;
use super::view;
use crate::protocol::SandboxProfile;
use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus, PathFd, Ruleset, RulesetAttr,
    RulesetStatus, Scope,
};
use nix::libc;

/// The usual sinks, and `/dev/tty` (the command's own controlling terminal); besides these only
/// the terminal on its stdin/stdout/stderr is writable ([`own_terminals`]), not every `/dev/pts/N`
/// (another terminal of the user could be written to).
const WRITABLE_FILES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

#[derive(Debug, thiserror::Error)]
pub(crate) enum ApplyError {
    #[error("Landlock is not usable here ({0}); it needs Linux 6.2 or later with Landlock enabled (lsm=landlock)")]
    Landlock(String),
    #[error("Landlock was not enforced ({0:?})")]
    NotEnforced(RulesetStatus),
    #[error("no_new_privs could not be set")]
    NoNewPrivs,
    #[error("the seccomp filter could not be {0}")]
    Seccomp(String),
    #[error("capabilities could not be dropped ({0})")]
    Capabilities(String),
    #[error("another process's environment is still readable inside the sandbox")]
    EnvironReadable,
    #[error("{0} is still readable inside the sandbox")]
    KernelMemoryReadable(&'static str),
}

/// How other processes' `/proc/<pid>/environ` is kept out of reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProcMode {
    /// `/proc` is readable whole: Landlock's cross-domain ptrace rule closes other processes'
    /// `environ` once CAP_SYS_ADMIN and CAP_PERFMON are dropped (checked after applying, on the
    /// parent's). One rule, and processes started inside can read their own `/proc/self`.
    Scoped,
    /// Only `stat`, `status` and `cmdline` of each process outside, one rule each: for a kernel
    /// where the check above fails.
    PerPid,
}

/// Applies everything to the calling thread (and so to what it `exec`s) and describes what holds.
/// `prepared`: the ruleset opsai built for this command's view ([`super::broker`]), applied as it
/// is; without it the view is computed and the ruleset built here.
pub fn apply(
    profile: SandboxProfile,
    view: &view::Inputs,
    proc_mode: ProcMode,
    prepared: Option<std::os::fd::OwnedFd>,
) -> Result<String, ApplyError> {
    if profile == SandboxProfile::Strict {
        drop_capabilities()?;
    }
    let landlock = match prepared {
        Some(ruleset) => {
            restrict_prepared(&ruleset)?;
            "landlock: the ruleset opsai prepared for this view".to_owned()
        }
        None => landlock(profile, view, proc_mode)?,
    };
    seccomp(profile)?;
    if profile == SandboxProfile::Strict && proc_mode == ProcMode::Scoped {
        // The helper (opsai, the command's init) is outside the sandbox and its environment holds
        // what a command must not see; inside a PID namespace getppid() would not name it.
        let parent = super::process::helper_pid();
        if std::fs::File::open(format!("/proc/{parent}/environ")).is_ok() {
            return Err(ApplyError::EnvironReadable);
        }
        if let Some(file) = ["/proc/kcore", "/proc/kmsg"].into_iter().find(|f| std::fs::File::open(f).is_ok()) {
            return Err(ApplyError::KernelMemoryReadable(file));
        }
    }
    let network = match profile {
        SandboxProfile::Strict => "network: denied (no sockets: inet, unix, packet; netlink only when not root)",
        SandboxProfile::Tool => "network: allowed (tool profile)",
    };
    let processes = match (profile, proc_mode) {
        (SandboxProfile::Tool, _) => "",
        (SandboxProfile::Strict, ProcMode::Scoped) => {
            "; other processes' environment: closed (Landlock ptrace scoping; every capability dropped)"
        }
        (SandboxProfile::Strict, ProcMode::PerPid) => {
            "; other processes' environment: closed (a path rule per process)"
        }
    };
    Ok(format!("profile {}; {landlock}; seccomp: on; {network}{processes}", profile.as_str()))
}

/// Every capability, from every set (the bounding one included, so nothing executed later gets one
/// back). Root without them is a user whose files happen to be root's: CAP_DAC_OVERRIDE and
/// CAP_DAC_READ_SEARCH read other users' 0600 files (every `/home/*/.ssh/id_rsa`), CAP_SETUID
/// becomes their owner, CAP_FOWNER/CAP_CHOWN change modes, CAP_SYS_ADMIN and CAP_PERFMON read other
/// processes' `environ` across Landlock's ptrace scoping (Linux 6.18), CAP_SYS_RAWIO opens
/// `/proc/kcore` and CAP_SYSLOG `/proc/kmsg`. No read-only command needs any of them. As root, the
/// groups that read the logs (`adm`, `systemd-journal`) are added first, so logs that daemons own
/// stay readable: root reading its logs is everyday work.
fn drop_capabilities() -> Result<(), ApplyError> {
    use caps::{CapSet, Capability};
    let err = |e: caps::errors::CapsError| ApplyError::Capabilities(e.to_string());
    if caps::has_cap(None, CapSet::Effective, Capability::CAP_SETGID).map_err(err)? {
        add_log_groups();
    }
    // Without CAP_SETPCAP (not root) the bounding set cannot shrink; nor can such a process gain a
    // capability back (no_new_privs ignores file capabilities).
    if caps::has_cap(None, CapSet::Effective, Capability::CAP_SETPCAP).map_err(err)? {
        for cap in caps::all() {
            if caps::has_cap(None, CapSet::Bounding, cap).map_err(err)? {
                caps::drop(None, CapSet::Bounding, cap).map_err(err)?;
            }
        }
    }
    for set in [CapSet::Ambient, CapSet::Inheritable, CapSet::Effective, CapSet::Permitted] {
        caps::clear(None, set).map_err(err)?;
    }
    let left = caps::read(None, CapSet::Effective).map_err(err)?;
    if let Some(cap) = left.iter().next() {
        return Err(ApplyError::Capabilities(format!("{cap} is still effective")));
    }
    Ok(())
}

/// `adm` and `systemd-journal` among this process's groups, where they exist.
fn add_log_groups() {
    let mut groups = nix::unistd::getgroups().unwrap_or_default();
    for gid in log_groups() {
        if !groups.contains(&gid) {
            groups.push(gid);
        }
    }
    // Not fatal: without them only the logs daemons own are closed.
    let _ = nix::unistd::setgroups(&groups);
}

/// The groups that read the logs (`adm`, `systemd-journal`), where they exist.
pub(super) fn log_groups() -> Vec<nix::unistd::Gid> {
    let local = std::fs::read_to_string("/etc/group").unwrap_or_default();
    ["adm", "systemd-journal"]
        .into_iter()
        // `/etc/group` first; the name service (nsswitch.conf, nscd) only for a group it lacks.
        .filter_map(|name| {
            local_gid(&local, name).or_else(|| nix::unistd::Group::from_name(name).ok().flatten().map(|g| g.gid))
        })
        .collect()
}

/// The gid of group `name` in the text of `/etc/group`.
fn local_gid(group_file: &str, name: &str) -> Option<nix::unistd::Gid> {
    group_file.lines().find_map(|line| {
        let mut fields = line.split(':');
        (fields.next() == Some(name)).then(|| fields.nth(1)?.parse().ok().map(nix::unistd::Gid::from_raw)).flatten()
    })
}

fn landlock(profile: SandboxProfile, view: &view::Inputs, proc_mode: ProcMode) -> Result<String, ApplyError> {
    let err = |e: landlock::RulesetError| ApplyError::Landlock(e.to_string());
    // Per process only where Landlock's scoping does not close other processes' `environ`
    // (`ProcMode`); opsai's own tools get `/proc` whole.
    let proc = match (profile, proc_mode) {
        (SandboxProfile::Strict, ProcMode::Scoped) => paths::ProcGrant::Whole,
        (SandboxProfile::Strict, ProcMode::PerPid) => paths::ProcGrant::PerPid(super::process::proc_pid()),
        (SandboxProfile::Tool, _) => paths::ProcGrant::Walked,
    };
    let Prepared { ruleset, grants, rule_fds, .. } = prepare(profile, view, proc, &own_terminals())?;
    std::mem::forget(rule_fds);
    let status = ruleset.restrict_self().map_err(err)?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(ApplyError::NotEnforced(status.ruleset));
    }
    if !status.no_new_privs {
        return Err(ApplyError::NoNewPrivs);
    }
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => format!("{effective_abi:?}"),
        other => format!("{other:?}"),
    };
    let enforced = if status.ruleset == RulesetStatus::FullyEnforced { "fully enforced" } else { "partially enforced" };
    let extras = if abi_at_least(&status.landlock, ABI::V6) {
        "TCP rules, device ioctls, signal and abstract-socket scopes"
    } else if abi_at_least(&status.landlock, ABI::V4) {
        "TCP rules; no signal scoping (needs ABI 6)"
    } else {
        "no TCP rules (seccomp still denies inet sockets), no signal scoping (needs ABI 6)"
    };
    Ok(format!(
        "landlock: ABI {abi}, {enforced} ({} read rules, {} list-only directories; {extras})",
        grants.read.len() + grants.read_files.len(),
        grants.list.len()
    ))
}

/// A ruleset with its rules, not applied.
pub(super) struct Prepared {
    pub ruleset: landlock::RulesetCreated,
    pub grants: paths::Grants,
    /// When the view's system part was computed (seconds since the epoch).
    pub system_computed: u64,
    /// The last batch of the rules' path descriptors, still open: the helper leaves them to its
    /// `exec`, opsai drops them.
    pub rule_fds: Vec<PathFd>,
}

/// The Landlock ruleset of `profile` for `view` (with `/proc` as `proc` says and `terminals`
/// writable), every rule added, not applied.
pub(super) fn prepare(
    profile: SandboxProfile,
    view: &view::Inputs,
    proc: paths::ProcGrant,
    terminals: &[PathBuf],
) -> Result<Prepared, ApplyError> {
    let err = |e: landlock::RulesetError| ApplyError::Landlock(e.to_string());
    let latest = ABI::V6;
    let required = AccessFs::from_all(ABI::V3);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(required)
        .map_err(err)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(latest))
        .map_err(err)?
        .scope(Scope::Signal)
        .map_err(err)?;
    if profile == SandboxProfile::Strict {
        ruleset = ruleset
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(err)?
            .scope(Scope::AbstractUnixSocket)
            .map_err(err)?;
    }
    let created = ruleset.create().map_err(err)?;
    let (grants, system_computed) = view::grants(view, proc);
    let read = AccessFs::from_read(latest);
    let file_only = AccessFs::from_file(latest);
    let list = BitFlags::from(AccessFs::ReadDir);
    let write = read | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    let rules = (grants.read.iter().map(|p| (p.as_path(), read)))
        .chain(grants.read_files.iter().map(|p| (p.as_path(), read & file_only)))
        .chain(grants.list.iter().map(|p| (p.as_path(), list)))
        .chain(WRITABLE_FILES.iter().map(|p| (Path::new(p), write & file_only)))
        .chain(terminals.iter().map(|p| (p.as_path(), write & file_only)));
    // The rules go in through a duplicate of the ruleset's descriptor (the same kernel object), by
    // the system call itself: the crate's `add_rule` `fstat`s every path to learn whether it is a
    // directory, which the walk already knows (a few hundred system calls per command).
    let abi = kernel_abi();
    let supported = AccessFs::from_all(abi);
    let fd: Option<std::os::fd::OwnedFd> = created.try_clone().map_err(|e| ApplyError::Landlock(e.to_string()))?.into();
    let Some(fd) = fd else { return Err(ApplyError::Landlock("the ruleset has no descriptor".into())) };
    // Closing each rule's descriptor costs a system call per rule; they are close-on-exec, so in
    // the helper the `exec` closes them at once. Held in batches below the usual limit of 1024
    // open files.
    let mut held: Vec<PathFd> = Vec::new();
    for (path, access) in rules {
        // A file that vanished since the walk (a process that exited) is simply not granted.
        let Ok(path_fd) = PathFd::new(path) else { continue };
        add_path_rule(&fd, &path_fd, access & supported, (access & file_only) & supported)?;
        held.push(path_fd);
        if held.len() >= 512 {
            held.clear();
        }
    }
    drop(fd);
    Ok(Prepared { ruleset: created, grants, system_computed, rule_fds: held })
}

/// Applies a ruleset built by [`prepare`] (in opsai, handed over by the broker): `no_new_privs`,
/// then `landlock_restrict_self`.
fn restrict_prepared(ruleset: &std::os::fd::OwnedFd) -> Result<(), ApplyError> {
    use std::os::fd::AsRawFd;
    nix::sys::prctl::set_no_new_privs().map_err(|_| ApplyError::NoNewPrivs)?;
    // SAFETY: the call takes a descriptor (open, owned by the caller) and flags, no pointer.
    #[allow(unsafe_code)]
    let done = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) };
    if done == 0 {
        Ok(())
    } else {
        Err(ApplyError::Landlock(format!("the prepared ruleset was refused ({})", std::io::Error::last_os_error())))
    }
}

/// Whether Landlock can keep the command from signalling processes outside its sandbox (ABI 6).
pub(crate) fn signals_scoped() -> bool {
    kernel_abi() >= ABI::V6
}

/// The kernel's Landlock ABI (the ruleset was created, so it is at least 3), capped at what this
/// code knows; below 3 (or none) reads as 3, which [`signals_scoped`] and the ruleset's hard
/// requirement both treat as too old.
fn kernel_abi() -> ABI {
    // SAFETY: the version query takes no pointer (NULL, size 0) and only returns a number.
    #[allow(unsafe_code)]
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    match version {
        ..=3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        _ => ABI::V6,
    }
}

const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
const LANDLOCK_RULE_PATH_BENEATH: u32 = 1;

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// One path rule; `access` for a directory, `file_access` (no directory rights, which the kernel
/// refuses on a file with EINVAL) when the path turns out to be something else: a cached view can
/// be a few seconds older than the file system.
fn add_path_rule(
    ruleset: &std::os::fd::OwnedFd,
    path: &PathFd,
    access: BitFlags<AccessFs>,
    file_access: BitFlags<AccessFs>,
) -> Result<(), ApplyError> {
    use std::os::fd::{AsFd, AsRawFd};
    let add = |allowed: BitFlags<AccessFs>| {
        let attr = PathBeneathAttr { allowed_access: allowed.bits(), parent_fd: path.as_fd().as_raw_fd() };
        // SAFETY: `attr` is the kernel's packed struct, alive for the call; both descriptors are open.
        #[allow(unsafe_code)]
        let done = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                LANDLOCK_RULE_PATH_BENEATH,
                std::ptr::from_ref(&attr),
                0u32,
            )
        };
        if done == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
    };
    match add(access) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) && access != file_access => {
            add(file_access).map_err(|e| ApplyError::Landlock(format!("a path rule was refused ({e})")))
        }
        Err(e) => Err(ApplyError::Landlock(format!("a path rule was refused ({e})"))),
    }
}

/// The terminal devices on stdin, stdout and stderr (the PTY opsai opened, or the user's terminal
/// under `opsai sandbox`).
pub(super) fn own_terminals() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = (0..3)
        .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
        .filter(|path| path.starts_with("/dev/pts/") || path.starts_with("/dev/tty"))
        .collect();
    found.dedup();
    found
}

fn abi_at_least(status: &LandlockStatus, abi: ABI) -> bool {
    matches!(status, LandlockStatus::Available { effective_abi, .. } if *effective_abi >= abi)
}

/// Syscalls no read-only command needs and that reach past the filesystem rules: other processes'
/// memory, kernel state, mounts and namespaces, file modes and owners (Landlock does not cover them).
fn denied_syscalls() -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_getfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsmount,
        libc::SYS_fsconfig,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_quotactl,
        libc::SYS_name_to_handle_at,
        libc::SYS_open_by_handle_at,
        libc::SYS_fanotify_init,
        libc::SYS_syslog,
        libc::SYS_vhangup,
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        libc::SYS_fchmodat2,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        libc::SYS_utimensat,
    ];
    calls.extend(super::targets::denied());
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
        libc::SYS_iopl,
        libc::SYS_ioperm,
    ]);
    calls
}

fn seccomp(profile: SandboxProfile) -> Result<(), ApplyError> {
    let built = |e: bpf::TooLong| ApplyError::Seccomp(format!("built ({e})"));
    let program = bpf::program(&rules(profile, nix::unistd::geteuid().is_root())).map_err(built)?;
    seccompiler::apply_filter(&program).map_err(|e| ApplyError::Seccomp(format!("loaded ({e})")))
}

/// The filter's rules for `profile`, for root or another user.
pub(super) fn rules(profile: SandboxProfile, root: bool) -> bpf::Rules {
    let flags = |value: i32| u32::try_from(value).unwrap_or(u32::MAX);
    let mut denied = denied_syscalls();
    let mut blocks = vec![
        // Typing into the terminal's input queue (TIOCSTI) or the console (TIOCLINUX) would hand the
        // next command line to whoever reads the terminal after us.
        (
            libc::SYS_ioctl,
            vec![Check::Equals { arg: 1, value: flags(libc::TIOCSTI as i32) }, Check::Equals { arg: 1, value: 0x541C }],
        ),
        // New namespaces would give a fresh, writable view (user namespaces especially).
        (
            libc::SYS_clone,
            vec![Check::AnyBit { arg: 0, mask: flags(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWNET) }],
        ),
    ];
    if profile == SandboxProfile::Strict {
        // No sockets, Unix ones included: a Unix socket reaches the docker daemon, systemd and
        // D-Bus, each a way to run something outside the sandbox (`systemd-run`, `docker run -v
        // /:/host`), and Landlock only controls connecting to them from ABI 9. Netlink stays for a
        // user other than root, so `ip addr` and `ss` work (as root it changes the network).
        // `socketpair` (a private pipe) is not `socket`, and stays.
        if root {
            denied.push(libc::SYS_socket);
        } else {
            blocks.push((libc::SYS_socket, vec![Check::NotEquals { arg: 0, value: flags(libc::AF_NETLINK) }]));
        }
    }
    blocks.extend(super::targets::blocks());
    // clone3 passes its flags in memory the filter cannot read: ENOSYS makes libc fall back to clone.
    bpf::Rules { denied, unsupported: vec![libc::SYS_clone3], blocks }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_groups_are_found_in_the_group_file() {
        let text = "root:x:0:\nadm:x:4:syslog\nsystemd-journal:x:999:\nadmin:x:5:\n";
        assert_eq!(local_gid(text, "adm"), Some(nix::unistd::Gid::from_raw(4)));
        assert_eq!(local_gid(text, "systemd-journal"), Some(nix::unistd::Gid::from_raw(999)));
        assert_eq!(local_gid(text, "wheel"), None);
        assert_eq!(local_gid("adm:x:notanumber:\n", "adm"), None);
    }
}
