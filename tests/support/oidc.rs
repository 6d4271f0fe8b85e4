//! A real OpenID Connect provider for the single sign-on tests: the certified `oidc-provider`
//! package (npm) on Node, on 127.0.0.1, with one confidential client (`opsai`) and its built-in
//! development login pages (any login name and password get in). Accounts whose name starts with
//! `op` are in the `ops` group, `dev` in `dev`, any other in `sales`.
//!
//! `.ci/run` installs the package into `/opt/opsai-oidc-provider` (or `OPSAI_TEST_OIDC_PROVIDER`);
//! without it (or Node) a test fails under `CI=true` and is skipped elsewhere.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const CLIENT_ID: &str = "opsai";
pub const CLIENT_SECRET: &str = "opsai-test-secret-value";

const SCRIPT: &str = r#"
import Provider from 'MODULE';
const [port, redirect] = process.argv.slice(2);
const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [{
    client_id: 'CLIENT_ID', client_secret: 'CLIENT_SECRET', redirect_uris: [redirect],
    grant_types: ['authorization_code'], response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  claims: { openid: ['sub'], profile: ['preferred_username'], groups: ['groups'] },
  scopes: ['openid', 'profile', 'email', 'groups'],
  conformIdTokenClaims: false,
  cookies: { keys: ['opsai-test-cookie-key'] },
  features: { devInteractions: { enabled: true } },
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({
      sub: id, preferred_username: id,
      groups: id.startsWith('op') ? ['ops'] : id.startsWith('dev') ? ['dev'] : ['sales'],
    }),
  }),
});
provider.listen(Number(port), '127.0.0.1', () => console.log('ready'));
"#;

/// Where `oidc-provider` is installed (the directory holding `node_modules`).
fn install_dir() -> PathBuf {
    std::env::var_os("OPSAI_TEST_OIDC_PROVIDER")
        .map_or_else(|| PathBuf::from("/opt/opsai-oidc-provider"), PathBuf::from)
}

fn module() -> PathBuf {
    install_dir().join("node_modules/oidc-provider/lib/index.js")
}

/// Whether Node and the package are there: under `CI=true` a missing one fails the test,
/// elsewhere the test is skipped with the reason printed.
pub fn require() -> bool {
    if !super::tmux::require("node") {
        return false;
    }
    let found = module().exists();
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "oidc-provider is required under CI=true at {} (.ci/run installs it)",
            install_dir().display()
        );
        super::skipped(&format!("oidc-provider is not installed at {}", install_dir().display()));
    }
    found
}

/// The provider; it ends when dropped.
pub struct Provider {
    child: Child,
    pub issuer: String,
    _dir: tempfile::TempDir,
}

impl Provider {
    /// Starts it for a client whose redirect URL is `redirect`; returns once it listens.
    pub fn start(redirect: &str) -> Provider {
        let dir = tempfile::tempdir().unwrap();
        let script = SCRIPT
            .replace("MODULE", &module().display().to_string())
            .replace("CLIENT_ID", CLIENT_ID)
            .replace("CLIENT_SECRET", CLIENT_SECRET);
        std::fs::write(dir.path().join("provider.mjs"), script).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Command::new("node")
            .arg(dir.path().join("provider.mjs"))
            .args([port.to_string(), redirect.to_owned()])
            .env("NODE_ENV", "development")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start node");
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.trim() == "ready" {
                    let _ = send.send(());
                }
            }
        });
        let ready = receive.recv_timeout(Duration::from_secs(60));
        assert!(ready.is_ok(), "the OIDC provider did not start within 60 s");
        Provider { child, issuer: format!("http://127.0.0.1:{port}"), _dir: dir }
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
