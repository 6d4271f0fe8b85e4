//! The seccomp rules that keep a sandboxed command's hands off other processes, IPC objects and
//! other programs' files (issue 21 §2); `linux::rules` adds them to the filter.

use nix::libc;

use super::bpf::Check;

/// Denied whatever their arguments.
pub(super) fn denied() -> Vec<i64> {
    vec![
        // Other processes (issue 21 §2): their memory, their file descriptors compared, NUMA pages.
        libc::SYS_kcmp,
        libc::SYS_process_madvise,
        libc::SYS_process_mrelease,
        libc::SYS_migrate_pages,
        // IPC objects outlive the processes that made them (`ipcmk`), and attaching to another
        // program's segment or queue changes it: SysV shared memory, semaphores and message
        // queues, and POSIX message queues. `ipcs` reads /proc/sysvipc and keeps working.
        libc::SYS_shmget,
        libc::SYS_shmat,
        libc::SYS_shmctl,
        libc::SYS_semget,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_semctl,
        libc::SYS_msgget,
        libc::SYS_msgsnd,
        libc::SYS_msgrcv,
        libc::SYS_msgctl,
        libc::SYS_mq_open,
        libc::SYS_mq_unlink,
        libc::SYS_mq_timedsend,
        libc::SYS_mq_timedreceive,
        libc::SYS_mq_notify,
        libc::SYS_mq_getsetattr,
    ]
}

/// Calls that may act on the caller only (issue 21 §2): a pid (or `which`/`who`) other than "this
/// process" is denied, so `renice`, `ionice -p`, `taskset -p`, `chrt -p` and `prlimit --pid` cannot
/// change a process outside the sandbox, while `nice CMD`, `taskset -c 0 CMD` and `ulimit` keep
/// working (pid 0). The numbers are `int`s, whose low 32 bits are all the kernel reads.
///
/// Locks: `flock` with LOCK_SH or LOCK_EX is denied, because a read-only open is enough to hold one
/// and it blocks every other program's lock on that file; leases (F_SETLEASE) hold other
/// programs' opens. `fcntl` record locks stay: SQLite and rpm readers need shared ones, a write
/// lock needs a writable descriptor (which the sandbox never gives), and they end with the command.
pub(super) fn blocks() -> Vec<(i64, Vec<Check>)> {
    let not_self = || vec![Check::NotEquals { arg: 0, value: 0 }];
    // PRIO_PROCESS and IOPRIO_WHO_PROCESS, with who = 0.
    let only_self = |which: u32| vec![Check::NotEquals { arg: 0, value: which }, Check::NotEquals { arg: 1, value: 0 }];
    let lock_sh_ex = u32::try_from(libc::LOCK_SH | libc::LOCK_EX).unwrap_or(3);
    let setlease = u32::try_from(libc::F_SETLEASE).unwrap_or(1024);
    vec![
        (libc::SYS_setpriority, only_self(0)),
        (libc::SYS_ioprio_set, only_self(1)),
        (libc::SYS_prlimit64, not_self()),
        (libc::SYS_sched_setaffinity, not_self()),
        (libc::SYS_sched_setscheduler, not_self()),
        (libc::SYS_sched_setparam, not_self()),
        (libc::SYS_sched_setattr, not_self()),
        (libc::SYS_move_pages, not_self()),
        (libc::SYS_flock, vec![Check::AnyBit { arg: 1, mask: lock_sh_ex }]),
        (libc::SYS_fcntl, vec![Check::Equals { arg: 1, value: setlease }]),
    ]
}

#[cfg(test)]
mod tests {
    use super::super::{bpf, linux};
    use crate::protocol::SandboxProfile;
    use nix::libc;

    #[test]
    fn only_the_caller_itself_can_be_reniced_limited_pinned_or_locked_for_others() {
        for (profile, root) in
            [(SandboxProfile::Strict, true), (SandboxProfile::Strict, false), (SandboxProfile::Tool, true)]
        {
            let program = bpf::program(&linux::rules(profile, root)).unwrap();
            let allowed = |nr: i64, args: [u32; 6]| bpf::tests::allowed(&program, nr, args);
            let pid = 4242;
            assert!(allowed(libc::SYS_setpriority, [0, 0, 5, 0, 0, 0]), "nice CMD");
            assert!(!allowed(libc::SYS_setpriority, [0, pid, 5, 0, 0, 0]), "renice -p");
            assert!(!allowed(libc::SYS_setpriority, [2, 0, 5, 0, 0, 0]), "renice -u (every process of the user)");
            assert!(!allowed(libc::SYS_setpriority, [1, 0, 5, 0, 0, 0]), "renice -g");
            assert!(allowed(libc::SYS_ioprio_set, [1, 0, 0x6000, 0, 0, 0]), "ionice CMD");
            assert!(!allowed(libc::SYS_ioprio_set, [1, pid, 0x6000, 0, 0, 0]), "ionice -p");
            assert!(!allowed(libc::SYS_ioprio_set, [3, 0, 0x6000, 0, 0, 0]), "ionice of every process of a user");
            assert!(allowed(libc::SYS_prlimit64, [0, 0, 0, 0, 0, 0]), "ulimit");
            assert!(!allowed(libc::SYS_prlimit64, [pid, 0, 0, 0, 0, 0]), "prlimit --pid");
            for nr in [
                libc::SYS_sched_setaffinity,
                libc::SYS_sched_setscheduler,
                libc::SYS_sched_setparam,
                libc::SYS_sched_setattr,
                libc::SYS_move_pages,
            ] {
                assert!(allowed(nr, [0; 6]), "{nr} on itself");
                assert!(!allowed(nr, [pid, 0, 0, 0, 0, 0]), "{nr} on another");
            }
            for nr in [
                libc::SYS_kcmp,
                libc::SYS_process_madvise,
                libc::SYS_migrate_pages,
                libc::SYS_shmget,
                libc::SYS_semget,
                libc::SYS_msgget,
                libc::SYS_mq_open,
                libc::SYS_shmat,
            ] {
                assert!(!allowed(nr, [0; 6]), "{nr}");
            }
            let (sh, ex, un, nb) = (1, 2, 8, 4);
            assert!(
                !allowed(libc::SYS_flock, [3, sh, 0, 0, 0, 0]) && !allowed(libc::SYS_flock, [3, ex | nb, 0, 0, 0, 0])
            );
            assert!(allowed(libc::SYS_flock, [3, un, 0, 0, 0, 0]));
            assert!(!allowed(libc::SYS_fcntl, [3, 1024, 0, 0, 0, 0]), "F_SETLEASE");
            assert!(allowed(libc::SYS_fcntl, [3, 6, 0, 0, 0, 0]), "F_SETLK");
            assert!(allowed(libc::SYS_read, [0; 6]));
        }
    }
}
