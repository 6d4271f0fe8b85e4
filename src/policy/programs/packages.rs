//! Package managers and language toolchains: queries read, installs and builds change things,
//! publishing sends code off the host.

use super::by_subcommand;
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

/// Package managers and language toolchains: queries read, installs and builds change things,
/// publishing sends code off the host.
pub fn packages<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const WITH_VALUE: &[&str] = &[
        "-o", "-c", "-t", "--prefix", "-C", "--cwd", "--dir", "--config", "--target", "-r", "--root",
        "--manifest-path", "-p", "--package", "-e", "--env", "-n", "--name", "--python",
    ];
    let short = |c: char| inv.has_short(c);
    match inv.name {
        "apt-cache" => return Verdict::SAFE.into(),
        "dpkg" => {
            let writes = short('i')
                || short('r')
                || short('P')
                || inv.has_long("--install")
                || inv.has_long("--remove")
                || inv.has_long("--purge")
                || inv.has_long("--unpack")
                || inv.has_long("--configure")
                || inv.has_long("--set-selections");
            return if writes { Verdict::medium("installs or removes packages").into() } else { Verdict::SAFE.into() };
        }
        "rpm" => {
            let query = short('q') || short('V') || inv.has_long("--query") || inv.has_long("--verify");
            return if query { Verdict::SAFE.into() } else { Verdict::medium("installs or removes packages").into() };
        }
        "pacman" => {
            let query =
                short('Q') || (short('S') && (short('s') || short('i') || short('l')) && !short('y') && !short('u'));
            return if query { Verdict::SAFE.into() } else { Verdict::medium("installs or removes packages").into() };
        }
        _ => {}
    }
    let Some((index, sub)) = inv.subcommand(WITH_VALUE) else {
        let version_only = inv.has_word(&["--version", "-v", "-V", "version", "--help", "-h"]);
        return if version_only || inv.args.is_empty() && inv.name != "cargo" {
            Verdict::SAFE.into()
        } else {
            Verdict::medium("runs the package manager").into()
        };
    };
    let sub = if matches!(inv.name, "uv" | "conda" | "mamba" | "npm" | "pnpm" | "yarn")
        && matches!(sub, "pip" | "env" | "config" | "cache")
    {
        // Two-word commands: `uv pip list`, `conda env list`, `npm config get`.
        inv.after(index).subcommand(WITH_VALUE).map_or(sub, |(_, second)| second)
    } else {
        sub
    };
    const SAFE: &[&str] = &[
        "list", "ls", "ll", "la", "show", "info", "search", "policy", "depends", "rdepends", "changelog", "madison",
        "showsrc", "provides", "repolist", "check-update", "deplist", "repoquery", "freeze", "inspect", "view",
        "outdated", "why", "explain", "whoami", "root", "bin", "prefix", "help", "version", "--version", "-V", "tree",
        "metadata", "locate-project", "pkgid", "read-manifest", "verify-project", "env", "deps", "uses", "leaves",
        "config", "doctor", "home", "se", "if", "lr", "repos", "lu", "list-updates", "packages", "pa", "stats", "find",
        "query", "contents", "specification", "which", "debug", "index", "audit", "about",
    ];
    const HIGH: &[(&[&str], &str)] = &[(&["publish", "unpublish", "yank", "push"], "publishes code off this host")];
    let verdict = by_subcommand(sub, SAFE, HIGH, "installs packages, builds or runs project code (effect unknown)");
    // `go env -w`, `npm config set`, `npm audit fix`, `cargo tree` are not all alike.
    let rest: Vec<&str> = inv.after(index).texts().collect();
    if verdict.risk == crate::protocol::Risk::Safe
        && rest
            .iter()
            .any(|t| matches!(*t, "-w" | "set" | "delete" | "fix" | "edit" | "--add" | "--set" | "unset" | "-u"))
    {
        return Verdict::medium("changes package manager settings").into();
    }
    verdict.into()
}
