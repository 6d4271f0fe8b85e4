//! A command's processes end with the command (issue 21 §2, docs/sandbox.md).
//!
//! The helper forks before it applies the sandbox, and the parent stays outside it as a tiny init:
//! - **Usually** H is a child subreaper, so every orphan of the command is reparented to it, and
//!   when B (the command) exits H SIGKILLs every descendant it can find in
//!   `/proc/*/task/*/children` and everything left in the command's pids cgroup, when there is
//!   one, until it has no child. A cgroup whose helper was SIGKILLed from outside is emptied by
//!   the next command's helper ([`limits::Cgroup::create`]).
//! - **As root where the process needs it** (CAP_SYS_ADMIN): H forks A, pid 1 of a new PID
//!   namespace, and A forks B. A exits as soon as B does, and when pid 1 of a namespace exits the
//!   kernel kills every process left in it; A dies with H (PR_SET_PDEATHSIG). Needed where
//!   Landlock cannot scope signals (before ABI 6: root without capabilities may still signal
//!   every root process, but not outside its namespace), or where the only process bound root can
//!   have is the namespace's `pid_max` (no writable pids cgroup). Not otherwise: `/proc` stays the
//!   machine's (so `ps aux` shows the machine's processes), while `getpid()` and `$$` give the
//!   namespace's numbers, which name another process there; procps' `ps` then fails ("fatal
//!   library error, lookup self"), `pgrep` lists itself and `/proc/$$` is someone else.
//! - A user gets no PID namespace (it would need a user namespace, where every file and process of
//!   another owner, root's too, shows as `nobody` in `ls -l` and `ps aux`).
//!
//! H and A block the signals they care about and take them with `sigwait`: the executor and the
//! terminal send SIGINT, SIGQUIT, SIGTERM and SIGHUP to the whole process group, so the command
//! got them itself. After SIGTERM or SIGHUP the command has [`GRACE_SECS`] to end, then the whole
//! tree is killed: before the executor's own SIGKILL (2 s), which would take the helper first.
//! Landlock's signal scope keeps the sandboxed command from signalling H or A (both outside it).
//! H gets SIGHUP when opsai goes (PR_SET_PDEATHSIG), and treats it like the terminal's.

use std::sync::atomic::{AtomicI32, Ordering};

use nix::errno::Errno;
use nix::sched::CloneFlags;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, kill, sigprocmask};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid};

use super::limits::{self, Cgroup, PidsBound};
use crate::config::SandboxLimits;

/// Seconds between SIGTERM/SIGHUP and the SIGKILL of the whole tree.
const GRACE_SECS: u32 = 1;

/// The helper's pid (outside the sandbox and any namespace it makes): set before the first fork.
static HELPER_PID: AtomicI32 = AtomicI32::new(0);

/// How the command's processes are kept from outliving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    PidNamespace,
    Subreaper,
}

/// What [`contain`] set up, for `opsai sandbox --status`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contained {
    pub mode: Mode,
    pub pids: PidsBound,
    pub limits: SandboxLimits,
}

impl std::fmt::Display for Contained {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lifetime = match self.mode {
            Mode::PidNamespace => "its own PID namespace, /proc still the machine's",
            Mode::Subreaper => "a subreaper that kills every descendant",
        };
        let l = &self.limits;
        let pids = match (self.pids, l.pids) {
            (PidsBound::Cgroup, n) => format!("{n} processes (pids cgroup)"),
            (PidsBound::PidMax, n) => {
                format!(
                    "{n} to {} processes (the PID namespace's pid_max)",
                    n.saturating_add(limits::RESERVED_PIDS - 1)
                )
            }
            (PidsBound::Nproc, n) => format!("{n} processes above the machine's count (RLIMIT_NPROC)"),
            (PidsBound::Unbounded, 0) => "no process limit".to_owned(),
            (PidsBound::Unbounded, _) => {
                "no process limit (root without a per-namespace pid_max or a writable pids cgroup)".to_owned()
            }
        };
        let per = |value: u64, unit: &str| if value == 0 { "unlimited".to_owned() } else { format!("{value} {unit}") };
        write!(
            f,
            "processes: end with the command ({lifetime}), cannot reach other processes; limits: {pids}, \
             per process {} memory, {} CPU, {} per file",
            per(l.memory_mb, "MiB"),
            per(l.cpu_s, "s"),
            per(l.file_size_mb, "MiB"),
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ContainError {
    #[error("cannot start the command's process ({0})")]
    Fork(Errno),
    #[error("cannot become the command's subreaper ({0})")]
    Subreaper(Errno),
    #[error("cannot take the terminal's signals ({0})")]
    Signals(Errno),
    #[error("cannot set the resource limits ({0})")]
    Limits(Errno),
    #[error("cannot enter the command's pids cgroup ({0})")]
    Cgroup(std::io::Error),
    #[error("opsai exited before the command started")]
    ParentGone,
}

/// The helper's own pid, outside the sandbox (and any PID namespace): the parent whose
/// environment the sandbox must not be able to read.
pub(crate) fn helper_pid() -> Pid {
    match HELPER_PID.load(Ordering::Relaxed) {
        0 => nix::unistd::getppid(),
        pid => Pid::from_raw(pid),
    }
}

/// This process's pid as `/proc` names it (the machine's, inside a PID namespace too).
pub(crate) fn proc_pid() -> u32 {
    std::fs::read_link("/proc/self")
        .ok()
        .and_then(|link| link.to_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(std::process::id)
}

/// Forks the command's process off the inits described in the module documentation. Returns only
/// in the process that goes on to apply the sandbox and `exec` the command; the others wait, kill
/// what is left and exit with the command's status. Must run before any thread exists.
pub(crate) fn contain(limits: &SandboxLimits) -> Result<Contained, ContainError> {
    HELPER_PID.store(nix::unistd::getpid().as_raw(), Ordering::Relaxed);
    // When opsai goes (killed, or the thread that started us ended with its runtime), the
    // command goes too, after the same grace as a SIGHUP from its terminal.
    let opsai = nix::unistd::getppid();
    nix::sys::prctl::set_pdeathsig(Signal::SIGHUP).map_err(ContainError::Signals)?;
    if nix::unistd::getppid() != opsai {
        return Err(ContainError::ParentGone);
    }
    let cgroup = Cgroup::create(limits.pids);
    let pid_max_is_the_bound = cgroup.is_none() && limits.pids > 0 && limits::namespaces_have_pid_max();
    let namespace_needed = !super::linux::signals_scoped() || pid_max_is_the_bound;
    // Needs CAP_SYS_ADMIN: root; a user gets EPERM at once.
    let mode = if namespace_needed && nix::sched::unshare(CloneFlags::CLONE_NEWPID).is_ok() {
        Mode::PidNamespace
    } else {
        nix::sys::prctl::set_child_subreaper(true).map_err(ContainError::Subreaper)?;
        Mode::Subreaper
    };
    let use_pid_max = mode == Mode::PidNamespace && pid_max_is_the_bound;
    let mut pid_max_set = false;
    let watched = watched_signals();
    let mut original = SigSet::empty();
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&watched), Some(&mut original)).map_err(ContainError::Signals)?;
    // Closed when the command's process `exec`s (or exits): until then a signal that reached the
    // inits may have been sent before that process existed, so they pass it on.
    let (exec_read, exec_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(ContainError::Signals)?;
    let direct = mode == Mode::Subreaper;
    if let ForkResult::Parent { child } = fork()? {
        drop(exec_write);
        let role = Role { init_of_namespace: false, supervises_command: direct, cgroup, limits, exec: exec_read };
        supervise(child, &watched, &role);
    }
    if mode == Mode::PidNamespace {
        // Pid 1 of the namespace; its death takes every process in it.
        let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
        pid_max_set = use_pid_max && limits::set_namespace_pid_max(limits.pids).is_ok();
        if let Some(cgroup) = &cgroup {
            cgroup.join().map_err(ContainError::Cgroup)?;
        }
        if let ForkResult::Parent { child } = fork()? {
            drop(exec_write);
            let role =
                Role { init_of_namespace: true, supervises_command: true, cgroup: None, limits, exec: exec_read };
            supervise(child, &watched, &role);
        }
    } else if let Some(cgroup) = &cgroup {
        cgroup.join().map_err(ContainError::Cgroup)?;
    }
    // Kept open until the `exec` closes it.
    std::mem::forget(exec_write);
    drop(exec_read);
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&original), None).map_err(ContainError::Signals)?;
    let nproc = cgroup.is_none() && !nix::unistd::geteuid().is_root();
    limits::apply(limits, nproc).map_err(ContainError::Limits)?;
    let pids = match (&cgroup, nproc) {
        _ if limits.pids == 0 => PidsBound::Unbounded,
        _ if pid_max_set => PidsBound::PidMax,
        (Some(_), _) => PidsBound::Cgroup,
        (None, true) => PidsBound::Nproc,
        (None, false) => PidsBound::Unbounded,
    };
    Ok(Contained { mode, pids, limits: *limits })
}

fn watched_signals() -> SigSet {
    let mut set = SigSet::empty();
    for signal in [Signal::SIGINT, Signal::SIGQUIT, Signal::SIGTERM, Signal::SIGHUP, Signal::SIGCHLD, Signal::SIGALRM] {
        set.add(signal);
    }
    set
}

#[allow(unsafe_code)]
fn fork() -> Result<ForkResult, ContainError> {
    // SAFETY: the helper runs first thing in `main` (`entry_from_args`), before any thread
    // exists, so the child inherits no lock held by another thread; it only makes syscalls,
    // allocates and then `exec`s or exits.
    unsafe { nix::unistd::fork() }.map_err(ContainError::Fork)
}

/// What one waiting process is.
struct Role<'a> {
    /// Pid 1 of the command's PID namespace: `kill(-1)` reaches exactly the command's processes.
    init_of_namespace: bool,
    /// Its child is the command itself (so its status says which limit stopped it).
    supervises_command: bool,
    cgroup: Option<Cgroup>,
    limits: &'a SandboxLimits,
    /// The read end of the pipe the command's `exec` closes.
    exec: std::os::fd::OwnedFd,
}

impl Role<'_> {
    /// Whether the command has been `exec`ed (so it is in the process group and got the
    /// terminal's signals itself): the pipe's last writer is gone.
    fn command_started(&self) -> bool {
        use std::os::fd::AsFd;
        let mut fds = [nix::poll::PollFd::new(self.exec.as_fd(), nix::poll::PollFlags::POLLIN)];
        !matches!(nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO), Ok(0))
    }
}

/// Waits for `child`, reaping orphans on the way; then kills every descendant left and exits
/// with the child's status (128+n for signal n, as a shell reports it).
fn supervise(child: Pid, watched: &SigSet, role: &Role) -> ! {
    let mut terminating = false;
    loop {
        if let Some(status) = reap_ready(child) {
            kill_tree(role, child);
            exit_with(status, role);
        }
        let signal = watched.wait();
        if let Ok(sent @ (Signal::SIGINT | Signal::SIGQUIT | Signal::SIGTERM | Signal::SIGHUP)) = signal
            && !role.command_started()
        {
            // It blocks them until just before `exec`, so this merges with one sent to the group.
            let _ = kill(child, sent);
        }
        match signal {
            Ok(Signal::SIGTERM | Signal::SIGHUP) if !terminating => {
                terminating = true;
                nix::unistd::alarm::set(GRACE_SECS);
            }
            // The grace is over: the command and everything it started go at once.
            Ok(Signal::SIGALRM) => {
                let status = kill_tree(role, child).unwrap_or(WaitStatus::Signaled(child, Signal::SIGKILL, false));
                exit_with(status, role);
            }
            _ => {}
        }
    }
}

/// Reaps every child that has exited; the status of `child` if it was among them.
fn reap_ready(child: Pid) -> Option<WaitStatus> {
    let mut found = None;
    loop {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return found,
            Ok(status) if status.pid() == Some(child) => found = Some(status),
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return found,
        }
    }
}

/// SIGKILLs every descendant and reaps them, until this process has no child left; the status of
/// `child` if it was reaped here.
fn kill_tree(role: &Role, child: Pid) -> Option<WaitStatus> {
    let mut status = None;
    loop {
        if role.init_of_namespace {
            // Every process of the namespace but ourselves.
            let _ = kill(Pid::from_raw(-1), Signal::SIGKILL);
        } else {
            for pid in descendants(Pid::this()) {
                let _ = kill(pid, Signal::SIGKILL);
            }
            // The helper itself is outside the cgroup; only the command's processes are in it.
            if let Some(cgroup) = &role.cgroup {
                cgroup.kill_all();
            }
        }
        // Blocks until one is gone; orphans of the killed are reparented here, and found next time.
        match waitpid(None, None) {
            Ok(reaped) if reaped.pid() == Some(child) => status = Some(reaped),
            Err(Errno::EINTR) | Ok(_) => {}
            Err(_) => return status,
        }
    }
}

/// Every process below `root`, from the `children` file of each of their threads.
fn descendants(root: Pid) -> Vec<Pid> {
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { continue };
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read_to_string(task.path().join("children")) else { continue };
            for child in text.split_whitespace().filter_map(|n| n.parse().ok()).map(Pid::from_raw) {
                if !found.contains(&child) {
                    found.push(child);
                    queue.push(child);
                }
            }
        }
    }
    found
}

fn exit_with(status: WaitStatus, role: &Role) -> ! {
    let code = match status {
        WaitStatus::Exited(_, code) => code,
        WaitStatus::Signaled(_, signal, _) => 128 + signal as i32,
        _ => 1,
    };
    let limits = role.limits;
    let reason = match status {
        WaitStatus::Signaled(_, Signal::SIGXCPU, _) if role.supervises_command => Some(format!(
            "the command used up its CPU time ({} s per process, safety.sandbox_limits.cpu_s) and was stopped",
            limits.cpu_s
        )),
        WaitStatus::Signaled(_, Signal::SIGXFSZ, _) if role.supervises_command => Some(format!(
            "the command wrote past its file size limit ({} MiB, safety.sandbox_limits.file_size_mb) and was stopped",
            limits.file_size_mb
        )),
        _ => None,
    };
    if let Some(reason) = reason {
        say(&reason);
    }
    if let Some(cgroup) = &role.cgroup {
        if cgroup.limit_was_hit() {
            say(&format!(
                "the command reached its process limit ({} processes and threads, safety.sandbox_limits.pids): \
                 starting more failed",
                limits.pids
            ));
        }
        cgroup.remove();
    }
    std::process::exit(code)
}

fn say(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "opsai sandbox: {message}");
}
