//! What an analysis needs from *other* processes' `/proc` entries, read by opsai itself (issue 21
//! §3): the process that owns a port (`/proc/net/*` and each process's `fd` links, as `ss -p` and
//! `lsof -i` read them) and a process's working directory and executable. No command can read
//! these inside the analysis sandbox (Landlock's ptrace scoping closes other processes' `fd`,
//! `cwd` and `exe` links, by design), and granting a command that would open every process's
//! memory and environment too. So opsai reads exactly these entries, with rights it already has,
//! for a port and a pid that are numbers (nothing else reaches a path here), and never a
//! process's `environ`, memory or file contents. The text goes through the redactor like any
//! command's output (a command line may hold a password).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::Path;

/// What no command can read in the sandbox, read by opsai: a port's owner, a process's working
/// directory. Here from `/proc`; on an ssh host, by a fixed reader line run outside the host's
/// sandbox (`ss -p`, `readlink`), which opsai writes whole around a number.
pub(crate) async fn section(
    collector: &super::collect::Collector<'_>,
    kind: &str,
    target: &str,
) -> Option<super::collect::Section> {
    let (command, output) = match (kind, collector.host.is_some()) {
        ("port", false) => {
            let port: u16 = target.parse().ok()?;
            (format!("(read by opsai from /proc) owner of port {port}"), port_owner(port))
        }
        ("process", false) => {
            let pid: u32 = target.parse().ok()?;
            (format!("(read by opsai from /proc) places of process {pid}"), process_places(pid))
        }
        ("port", true) => {
            let port: u16 = target.parse().ok()?;
            let line = format!("ss -Hltnup sport = :{port}");
            let output = collector.run_reader(&line).await.unwrap_or_else(|why| format!("not read: {why}\n"));
            (format!("(run by opsai outside the host's sandbox) {line}"), output)
        }
        ("process", true) => {
            let pid: u32 = target.parse().ok()?;
            let line = format!("readlink /proc/{pid}/cwd /proc/{pid}/exe /proc/{pid}/root");
            let output = collector.run_reader(&line).await.unwrap_or_else(|why| format!("not read: {why}\n"));
            (format!("(run by opsai outside the host's sandbox) {line}"), output)
        }
        _ => return None,
    };
    Some(super::collect::Section { command, output: collector.redactor.redact(&output) })
}

/// A process's command line is cut to this many characters.
const CMDLINE_CHARS: usize = 300;

/// One socket bound to the port.
#[derive(Debug, PartialEq, Eq)]
struct Socket {
    proto: &'static str,
    local: String,
    listening: bool,
    uid: u32,
    inode: u64,
}

/// The section for `opsai explain :PORT`: each socket on `port` and the process holding it.
pub(crate) fn port_owner(port: u16) -> String {
    port_owner_in(Path::new("/proc"), port)
}

fn port_owner_in(proc: &Path, port: u16) -> String {
    let mut sockets = Vec::new();
    for (file, proto) in [("net/tcp", "tcp"), ("net/tcp6", "tcp6"), ("net/udp", "udp"), ("net/udp6", "udp6")] {
        if let Ok(table) = std::fs::read_to_string(proc.join(file)) {
            sockets.extend(parse_table(&table, proto).into_iter().filter(|(p, _)| *p == port).map(|(_, s)| s));
        }
    }
    // Connections *to* the port are someone else's client; what owns a port listens or is bound.
    sockets.retain(|socket| socket.listening || socket.proto.starts_with("udp"));
    if sockets.is_empty() {
        return format!("nothing listens on port {port} (tcp or udp) in this network namespace\n");
    }
    let wanted: Vec<u64> = sockets.iter().map(|s| s.inode).collect();
    let (holders, unreadable) = socket_holders(proc, &wanted);
    let mut out = String::new();
    for socket in &sockets {
        let state = if socket.listening { "LISTEN" } else { "bound" };
        let _ = write!(out, "{} {} {state} (uid {}): ", socket.proto, socket.local, socket.uid);
        match holders.get(&socket.inode) {
            Some(pids) => {
                let described: Vec<String> = pids.iter().map(|pid| describe(proc, *pid)).collect();
                let _ = writeln!(out, "{}", described.join("; "));
            }
            None if unreadable > 0 => {
                let _ = writeln!(
                    out,
                    "held by a process whose descriptors this user cannot read ({unreadable} such processes; \
                     run as root or as the socket's user to name it)"
                );
            }
            None => {
                let _ = writeln!(out, "held by no visible process (another PID namespace, e.g. a container)");
            }
        }
    }
    out
}

/// `(port, socket)` for each line of a `/proc/net/{tcp,udp}[6]` table.
fn parse_table(table: &str, proto: &'static str) -> Vec<(u16, Socket)> {
    let mut out = Vec::new();
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [_, local, _, state, _, _, _, uid, _, inode, ..] = fields.as_slice() else { continue };
        let Some((address, port)) = local.split_once(':') else { continue };
        let (Ok(port), Ok(uid), Ok(inode)) = (u16::from_str_radix(port, 16), uid.parse(), inode.parse()) else {
            continue;
        };
        let Some(address) = address_text(address) else { continue };
        let local = if address.contains(':') { format!("[{address}]:{port}") } else { format!("{address}:{port}") };
        // TCP_LISTEN is 0A; a UDP socket has no listening state.
        let listening = proto.starts_with("tcp") && *state == "0A";
        out.push((port, Socket { proto, local, listening, uid, inode }));
    }
    out
}

/// The kernel prints addresses as 32-bit words in host order (little endian here).
fn address_text(hex: &str) -> Option<String> {
    let words: Option<Vec<u32>> =
        (0..hex.len() / 8).map(|i| hex.get(i * 8..i * 8 + 8).and_then(|w| u32::from_str_radix(w, 16).ok())).collect();
    let bytes: Vec<u8> = words?.into_iter().flat_map(u32::to_le_bytes).collect();
    match bytes.len() {
        4 => Some(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).to_string()),
        16 => <[u8; 16]>::try_from(bytes).ok().map(|b| Ipv6Addr::from(b).to_string()),
        _ => None,
    }
}

/// Which processes hold which of `inodes` (`socket:[N]` links in `/proc/PID/fd`), and how many
/// processes' descriptors could not be read.
fn socket_holders(proc: &Path, inodes: &[u64]) -> (BTreeMap<u64, Vec<u32>>, usize) {
    let mut holders: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    let mut unreadable = 0;
    let Ok(entries) = std::fs::read_dir(proc) else { return (holders, 0) };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            unreadable += 1;
            continue;
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else { continue };
            let target = target.to_string_lossy();
            let inode = target.strip_prefix("socket:[").and_then(|rest| rest.strip_suffix(']'));
            if let Some(inode) = inode.and_then(|inode| inode.parse::<u64>().ok())
                && inodes.contains(&inode)
            {
                let pids = holders.entry(inode).or_default();
                if !pids.contains(&pid) {
                    pids.push(pid);
                }
            }
        }
    }
    (holders, unreadable)
}

/// `pid 42 nginx (uid 33): /usr/sbin/nginx -g daemon off;`
fn describe(proc: &Path, pid: u32) -> String {
    let dir = proc.join(pid.to_string());
    let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
    let field = |name: &str| {
        status.lines().find_map(|line| line.strip_prefix(name)).map(|rest| rest.split_whitespace().next().unwrap_or(""))
    };
    let name = field("Name:").unwrap_or("?");
    let uid = field("Uid:").unwrap_or("?");
    let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
    let cmdline: String =
        String::from_utf8_lossy(&cmdline).replace('\0', " ").trim().chars().take(CMDLINE_CHARS).collect();
    format!("pid {pid} {name} (uid {uid}): {cmdline}")
}

/// The section for `opsai explain PID`: its working directory and executable (what `ls -l
/// /proc/PID/cwd` would show), or why they cannot be read.
pub(crate) fn process_places(pid: u32) -> String {
    process_places_in(Path::new("/proc"), pid)
}

fn process_places_in(proc: &Path, pid: u32) -> String {
    let dir = proc.join(pid.to_string());
    if !dir.is_dir() {
        return format!("no process {pid}\n");
    }
    let mut out = String::new();
    for (what, link) in [("working directory", "cwd"), ("executable", "exe"), ("root directory", "root")] {
        let _ = match std::fs::read_link(dir.join(link)) {
            Ok(target) => writeln!(out, "{what}: {}", target.display()),
            Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => writeln!(
                out,
                "{what}: not readable by this user (the process is another user's; run as root or as that user)"
            ),
            Err(error) => writeln!(out, "{what}: not readable ({error})"),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_parse_into_addresses_states_and_inodes() {
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
                   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000   33        0 4242 1 0\n   \
                   1: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000    0        0 4243 1 0\n";
        let parsed = parse_table(tcp, "tcp");
        assert_eq!(parsed.len(), 2);
        assert_eq!(
            parsed[0],
            (8080, Socket { proto: "tcp", local: "127.0.0.1:8080".into(), listening: true, uid: 33, inode: 4242 })
        );
        assert!(!parsed[1].1.listening);
        assert_eq!(address_text("00000000000000000000000001000000").as_deref(), Some("::1"));
        assert_eq!(address_text("zz"), None);
        assert!(parse_table("header\ngarbage line\n", "udp").is_empty());
    }

    #[test]
    fn the_owner_of_a_port_this_test_listens_on_is_named() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let text = port_owner(port);
        let me = std::process::id();
        assert!(text.contains(&format!("tcp 127.0.0.1:{port} LISTEN")), "{text}");
        assert!(text.contains(&format!("pid {me} ")), "{text}");
        drop(listener);
        assert!(port_owner(port).starts_with("nothing listens on port"), "{}", port_owner(port));
    }

    #[test]
    fn a_processs_working_directory_and_executable_are_read() {
        let text = process_places(std::process::id());
        let cwd = std::env::current_dir().unwrap();
        assert!(text.contains(&format!("working directory: {}", cwd.display())), "{text}");
        assert!(text.contains("executable: /"), "{text}");
        assert_eq!(process_places(u32::MAX), format!("no process {}\n", u32::MAX));
    }
}
