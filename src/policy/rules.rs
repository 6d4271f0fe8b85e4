//! The built-in rule table: every program opsai knows, with its risk and the reason shown to the
//! user. Programs not listed here are Medium ("unknown program"). Programs whose risk depends on
//! subcommands, targets or nested commands point at a function in `programs/`, which keeps its own
//! table beside the logic.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::invocation::Invocation;
use super::programs::{cluster, files, net, packages, shells, system, text, vcs};
use super::verdict::{Outcome, Verdict};
use crate::protocol::Risk::{self, High, Medium};

pub enum Rule {
    /// Read-only with any arguments.
    ReadOnly,
    /// Read-only unless one of these options is given.
    ReadOnlyUnless(&'static [Veto]),
    /// Always this risk, for this reason.
    Fixed(Risk, &'static str),
    /// Depends on subcommands, targets or nested commands: see the function.
    Custom(for<'a> fn(&Invocation<'a>) -> Outcome<'a>),
}

/// An option that takes a read-only program out of Safe.
pub struct Veto {
    pub option: Opt,
    pub risk: Risk,
    pub reason: &'static str,
}

pub enum Opt {
    /// `-x`, alone or in a cluster.
    Short(char),
    /// `--name`, `--name=…`, or an abbreviation of it.
    Long(&'static str),
    /// An exact word (`-delete`).
    Word(&'static str),
}

const fn veto(option: Opt, risk: Risk, reason: &'static str) -> Veto {
    Veto { option, risk, reason }
}

use Opt::{Long, Short};
use Rule::{Custom, Fixed, ReadOnly, ReadOnlyUnless};

const RUNS_PROGRAM: &str = "an option that runs another program";

/// name(s) → rule. Read top to bottom: safe readers, then writers, then the dangerous.
pub static PROGRAMS: &[(&[&str], Rule)] = &[
    // ── Read-only: files, text, search ─────────────────────────────────────────────────────
    (&["ls", "dir", "vdir", "exa", "eza", "pwd", "stat", "du", "df", "realpath", "readlink"], ReadOnly),
    (&["basename", "dirname", "pathchk", "cat", "tac", "head", "tail", "wc", "nl", "fold", "fmt", "column"], ReadOnly),
    (&["paste", "join", "comm", "cut", "tr", "rev", "expand", "unexpand", "diff", "diff3", "cmp"], ReadOnly),
    (
        &["colordiff", "grep", "egrep", "fgrep", "zgrep", "zegrep", "zcat", "bzcat", "xzcat", "zstdcat", "zdiff"],
        ReadOnly,
    ),
    (&["ag", "ack", "jq", "gojq", "strings", "hexdump", "od", "base32", "base64", "basenc"], ReadOnly),
    (&["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum"], ReadOnly),
    (&["echo", "printf", "true", "false", "test", "[", "[[", ":", "seq", "yes", "sleep", "expr", "factor"], ReadOnly),
    (&["numfmt", "which", "type", "whereis", "whatis", "apropos", "locate", "plocate", "mlocate", "help"], ReadOnly),
    (&["cd", "pushd", "popd", "dirs", "read", "wait", "jobs", "shopt", "ulimit"], ReadOnly),
    (
        &["declare", "local", "readonly", "typeset", "export", "unset", "getopts", "shift", "let", "tput", "clear"],
        ReadOnly,
    ),
    (&["less", "more", "most", "zless", "zmore"], Custom(text::pager)),
    (
        &["ss"],
        ReadOnlyUnless(&[veto(Short('K'), Medium, "kills sockets"), veto(Long("--kill"), Medium, "kills sockets")]),
    ),
    (
        &["arp"],
        ReadOnlyUnless(&[
            veto(Short('d'), Medium, "changes the ARP table"),
            veto(Short('s'), Medium, "changes the ARP table"),
            veto(Short('f'), Medium, "changes the ARP table"),
        ]),
    ),
    (&["tree"], ReadOnlyUnless(&[veto(Short('o'), Medium, "writes its output to a file")])),
    (
        &["sdiff"],
        ReadOnlyUnless(&[
            veto(Short('o'), Medium, "writes a merged file"),
            veto(Long("--output"), Medium, "writes a merged file"),
        ]),
    ),
    (&["bat", "batcat"], ReadOnlyUnless(&[veto(Long("--pager"), Medium, RUNS_PROGRAM)])),
    (&["file"], ReadOnlyUnless(&[veto(Short('C'), Medium, "compiles a magic file (writes it)")])),
    (&["hash"], ReadOnlyUnless(&[veto(Short('p'), Medium, "rebinds a command name to another program")])),
    (&["alias", "umask"], Fixed(Medium, "changes how later commands in this shell behave")),
    (
        &["rg"],
        ReadOnlyUnless(&[
            veto(Long("--pre"), Medium, RUNS_PROGRAM),
            veto(Short('z'), Medium, "--search-zip runs decompression programs"),
            veto(Long("--hostname-bin"), Medium, RUNS_PROGRAM),
            veto(Long("--search-zip"), Medium, "--search-zip runs decompression programs"),
        ]),
    ),
    (
        &["man"],
        ReadOnlyUnless(&[
            veto(Short('P'), Medium, RUNS_PROGRAM),
            veto(Long("--pager"), Medium, RUNS_PROGRAM),
            veto(Short('H'), Medium, RUNS_PROGRAM),
            veto(Long("--html"), Medium, RUNS_PROGRAM),
            veto(Long("--preprocessor"), Medium, RUNS_PROGRAM),
            veto(Short('C'), Medium, "reads a config file that can name a pager"),
            veto(Long("--config-file"), Medium, "reads a config file that can name a pager"),
            veto(Short('X'), Medium, RUNS_PROGRAM),
        ]),
    ),
    (&["sort"], Custom(files::sort)),
    (&["xxd"], Custom(files::uniq)),
    (
        &["yq"],
        ReadOnlyUnless(&[
            veto(Short('i'), Medium, "edits files in place"),
            veto(Long("--inplace"), Medium, "edits files in place"),
        ]),
    ),
    (&["uniq"], Custom(files::uniq)),
    (&["find"], Custom(files::find)),
    (&["sed", "gsed"], Custom(text::sed)),
    (&["awk", "gawk", "mawk", "nawk", "busybox-awk"], Custom(text::awk)),
    (&["tar", "bsdtar", "gtar"], Custom(files::tar)),
    (&["unzip"], Custom(files::unzip)),
    // ── Read-only: processes, system, network diagnostics ─────────────────────────────────
    (&["ps", "pgrep", "pidof", "pstree", "top", "htop", "atop", "btop", "vmstat", "iostat", "mpstat"], ReadOnly),
    (&["pidstat", "sar", "free", "uptime", "w", "who", "whoami", "id", "groups", "logname", "users", "last"], ReadOnly),
    (&["lastlog", "uname", "arch", "nproc", "lscpu", "lsmem", "lspci", "lsusb", "lsmod", "lsblk", "blkid"], ReadOnly),
    (&["findmnt", "lsns", "lsipc", "lslocks", "getconf", "getent", "hostid", "tty", "locale", "cal"], ReadOnly),
    (&["printenv", "lsof", "netstat", "nslookup", "host", "dig", "drill", "whois"], ReadOnly),
    (&["ping", "ping6", "traceroute", "traceroute6", "tracepath", "mtr", "sensors", "systemd-analyze"], ReadOnly),
    (&["nm", "objdump", "readelf", "size", "history"], Custom(system::read_only_with_history)),
    (
        &["hostname", "hostnamectl", "timedatectl", "date", "dmesg", "sysctl", "loginctl"],
        Custom(system::clocks_and_kernel),
    ),
    (&["mount", "umount", "swapon", "swapoff"], Custom(system::mounts)),
    (&["ip"], Custom(system::ip)),
    (&["ifconfig", "route"], Custom(system::ifconfig)),
    (
        &["iptables", "ip6tables", "iptables-legacy", "iptables-nft", "nft", "ufw", "firewall-cmd", "pfctl"],
        Custom(system::firewall),
    ),
    (&["systemctl"], Custom(system::systemctl)),
    (&["service"], Custom(system::service)),
    (&["journalctl"], Custom(system::journalctl)),
    (&["crontab"], Custom(system::crontab)),
    (&["kill"], Custom(system::kill)),
    (&["fdisk", "sfdisk", "gdisk", "sgdisk", "cfdisk", "parted"], Custom(system::partitioning)),
    (
        &["apt", "apt-get", "aptitude", "apt-cache", "dpkg", "dnf", "yum", "rpm", "zypper", "pacman", "apk"],
        Custom(packages::packages),
    ),
    (
        &["brew", "port", "snap", "flatpak", "nix-env", "pip", "pip3", "pipx", "uv", "gem", "npm", "yarn"],
        Custom(packages::packages),
    ),
    (&["pnpm", "cargo", "go", "conda", "mamba", "composer", "bundle"], Custom(packages::packages)),
    // ── Version control and clusters ─────────────────────────────────────────────────────
    (&["git"], Custom(vcs::git)),
    (&["docker", "podman", "nerdctl"], Custom(cluster::docker)),
    (&["docker-compose", "podman-compose"], Custom(cluster::compose)),
    (&["kubectl", "oc", "k"], Custom(cluster::kubectl)),
    (&["helm"], Custom(cluster::helm)),
    (&["terraform", "tofu"], Custom(cluster::terraform)),
    // ── Network transfer ─────────────────────────────────────────────────────────────────
    (&["curl"], Custom(net::curl)),
    (&["wget"], Custom(net::wget)),
    (&["ssh"], Custom(net::ssh)),
    (&["scp", "rsync", "sftp", "rclone"], Custom(net::copy_remote)),
    (&["nc", "ncat", "netcat", "socat", "telnet"], Custom(net::sockets)),
    (&["ftp", "tftp", "lftp", "mail", "mailx", "sendmail", "mutt"], Fixed(Medium, "talks to another host")),
    (&["nmap", "masscan", "tcpdump", "tshark"], Fixed(Medium, "scans or captures network traffic")),
    // ── Writing files ────────────────────────────────────────────────────────────────────
    (&["rm", "unlink", "rmdir"], Custom(files::remove)),
    (&["cp", "ln", "install"], Custom(files::copy)),
    (&["mv"], Custom(files::move_)),
    (&["touch", "mkdir", "mkfifo", "mknod", "truncate", "tee", "fallocate"], Custom(files::create)),
    (&["chmod", "chown", "chgrp", "chattr", "setfacl"], Custom(files::permissions)),
    (&["dd"], Custom(files::dd)),
    (
        &["gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd", "zip", "7z", "patch"],
        Fixed(Medium, "changes files"),
    ),
    (&["vi", "vim", "nvim", "nano", "emacs", "code", "ed"], Fixed(Medium, "opens an editor that can change files")),
    (
        &["make", "cmake", "ninja", "meson", "gradle", "gradlew", "mvn", "ant", "bazel", "just"],
        Fixed(Medium, "builds or runs project tasks (effect unknown)"),
    ),
    (
        &["openssl", "gpg", "ssh-keygen", "ssh-add", "ssh-copy-id", "certbot"],
        Fixed(Medium, "creates or uses keys and certificates"),
    ),
    (&["tmux", "screen", "at", "batch", "systemd-run"], Fixed(Medium, "starts something that keeps running")),
    (
        &["strace", "ltrace", "gdb", "perf", "valgrind", "nsenter", "unshare", "chroot", "firejail"],
        Fixed(Medium, "runs or attaches to another program"),
    ),
    // ── Shells, interpreters and wrappers (their nested commands are assessed too) ─────────
    (&["sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "busybox", "csh", "tcsh"], Custom(shells::shell)),
    (
        &[
            "python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "deno", "bun", "Rscript",
            "osascript", "pwsh",
        ],
        Custom(shells::interpreter),
    ),
    (&["source", "."], Custom(shells::source)),
    (&["eval"], Custom(shells::eval)),
    (&["sudo", "doas", "pkexec", "run0", "su"], Custom(shells::sudo)),
    (
        &["env", "nice", "nohup", "timeout", "time", "command", "builtin", "exec", "stdbuf", "ionice", "chrt"],
        Custom(shells::wrapper),
    ),
    (&["setsid", "taskset", "coproc", "flock", "watch", "xargs"], Custom(shells::wrapper)),
    (&["set"], Custom(shells::set)),
    // ── Destructive or system-wide ───────────────────────────────────────────────────────
    (&["shred", "wipefs", "srm"], Fixed(High, "destroys data irrecoverably")),
    (&["mkfs", "mke2fs", "mkswap", "mkdosfs", "newfs"], Fixed(High, "formats a filesystem")),
    (
        &["cryptsetup", "lvremove", "vgremove", "pvremove", "mdadm", "zpool", "blkdiscard"],
        Fixed(High, "changes disks or volumes"),
    ),
    (&["reboot", "shutdown", "halt", "poweroff", "kexec"], Fixed(High, "restarts or stops the machine")),
    (&["init", "telinit"], Fixed(High, "changes the system runlevel")),
    (&["killall", "pkill", "killall5", "skill"], Fixed(High, "kills processes by name or pattern")),
    (
        &["useradd", "userdel", "usermod", "adduser", "deluser", "groupadd", "groupdel", "groupmod"],
        Fixed(High, "changes system accounts"),
    ),
    (&["passwd", "chpasswd", "chage", "visudo", "vipw", "vigr"], Fixed(High, "changes system credentials or sudoers")),
    (
        &["modprobe", "insmod", "rmmod", "setenforce", "setsebool", "aa-disable"],
        Fixed(High, "changes kernel modules or security enforcement"),
    ),
    (
        &["iptables-restore", "update-alternatives", "grub-install", "update-grub", "efibootmgr"],
        Fixed(High, "changes system boot or network configuration"),
    ),
];

static INDEX: LazyLock<HashMap<&'static str, &'static Rule>> =
    LazyLock::new(|| PROGRAMS.iter().flat_map(|(names, rule)| names.iter().map(move |name| (*name, rule))).collect());

/// Families named by prefix (`mkfs.ext4`, `python3.12`, `pip3.11`).
fn family(name: &str) -> Option<&'static str> {
    if let Some((base, _)) = name.split_once('.')
        && matches!(base, "mkfs" | "fsck" | "mount" | "umount")
    {
        return INDEX.get_key_value(base).map(|(k, _)| *k);
    }
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    (trimmed != name).then(|| INDEX.get_key_value(trimmed).map(|(k, _)| *k)).flatten()
}

/// The rule for a normalized program name, if opsai knows it.
pub fn lookup(name: &str) -> Option<(&'static str, &'static Rule)> {
    if let Some((key, rule)) = INDEX.get_key_value(name) {
        return Some((key, rule));
    }
    let key = family(name)?;
    INDEX.get(key).map(|rule| (key, *rule))
}

/// Applies a rule to an invocation.
pub fn apply<'a>(rule: &Rule, inv: &Invocation<'a>) -> Outcome<'a> {
    match rule {
        ReadOnly => Verdict::SAFE.into(),
        ReadOnlyUnless(vetoes) => vetoes
            .iter()
            .filter(|v| match v.option {
                Opt::Short(c) => inv.has_short(c),
                Opt::Long(name) => inv.has_long(name),
                Opt::Word(word) => inv.has_word(&[word]),
            })
            .fold(Verdict::SAFE, |acc, v| acc.max(Verdict { risk: v.risk, reason: v.reason.into() }))
            .into(),
        Fixed(risk, reason) => Verdict { risk: *risk, reason: (*reason).into() }.into(),
        Custom(function) => function(inv),
    }
}

/// Shells that run code from `-c`, a script file, or stdin.
pub fn is_shell(name: &str) -> bool {
    matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "fish" | "ash" | "busybox" | "csh" | "tcsh")
}

/// Programs that turn text into running code.
pub fn runs_code(name: &str) -> bool {
    is_shell(name)
        || matches!(lookup(name), Some((key, _)) if matches!(key, "python" | "python2" | "python3" | "perl" | "ruby"
            | "node" | "nodejs" | "php" | "lua" | "deno" | "bun" | "Rscript" | "osascript" | "pwsh" | "source" | "." | "eval"))
}

/// Programs that fetch data from the network onto stdout or a file.
pub fn is_downloader(name: &str) -> bool {
    matches!(
        name,
        "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "xh" | "nc" | "ncat" | "netcat" | "socat" | "tftp"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_is_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for (names, _) in PROGRAMS {
            for name in *names {
                assert!(seen.insert(*name), "{name} is listed twice");
            }
        }
    }

    #[test]
    fn families_resolve() {
        assert_eq!(lookup("mkfs.ext4").map(|(k, _)| k), Some("mkfs"));
        assert_eq!(lookup("python3.12").map(|(k, _)| k), Some("python"));
        assert_eq!(lookup("pip3.11").map(|(k, _)| k), Some("pip"));
        assert!(lookup("frobnicate").is_none());
    }
}
