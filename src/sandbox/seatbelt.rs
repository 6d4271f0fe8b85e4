//! The macOS sandbox: a Seatbelt profile for `sandbox-exec -p`, generated here (as codex does) so it
//! can be tested on any OS. Write only the terminal and `/dev/null`, no network in the strict
//! profile. Reads follow the Linux view where Seatbelt can say it cheaply ([`View`]): homes closed
//! but their harmless files, the `PATH` directories in them and the working directory; names
//! shaped like credentials closed anywhere; the deny paths closed. (Seatbelt cannot test file
//! modes: the system trees' "world-readable only" rule is Linux's; on macOS the kernel's own checks
//! decide there, which for a user other than root is much the same.)

// Generated and unit-tested on every OS so a change cannot break it unseen; applied only on macOS.
#![cfg_attr(not(target_os = "macos"), allow(dead_code))]

use std::path::{Path, PathBuf};

use crate::protocol::SandboxProfile;

pub(crate) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The Mach services a strict-sandboxed command may look up.
const MACH_SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.DirectoryService.libinfo_v1",
    "com.apple.system.logger",
    "com.apple.system.notification_center",
    "com.apple.bsd.dirhelper",
];

/// What the read part of the profile is made of.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// Closed, except `open`.
    pub homes: Vec<PathBuf>,
    /// Harmless files, `PATH` directories and the working directory inside a home.
    pub open: Vec<PathBuf>,
    /// Closed wherever they are, last (opsai's home, the audit log, `files.forbidden`…).
    pub deny: Vec<PathBuf>,
}

impl View {
    /// The view of a command run from `cwd` by the user whose home is `home`, with `deny` closed.
    pub(crate) fn gather(profile: SandboxProfile, deny: &[PathBuf], home: Option<&Path>, cwd: Option<&Path>) -> Self {
        let mut homes: Vec<PathBuf> = home.map(Path::to_path_buf).into_iter().collect();
        homes.push(PathBuf::from("/var/root"));
        if let Ok(entries) = std::fs::read_dir("/Users") {
            homes.extend(entries.flatten().filter(|e| e.file_name() != "Shared").map(|e| e.path()));
        }
        let mut open = Vec::new();
        for home in &homes {
            open.extend(super::shape::HOME_HARMLESS.iter().map(|rel| home.join(rel)));
            if profile == SandboxProfile::Tool {
                open.extend(super::paths::HOME_TOOL_CREDENTIALS.iter().map(|rel| home.join(rel)));
            }
        }
        if let Some(path) = std::env::var_os("PATH") {
            open.extend(
                std::env::split_paths(&path)
                    .filter(|dir| homes.iter().any(|home| dir.starts_with(home) && dir != home)),
            );
        }
        if let Some(cwd) = cwd {
            if homes.iter().any(|home| home == cwd) {
                // A home as working directory: its visible entries, never its dotfiles.
                if let Ok(entries) = std::fs::read_dir(cwd) {
                    open.extend(
                        entries
                            .flatten()
                            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                            .map(|e| e.path()),
                    );
                }
            } else if homes.iter().any(|home| cwd.starts_with(home)) {
                open.push(cwd.to_path_buf());
            }
        }
        let histfile = std::env::var_os("HISTFILE");
        let mut deny: Vec<PathBuf> = deny.to_vec();
        deny.extend(super::paths::secret_paths(profile, home, histfile.as_deref()));
        // Seatbelt matches the resolved path (`/var` is `/private/var`): both spellings.
        for list in [&mut homes, &mut open, &mut deny] {
            let resolved: Vec<PathBuf> = list.iter().filter_map(|path| std::fs::canonicalize(path).ok()).collect();
            list.extend(resolved);
            list.sort();
            list.dedup();
        }
        Self { homes, open, deny }
    }
}

/// Names shaped like credentials (as `shape::is_secret_name`, in the regular expressions Seatbelt
/// has; not the word `private`: macOS keeps `/etc` and `/var` under `/private`).
const SHAPE_REGEXES: &[&str] = &[
    r"\.(key|p12|pfx|jks|keystore|kdbx|ppk|tfstate|tfvars|ovpn|nmconnection|kubeconfig|psk)(\.[^/]*)?$",
    r"/id_[^/.]*$",
    r"/(\.netrc|\.npmrc|\.pypirc|\.pgpass|\.my\.cnf|\.git-credentials|\.htpasswd|master\.key|\.ssh|\.gnupg|\.password-store)(/|$)",
    r"/\.env[^/]*$",
    r"/[^/]*([Ss]ecret|[Cc]redential|[Tt]oken|[Pp]assw|[Aa]pi_?[Kk]ey)[^/]*$",
    r"/\.[^/]*(history|hst)$",
    r"_history$",
];
/// Put back after the shapes: env templates and source code about secrets (`token.rs`).
const SHAPE_EXCEPTIONS: &[&str] = &[
    r"/\.env\.(example|sample|template|dist|defaults)$",
    r"/[^/]*([Ss]ecret|[Cc]redential|[Tt]oken|[Pp]assw|[Aa]pi_?[Kk]ey)[^/]*\.(rs|go|py|js|ts|tsx|java|kt|rb|c|h|cpp|swift|md|html|css)$",
];

/// `profile` with the read view `view`.
pub(crate) fn view_profile(profile_kind: SandboxProfile, view: &View) -> String {
    let mut text = profile(profile_kind, &[]);
    let mut rule = |verb: &str, filters: Vec<String>| {
        if !filters.is_empty() {
            text.push_str(&format!("({verb} file-read*\n  {})\n", filters.join("\n  ")));
        }
    };
    rule("deny", view.homes.iter().map(|home| format!("(subpath {})", quote(home))).collect());
    rule("allow", view.open.iter().map(|path| format!("(subpath {})", quote(path))).collect());
    rule("deny", SHAPE_REGEXES.iter().map(|re| format!("(regex #\"{re}\")")).collect());
    rule("allow", SHAPE_EXCEPTIONS.iter().map(|re| format!("(regex #\"{re}\")")).collect());
    let mut last = profile(profile_kind, &view.deny);
    // Only the deny block of the second rendering: it must come after everything above.
    if let Some(at) = last.find("(deny file-read*") {
        text.push_str(&last.split_off(at));
    }
    text
}

/// The profile text; `deny` paths (files or directories) are unreadable.
pub(crate) fn profile(profile: SandboxProfile, deny: &[PathBuf]) -> String {
    let mut text = String::from(
        "(version 1)\n\
         (deny default)\n\
         (allow process-exec)\n\
         (allow process-fork)\n\
         (allow signal (target same-sandbox))\n\
         (allow process-info* (target same-sandbox))\n\
         (allow sysctl-read)\n\
         (allow ipc-posix-shm-read-data)\n\
         (allow file-read*)\n\
         (allow file-write-data\n  (literal \"/dev/null\")\n  (literal \"/dev/zero\")\n  (literal \"/dev/tty\")\n  (regex #\"^/dev/ttys[0-9]+$\"))\n\
         (allow file-ioctl\n  (literal \"/dev/tty\")\n  (regex #\"^/dev/ttys[0-9]+$\"))\n",
    );
    if profile == SandboxProfile::Tool {
        text.push_str(
            "(allow mach-lookup)\n(allow network-outbound)\n(allow network-inbound)\n(allow system-socket)\n",
        );
    } else {
        // Mach services are macOS's daemons (launchd can start jobs): only the lookups libc needs
        // for users, logging and notifications, as codex's base policy has them.
        text.push_str("(allow mach-lookup\n");
        for service in MACH_SERVICES {
            text.push_str(&format!("  (global-name \"{service}\")\n"));
        }
        text.push_str(")\n");
        // No network at all, Unix sockets included (as on Linux: the docker socket is a way out).
        text.push_str("(deny network*)\n");
    }
    if !deny.is_empty() {
        text.push_str("(deny file-read*");
        for path in deny {
            let literal = quote(path);
            // The path itself and everything beneath it.
            text.push_str(&format!("\n  (literal {literal})\n  (subpath {literal})"));
        }
        text.push_str(")\n");
    }
    text
}

/// A Seatbelt string literal: backslashes and quotes escaped, control characters dropped.
fn quote(path: &Path) -> String {
    let raw = path.to_string_lossy();
    let mut out = String::with_capacity(raw.len() + 2);
    out.push('"');
    for c in raw.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_profile_reads_all_but_secrets_and_has_no_inet() {
        let text = profile(SandboxProfile::Strict, &[PathBuf::from("/Users/u/.ssh"), PathBuf::from("/w/.env")]);
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(text.contains("(allow file-read*)\n"));
        assert!(text.contains("(deny file-read*\n  (literal \"/Users/u/.ssh\")\n  (subpath \"/Users/u/.ssh\")"));
        assert!(text.contains("(literal \"/w/.env\")"));
        assert!(!text.contains("(allow network"));
        assert!(text.contains("(deny network*)"));
        assert!(!text.contains("(allow mach-lookup)\n"), "only named Mach services");
        assert!(text.contains("(global-name \"com.apple.system.logger\")"));
        // Writes only to the terminal and the null devices.
        assert!(!text.contains("(allow file-write*"));
        // The deny comes after the allow, so it wins.
        assert!(text.find("(allow file-read*)").unwrap() < text.find("(deny file-read*").unwrap());
    }

    #[test]
    fn the_view_closes_homes_then_reopens_harmless_files_then_closes_shapes_and_deny_last() {
        let view = View {
            homes: vec![PathBuf::from("/Users/u")],
            open: vec![PathBuf::from("/Users/u/.zshrc"), PathBuf::from("/Users/u/src/app")],
            deny: vec![PathBuf::from("/Users/u/.opsai")],
        };
        let text = view_profile(SandboxProfile::Strict, &view);
        let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle} in {text}"));
        assert!(at("(allow file-read*)\n") < at("(deny file-read*\n  (subpath \"/Users/u\")"));
        assert!(at("(subpath \"/Users/u\")") < at("(subpath \"/Users/u/src/app\")"));
        assert!(at("(subpath \"/Users/u/src/app\")") < at("(regex #\"/\\.env[^/]*$\")"));
        assert!(at("(regex #\"/\\.env[^/]*$\")") < at("(literal \"/Users/u/.opsai\")"));
        assert!(!text.contains("rivate"), "macOS keeps /etc under /private");
    }

    #[test]
    fn gathering_opens_the_working_directory_in_a_home_and_closes_the_rest() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("src/app")).unwrap();
        std::fs::create_dir_all(home.path().join(".aws")).unwrap();
        let cwd = home.path().join("src/app");
        let view = View::gather(SandboxProfile::Strict, &[], Some(home.path()), Some(&cwd));
        assert!(view.homes.contains(&home.path().to_path_buf()));
        assert!(view.open.contains(&cwd));
        assert!(view.open.contains(&home.path().join(".bashrc")));
        assert!(view.deny.contains(&home.path().join(".aws")));
        let at_home = View::gather(SandboxProfile::Strict, &[], Some(home.path()), Some(home.path()));
        assert!(at_home.open.contains(&home.path().join("src")));
        assert!(!at_home.open.contains(&home.path().join(".aws")));
    }

    #[test]
    fn tool_profile_keeps_the_network_and_quotes_are_escaped() {
        let text = profile(SandboxProfile::Tool, &[PathBuf::from("/a \"b\"\\c\n")]);
        assert!(text.contains("(allow network-outbound)\n"));
        assert!(text.contains("(literal \"/a \\\"b\\\"\\\\c\")"));
    }
}
