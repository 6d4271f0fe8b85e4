//! A real nginx in front of several `opsai serve` replicas for one test: its own config, logs and
//! temp dirs in a temp dir, one process (`master_process off`), round robin over the replicas
//! with buffering off (events stream through), stopped when dropped. Requests alternate between
//! the replicas, as behind a load balancer without sticky sessions.

#![allow(dead_code)]

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use opsai::testing::wait_until;

const NGINX: &str = "/usr/sbin/nginx";

/// Whether nginx is installed. Under `CI=true` a missing one fails loudly; elsewhere the test is
/// skipped with the reason printed.
pub fn require() -> bool {
    let found = Path::new(NGINX).exists();
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "nginx is required under CI=true (.ci/run installs nginx)"
        );
        super::skipped("nginx is not installed");
    }
    found
}

pub struct Nginx {
    dir: tempfile::TempDir,
    child: Child,
    pub port: u16,
}

impl Nginx {
    /// nginx on `port` (127.0.0.1), in front of `upstreams` (`127.0.0.1:PORT` each).
    pub fn start(port: u16, upstreams: &[String]) -> Nginx {
        let dir = tempfile::Builder::new().prefix("opsai-nginx-").tempdir().unwrap();
        let d = dir.path().display();
        let servers: String = upstreams.iter().map(|u| format!("    server {u} max_fails=0;\n")).collect();
        let config = format!(
            "daemon off;\nmaster_process off;\nerror_log {d}/error.log warn;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 2048; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
             upstream opsai {{\n{servers}    keepalive 16;\n  }}\n  \
             server {{\n    listen 127.0.0.1:{port};\n    location / {{\n      proxy_pass http://opsai;\n      \
             proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n      proxy_set_header Host $http_host;\n      \
             proxy_set_header X-Forwarded-For $remote_addr;\n      proxy_buffering off;\n      \
             proxy_read_timeout 300s;\n      proxy_next_upstream off;\n    }}\n  }}\n}}\n"
        );
        std::fs::write(dir.path().join("nginx.conf"), config).unwrap();
        let child = Command::new(NGINX)
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .arg("-p")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("stderr.log")).unwrap())
            .spawn()
            .unwrap();
        let nginx = Nginx { dir, child, port };
        let accepts = || TcpStream::connect(("127.0.0.1", port)).is_ok();
        assert!(wait_until(Duration::from_secs(20), accepts), "nginx did not start: {}", nginx.log());
        nginx
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn log(&self) -> String {
        let read = |name: &str| std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
        format!("{}{}", read("stderr.log"), read("error.log"))
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
