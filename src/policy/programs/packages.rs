//! Package managers and language toolchains: queries read, installs and builds change things,
//! publishing sends code off the host.

use super::by_subcommand;
use super::options::{Operands, Options};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

/// Package managers and language toolchains: queries read, installs and builds change things,
/// publishing sends code off the host.
pub(crate) fn packages<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const WITH_VALUE: &[&str] = &[
        "-o", "-c", "-t", "--prefix", "-C", "--cwd", "--dir", "--config", "--target", "-r", "--root",
        "--manifest-path", "-p", "--package", "-e", "--env", "-n", "--name", "--python",
    ];
    let short = |c: char| inv.has_short(c);
    match inv.name {
        "apt-cache" => {
            let sub = inv.positionals().first().map_or("", |w| w.text.as_str());
            if matches!(sub, "gencaches" | "") && !inv.args.is_empty() {
                return Verdict::medium("apt-cache gencaches writes the package cache").into();
            }
            return APT_CACHE.check(inv).into();
        }
        "dpkg" => return DPKG.check(inv).into(),
        "rpm" => {
            if short('E') || inv.has_long("--eval") {
                return Verdict::high("rpm --eval expands macros, and %(…) runs a shell command").into();
            }
            let query = short('q') || short('V') || inv.has_long("--query") || inv.has_long("--verify");
            if !query {
                return Verdict::medium("installs or removes packages").into();
            }
            return RPM_QUERY.check(inv).into();
        }
        "pacman" => {
            let query =
                short('Q') || (short('S') && (short('s') || short('i') || short('l')) && !short('y') && !short('u'));
            if !query {
                return Verdict::medium("installs or removes packages").into();
            }
            return PACMAN_QUERY.check(inv).into();
        }
        _ => {}
    }
    // These evaluate files of the project they run in, whatever the command: the Gemfile is Ruby,
    // `.yarnrc.yml` can name its own yarn (`yarnPath`), composer activates the project's plugins.
    if matches!(inv.name, "bundle" | "yarn" | "composer") {
        return Verdict::medium(format!("{} runs code from the project it is run in", inv.name)).into();
    }
    let Some((index, sub)) = inv.subcommand(WITH_VALUE) else {
        let version_only = inv.has_word(&["--version", "-v", "-V", "version", "--help", "-h"]);
        return if version_only || inv.args.is_empty() && inv.name != "cargo" {
            Verdict::SAFE.into()
        } else {
            Verdict::medium("runs the package manager").into()
        };
    };
    let two_words = matches!(inv.name, "uv" | "conda" | "mamba" | "npm" | "pnpm" | "yarn")
        && matches!(sub, "pip" | "env" | "config" | "cache");
    let (index, sub) = if two_words {
        // Two-word commands: `uv pip list`, `conda env list`, `npm config get`.
        let (i, second) = inv.after(index).subcommand(WITH_VALUE).unwrap_or((0, sub));
        (index + 1 + i, second)
    } else {
        (index, sub)
    };
    if two_words && matches!(sub, "get" | "list" | "ls") {
        return PKG_READ.check(&inv.after(index)).into();
    }
    const SAFE: &[&str] = &[
        "list", "ls", "ll", "la", "show", "info", "search", "policy", "depends", "rdepends", "changelog", "madison",
        "showsrc", "provides", "repolist", "check-update", "deplist", "repoquery", "freeze", "inspect", "view",
        "outdated", "why", "explain", "whoami", "root", "bin", "prefix", "help", "version", "--version", "-V", "tree",
        "metadata", "locate-project", "pkgid", "read-manifest", "verify-project", "env", "deps", "uses", "leaves",
        "config", "doctor", "home", "se", "if", "lr", "repos", "lu", "list-updates", "packages", "pa", "stats", "find",
        "query", "contents", "specification", "which", "debug", "index", "audit", "about",
    ];
    if let Some(why) = runs_configured(inv.name, sub) {
        return Verdict::medium(why).into();
    }
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
    if verdict.risk != crate::protocol::Risk::Safe {
        return verdict.into();
    }
    let global = Invocation { args: &inv.args[..index], ..*inv };
    match PKG_READ.first_unknown(global.args).or_else(|| PKG_READ.first_unknown(inv.after(index).args)) {
        Some(problem) => Verdict::medium(problem).into(),
        None => Verdict::SAFE.into(),
    }
}

/// Query commands that run a program the project's own configuration can name: cargo's
/// `tree`/`metadata` ask rustc for target information through `build.rustc-wrapper` or
/// `build.rustc` from `.cargo/config.toml`; `npm help`/`cargo help` open a viewer (`.npmrc`'s
/// `viewer`/`browser`, man's pager); `npm doctor` runs the `git` the config names; `uv help` pages.
fn runs_configured(manager: &str, sub: &str) -> Option<&'static str> {
    match (manager, sub) {
        ("cargo", "tree" | "metadata") => {
            Some("reads .cargo/config.toml, which can name a rustc wrapper that cargo runs to query the target")
        }
        ("cargo" | "npm" | "pnpm" | "uv", "help") => Some("opens a help viewer, which the configuration can name"),
        ("npm" | "pnpm", "doctor") => Some("runs the programs the project's .npmrc names (git, node)"),
        _ => None,
    }
}

/// Options of the package managers' query commands (`apt list --installed`, `npm ls -g --depth=0`,
/// `pip list --outdated`, `cargo tree -e normal`, `brew info --json=v2`…). Left out: `-o`/`-c`
/// (apt: arbitrary configuration), anything that installs, fixes or writes.
static PKG_READ: Options = Options {
    short: "1aAdDgGhilLmqrsuvVxe:f:n:p:P:",
    long: &[
        "installed",
        "upgradable",
        "upgradeable",
        "all-versions",
        "manual-installed",
        "verbose",
        "quiet",
        "full",
        "names-only",
        "depth=",
        "global",
        "json[=]",
        "long",
        "parseable",
        "outdated",
        "uptodate",
        "format=",
        "format-version=",
        "no-deps",
        "manifest-path=",
        "package=",
        "all-features",
        "no-default-features",
        "features=",
        "target=",
        "invert=",
        "prefix=",
        "name=",
        "explicit",
        "revisions",
        "not-required",
        "user",
        "local",
        "path=",
        "exclude=",
        "cask",
        "formula",
        "versions",
        "offline",
        "frozen",
        "locked",
        "color=",
        "no-color",
        "edges=",
        "duplicates",
        "charset=",
        "workspace",
        "all",
        "include-deps",
        "omit=",
        "include=",
        "production",
        "dev",
        "only=",
        "link",
        "unicode",
        "show-origin",
        "location=",
        "editable",
        "exclude-editable",
        "disable-pip-version-check",
        "no-index",
        "files",
        "recursive",
        "envs",
        "show-channel-urls",
        "size",
        "no-pip",
        "canonical",
        "export",
        "md5",
        "pretty",
        "fields=",
        "installed-only",
        "available",
        "updates",
        "extras",
        "obsoletes",
        "recent",
        "showduplicates",
        "cacheonly",
        "repo=",
        "enablerepo=",
        "disablerepo=",
        "release=",
        "arch=",
        "quiet-level=",
        "classic",
        "help",
        "version",
        "deps",
        "reverse",
        "no-pager",
        "depends",
        "recurse",
        "tree",
        "all-targets",
        "message-format=",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

static APT_CACHE: Options = Options {
    short: "afiqsn",
    long: &[
        "full", "names-only", "all-versions", "installed", "recurse", "no-all-versions", "important", "quiet",
        "generate", "no-generate",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

/// `dpkg` queries; `-x`/`-X` extract and `-b` builds, so they are left out with the installers.
static DPKG: Options = Options {
    short: "lLsSpcICWV",
    long: &[
        "list",
        "listfiles",
        "status",
        "search",
        "print-avail",
        "contents",
        "info",
        "audit",
        "get-selections",
        "print-architecture",
        "print-foreign-architectures",
        "compare-versions",
        "verify",
        "admindir=",
        "root=",
        "instdir=",
        "no-pager",
        "show",
        "showformat=",
        "verify-format=",
        "field",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

/// `rpm -q…`/`-V…`. `--eval` (macros run shell commands) and `--rcfile`/`--macros` are left out.
static RPM_QUERY: Options = Options {
    short: "acdfgilpqRsvVK",
    long: &[
        "query", "verify", "all", "info", "list", "file", "package", "configfiles", "docfiles", "state", "scripts",
        "changelog", "requires", "provides", "whatprovides", "whatrequires", "last", "dbpath=", "root=", "nodigest",
        "nosignature", "dump", "filesbypkg", "triggers", "conflicts", "obsoletes", "queryformat=", "qf=", "nofiles",
        "nodeps", "noscripts", "recommends", "suggests", "xml", "licensefiles", "artifactfiles",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

static PACMAN_QUERY: Options = Options {
    short: "QSsilkmnodeptgqcuvb:r:",
    long: &[
        "query", "sync", "search", "info", "list", "check", "foreign", "native", "owns", "deps", "explicit",
        "unrequired", "groups", "quiet", "changelog", "upgrades", "file", "dbpath=", "root=", "color=",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};
