//! The sandbox's read view (issue 21 §1) from outside: credentials planted where tools nobody
//! listed keep them, secrets at depth in the working directory, root-only and other users' files
//! are unreadable through `opsai sandbox -- cat` and through the agent's auto-run `read_file`,
//! while everyday reads keep working; as root and as a user other than root.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn plant(path: &Path, content: &str, mode: u32) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Credentials where real tools keep them, none on any list, each with a unique canary.
const HOME_CANARIES: &[&str] = &[
    ".config/some-new-cli/token",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".terraformrc",
    ".mozilla/firefox/abc.default/logins.json",
    ".local/share/keyrings/login.keyring",
    ".config/Code/User/globalStorage/state.vscdb",
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".bash_history",
    ".config/git/credentials",
];
/// Secrets in the working directory, down to depth 4, under names nobody listed.
const PROJECT_CANARIES: &[&str] = &[
    "infra/a/b/c/terraform.tfstate",
    "infra/a/b/c/.env.production",
    "infra/a/b/c/deploy.key",
    "infra/a/b/c/kubeconfig-prod",
    "config/master.key",
    "keys/id_deploy",
    "ops/prod.secrets.yaml",
];

struct Planted {
    /// (path, canary) pairs that must not be readable.
    secrets: Vec<(PathBuf, String)>,
    /// Everyday files that must stay readable, with their content.
    ordinary: Vec<(PathBuf, String)>,
    _system: tempfile::TempDir,
}

/// Plants the canaries in `home` (the working directory) and in a world-listable system-like tree.
fn plant_all(home: &Path) -> Planted {
    let mut secrets = Vec::new();
    for (i, rel) in HOME_CANARIES.iter().chain(PROJECT_CANARIES).enumerate() {
        let canary = format!("CANARY-{i}-SECRET");
        plant(&home.join(rel), &format!("{canary}\n"), 0o600);
        secrets.push((home.join(rel), canary));
    }
    // A service-account key under an innocent name, found by what it holds.
    let sa = home.join("infra/a/b/project-4711.json");
    plant(&sa, "{\"type\": \"service_account\", \"private_key\": \"CANARY-SA-SECRET\"}\n", 0o644);
    secrets.push((sa, "CANARY-SA-SECRET".into()));
    // Outside every home: only what every user may read.
    // In `/var/tmp` where there is one: `/tmp` of a busy machine can hold more entries than the view
    // splits into rules (then it is closed whole, and the public file would be too).
    let base = if Path::new("/var/tmp").is_dir() { Path::new("/var/tmp") } else { Path::new("/tmp") };
    let system = tempfile::Builder::new().prefix("opsai-view-sys-").tempdir_in(base).unwrap();
    std::fs::set_permissions(system.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for (rel, mode) in [("root-only.conf", 0o600), ("ipsec.secrets", 0o644), ("system-connections/home", 0o644)] {
        let canary = format!("CANARY-SYS-{}", rel.len());
        plant(&system.path().join(rel), &format!("{canary}\n"), mode);
        secrets.push((system.path().join(rel), canary));
    }
    std::fs::set_permissions(system.path().join("system-connections"), std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut ordinary = Vec::new();
    for (rel, content) in
        [("infra/a/b/c/main.tf", "ORDINARY-TF"), ("README.md", "ORDINARY-README"), (".bashrc", "ORDINARY-RC")]
    {
        plant(&home.join(rel), &format!("{content}\n"), 0o644);
        ordinary.push((home.join(rel), content.to_owned()));
    }
    plant(&system.path().join("public.conf"), "ORDINARY-PUBLIC\n", 0o644);
    ordinary.push((system.path().join("public.conf"), "ORDINARY-PUBLIC".into()));
    Planted { secrets, ordinary, _system: system }
}

fn cat_script(paths: &[&PathBuf]) -> String {
    paths.iter().map(|p| format!("cat '{}' 2>/dev/null; ", p.display())).collect()
}

/// Everyday reads: each must print something.
const EVERYDAY: &str = "echo; head -c 0 /etc/os-release && echo os-release-ok; cat /etc/hostname >/dev/null && echo hostname-ok; \
     ls /usr/share >/dev/null && echo usr-share-ok; ps aux | grep -q PID && echo ps-ok; df / >/dev/null && echo df-ok";

#[test]
fn unlisted_credentials_are_closed_and_everyday_reads_work() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let planted = plant_all(env.user_home());
    let all: Vec<&PathBuf> = planted.secrets.iter().chain(&planted.ordinary).map(|(p, _)| p).collect();
    // The everyday reads first: where root's command still gets its own PID namespace under the
    // machine's `/proc`, procps' `ps` fails once its pid there is past the first few
    // (docs/sandbox.md; sandbox_lifetime tests the usual case).
    let script = format!("{EVERYDAY}; {}", cat_script(&all));
    // Through opsai, whose broker prepares the ruleset (with opsai's capabilities, as root).
    let out = env.std_cmd().args(["sandbox", "--", "sh", "-c", &script]).output().unwrap();
    assert_the_view_held(&planted, &out, "in the sandbox");
    // The helper alone, building the ruleset itself (no broker to ask).
    let home = env.opsai_home();
    let out = env
        .std_cmd()
        .args(["__opsai-sandbox", "strict", "--deny"])
        .arg(home)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_the_view_held(&planted, &out, "in the helper alone");
}

/// No canary of `planted` in the output, every ordinary file's content and every [`EVERYDAY`] word in it.
fn assert_the_view_held(planted: &Planted, out: &std::process::Output, who: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let leaked: Vec<&str> = planted
        .secrets
        .iter()
        .filter(|(_, canary)| stdout.contains(canary.as_str()))
        .map(|(_, c)| c.as_str())
        .collect();
    assert!(leaked.is_empty(), "readable {who}: {leaked:?}\n{stdout}");
    for (path, content) in &planted.ordinary {
        assert!(stdout.contains(content.as_str()), "{} should stay readable: {stdout} {stderr}", path.display());
    }
    for word in ["os-release-ok", "hostname-ok", "usr-share-ok", "ps-ok", "df-ok"] {
        assert!(stdout.contains(word), "{who} {word}: {stdout} {stderr}");
    }
}

/// Started inside a home's hidden directory (`~/.kube`, `~/.config`), the working directory's
/// grant must not open the credentials kept there under ordinary names.
#[test]
fn a_working_directory_inside_a_homes_hidden_directory_opens_nothing_of_it() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let home = env.user_home();
    let planted = [".kube/config", ".config/gh/hosts.yml", ".mozilla/firefox/p/logins.json", ".docker/config.json"];
    for (i, rel) in planted.iter().enumerate() {
        plant(&home.join(rel), &format!("CANARY-HIDDEN-{i}\n"), 0o644);
    }
    for (i, rel) in planted.iter().enumerate() {
        let path = home.join(rel);
        let dir = path.parent().unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        let out = env.std_cmd().current_dir(dir).args(["sandbox", "--", "cat", name]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains(&format!("CANARY-HIDDEN-{i}")), "{rel} readable from its own directory: {stdout}");
        assert!(!out.status.success(), "{rel}: cat should fail");
    }
}

/// `PATH` opens the `bin` directories of a home (programs), never another directory it names.
#[test]
fn path_opens_a_homes_bin_directories_only() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let home = env.user_home();
    plant(&home.join(".aws/credentials"), "CANARY-PATH-AWS\n", 0o644);
    plant(&home.join(".local/bin/hello"), "HELLO-FROM-BIN\n", 0o755);
    let path = format!("{}:{}:/usr/bin:/bin", home.join(".aws").display(), home.join(".local/bin").display());
    let script =
        format!("cat '{}' '{}'", home.join(".aws/credentials").display(), home.join(".local/bin/hello").display());
    let out = env.std_cmd().env("PATH", path).args(["sandbox", "--", "/bin/sh", "-c", &script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("CANARY-PATH-AWS"), "a PATH entry opened ~/.aws: {stdout}");
    assert!(
        stdout.contains("HELLO-FROM-BIN"),
        "~/.local/bin should stay readable: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn as_root_other_homes_are_closed_and_the_logs_stay_readable() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    if !is_root() {
        crate::support::skipped("not root: another user's home and root's logs need root");
        return;
    }
    // Another user's home under /home, owned by a uid that is not ours, its key 0600.
    let other = tempfile::Builder::new().prefix("opsai-view-other-").tempdir_in("/home").unwrap();
    let key = other.path().join(".ssh/id_rsa");
    plant(&key, "CANARY-OTHER-HOME\n", 0o600);
    let notes = other.path().join("notes.txt");
    plant(&notes, "CANARY-OTHER-NOTES\n", 0o644);
    for path in [other.path(), &other.path().join(".ssh"), &key, &notes] {
        std::os::unix::fs::chown(path, Some(54321), Some(54321)).unwrap();
    }
    // A root-owned 0600 file in the working directory's parent tree is the kernel's to refuse:
    // with the capabilities dropped, another user's 0600 file in the working directory is too.
    let foreign = env.user_home().join("foreign.txt");
    plant(&foreign, "CANARY-FOREIGN-OWNER\n", 0o600);
    std::os::unix::fs::chown(&foreign, Some(54321), Some(54321)).unwrap();
    let log = std::fs::read_dir("/var/log")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_file() && p.metadata().is_ok_and(|m| m.len() > 0 && m.uid() == 0 && m.mode() & 0o004 == 0))
        .or_else(|| std::fs::read_dir("/var/log").unwrap().flatten().map(|e| e.path()).find(|p| p.is_file()));
    let script = format!(
        "cat '{}' '{}' '{}' 2>&1; {}",
        key.display(),
        notes.display(),
        foreign.display(),
        log.as_ref().map(|l| format!("head -c 1 '{}' >/dev/null && echo log-ok", l.display())).unwrap_or_default()
    );
    let out = env.std_cmd().args(["sandbox", "--", "sh", "-c", &script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("CANARY-"), "{stdout}");
    if log.is_some() {
        assert!(stdout.contains("log-ok"), "root reads its own logs: {stdout}");
    }
}

#[test]
fn the_agents_auto_run_read_file_sees_the_same_view() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let mut planted = plant_all(env.user_home());
    env.write_config(r#"{"llm": {"api_key": "sk-CONFIG-KEY-CANARY"}}"#);
    let mut reads: Vec<(PathBuf, String)> = std::mem::take(&mut planted.secrets);
    reads.push((env.config_path(), "sk-CONFIG-KEY-CANARY".into()));
    let ok = agent_reads(&env, &[env.user_home().join("infra/a/b/c/main.tf")]).remove(0);
    assert!(ok.contains("ORDINARY-TF"), "a project file auto-reads: {ok}");
    // A few per turn: a turn ends after a number of refusals.
    for chunk in reads.chunks(4) {
        let paths: Vec<PathBuf> = chunk.iter().map(|(path, _)| path.clone()).collect();
        for ((path, canary), result) in chunk.iter().zip(agent_reads(&env, &paths)) {
            assert!(!result.contains(canary.as_str()), "{} reached the model: {result}", path.display());
            assert!(result.starts_with("refused") || result.starts_with("[ERROR]"), "{}: {result}", path.display());
        }
    }
    let log = std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap();
    assert!(log.contains("/infra/a/b/c/main.tf\" | RISK: safe | CONFIRMED: auto"), "{log}");
}

/// One agent turn that calls `read_file` on each path with no terminal; the tool results in order.
fn agent_reads(env: &TestEnv, paths: &[PathBuf]) -> Vec<String> {
    let mut script: Vec<Reply> = paths
        .iter()
        .enumerate()
        .map(|(i, path)| reply_tool_call(&format!("r{i}"), "read_file", json!({"path": path})))
        .collect();
    script.push(reply_text("done"));
    let mock = MockLlm::start(script);
    let _ = env
        .cmd()
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .timeout(Duration::from_secs(60))
        .arg("read them")
        .assert();
    mock.assert_never_sent("CANARY-");
    let requests = mock.chat_requests();
    let last = requests.last().unwrap();
    (0..paths.len()).map(|i| last.tool_result(&format!("r{i}")).unwrap_or_default()).collect()
}

#[test]
fn as_a_user_other_than_root_the_view_holds_too() {
    if !is_root() {
        assert!(std::env::var("CI").as_deref() != Ok("true") || !Path::new("/usr/bin/setpriv").exists());
        crate::support::skipped("not root: cannot switch to another user to test the view as one");
        return;
    }
    let Ok(setpriv) = which("setpriv") else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "setpriv (util-linux) is required under CI=true");
        crate::support::skipped("no setpriv");
        return;
    };
    let exe = Path::new(env!("CARGO_BIN_EXE_opsai"));
    // nobody must be able to reach the binary.
    if exe.ancestors().skip(1).any(|dir| dir.metadata().is_ok_and(|m| m.mode() & 0o001 == 0)) {
        crate::support::skipped("the opsai binary is not reachable by another user here");
        return;
    }
    let base = tempfile::Builder::new().prefix("opsai-view-user-").tempdir().unwrap();
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = base.path().join("home");
    let opsai_home = base.path().join("opsai");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&opsai_home).unwrap();
    let planted = plant_all(&home);
    chown_tree(base.path(), 65534);
    let all: Vec<&PathBuf> = planted.secrets.iter().chain(&planted.ordinary).map(|(p, _)| p).collect();
    let mut script = cat_script(&all);
    script.push_str(EVERYDAY);
    let out = std::process::Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(exe)
        .args(["sandbox", "--", "sh", "-c", &script])
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &home)
        .env("OPSAI_HOME", &opsai_home)
        .current_dir(&home)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("no sandbox"), "{stderr}");
    // The system-like tree belongs to root; its public file is world-readable.
    assert_the_view_held(&planted, &out, "as a user");
}

fn which(program: &str) -> Result<PathBuf, ()> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        .iter()
        .map(|dir| Path::new(dir).join(program))
        .find(|p| p.exists())
        .ok_or(())
}

fn chown_tree(dir: &Path, id: u32) {
    std::os::unix::fs::chown(dir, Some(id), Some(id)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            chown_tree(&path, id);
        } else {
            std::os::unix::fs::chown(&path, Some(id), Some(id)).unwrap();
        }
    }
}

/// `opsai serve` with users: a viewer's model cannot read the operators' password hashes, neither
/// with `read_file` nor with a Safe `cat`, though the users file is in the working directory, outside
/// `$OPSAI_HOME`.
#[tokio::test(flavor = "multi_thread")]
async fn serves_users_file_is_closed_to_a_viewers_model() {
    use crate::support::serve::{Server, add_user};
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let file = env.user_home().join("etc-opsai/users.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    add_user(&env, &file, "alice", "operator", "alice-password");
    add_user(&env, &file, "bob", "viewer", "bob-password");
    let hashes = std::fs::read_to_string(&file).unwrap();
    assert!(hashes.contains("$argon2"), "{hashes}");
    let mock = MockLlm::start([
        reply_tool_call("r1", "read_file", json!({"path": file})),
        reply_tool_call("c1", "run_command", json!({"command": format!("cat {}", file.display())})),
        reply_tool_call("ok", "run_command", json!({"command": "cat /etc/os-release"})),
        reply_text("done"),
    ]);
    let server = Server::builder(&env).mock(&mock).users(&file).env("OPSAI_SANDBOX", "auto").start();
    let bob = server.login("bob", "bob-password").await;
    let id = bob.new_conversation().await;
    let events = bob.chat(id, "show me the users").await.collect().await;
    let results: Vec<String> = events
        .iter()
        .filter(|e| e["type"] == "tool_result" && e["kind"] == "tool_result")
        .map(|e| e["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(results.len(), 3, "{events:#?}");
    assert!(!results[0].contains("argon2"), "read_file: {}", results[0]);
    assert!(!results[1].contains("argon2"), "cat: {}", results[1]);
    assert!(results[2].contains("PRETTY_NAME") || results[2].contains("NAME="), "everyday reads work: {}", results[2]);
    mock.assert_never_sent("argon2");
    server.stop();
}
