//! The resources of one sandboxed command (`safety.sandbox_limits`, issue 21 §2).
//!
//! - Memory (RLIMIT_DATA: heap and private writable mappings, so thread stacks too, but not
//!   reserved address space that Go or a JVM never touches), CPU time (RLIMIT_CPU: SIGXCPU, then
//!   SIGKILL a second later) and file size (RLIMIT_FSIZE) are per process; core dumps are off (a
//!   `|systemd-coredump` pattern would write the dump outside the sandbox).
//! - Processes: a pids cgroup made for the command (v1 `pids` hierarchy, or v2 where the pids
//!   controller is enabled for our cgroup's children) bounds the whole tree, threads included.
//!   As root without one, on Linux 6.14 and later: the `pid_max` of a PID namespace made for the
//!   command (one write; see [`RESERVED_PIDS`] for why it is a range).
//!   Where none can be made, RLIMIT_NPROC, which counts *every* process of the user on the machine:
//!   it is set to the machine's current task count plus the limit, so the command can start at most
//!   that many more. Root ignores RLIMIT_NPROC: as root without a writable pids cgroup or a PID namespace (before
//!   Linux 6.14, or without CAP_SYS_ADMIN) there is no process bound (the command's processes
//!   still end with it).
//!
//! A limit is only ever lowered, never raised above what opsai itself was given.

use std::path::PathBuf;

use nix::sys::resource::{Resource, getrlimit, setrlimit};

use crate::config::SandboxLimits;

/// The helper's argument carrying the limits, `--limits PIDS,MEMORY_MB,CPU_S,FILE_SIZE_MB`.
pub(crate) const FLAG: &str = "--limits";

const MIB: u64 = 1024 * 1024;

pub(crate) fn encode(limits: &SandboxLimits) -> String {
    format!("{},{},{},{}", limits.pids, limits.memory_mb, limits.cpu_s, limits.file_size_mb)
}

pub(crate) fn decode(text: &str) -> Option<SandboxLimits> {
    let values: Vec<u64> = text.split(',').map(str::parse).collect::<Result<_, _>>().ok()?;
    match values.as_slice() {
        &[pids, memory_mb, cpu_s, file_size_mb] => Some(SandboxLimits { pids, memory_mb, cpu_s, file_size_mb }),
        _ => None,
    }
}

/// How the number of processes is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PidsBound {
    /// The command's PID namespace's own `pid_max`.
    PidMax,
    Cgroup,
    Nproc,
    /// `pids` is 0, or root without a pids cgroup.
    Unbounded,
}

/// Sets the per-process limits on this process (and so on everything it starts).
pub(crate) fn apply(limits: &SandboxLimits, nproc: bool) -> nix::Result<()> {
    lower(Resource::RLIMIT_CORE, 0, 0)?;
    if limits.memory_mb > 0 {
        let bytes = limits.memory_mb.saturating_mul(MIB);
        lower(Resource::RLIMIT_DATA, bytes, bytes)?;
    }
    if limits.cpu_s > 0 {
        // The hard limit a second later kills a process that catches SIGXCPU.
        lower(Resource::RLIMIT_CPU, limits.cpu_s, limits.cpu_s.saturating_add(1))?;
    }
    if limits.file_size_mb > 0 {
        let bytes = limits.file_size_mb.saturating_mul(MIB);
        lower(Resource::RLIMIT_FSIZE, bytes, bytes)?;
    }
    if nproc && limits.pids > 0 {
        let count = tasks_on_machine().saturating_add(limits.pids);
        lower(Resource::RLIMIT_NPROC, count, count)?;
    }
    Ok(())
}

fn lower(resource: Resource, soft: u64, hard: u64) -> nix::Result<()> {
    let (current_soft, current_hard) = getrlimit(resource)?;
    let hard = hard.min(current_hard);
    setrlimit(resource, soft.min(current_soft).min(hard), hard)
}

/// Every task (thread) on the machine, from `/proc/loadavg`'s `running/total` field: an upper
/// bound of the user's own count, which RLIMIT_NPROC compares against.
fn tasks_on_machine() -> u64 {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().nth(3).and_then(|field| field.split('/').nth(1)).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Numbers the kernel keeps for itself once a namespace's pids wrap around (`RESERVED_PIDS`):
/// with `pid_max` = N + 300 a namespace holds N processes at least, N + 299 before the first wrap.
pub(crate) const RESERVED_PIDS: u64 = 300;

/// Whether `pid_max` is kept per PID namespace (Linux 6.14). Before that it is the machine's, and
/// writing it from inside would cap every process on the machine: never then.
pub(crate) fn namespaces_have_pid_max() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut numbers = release.trim().split(|c: char| !c.is_ascii_digit()).map(|n| n.parse::<u32>().unwrap_or(0));
    let major = numbers.next().unwrap_or(0);
    let minor = numbers.next().unwrap_or(0);
    (major, minor) >= (6, 14)
}

/// Sets the `pid_max` of the PID namespace the caller is pid 1 of (see [`RESERVED_PIDS`]).
pub(crate) fn set_namespace_pid_max(pids: u64) -> std::io::Result<()> {
    std::fs::write("/proc/sys/kernel/pid_max", pids.saturating_add(RESERVED_PIDS).to_string())
}

/// A pids cgroup made for one command, removed by [`Cgroup::remove`] once it is empty.
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// Under [`pids_parent`], when that is writable (root, or a delegated v1 tree); `None`
    /// otherwise or when `pids` is 0. Named by its helper ([`Owner`]); stale ones are ended first.
    pub(crate) fn create(pids: u64) -> Option<Self> {
        if pids == 0 {
            return None;
        }
        let parent = pids_parent()?;
        let own = Owner::this_process()?;
        remove_stale(&parent, &own);
        let dir = parent.join(own.name());
        std::fs::create_dir(&dir).ok()?;
        let cgroup = Self { dir };
        // A v2 child has pids.max only when its parent enabled the controller for its children.
        if std::fs::write(cgroup.dir.join("pids.max"), pids.to_string()).is_err() {
            cgroup.remove();
            return None;
        }
        Some(cgroup)
    }

    /// Moves the calling process into the cgroup (its children follow).
    pub(crate) fn join(&self) -> std::io::Result<()> {
        std::fs::write(self.dir.join("cgroup.procs"), "0")
    }

    /// Whether a fork was refused because the limit was reached (`pids.events`' `max` counter).
    pub(crate) fn limit_was_hit(&self) -> bool {
        let events = std::fs::read_to_string(self.dir.join("pids.events")).unwrap_or_default();
        events
            .lines()
            .filter_map(|line| line.strip_prefix("max "))
            .any(|count| count.trim().parse::<u64>().is_ok_and(|n| n > 0))
    }

    /// Removes the (by now empty) cgroup; a cgroup that is still busy is left behind.
    pub(crate) fn remove(&self) {
        let _ = std::fs::remove_dir(&self.dir);
    }

    /// SIGKILLs every process in the cgroup: at once through v2's `cgroup.kill` (Linux 5.14),
    /// else one by one from `cgroup.procs`, again while new ones appear (a process forking as it
    /// is killed), bounded so a cgroup that cannot be emptied does not hold the caller.
    pub(crate) fn kill_all(&self) {
        kill_all_in(&self.dir);
    }
}

/// SIGKILLs what is in the cgroup `dir`. Each process is pinned by a pidfd and checked to be
/// in `dir` still before the signal, so a pid reaped and reused meanwhile (survivors' parent is
/// init, which reaps at once) is never signalled. Repeated while new ones appear, for at most
/// [`KILL_PATIENCE`].
fn kill_all_in(dir: &std::path::Path) {
    if std::fs::write(dir.join("cgroup.kill"), "1").is_ok() {
        return;
    }
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else { return };
    let started = std::time::Instant::now();
    loop {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        let pids: Vec<i32> = procs.split_whitespace().filter_map(|n| n.parse().ok()).filter(|&n| n > 0).collect();
        if pids.is_empty() || started.elapsed() > KILL_PATIENCE {
            return;
        }
        for pid in pids {
            kill_if_in(pid, name);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// How long [`kill_all_in`] keeps emptying a v1 cgroup whose processes keep forking.
const KILL_PATIENCE: std::time::Duration = std::time::Duration::from_millis(200);

/// SIGKILLs `pid` when, pinned by a pidfd, it is in the cgroup named `name`.
#[allow(unsafe_code)]
fn kill_if_in(pid: i32, name: &str) {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: pidfd_open takes a pid and flags, no pointer.
    let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid, 0u32) };
    let Ok(fd) = i32::try_from(fd) else { return };
    if fd < 0 {
        return;
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
    let pidfd = unsafe { OwnedFd::from_raw_fd(fd) };
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    if cgroups.lines().any(|line| line.rsplit('/').next() == Some(name)) {
        // SAFETY: a live descriptor, a signal number, a null siginfo (as kill(2) sends) and flags.
        unsafe {
            nix::libc::syscall(
                nix::libc::SYS_pidfd_send_signal,
                pidfd.as_raw_fd(),
                nix::libc::SIGKILL,
                std::ptr::null::<nix::libc::siginfo_t>(),
                0u32,
            );
        }
    }
}

const CGROUP_PREFIX: &str = "opsai-sandbox-";

/// The helper a cgroup belongs to: its PID namespace and, as `/proc` names it, its pid and start
/// time, so a cgroup is never taken for stale while its helper lives (a helper of another PID
/// namespace sharing the parent, a pid reused by a new helper).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    namespace: u64,
    pid: u32,
    start: u64,
}

impl Owner {
    fn this_process() -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let namespace = std::fs::metadata("/proc/self/ns/pid").ok()?.ino();
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let pid = stat.split_whitespace().next()?.parse().ok()?;
        Some(Self { namespace, pid, start: start_time(&stat)? })
    }

    fn name(&self) -> String {
        format!("{CGROUP_PREFIX}{}-{}-{}", self.namespace, self.pid, self.start)
    }

    fn parse(name: &str) -> Option<Self> {
        let mut parts = name.strip_prefix(CGROUP_PREFIX)?.split('-');
        let namespace = parts.next()?.parse().ok()?;
        let pid = parts.next()?.parse().ok()?;
        let start = parts.next()?.parse().ok()?;
        parts.next().is_none().then_some(Self { namespace, pid, start })
    }

    /// Whether the process this names still runs (the same pid, started at the same time).
    fn alive(&self) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid));
        stat.ok().and_then(|stat| start_time(&stat)) == Some(self.start)
    }
}

/// The start time (field 22 of `/proc/PID/stat`, in clock ticks since boot).
fn start_time(stat: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses; the fields after its last `)` do not.
    stat.rsplit_once(')')?.1.split_whitespace().nth(19)?.parse().ok()
}

/// Ends what helpers SIGKILLed from outside left behind: a cgroup of this PID namespace whose
/// helper no longer runs holds only survivors its helper would have killed; they are killed and
/// the cgroup removed (it stays until the killed are reaped, and goes next time). A cgroup of
/// another namespace is never touched.
fn remove_stale(parent: &std::path::Path, own: &Owner) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(Owner::parse) else { continue };
        if owner.namespace == own.namespace && !owner.alive() {
            kill_all_in(&entry.path());
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Where the command's pids cgroup can go: this process's own cgroup in the v1 `pids` hierarchy;
/// in v2, a cgroup whose `cgroup.subtree_control` enables pids (only the hierarchy's root can have
/// processes and enable it at once, so that is where root puts it; a delegated tree where opsai
/// sits in a leaf has none).
fn pids_parent() -> Option<PathBuf> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut unified = None;
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (fields.next(), fields.next(), fields.next()) else { continue };
        let relative = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            return Some(PathBuf::from("/sys/fs/cgroup/pids").join(relative));
        }
        if id == "0" && controllers.is_empty() {
            // Mounted at /sys/fs/cgroup alone, or beside the v1 hierarchies (hybrid).
            let hybrid = std::path::Path::new("/sys/fs/cgroup/unified/cgroup.controllers").exists();
            unified = Some(PathBuf::from(if hybrid { "/sys/fs/cgroup/unified" } else { "/sys/fs/cgroup" }));
            let own = unified.as_ref().map(|root| root.join(relative));
            if own.as_deref().is_some_and(enables_pids) {
                return own;
            }
        }
    }
    unified.filter(|root| enables_pids(root))
}

fn enables_pids(dir: &std::path::Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.subtree_control"))
        .is_ok_and(|controllers| controllers.split_whitespace().any(|c| c == "pids"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_travel_through_the_helper_argument() {
        let limits = SandboxLimits { pids: 9, memory_mb: 100, cpu_s: 0, file_size_mb: 3 };
        assert_eq!(decode(&encode(&limits)), Some(limits));
        assert_eq!(decode("1,2,3"), None);
        assert_eq!(decode("1,2,3,x"), None);
        assert_eq!(decode("1,2,3,4,5"), None);
    }

    #[test]
    fn a_cgroup_is_named_by_its_live_helper_and_stale_only_once_that_is_gone() {
        let own = Owner::this_process().unwrap();
        assert_eq!(Owner::parse(&own.name()), Some(own.clone()));
        assert!(own.alive());
        // The same pid started at another time (reused) is not the owner.
        assert!(!Owner { start: own.start + 1, ..own }.alive());
        for name in ["opsai-sandbox-1234", "opsai-sandbox-1-2-3-4", "opsai-sandbox-a-2-3", "other-1-2-3"] {
            assert_eq!(Owner::parse(name), None, "{name}");
        }
    }

    #[test]
    fn the_start_time_survives_a_command_name_with_spaces_and_parentheses() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 98765 1000 100";
        assert_eq!(start_time(stat), Some(98765));
    }

    #[test]
    fn the_machine_has_tasks() {
        assert!(tasks_on_machine() > 0);
    }
}
