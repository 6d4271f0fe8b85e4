//! The sandbox a command that runs without a human yes gets on an SSH host (issue 21 §4, docs/remote.md).
//!
//! Probed once per host per process ([`probe`], one plain ssh call), in this order:
//! 1. **opsai** on the host's PATH, of exactly this version (the helper's arguments are this
//!    version's): `opsai __opsai-sandbox PROFILE -- bash -c CMD`, the same sandbox as here, applied
//!    there (its own probe must pass there too).
//! 2. **bubblewrap**: a mount namespace with `/` read-only, every home closed but the working
//!    directory's (whose hidden entries are closed), system and secret-shaped files masked, its own
//!    PID, network, IPC and user namespaces, no capabilities, a seccomp filter (no sockets but netlink,
//!    no keyrings, ptrace, BPF or io_uring) and a cleared environment (`bwrap.sh`).
//! 3. Otherwise none: then only a command of plain literal words ([`plain_words`]) the policy rates
//!    Safe runs without asking, uncontained; anything else asks. A probe that fails for any reason
//!    lands here, never on "unsandboxed".
//!
//! `systemd-run` is not used: as a user its `Protect*`/`PrivateNetwork` properties need the same user
//! namespaces bubblewrap needs, as root it starts a system unit whose output and lifetime `--pipe
//! --wait` only partly ties to the ssh session, and no filter keeps a unit off the D-Bus socket.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{ENV, SshTransport};
use crate::policy::quote_word;
use crate::protocol::SandboxProfile;

const BWRAP_SCRIPT: &str = include_str!("bwrap.sh");

/// What contains a command that runs without a yes on one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteSandbox {
    /// opsai's own sandbox, applied by the host's opsai at `path`.
    Opsai { path: String, per_pid: bool, details: String },
    /// bubblewrap at `path`, on a host of architecture `arch` (its seccomp program is built for it).
    Bubblewrap { path: String, arch: String },
    /// No sandbox there, and why.
    None { reason: String },
}

impl RemoteSandbox {
    /// Whether commands can be contained there.
    pub fn contains(&self) -> bool {
        !matches!(self, RemoteSandbox::None { .. })
    }

    /// One line for `opsai sandbox --status --ssh-host` and the prompt.
    pub fn describe(&self) -> String {
        match self {
            RemoteSandbox::Opsai { path, details, .. } => format!("opsai's own sandbox ({path}): {details}"),
            RemoteSandbox::Bubblewrap { path, arch } => format!(
                "bubblewrap ({path}, {arch}): / read-only, homes closed but the working directory's (its hidden \
                 entries closed), system and secret-shaped files masked, own PID/network/IPC namespaces (ps, ss \
                 and ip see only the command itself), no capabilities, no sockets but netlink, environment cleared"
            ),
            RemoteSandbox::None { reason } => format!(
                "none ({reason}); only a single command of plain words (no quotes, expansions, globs, \
                 redirections, pipes or lists) rated safe runs without asking, uncontained; anything else asks"
            ),
        }
    }

    /// The remote shell line that runs `command` in `cwd` inside this sandbox with `profile`.
    pub fn line(&self, cwd: &std::path::Path, command: &str, profile: SandboxProfile) -> Option<String> {
        let cwd = super::remote_dir(cwd);
        match self {
            RemoteSandbox::Opsai { path, per_pid, .. } => {
                let mut prefix = format!("{} __opsai-sandbox {}", quote_word(path), profile.as_str());
                if *per_pid {
                    prefix.push_str(" --proc-per-pid");
                }
                Some(super::remote_line_with(&cwd, command, &format!("{prefix} --")))
            }
            RemoteSandbox::Bubblewrap { path, arch } => {
                let filter = seccomp::printf_escapes(arch, profile)?;
                let args = [BWRAP_SCRIPT, "opsai-bwrap", path, profile.as_str(), &filter, command];
                let args: Vec<String> = args.iter().map(|arg| quote_word(arg)).collect();
                Some(format!("cd {cwd} && env {ENV} sh -c {}", args.join(" ")))
            }
            RemoteSandbox::None { .. } => None,
        }
    }
}

/// The probe: one `sh` script whose last line says which sandbox applies (`use opsai PATH
/// scoped|per-pid DETAILS`, `use bwrap PATH ARCH`, `use none`), after `note` lines saying why a
/// candidate was passed over.
pub fn probe_script() -> String {
    let version = format!("opsai {}", env!("CARGO_PKG_VERSION"));
    let bwrap_test = |arch: &str| {
        let filter = seccomp::printf_escapes(arch, SandboxProfile::Strict).unwrap_or_default();
        format!(
            "(cd / && sh -c {} opsai-bwrap \"$b\" strict {} 'exit 0' </dev/null >/dev/null 2>&1)",
            quote_word(BWRAP_SCRIPT),
            quote_word(&filter)
        )
    };
    format!(
        "o=$(command -v opsai 2>/dev/null); \
         if [ -n \"$o\" ]; then \
           v=$(\"$o\" --version 2>/dev/null </dev/null); \
           if [ \"$v\" = {version} ]; then \
             r=$(\"$o\" __opsai-sandbox --probe strict 2>&1 </dev/null) && [ \"${{r#sandbox-ok}}\" != \"$r\" ] && \
               {{ echo \"use opsai $o scoped ${{r#sandbox-ok }}\" | head -n 1; exit 0; }}; \
             r=$(\"$o\" __opsai-sandbox --probe --proc-per-pid strict 2>&1 </dev/null) && [ \"${{r#sandbox-ok}}\" != \"$r\" ] && \
               {{ echo \"use opsai $o per-pid ${{r#sandbox-ok }}\" | head -n 1; exit 0; }}; \
             echo \"note opsai at $o cannot apply its sandbox there: $r\" | head -n 1; \
           else echo \"note opsai at $o is not this version ($v)\" | head -n 1; fi; \
         fi; \
         b=$(command -v bwrap 2>/dev/null); \
         if [ -n \"$b\" ]; then \
           a=$(uname -m); \
           case \"$a\" in \
             x86_64) {x86} && {{ echo \"use bwrap $b $a\"; exit 0; }} ;; \
             aarch64) {arm} && {{ echo \"use bwrap $b $a\"; exit 0; }} ;; \
             *) echo \"note bwrap: no seccomp filter for $a\"; echo 'use none'; exit 0 ;; \
           esac; \
           echo \"note bwrap at $b cannot create its namespaces there (user namespaces disabled?)\"; \
         else echo 'note neither opsai nor bwrap is installed there'; fi; \
         echo 'use none'",
        version = quote_word(&version),
        x86 = bwrap_test("x86_64"),
        arm = bwrap_test("aarch64"),
    )
}

/// The sandbox the probe's output names; anything unexpected is none.
pub fn parse(output: &str) -> RemoteSandbox {
    let notes: Vec<&str> = output.lines().filter_map(|line| line.strip_prefix("note ")).collect();
    let reason = if notes.is_empty() { "the probe gave no answer".to_owned() } else { notes.join("; ") };
    let Some(last) = output.lines().rev().find_map(|line| line.strip_prefix("use ")) else {
        return RemoteSandbox::None { reason };
    };
    let words: Vec<&str> = last.splitn(4, ' ').collect();
    match words.as_slice() {
        ["opsai", path, mode @ ("scoped" | "per-pid"), details @ ..] if path.starts_with('/') => RemoteSandbox::Opsai {
            path: (*path).to_owned(),
            per_pid: *mode == "per-pid",
            details: details.first().map_or(String::new(), |d| d.trim().to_owned()),
        },
        ["bwrap", path, arch] if path.starts_with('/') && seccomp::supported(arch) => {
            RemoteSandbox::Bubblewrap { path: (*path).to_owned(), arch: (*arch).to_owned() }
        }
        _ => RemoteSandbox::None { reason },
    }
}

/// The sandbox of `transport`'s host: probed on the first call for that host in this process,
/// then remembered (a failed probe is remembered as none).
pub async fn probe(transport: &SshTransport) -> RemoteSandbox {
    static CACHE: Mutex<Option<HashMap<String, RemoteSandbox>>> = Mutex::new(None);
    // Keyed by all that makes the destination distinct (the name and every option: port, user,
    // config file), not the name alone: two hosts on one address are two hosts.
    let key = transport.destination_key();
    let cached = CACHE.lock().ok().and_then(|cache| cache.as_ref()?.get(&key).cloned());
    if let Some(sandbox) = cached {
        return sandbox;
    }
    let sandbox = match transport.call(&format!("sh -c {}", quote_word(&probe_script())), None).await {
        Ok(output) => parse(&String::from_utf8_lossy(&output.stdout)),
        Err(error) => RemoteSandbox::None { reason: format!("the probe failed: {error}") },
    };
    if let Ok(mut cache) = CACHE.lock() {
        cache.get_or_insert_with(HashMap::new).insert(key, sandbox.clone());
    }
    sandbox
}

/// How a Safe `command` nobody approves may run on a host with `sandbox` (see
/// [`crate::exec::Executor::remote_auto_run`]).
pub fn auto_run(
    sandbox: &RemoteSandbox,
    profile: SandboxProfile,
    command: &str,
) -> Result<Option<SandboxProfile>, String> {
    match sandbox {
        RemoteSandbox::None { reason } => match plain_words(command) {
            Ok(()) => Ok(None),
            Err(why) => Err(format!(
                "no sandbox on the remote host ({reason}) and this is not a command of plain words ({why})"
            )),
        },
        _ => Ok(Some(profile)),
    }
}

/// [`auto_run`] with the sandbox `executor` knows of (an executor that knows of none, on a host,
/// is treated as a host without one).
pub fn auto_run_on(
    executor: &dyn crate::exec::Executor,
    profile: SandboxProfile,
    command: &str,
) -> Result<Option<SandboxProfile>, String> {
    executor.remote_auto_run(profile, command).unwrap_or_else(|| {
        auto_run(&RemoteSandbox::None { reason: "none is known for this host".into() }, profile, command)
    })
}

/// Whether `line` is a single simple command of plain literal words, which no shell expands or
/// interprets: letters, digits and `_ . / : = , @ % + -` only, separated by spaces, the first word
/// a program name (no `=`: an assignment would change what runs). Quotes, `$`, backquotes, globs,
/// braces, `~`, redirections, pipes, lists, comments and newlines all fail it. The reason says
/// which.
pub fn plain_words(line: &str) -> Result<(), String> {
    let words: Vec<&str> = line.split(' ').filter(|word| !word.is_empty()).collect();
    let Some(first) = words.first() else { return Err("it is empty".into()) };
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./:=,@%+-".contains(c);
    if let Some(c) = line.chars().find(|&c| c != ' ' && !plain(c)) {
        return Err(format!("`{}` is not a plain word character", c.escape_default()));
    }
    if first.contains('=') || first.starts_with('%') {
        return Err(format!("`{first}` is not a program name"));
    }
    // Builtins that run code from elsewhere (a file, their arguments as a line) are no plain command.
    if [".", "source", "eval", "exec", "trap", "alias", "enable", "builtin", "command"].contains(first) {
        return Err(format!("`{first}` runs other code"));
    }
    Ok(())
}

/// The seccomp program bubblewrap loads, for the host's architecture (not this machine's).
mod seccomp {
    use crate::protocol::SandboxProfile;

    const LD_W_ABS: u16 = 0x20;
    const JEQ: u16 = 0x15;
    const JGE: u16 = 0x35;
    const RET: u16 = 0x06;
    const KILL_PROCESS: u32 = 0x8000_0000;
    const ERRNO_EPERM: u32 = 0x0005_0000 | 1;
    const ALLOW: u32 = 0x7fff_0000;
    const AF_NETLINK: u32 = 16;

    /// The audit architecture, `socket`'s number, and the numbers denied outright: `keyctl`,
    /// `add_key`, `request_key`, `ptrace`, `process_vm_readv`/`writev`, `bpf`, `io_uring_setup`.
    fn table(arch: &str) -> Option<(u32, u32, [u32; 8])> {
        match arch {
            "x86_64" => Some((0xC000_003E, 41, [250, 248, 249, 101, 310, 311, 321, 425])),
            "aarch64" => Some((0xC000_00B7, 198, [219, 217, 218, 117, 270, 271, 280, 425])),
            _ => None,
        }
    }

    pub fn supported(arch: &str) -> bool {
        table(arch).is_some()
    }

    /// The program: other architectures killed, x32 calls and the denied ones EPERM, `socket`
    /// EPERM unless netlink (strict; the tool profile keeps sockets: it reaches the API server).
    fn program(arch: &str, profile: SandboxProfile) -> Option<Vec<(u16, u8, u8, u32)>> {
        let (audit, socket, denied) = table(arch)?;
        let mut body: Vec<(u16, u8, u8, u32)> =
            vec![(LD_W_ABS, 0, 0, 4), (JEQ, 1, 0, audit), (RET, 0, 0, KILL_PROCESS)];
        body.push((LD_W_ABS, 0, 0, 0));
        // Jumps are filled once the end is known: (index, compare value), each going to deny.
        let mut to_deny = Vec::new();
        if arch == "x86_64" {
            to_deny.push((body.len(), JGE, 0x4000_0000));
            body.push((0, 0, 0, 0));
        }
        for nr in denied {
            to_deny.push((body.len(), JEQ, nr));
            body.push((0, 0, 0, 0));
        }
        if profile == SandboxProfile::Strict {
            // socket? then its domain: netlink allowed, anything else denied.
            body.push((JEQ, 0, 2, socket));
            body.push((LD_W_ABS, 0, 0, 16));
            body.push((JEQ, 0, 1, AF_NETLINK));
        }
        body.push((RET, 0, 0, ALLOW));
        let deny = body.len();
        body.push((RET, 0, 0, ERRNO_EPERM));
        for (index, code, value) in to_deny {
            let jump = u8::try_from(deny - index - 1).ok()?;
            body[index] = (code, jump, 0, value);
        }
        Some(body)
    }

    /// The program as `printf` octal escapes (every byte escaped: no `%` or `\` reaches printf as
    /// itself), little-endian `struct sock_filter`s.
    pub fn printf_escapes(arch: &str, profile: SandboxProfile) -> Option<String> {
        let mut out = String::new();
        for (code, jt, jf, k) in program(arch, profile)? {
            let mut bytes = Vec::with_capacity(8);
            bytes.extend(code.to_le_bytes());
            bytes.extend([jt, jf]);
            bytes.extend(k.to_le_bytes());
            for byte in bytes {
                out.push_str(&format!("\\{byte:03o}"));
            }
        }
        Some(out)
    }

    #[cfg(test)]
    pub(super) fn instructions(arch: &str, profile: SandboxProfile) -> Option<Vec<(u16, u8, u8, u32)>> {
        program(arch, profile)
    }
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
