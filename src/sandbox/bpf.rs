//! The seccomp program, written as classic BPF by hand: one compare per denied syscall and a short
//! block for the few whose arguments matter. seccompiler's generic compiler emitted ~800
//! instructions for the same rules (with an x32 twin of each), and the kernel's JIT of that took
//! ~0.4 ms of every sandboxed command; this is under 100.
//!
//! Layout: check the architecture (anything else is killed), deny every x32 call outright (nobody
//! runs x32 binaries, and it is a second door to every syscall), jump to the block of a syscall
//! with argument rules, return EPERM for a denied one, allow the rest.

use seccompiler::sock_filter;

// Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
// BPF_LD | BPF_W | BPF_ABS
const LD_W_ABS: u16 = 0x20;
const JMP_JEQ_K: u16 = 0x05 | 0x10;
const JMP_JGE_K: u16 = 0x05 | 0x30;
const JMP_JSET_K: u16 = 0x05 | 0x40;
const RET_K: u16 = 0x06;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_ALLOW: u32 = 0x7fff_0000;

// Offsets in `struct seccomp_data`: nr, arch, then the six arguments (low half first: little endian).
const NR: u32 = 0;
const ARCH: u32 = 4;
const fn arg_low(index: u32) -> u32 {
    16 + 8 * index
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 62 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 183 | 0x8000_0000 | 0x4000_0000;
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 243 | 0x8000_0000 | 0x4000_0000;

/// Where a jump goes: resolved when the program is finished.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Next,
    Deny,
    NoSys,
    Kill,
    Block(usize),
    /// The `ret EPERM` that ends block `n` (BPF jumps only forward, so each block has its own).
    BlockDeny(usize),
}

#[derive(Debug, thiserror::Error)]
#[error("a jump in the seccomp program is longer than BPF allows")]
pub(crate) struct TooLong;

/// What to filter, in syscall numbers of the native ABI.
pub(crate) struct Rules {
    /// Denied whatever their arguments (EPERM).
    pub denied: Vec<i64>,
    /// Answered ENOSYS, so libc falls back (`clone3`, whose flags the filter cannot read).
    pub unsupported: Vec<i64>,
    /// Syscall number → the argument checks that deny it.
    pub blocks: Vec<(i64, Vec<Check>)>,
}

/// One condition on the low 32 bits of an argument; any that holds denies the call.
#[derive(Clone, Copy, Debug)]
pub enum Check {
    Equals { arg: u32, value: u32 },
    NotEquals { arg: u32, value: u32 },
    AnyBit { arg: u32, mask: u32 },
}

enum Insn {
    Stmt { code: u16, k: u32 },
    Jump { code: u16, k: u32, yes: Target, no: Target },
}

pub fn program(rules: &Rules) -> Result<Vec<sock_filter>, TooLong> {
    let mut main: Vec<Insn> = vec![
        Insn::Stmt { code: LD_W_ABS, k: ARCH },
        Insn::Jump { code: JMP_JEQ_K, k: AUDIT_ARCH, yes: Target::Next, no: Target::Kill },
        Insn::Stmt { code: LD_W_ABS, k: NR },
    ];
    if cfg!(target_arch = "x86_64") {
        main.push(Insn::Jump { code: JMP_JGE_K, k: 0x4000_0000, yes: Target::Deny, no: Target::Next });
    }
    for (index, (nr, _)) in rules.blocks.iter().enumerate() {
        main.push(Insn::Jump { code: JMP_JEQ_K, k: number(*nr), yes: Target::Block(index), no: Target::Next });
    }
    for nr in &rules.unsupported {
        main.push(Insn::Jump { code: JMP_JEQ_K, k: number(*nr), yes: Target::NoSys, no: Target::Next });
    }
    for nr in &rules.denied {
        main.push(Insn::Jump { code: JMP_JEQ_K, k: number(*nr), yes: Target::Deny, no: Target::Next });
    }
    main.push(Insn::Stmt { code: RET_K, k: RET_ALLOW });
    // The shared returns, then one block per syscall with argument checks.
    let deny_at = main.len();
    main.push(Insn::Stmt { code: RET_K, k: RET_ERRNO | errno(nix::libc::EPERM) });
    let nosys_at = main.len();
    main.push(Insn::Stmt { code: RET_K, k: RET_ERRNO | errno(nix::libc::ENOSYS) });
    let kill_at = main.len();
    main.push(Insn::Stmt { code: RET_K, k: RET_KILL_PROCESS });
    let mut block_at = Vec::new();
    let mut block_deny_at = Vec::new();
    for (index, (_, checks)) in rules.blocks.iter().enumerate() {
        block_at.push(main.len());
        let deny = Target::BlockDeny(index);
        for check in checks {
            let (arg, code, k, yes, no) = match *check {
                Check::Equals { arg, value } => (arg, JMP_JEQ_K, value, deny, Target::Next),
                Check::NotEquals { arg, value } => (arg, JMP_JEQ_K, value, Target::Next, deny),
                Check::AnyBit { arg, mask } => (arg, JMP_JSET_K, mask, deny, Target::Next),
            };
            main.push(Insn::Stmt { code: LD_W_ABS, k: arg_low(arg) });
            main.push(Insn::Jump { code, k, yes, no });
        }
        main.push(Insn::Stmt { code: RET_K, k: RET_ALLOW });
        block_deny_at.push(main.len());
        main.push(Insn::Stmt { code: RET_K, k: RET_ERRNO | errno(nix::libc::EPERM) });
    }
    let resolve = |at: usize, target: Target| -> Result<u8, TooLong> {
        let to = match target {
            Target::Next => at + 1,
            Target::Deny => deny_at,
            Target::NoSys => nosys_at,
            Target::Kill => kill_at,
            Target::Block(index) => block_at.get(index).copied().ok_or(TooLong)?,
            Target::BlockDeny(index) => block_deny_at.get(index).copied().ok_or(TooLong)?,
        };
        to.checked_sub(at + 1).and_then(|offset| u8::try_from(offset).ok()).ok_or(TooLong)
    };
    main.iter()
        .enumerate()
        .map(|(at, insn)| match *insn {
            Insn::Stmt { code, k } => Ok(sock_filter { code, jt: 0, jf: 0, k }),
            Insn::Jump { code, k, yes, no } => Ok(sock_filter { code, jt: resolve(at, yes)?, jf: resolve(at, no)?, k }),
        })
        .collect()
}

fn number(nr: i64) -> u32 {
    u32::try_from(nr).unwrap_or(u32::MAX)
}

fn errno(value: i32) -> u32 {
    u32::try_from(value).unwrap_or(1) & 0xffff
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Whether the native-architecture call `nr` with `args` (low halves) passes `program`.
    pub(crate) fn allowed(program: &[sock_filter], nr: i64, args: [u32; 6]) -> bool {
        run(program, AUDIT_ARCH, number(nr), args) == RET_ALLOW
    }

    /// A tiny interpreter for the instructions `program` emits, to check the verdicts.
    fn run(program: &[sock_filter], arch: u32, nr: u32, args: [u32; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&nr.to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, arg) in args.iter().enumerate() {
            data[16 + 8 * i..20 + 8 * i].copy_from_slice(&arg.to_le_bytes());
        }
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let insn = &program[pc];
            pc += 1;
            match insn.code {
                LD_W_ABS => {
                    let at = insn.k as usize;
                    acc = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
                }
                RET_K => return insn.k,
                code => {
                    let taken = match code {
                        JMP_JEQ_K => acc == insn.k,
                        JMP_JGE_K => acc >= insn.k,
                        JMP_JSET_K => acc & insn.k != 0,
                        other => panic!("unexpected opcode {other:#x}"),
                    };
                    pc += usize::from(if taken { insn.jt } else { insn.jf });
                }
            }
        }
    }

    #[test]
    fn verdicts_follow_the_rules() {
        let rules = Rules {
            denied: vec![101, 165],
            unsupported: vec![435],
            blocks: vec![
                (41, vec![Check::NotEquals { arg: 0, value: 16 }]),
                (16, vec![Check::Equals { arg: 1, value: 0x5412 }]),
                (56, vec![Check::AnyBit { arg: 0, mask: 0x1000_0000 | 0x20000 }]),
            ],
        };
        let program = program(&rules).unwrap();
        let eperm = RET_ERRNO | 1;
        let verdict = |nr: u32, args: [u32; 6]| run(&program, AUDIT_ARCH, nr, args);
        assert_eq!(verdict(0, [0; 6]), RET_ALLOW, "read is allowed");
        assert_eq!(verdict(101, [0; 6]), eperm);
        assert_eq!(verdict(165, [0; 6]), eperm);
        assert_eq!(verdict(435, [0; 6]), RET_ERRNO | 38, "clone3 falls back");
        assert_eq!(verdict(41, [2, 1, 0, 0, 0, 0]), eperm, "an inet socket");
        assert_eq!(verdict(41, [16, 3, 0, 0, 0, 0]), RET_ALLOW, "netlink");
        assert_eq!(verdict(16, [1, 0x5412, 0, 0, 0, 0]), eperm, "TIOCSTI");
        assert_eq!(verdict(16, [1, 0x5401, 0, 0, 0, 0]), RET_ALLOW, "TCGETS");
        assert_eq!(verdict(56, [0x0001_1200, 0, 0, 0, 0, 0]), RET_ALLOW, "a fork");
        assert_eq!(verdict(56, [0x1000_0000, 0, 0, 0, 0, 0]), eperm, "a new user namespace");
        assert_eq!(run(&program, 0x4000_0003, 0, [0; 6]), RET_KILL_PROCESS, "another architecture");
        if cfg!(target_arch = "x86_64") {
            assert_eq!(verdict(0x4000_0000, [0; 6]), eperm, "x32 read");
            assert_eq!(verdict(0x4000_0029, [16, 0, 0, 0, 0, 0]), eperm, "x32 socket");
        }
    }

    #[test]
    fn a_program_too_long_for_a_jump_is_refused() {
        let rules = Rules { denied: (1000..1300).collect(), unsupported: vec![], blocks: vec![] };
        assert!(program(&rules).is_err());
    }
}
