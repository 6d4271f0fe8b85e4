//! A real OpenSSH server on 127.0.0.1 for one test: host and user keys generated in a temp dir,
//! a client config naming it `opsai-test` (with its host key pinned in a known_hosts file, strict
//! checking on), and the server stopped when the value is dropped. Configured as a server
//! normally is for this: no PAM, no DNS lookups of the client, no motd or last-login line.
//! Standalone (std and tempfile only), so `benches/ssh.rs` includes the same file.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use opsai::testing::wait_until;

pub const HOST: &str = "opsai-test";
const SSHD: &str = "/usr/sbin/sshd";

/// Whether sshd and ssh are installed. Under `CI=true` a missing one fails loudly; elsewhere the
/// test is skipped with the reason printed.
pub fn require() -> bool {
    let on_path = |program: &str| {
        Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|out| out.status.success())
    };
    let found = Path::new(SSHD).exists() && on_path("ssh") && on_path("ssh-keygen");
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "sshd is required under CI=true (.ci/run installs openssh-server)"
        );
        // Straight to stderr like `support::skipped` (this file is also a bench's whole support).
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(std::io::stderr(), "skipped {test}: {SSHD}, ssh or ssh-keygen is not installed");
    }
    found
}

pub struct Sshd {
    dir: tempfile::TempDir,
    child: Child,
    pub port: u16,
}

/// A new ed25519 key pair at `path` (and `path.pub`), no passphrase.
pub fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "ssh-keygen failed");
}

/// The `type key` words of a public key file (what `known_hosts` and `authorized_keys` hold).
pub fn public_key(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
}

/// A port on 127.0.0.1 that nobody listened on a moment ago.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The user this test runs as (the one the servers let in).
pub fn user() -> String {
    let name = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
    name.trim().to_owned()
}

/// `extra` with one `SetEnv` line that also holds `SHLVL=1` (sshd uses only the first `SetEnv`
/// line). Bash sources `~/.bashrc` for a command run by sshd unless `SHLVL` says it is nested, so
/// without it the test user's own rc file runs in every session: its output (a pyenv rehash racing
/// the concurrent sessions printed warnings) would land in the commands' output.
fn hermetic(extra: &str) -> String {
    let mut vars = vec!["SHLVL=1".to_owned()];
    let mut rest = String::new();
    for line in extra.lines() {
        match line.strip_prefix("SetEnv ") {
            Some(set) => vars.push(set.trim().to_owned()),
            None => {
                rest.push_str(line);
                rest.push('\n');
            }
        }
    }
    format!("SetEnv {}\n{rest}", vars.join(" "))
}

impl Sshd {
    pub fn start() -> Sshd {
        Self::start_with("")
    }

    /// With `extra` lines appended to the server's config (the benchmark's `SetEnv`).
    pub fn start_with(extra: &str) -> Sshd {
        let dir = tempfile::Builder::new().prefix("opsai-sshd-").tempdir().unwrap();
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("user_key"));
        std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).unwrap();
        // Privilege separation needs this directory (it is created by the service unit normally).
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = free_port();
        let extra = hermetic(extra);
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nAuthorizedKeysFile {keys}\nPidFile {pid}\n\
             StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nLogLevel ERROR\nMaxSessions 50\n\
             MaxStartups 50\nUseDNS no\nPrintMotd no\nPrintLastLog no\n{extra}",
            host_key = d.join("host_key").display(),
            keys = d.join("authorized_keys").display(),
            pid = d.join("sshd.pid").display(),
        );
        std::fs::write(d.join("sshd_config"), config).unwrap();
        let host_key = public_key(&d.join("host_key.pub"));
        std::fs::write(d.join("known_hosts"), format!("[127.0.0.1]:{port} {host_key}\n")).unwrap();
        let client = format!(
            "Host {HOST}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {key}\n  IdentitiesOnly yes\n  \
             UserKnownHostsFile {known}\n  StrictHostKeyChecking yes\n  BatchMode yes\n",
            user = user(),
            key = d.join("user_key").display(),
            known = d.join("known_hosts").display(),
        );
        std::fs::write(d.join("ssh_config"), client).unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(d.join("sshd.log")).unwrap())
            .spawn()
            .unwrap();
        let sshd = Sshd { dir, child, port };
        // Ready when it accepts connections.
        let accepts = || TcpStream::connect(("127.0.0.1", port)).is_ok();
        assert!(wait_until(Duration::from_secs(20), accepts), "sshd did not start: {}", sshd.log());
        sshd
    }

    /// Its directory: `host_key.pub`, `user_key` (the client's key), `known_hosts`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The client config to pass with `-F`.
    pub fn client_config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// Ends the master connection opsai (with `OPSAI_HOME` at `opsai_home`) left open for reuse,
    /// so the test leaves no process behind.
    pub fn disconnect(&self, opsai_home: &Path) {
        let control = opsai::exec::ssh::socket_dir(&opsai_home.join("ssh")).join("%C");
        let _ = Command::new("ssh")
            .arg("-F")
            .arg(self.client_config())
            .arg("-o")
            .arg(format!("ControlPath={}", control.display()))
            .args(["-O", "exit", HOST])
            .stderr(Stdio::null())
            .status();
    }

    /// `$OPSAI_HOME/config.json` content that makes opsai use this server's client config.
    pub fn opsai_config(&self, extra: &str) -> String {
        format!("{{\"ssh\": {{\"options\": [\"-F\", \"{}\"]}}{extra}}}", self.client_config().display())
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
