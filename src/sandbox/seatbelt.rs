//! The macOS sandbox: a Seatbelt profile for `sandbox-exec -p`, generated here (as codex does) so it
//! can be tested on any OS. Read everywhere except the secret paths, write only the terminal and
//! `/dev/null`, no network in the strict profile.

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
    fn tool_profile_keeps_the_network_and_quotes_are_escaped() {
        let text = profile(SandboxProfile::Tool, &[PathBuf::from("/a \"b\"\\c\n")]);
        assert!(text.contains("(allow network-outbound)\n"));
        assert!(text.contains("(literal \"/a \\\"b\\\"\\\\c\")"));
    }
}
