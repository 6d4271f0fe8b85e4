//! Where a file tool may go (seed 004 §安全考虑), decided on the canonical path: `~/` expanded,
//! relative paths joined to the working directory, every symlink and `..` resolved BEFORE any
//! check, so a link in the home directory that points into `/etc` is judged as `/etc`.
//!
//! Reads: anywhere but under `files.forbidden`. Writes: also only under `files.base_dirs` (the
//! home and working directories when empty) and with an extension in `files.write_extensions`.
//! Prefixes are compared by component: `/etc` covers `/etc/hosts`, not `/etcetera`. The risk comes
//! from the command policy (`cat -- PATH` for a read, `: > PATH` for a write), so secrets, shell
//! startup files and `~/.ssh` are High here exactly as they are for commands.

use std::path::{Path, PathBuf};

use crate::config::FilesConfig;
use crate::exec::fs::FileSystem;
use crate::policy::{self, PolicyConfig};
use crate::protocol::{Decision, Risk};

/// What the tool is about to do with the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

/// A path that passed the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Canonical and absolute.
    pub path: PathBuf,
    /// For people: `~/test/a.sh` under the home directory, else the absolute path.
    pub shown: String,
    pub risk: Risk,
    pub reasons: Vec<String>,
}

/// Why a path cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A rule says no: an observation with status `DeniedByPolicy`.
    Policy(String),
    /// It cannot be resolved (a missing directory, no permission).
    Failed(String),
}

/// The inputs of the checks: the file system the path is on, the rules, the working directory.
pub(crate) struct Guard<'g> {
    pub fs: &'g dyn FileSystem,
    pub config: &'g FilesConfig,
    pub policy: &'g PolicyConfig,
    pub cwd: &'g Path,
}

impl Guard<'_> {
    pub async fn check(&self, raw: &str, access: Access) -> Result<Target, Refusal> {
        let home = self.fs.home();
        let expanded = self.expand(raw, home.as_deref())?;
        let path = self.fs.canonicalize(&expanded).await.map_err(|err| Refusal::Failed(err.to_string()))?;
        let shown = shown(&path, home.as_deref());
        for forbidden in &self.config.forbidden {
            if let Some(prefix) = self.covering(forbidden, &path, home.as_deref()).await {
                return Err(Refusal::Policy(format!(
                    "refused: {shown} is under {prefix}, which the file tools never touch (files.forbidden)"
                )));
            }
        }
        if access == Access::Write {
            self.writable(&path, &shown, home.as_deref()).await?;
        }
        let word = shell_word(&path, home.as_deref());
        let (probe, min) = match access {
            Access::Read => (format!("cat -- {word}"), Risk::Safe),
            Access::Write => (format!(": > {word}"), Risk::Medium),
        };
        let assessment = policy::assess(&probe, self.policy);
        if assessment.decision == Decision::Deny {
            return Err(Refusal::Policy(format!("refused by the user's policy: {}", assessment.reasons.join("; "))));
        }
        let reasons = assessment.reasons.iter().map(|reason| plain_reason(reason)).collect();
        Ok(Target { path, shown, risk: assessment.risk.max(min), reasons })
    }

    /// `~/x` under the home, relative under the working directory.
    fn expand(&self, raw: &str, home: Option<&Path>) -> Result<PathBuf, Refusal> {
        let raw = raw.trim();
        if raw.is_empty() || raw.contains('\0') {
            return Err(Refusal::Failed("the path is empty or contains a NUL byte".to_owned()));
        }
        let path = match raw.strip_prefix('~') {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => match home {
                Some(home) => home.join(rest.trim_start_matches('/')),
                None => return Err(Refusal::Failed("the home directory is not known; give an absolute path".into())),
            },
            Some(_) => {
                return Err(Refusal::Failed(format!("`{raw}`: ~user paths are not supported; give an absolute path")));
            }
            None => PathBuf::from(raw),
        };
        Ok(if path.is_absolute() { path } else { self.cwd.join(path) })
    }

    /// The configured prefix (as written) when `path` is under it, as written or resolved.
    async fn covering(&self, prefix: &str, path: &Path, home: Option<&Path>) -> Option<String> {
        let configured = self.expand(prefix, home).ok()?;
        if path.starts_with(&configured) {
            return Some(prefix.to_owned());
        }
        // `/etc` may itself be a link (`/private/etc`): what it resolves to is forbidden too.
        let resolved = self.fs.canonicalize(&configured).await.ok()?;
        path.starts_with(&resolved).then(|| prefix.to_owned())
    }

    async fn writable(&self, path: &Path, shown: &str, home: Option<&Path>) -> Result<(), Refusal> {
        let mut bases: Vec<String> = self.config.base_dirs.clone();
        if bases.is_empty() {
            bases.extend(home.map(|home| home.display().to_string()));
            bases.push(self.cwd.display().to_string());
        }
        let mut inside = false;
        for base in &bases {
            if self.covering(base, path, home).await.is_some() {
                inside = true;
                break;
            }
        }
        if !inside {
            return Err(Refusal::Policy(format!(
                "refused: {shown} is outside the directories the file tools may change ({}); \
                 the user can add its directory to files.base_dirs",
                bases.join(", ")
            )));
        }
        let allowed = &self.config.write_extensions;
        if allowed.is_empty() {
            return Ok(());
        }
        let extension = path.extension().map(|ext| format!(".{}", ext.to_string_lossy().to_lowercase()));
        let fits = extension.as_deref().is_some_and(|ext| {
            allowed.iter().any(|allowed| format!(".{}", allowed.trim_start_matches('.').to_lowercase()) == ext)
        });
        if fits {
            return Ok(());
        }
        let what = match &extension {
            Some(ext) => format!("the extension {ext} is"),
            None => "files without an extension are".to_owned(),
        };
        Err(Refusal::Policy(format!(
            "refused: {shown}: {what} not among the ones the file tools may change ({}; files.write_extensions)",
            allowed.join(" ")
        )))
    }
}

/// `~/x` for paths under the home directory, so people and the policy's `~/.ssh` rules see it.
pub fn shown(path: &Path, home: Option<&Path>) -> String {
    match home.filter(|home| home.parent().is_some()).and_then(|home| path.strip_prefix(home).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// The path as one shell word for the policy: `~/` unquoted (so it still means home), the rest quoted.
fn shell_word(path: &Path, home: Option<&Path>) -> String {
    let shown = shown(path, home);
    match shown.strip_prefix("~/") {
        Some(rest) => format!("~/{}", policy::quote_word(rest)),
        None => policy::quote_word(&shown),
    }
}

/// The policy's reason without the probe command it was given: `writes a shell startup file (~/.bashrc)`.
fn plain_reason(reason: &str) -> String {
    if let Some(rest) = reason.strip_prefix(": (> ")
        && let Some((_, why)) = rest.split_once("): ")
    {
        return why.to_owned();
    }
    if reason.starts_with("cat -- ")
        && let Some((_, why)) = reason.split_once(": reads ")
    {
        return format!("reads {why}");
    }
    reason.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::HomeFs;

    /// A temp directory standing in for the home, with `work` as the working directory.
    struct Fixture {
        dir: tempfile::TempDir,
        config: FilesConfig,
        policy: PolicyConfig,
    }

    impl Fixture {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("home/work")).unwrap();
            Self { dir, config: FilesConfig::default(), policy: PolicyConfig::default() }
        }

        fn home(&self) -> PathBuf {
            std::fs::canonicalize(self.dir.path().join("home")).unwrap()
        }

        async fn check(&self, raw: &str, access: Access) -> Result<Target, Refusal> {
            let fs = HomeFs(self.home());
            let cwd = self.home().join("work");
            Guard { fs: &fs, config: &self.config, policy: &self.policy, cwd: &cwd }.check(raw, access).await
        }
    }

    fn policy_refusal(result: Result<Target, Refusal>) -> String {
        match result {
            Err(Refusal::Policy(message)) => message,
            other => panic!("expected a policy refusal, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn relative_and_tilde_paths_resolve_to_the_same_file() {
        let fx = Fixture::new();
        let by_tilde = fx.check("~/work/a.sh", Access::Write).await.unwrap();
        let relative = fx.check("a.sh", Access::Write).await.unwrap();
        let dotted = fx.check("../work/./a.sh", Access::Write).await.unwrap();
        assert_eq!(by_tilde.path, fx.home().join("work/a.sh"));
        assert_eq!(relative, by_tilde);
        assert_eq!(dotted, by_tilde);
        assert_eq!(by_tilde.shown, "~/work/a.sh");
        assert_eq!(by_tilde.risk, Risk::Medium);
        assert_eq!(fx.check("~/work/a.sh", Access::Read).await.unwrap().risk, Risk::Safe);
    }

    #[tokio::test]
    async fn a_symlink_into_etc_is_judged_as_etc() {
        let fx = Fixture::new();
        std::os::unix::fs::symlink("/etc", fx.home().join("work/cfg")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", fx.home().join("work/notes.txt")).unwrap();
        let message = policy_refusal(fx.check("cfg/hosts.conf", Access::Write).await);
        assert!(message.contains("is under /etc"), "{message}");
        let message = policy_refusal(fx.check("notes.txt", Access::Read).await);
        assert!(message.starts_with("refused: /etc/hostname is under /etc"), "{message}");
    }

    #[tokio::test]
    async fn dot_dot_cannot_climb_out_of_the_checks() {
        let fx = Fixture::new();
        let up = "../".repeat(40);
        let message = policy_refusal(fx.check(&format!("{up}etc/passwd"), Access::Read).await);
        assert!(message.contains("/etc/passwd is under /etc"), "{message}");
        let message = policy_refusal(fx.check(&format!("~/{up}tmp/x.txt"), Access::Write).await);
        assert!(message.contains("outside the directories"), "{message}");
    }

    #[tokio::test]
    async fn forbidden_prefixes_match_whole_components() {
        let mut fx = Fixture::new();
        let secret = fx.home().join("work/private");
        std::fs::create_dir(&secret).unwrap();
        std::fs::create_dir(fx.home().join("work/private-notes")).unwrap();
        fx.config.forbidden.push("~/work/private".to_owned());
        let message = policy_refusal(fx.check("private/a.txt", Access::Read).await);
        assert!(message.contains("is under ~/work/private"), "{message}");
        // Same string prefix, different directory: allowed, as `/etcetera` is not `/etc`.
        assert!(fx.check("private-notes/a.txt", Access::Write).await.is_ok());
        fx.config.forbidden = vec!["/etc".into()];
        fx.config.base_dirs = vec!["/".into()];
        fx.config.write_extensions.clear();
        let etcetera = Path::new("/etcetera/x");
        let guard_fs = HomeFs(fx.home());
        let cwd = fx.home();
        let guard = Guard { fs: &guard_fs, config: &fx.config, policy: &fx.policy, cwd: &cwd };
        assert_eq!(guard.covering("/etc", etcetera, None).await, None);
        assert_eq!(guard.covering("/etc", Path::new("/etc/x"), None).await.as_deref(), Some("/etc"));
    }

    #[tokio::test]
    async fn writes_stay_under_base_dirs_with_allowed_extensions() {
        let mut fx = Fixture::new();
        let message = policy_refusal(fx.check("/tmp/x.sh", Access::Write).await);
        assert!(message.contains("/tmp/x.sh is outside the directories"), "{message}");
        assert!(fx.check("/tmp/x.sh", Access::Read).await.is_ok(), "reads are not limited to base_dirs");
        let message = policy_refusal(fx.check("a.exe", Access::Write).await);
        assert!(message.contains("the extension .exe is not among"), "{message}");
        let message = policy_refusal(fx.check("Makefile", Access::Write).await);
        assert!(message.contains("files without an extension"), "{message}");
        assert!(fx.check("README.MD", Access::Write).await.is_ok(), "extensions ignore case");
        fx.config.write_extensions.clear();
        assert!(fx.check("Makefile", Access::Write).await.is_ok(), "an empty list allows any");
        fx.config.base_dirs = vec!["~/work/only".into()];
        std::fs::create_dir(fx.home().join("work/only")).unwrap();
        assert!(fx.check("only/x.txt", Access::Write).await.is_ok());
        assert!(matches!(fx.check("x.txt", Access::Write).await, Err(Refusal::Policy(_))));
    }

    #[tokio::test]
    async fn sensitive_places_are_high_as_for_commands() {
        let mut fx = Fixture::new();
        fx.config.write_extensions.clear();
        std::fs::create_dir(fx.home().join(".ssh")).unwrap();
        let rc = fx.check("~/.bashrc", Access::Write).await.unwrap();
        assert_eq!(rc.risk, Risk::High);
        assert_eq!(rc.reasons, ["writes a shell startup file (~/.bashrc)"]);
        assert_eq!(fx.check("~/.ssh/authorized_keys", Access::Write).await.unwrap().risk, Risk::High);
        let key = fx.check("~/.ssh/id_ed25519", Access::Read).await.unwrap();
        assert_eq!(key.risk, Risk::High, "reading a key sends it to the model provider");
        assert!(key.reasons[0].starts_with("reads a secret"), "{:?}", key.reasons);
    }

    #[tokio::test]
    async fn missing_directories_and_tilde_user_fail_plainly() {
        let fx = Fixture::new();
        assert!(matches!(fx.check("no/such/dir/a.txt", Access::Write).await, Err(Refusal::Failed(_))));
        assert!(matches!(fx.check("~root/a.txt", Access::Read).await, Err(Refusal::Failed(_))));
        assert!(matches!(fx.check("  ", Access::Read).await, Err(Refusal::Failed(_))));
    }
}
