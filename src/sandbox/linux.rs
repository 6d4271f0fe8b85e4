//! Applying the sandbox to this (single-threaded, about to `exec`) process: Landlock, then seccomp.
//!
//! What must hold, or nothing runs (the caller exits with `EXIT_NOT_APPLIED`):
//! - Landlock ABI ≥ 3 handles every filesystem write right, truncation included; the ruleset is
//!   created with those as a hard requirement and `no_new_privs` must be set.
//! - Landlock confines `ptrace` and `/proc/<pid>/mem` to processes inside the sandbox (ABI 1); it
//!   does not close `/proc/<pid>/environ` (Linux 6.18 lets it be read), which the path rules do
//!   instead (`paths::grants`).
//! - The seccomp filter loads (it is what denies sockets, so UDP, DNS and the local daemons too).
//!
//! Applied where the kernel has them, reported by `opsai sandbox --status`: TCP bind/connect rules
//! (ABI 4, on top of seccomp), device ioctls (ABI 5), signal and abstract-socket scopes (ABI 6).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

use super::paths;
use crate::protocol::SandboxProfile;

/// The usual sinks, and `/dev/tty` (the command's own controlling terminal); besides these only
/// the terminal on its stdin/stdout/stderr is writable ([`own_terminals`]), not every `/dev/pts/N`
/// (another terminal of the user could be written to).
const WRITABLE_FILES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("Landlock is not usable here ({0}); it needs Linux 6.2 or later with Landlock enabled (lsm=landlock)")]
    Landlock(String),
    #[error("Landlock was not enforced ({0:?})")]
    NotEnforced(RulesetStatus),
    #[error("no_new_privs could not be set")]
    NoNewPrivs,
    #[error("the seccomp filter could not be {0}")]
    Seccomp(String),
}

/// Applies everything to the calling thread (and so to what it `exec`s) and describes what holds.
pub fn apply(profile: SandboxProfile, forbidden: &[PathBuf]) -> Result<String, ApplyError> {
    let landlock = landlock(profile, forbidden)?;
    seccomp(profile)?;
    let network = match profile {
        SandboxProfile::Strict => "network: denied (no sockets: inet, unix, packet; netlink only when not root)",
        SandboxProfile::Tool => "network: allowed (tool profile)",
    };
    Ok(format!("profile {}; {landlock}; seccomp: on; {network}", profile.as_str()))
}

fn landlock(profile: SandboxProfile, forbidden: &[PathBuf]) -> Result<String, ApplyError> {
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
    let mut created = ruleset.create().map_err(err)?;
    // Only model-written lines need other processes' `environ` closed at this price (a rule per
    // process); opsai's own tools get `/proc` whole.
    let own_pid = (profile == SandboxProfile::Strict).then(std::process::id);
    let grants = paths::grants(forbidden, own_pid);
    let terminals = own_terminals();
    let read = AccessFs::from_read(latest);
    let file_only = AccessFs::from_file(latest);
    let list = BitFlags::from(AccessFs::ReadDir);
    let write = read | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    let rules = (grants.read.iter().map(|p| (p.as_path(), read)))
        .chain(grants.read_files.iter().map(|p| (p.as_path(), read & file_only)))
        .chain(grants.list.iter().map(|p| (p.as_path(), list)))
        .chain(WRITABLE_FILES.iter().map(|p| (Path::new(p), write & file_only)))
        .chain(terminals.iter().map(|p| (p.as_path(), write & file_only)));
    for (path, access) in rules {
        // A file that vanished since the walk (a process that exited) is simply not granted.
        let Ok(fd) = PathFd::new(path) else { continue };
        created = created.add_rule(PathBeneath::new(fd, access)).map_err(err)?;
    }
    let status = created.restrict_self().map_err(err)?;
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

/// The terminal devices on stdin, stdout and stderr (the PTY opsai opened, or the user's terminal
/// under `opsai sandbox`).
fn own_terminals() -> Vec<PathBuf> {
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

/// The x32 ABI reaches the same kernel with the syscall number | `__X32_SYSCALL_BIT` and the same
/// audit architecture, so a filter keyed on x86_64 numbers alone would let `socket` through that
/// door on a kernel built with x32. Every rule gets its x32 twin; the calls whose x32 number differs
/// (`ioctl`, `ptrace`, `process_vm_*`) get theirs too.
#[cfg(target_arch = "x86_64")]
fn add_x32_aliases(rules: &mut BTreeMap<i64, Vec<SeccompRule>>) {
    const X32: i64 = 0x4000_0000;
    let own_numbers = [
        (libc::SYS_ioctl, 514),
        (libc::SYS_ptrace, 521),
        (libc::SYS_process_vm_readv, 539),
        (libc::SYS_process_vm_writev, 540),
    ];
    let twins: Vec<(i64, Vec<SeccompRule>)> = rules
        .iter()
        .flat_map(|(&nr, conditions)| {
            let own = own_numbers.iter().find(|(native, _)| *native == nr).map(|(_, x32)| X32 | x32);
            [Some(X32 | nr), own].into_iter().flatten().map(move |alias| (alias, conditions.clone()))
        })
        .collect();
    rules.extend(twins);
}

fn seccomp(profile: SandboxProfile) -> Result<(), ApplyError> {
    let backend = |e: seccompiler::BackendError| ApplyError::Seccomp(format!("built ({e})"));
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(backend)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = denied_syscalls().into_iter().map(|nr| (nr, vec![])).collect();
    // Typing into the terminal's input queue (TIOCSTI) or the console (TIOCLINUX) would hand the
    // next command line to whoever reads the terminal after us.
    let ioctl_request = |value: u64| {
        SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(backend)
    };
    rules.insert(libc::SYS_ioctl, vec![ioctl_request(u64::from(libc::TIOCSTI as u32))?, ioctl_request(0x541C)?]);
    // New namespaces would give a fresh, writable view (user namespaces especially).
    for flag in [libc::CLONE_NEWUSER, libc::CLONE_NEWNS, libc::CLONE_NEWNET] {
        let flag = u64::try_from(flag).unwrap_or(0);
        let condition = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag)
            .and_then(|c| SeccompRule::new(vec![c]))
            .map_err(backend)?;
        rules.entry(libc::SYS_clone).or_default().push(condition);
    }
    if profile == SandboxProfile::Strict {
        // No sockets, Unix ones included: a Unix socket reaches the docker daemon, systemd and
        // D-Bus, each a way to run something outside the sandbox (`systemd-run`, `docker run -v
        // /:/host`), and Landlock only controls connecting to them from ABI 9. Netlink stays for a
        // user other than root, so `ip addr` and `ss` work (as root it changes the network).
        // `socketpair` (a private pipe) is not `socket`, and stays.
        let rule = if nix::unistd::geteuid().is_root() {
            vec![]
        } else {
            let netlink = u64::try_from(libc::AF_NETLINK).unwrap_or(0);
            let condition = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, netlink)
                .and_then(|c| SeccompRule::new(vec![c]))
                .map_err(backend)?;
            vec![condition]
        };
        rules.insert(libc::SYS_socket, rule);
    }
    #[cfg(target_arch = "x86_64")]
    add_x32_aliases(&mut rules);
    let eperm = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)
        .map_err(backend)?;
    // clone3 passes its flags in memory the filter cannot read: ENOSYS makes libc fall back to clone.
    let enosys = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, vec![])]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(backend)?;
    for filter in [eperm, enosys] {
        let program: BpfProgram = filter.try_into().map_err(backend)?;
        seccompiler::apply_filter(&program).map_err(|e| ApplyError::Seccomp(format!("loaded ({e})")))?;
    }
    Ok(())
}
