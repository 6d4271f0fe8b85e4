//! A fleet of real OpenSSH servers on 127.0.0.1 for one test, one [`Sshd`] per host (each its
//! own port, host key and `OPSAI_FLEET_ROLE` in its sessions' environment), plus hosts that fail
//! the ways real fleets do: a port nobody listens on, a host whose key is not the one known, a
//! listener that accepts and never speaks, a server that refuses the client's key. One client
//! config names them all (`Host NAME` → `HostName 127.0.0.1`, `Port …`), strict host-key checking on.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use opsai::fleet::Host;

use super::sshd::{Sshd, free_port, keygen, public_key, user};

/// What one host of the fleet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A working server whose sessions see `OPSAI_FLEET_ROLE=role`.
    Up(&'static str),
    /// Nothing listens on its port.
    Down,
    /// A working server, but `known_hosts` holds another key for it.
    ChangedKey,
    /// Accepts TCP connections and never answers.
    Hangs,
    /// A working server that does not accept the client's key.
    AuthFails,
}

/// Dropped in field order: the servers stop before their directory goes.
pub struct Fleet {
    servers: Vec<Sshd>,
    /// Kept open (never accepting): the kernel completes connections, nobody speaks.
    hangs: Vec<TcpListener>,
    names: Vec<String>,
    dir: tempfile::TempDir,
}

impl Fleet {
    pub fn start(hosts: &[(&str, Kind)]) -> Fleet {
        let dir = tempfile::Builder::new().prefix("opsai-fleet-").tempdir().unwrap();
        let d = dir.path();
        keygen(&d.join("stranger_key"));
        keygen(&d.join("other_host_key"));
        let user = user();
        let (mut config, mut known) = (String::new(), String::new());
        let (mut servers, mut hangs) = (Vec::new(), Vec::new());
        for (name, kind) in hosts {
            let (port, key, host_key) = match kind {
                Kind::Up(role) => {
                    let sshd = Sshd::start_with(&format!("SetEnv OPSAI_FLEET_ROLE={role}\n"));
                    let out = (sshd.port, sshd.dir().join("user_key"), public_key(&sshd.dir().join("host_key.pub")));
                    servers.push(sshd);
                    out
                }
                Kind::ChangedKey => {
                    let sshd = Sshd::start();
                    let out = (sshd.port, sshd.dir().join("user_key"), public_key(&d.join("other_host_key.pub")));
                    servers.push(sshd);
                    out
                }
                Kind::AuthFails => {
                    let sshd = Sshd::start();
                    let out = (sshd.port, d.join("stranger_key"), public_key(&sshd.dir().join("host_key.pub")));
                    servers.push(sshd);
                    out
                }
                Kind::Down => (free_port(), d.join("stranger_key"), public_key(&d.join("other_host_key.pub"))),
                Kind::Hangs => {
                    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
                    let port = listener.local_addr().unwrap().port();
                    hangs.push(listener);
                    (port, d.join("stranger_key"), public_key(&d.join("other_host_key.pub")))
                }
            };
            let _ = writeln!(known, "[127.0.0.1]:{port} {host_key}");
            let _ = write!(
                config,
                "Host {name}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {key}\n  \
                 IdentitiesOnly yes\n  UserKnownHostsFile {known}\n  StrictHostKeyChecking yes\n\n",
                key = key.display(),
                known = d.join("known_hosts").display(),
            );
        }
        std::fs::write(d.join("known_hosts"), known).unwrap();
        std::fs::write(d.join("ssh_config"), config).unwrap();
        Fleet { servers, hangs, names: hosts.iter().map(|(name, _)| (*name).to_owned()).collect(), dir }
    }

    pub fn ssh_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// `-F CONFIG`: what `ssh.options` would say.
    pub fn ssh_options(&self) -> Vec<String> {
        vec!["-F".into(), self.ssh_config().display().to_string()]
    }

    pub fn hosts(&self) -> Vec<Host> {
        self.names.iter().map(|name| Host::named(name)).collect()
    }

    /// A directory for the test (control sockets, marker files), removed with the fleet.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The audit log's lines in `env`'s opsai home.
pub fn audit_lines(env: &super::TestEnv) -> Vec<String> {
    let log = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default();
    log.lines().map(str::to_owned).collect()
}

/// The audit line of `host`, which must be there exactly once.
pub fn line_of<'a>(lines: &'a [String], host: &str) -> &'a str {
    let found: Vec<&String> = lines.iter().filter(|line| line.contains(&format!("| HOST: {host} |"))).collect();
    assert_eq!(found.len(), 1, "one audit line for {host}: {lines:#?}");
    found[0]
}

/// Processes whose command line starts with `needle` (every host of a test fleet is this
/// machine): the remote commands themselves, not the shells and local ssh clients naming them.
pub fn processes_with(needle: &str) -> usize {
    let pattern = format!("^{}", needle.replace('.', "\\."));
    let out = std::process::Command::new("pgrep").args(["-f", "-c", "--", &pattern]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
}
