//! A real PostgreSQL server for one test (issue 25): a fresh cluster in a temp dir (`initdb`, trust
//! authentication, no fsync), listening on a free port on 127.0.0.1, stopped and deleted when the
//! value is dropped. PostgreSQL refuses to run as root, so under root (CI) the cluster belongs to the
//! `postgres` user the Debian package creates and the server runs as that user (`setpriv`, which
//! execs: the child is the server itself, so dropping it stops the server and nothing survives).
//!
//! Under `CI=true` a missing PostgreSQL fails loudly; elsewhere [`PgServer::start`] returns `None`
//! and the caller skips with the reason printed.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::wait_until;

/// Where Debian puts the server programs (`/usr/lib/postgresql/15/bin`, …); the newest wins.
fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| entry.ok().map(|entry| entry.path().join("bin")))
        .filter(|bin| bin.join("postgres").exists() && bin.join("initdb").exists())
        .collect();
    found.sort_by_key(|bin| {
        let version = bin.parent().and_then(Path::file_name).and_then(|name| name.to_str()).unwrap_or("0");
        version.parse::<u32>().unwrap_or(0)
    });
    found.pop()
}

pub struct PgServer {
    /// Ours (tempfile is only a dev-dependency, and this module is part of the library).
    dir: PathBuf,
    /// `None` while stopped ([`PgServer::stop`]).
    child: Option<Child>,
    pub port: u16,
    bin: PathBuf,
}

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `program` run as the cluster's owner: ourselves, or `postgres` when we are root.
fn as_owner(program: &Path) -> Command {
    if is_root() {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=postgres", "--regid=postgres", "--init-groups", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

impl PgServer {
    /// A running server, or `None` (reason printed) when PostgreSQL is not installed outside CI.
    pub fn start() -> Option<PgServer> {
        let Some(bin) = bin_dir() else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "PostgreSQL is required under CI=true (.ci/run installs postgresql)"
            );
            let test = std::thread::current().name().unwrap_or("a test").to_owned();
            let _ = writeln!(std::io::stderr(), "skipped {test}: PostgreSQL (postgresql) is not installed");
            return None;
        };
        let dir = unique_dir();
        let data = dir.join("data");
        if is_root() {
            let status = Command::new("chown").arg("postgres:postgres").arg(&dir).status().expect("chown");
            assert!(status.success(), "chown postgres {}", dir.display());
        }
        let out = as_owner(&bin.join("initdb"))
            .args(["--auth=trust", "--username=opsai", "--no-sync", "--encoding=UTF8", "--locale=C", "-D"])
            .arg(&data)
            .stdin(Stdio::null())
            .output()
            .expect("initdb");
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
        let mut server = PgServer { dir, child: None, port, bin };
        server.start_again();
        Some(server)
    }

    /// Starts the stopped server again, on the same port with the same data, and waits until it
    /// accepts connections.
    pub fn start_again(&mut self) {
        assert!(self.child.is_none(), "the server runs");
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.join("server.log")).expect("log");
        let port = self.port.to_string();
        let child = as_owner(&self.bin.join("postgres"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .args(["-p", &port, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .args(["-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300"])
            .arg("-c")
            .arg(format!("unix_socket_directories={}", self.dir.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("postgres");
        self.child = Some(child);
        let ready = || {
            TcpStream::connect(("127.0.0.1", self.port)).is_ok()
                && Command::new(self.bin.join("pg_isready"))
                    .args(["-h", "127.0.0.1", "-p", &port, "-q"])
                    .status()
                    .is_ok_and(|status| status.success())
        };
        assert!(wait_until(Duration::from_secs(30), ready), "postgres did not start: {}", self.log());
    }

    /// Stops the server (a fast shutdown: every connection is ended) and waits until it is gone.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        // SIGINT is the fast shutdown: every connection ends, the server and its workers exit.
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
        let stopped = wait_until(Duration::from_secs(10), || matches!(child.try_wait(), Ok(Some(_))));
        if !stopped {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A new, empty database on this server, as a `postgres://` URL.
    pub fn database(&self, name: &str) -> String {
        let mut client = postgres::Client::connect(&self.url("postgres"), postgres::NoTls).expect("connect");
        client.batch_execute(&format!("CREATE DATABASE \"{name}\"")).expect("create database");
        self.url(name)
    }

    /// The URL of database `name` (the superuser `opsai`, no password).
    pub fn url(&self, name: &str) -> String {
        format!("postgres://opsai@127.0.0.1:{}/{name}", self.port)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }
}

/// A new directory of our own under the temp dir.
fn unique_dir() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("opsai-pg-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).expect("temp dir");
    dir
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
