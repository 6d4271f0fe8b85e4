//! The built-in rule table: every program opsai knows, with its risk and the reason shown to the
//! user. Programs not listed here are Medium ("unknown program"). Programs whose risk depends on
//! subcommands, targets or nested commands point at a function in `programs/`, which keeps its own
//! table beside the logic.

use std::collections::HashMap;
use std::sync::LazyLock;

use super::invocation::Invocation;
use super::programs::options::{self, Options};
use super::programs::{
    builtins as b, cluster, files, hardware, infra, inspect as i, net, packages, procs, readers as r, shells, system,
    text, tools, vcs, viewers,
};
use super::verdict::{Outcome, Verdict};
use crate::protocol::Risk::{self, High, Medium};

pub(crate) enum Rule {
    /// Read-only with the options and operands of this table; anything else is Medium.
    Options(&'static Options),
    /// Read-only whatever the arguments: they are data, never options or actions (`echo`, `test`).
    DataArgs,
    /// Always this risk, for this reason.
    Fixed(Risk, &'static str),
    /// Depends on subcommands, targets or nested commands: see the function (which checks the
    /// program's option table itself before saying Safe).
    Custom(for<'a> fn(&Invocation<'a>) -> Outcome<'a>),
}

use Rule::{Custom, DataArgs, Fixed, Options as O};

/// name(s) → rule. Read top to bottom: safe readers, then writers, then the dangerous.
pub(crate) static PROGRAMS: &[(&[&str], Rule)] = &[
    // ── Read-only: files, text, search (option tables in programs/readers.rs) ──────────────
    (&["ls", "dir", "vdir"], O(&r::LS)),
    (&["exa", "eza"], O(&r::EZA)),
    (&["pwd"], O(&r::PWD)),
    (&["stat"], O(&r::STAT)),
    (&["du"], O(&r::DU)),
    (&["df"], O(&r::DF)),
    (&["realpath"], O(&r::REALPATH)),
    (&["readlink"], O(&r::READLINK)),
    (&["basename"], O(&r::BASENAME)),
    (&["dirname"], O(&r::DIRNAME)),
    (&["pathchk"], O(&r::PATHCHK)),
    (&["cat"], O(&r::CAT)),
    (&["tac"], O(&r::TAC)),
    (&["head"], O(&r::HEAD)),
    (&["tail"], O(&r::TAIL)),
    (&["wc"], O(&r::WC)),
    (&["nl"], O(&r::NL)),
    (&["fold"], O(&r::FOLD)),
    (&["fmt"], O(&r::FMT)),
    (&["column"], O(&r::COLUMN)),
    (&["paste"], O(&r::PASTE)),
    (&["join"], O(&r::JOIN)),
    (&["comm"], O(&r::COMM)),
    (&["cut"], O(&r::CUT)),
    (&["tr"], O(&r::TR)),
    (&["rev", "factor", "sleep", "arch", "groups", "logname", "users", "lsmod", "hostid"], O(&i::BARE)),
    (&["expand"], O(&r::EXPAND)),
    (&["unexpand"], O(&r::UNEXPAND)),
    (&["diff", "colordiff", "zdiff", "zcmp"], O(&r::DIFF)),
    (&["diff3"], O(&r::DIFF3)),
    (&["sdiff"], O(&r::SDIFF)),
    (&["cmp"], O(&r::CMP)),
    (&["grep", "egrep", "fgrep", "zgrep", "zegrep", "zfgrep"], O(&r::GREP)),
    (&["zcat", "bzcat", "xzcat", "zstdcat", "lzcat"], O(&r::ZCAT)),
    (&["ag"], O(&r::AG)),
    (&["ack"], O(&r::ACK)),
    (&["jq", "gojq", "jaq"], Custom(viewers::jq)),
    (&["yq"], Custom(viewers::jq)),
    (&["strings"], O(&r::STRINGS)),
    (&["hexdump"], O(&r::HEXDUMP)),
    (&["od"], O(&r::OD)),
    (&["base32", "base64", "basenc"], O(&r::BASE64)),
    (&["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum"], O(&r::CHECKSUM)),
    (&["sum"], O(&r::SUM)),
    (&["echo", "true", "false", "test", "[", "[[", ":", "yes", "expr"], DataArgs),
    (&["printf"], Custom(b::printf)),
    (&["seq"], O(&r::SEQ)),
    (&["numfmt"], O(&r::NUMFMT)),
    (&["which"], O(&r::WHICH)),
    (&["type"], O(&b::TYPE)),
    (&["whereis"], O(&r::WHEREIS)),
    (&["whatis", "apropos"], O(&r::APROPOS)),
    (&["locate", "plocate", "mlocate"], O(&r::LOCATE)),
    (&["help"], O(&b::HELP)),
    (&["cd"], O(&b::CD)),
    (&["pushd"], O(&b::PUSHD)),
    (&["popd"], O(&b::POPD)),
    (&["dirs"], O(&b::DIRS)),
    (&["wait"], O(&b::WAIT)),
    (&["jobs"], O(&b::JOBS)),
    (&["shopt"], O(&b::SHOPT)),
    (&["ulimit"], O(&b::ULIMIT)),
    (&["tput"], O(&b::TPUT)),
    (&["clear"], O(&b::CLEAR)),
    (&["hash"], O(&b::HASH)),
    (&["alias"], O(&b::ALIAS)),
    (&["umask"], O(&b::UMASK)),
    // Builtins that assign variables, or print them all: never Safe.
    (&["read", "mapfile", "readarray", "getopts", "let"], Fixed(Medium, b::ASSIGNS)),
    (&["declare", "typeset", "local", "readonly", "export"], Fixed(Medium, b::SETS_OR_PRINTS)),
    (&["unset"], Fixed(Medium, "unsets shell variables or functions")),
    (&["shift"], Fixed(Medium, "shifts the positional parameters")),
    (&["less", "most", "zless"], Custom(viewers::pager)),
    (&["more", "zmore"], Custom(viewers::pager)),
    (&["ss"], O(&i::SS)),
    (&["arp"], O(&i::ARP)),
    (&["tree"], O(&r::TREE)),
    (&["bat", "batcat"], O(&r::BAT)),
    (&["file"], O(&r::FILE)),
    (&["rg"], O(&r::RG)),
    (&["man"], Custom(viewers::man)),
    (&["sort"], Custom(files::sort)),
    (&["xxd"], Custom(files::xxd)),
    (&["uniq"], Custom(files::uniq)),
    (&["find"], Custom(files::find)),
    (&["sed", "gsed"], Custom(text::sed)),
    (&["awk", "gawk", "mawk", "nawk", "busybox-awk"], Custom(text::awk)),
    (&["tar", "bsdtar", "gtar"], Custom(files::tar)),
    (&["unzip"], Custom(files::unzip)),
    // ── Read-only: processes, system, network diagnostics (tables in programs/inspect.rs) ───
    (&["ps"], Custom(procs::ps)),
    (&["pgrep"], O(&i::PGREP)),
    (&["pidof"], O(&i::PIDOF)),
    (&["pstree"], O(&i::PSTREE)),
    (&["top"], O(&i::TOP)),
    (&["htop"], O(&i::HTOP)),
    (&["atop"], O(&i::ATOP)),
    (&["btop"], O(&i::BTOP)),
    (&["vmstat"], O(&i::VMSTAT)),
    (&["iostat"], O(&i::IOSTAT)),
    (&["mpstat"], O(&i::MPSTAT)),
    (&["pidstat"], O(&i::PIDSTAT)),
    (&["sar"], O(&i::SAR)),
    (&["free"], O(&i::FREE)),
    (&["uptime"], O(&i::UPTIME)),
    (&["w"], O(&i::W)),
    (&["who"], O(&i::WHO)),
    (&["whoami"], O(&i::BARE)),
    (&["id"], O(&i::ID)),
    (&["last", "lastb"], O(&i::LAST)),
    (&["lastlog"], O(&i::LASTLOG)),
    (&["uname"], O(&i::UNAME)),
    (&["nproc"], O(&i::NPROC)),
    (&["lscpu"], O(&i::LSCPU)),
    (&["lsmem"], O(&i::LSMEM)),
    (&["lspci"], O(&i::LSPCI)),
    (&["lsusb"], O(&i::LSUSB)),
    (&["lsblk"], O(&i::LSBLK)),
    (&["blkid"], O(&i::BLKID)),
    (&["findmnt"], O(&i::FINDMNT)),
    (&["lsns"], O(&i::LSNS)),
    (&["lsipc"], O(&i::LSIPC)),
    (&["lslocks"], O(&i::LSLOCKS)),
    (&["getconf"], O(&i::GETCONF)),
    (&["getent"], O(&i::GETENT)),
    (&["tty"], O(&i::TTY)),
    (&["locale"], O(&i::LOCALE)),
    (&["cal", "ncal"], O(&i::CAL)),
    (&["printenv"], Custom(b::printenv)),
    (&["lsof"], O(&i::LSOF)),
    (&["netstat"], O(&i::NETSTAT)),
    (&["nslookup"], O(&i::NSLOOKUP)),
    (&["host"], O(&i::HOST)),
    (&["dig"], O(&i::DIG)),
    (&["drill"], O(&i::DRILL)),
    (&["whois"], O(&i::WHOIS)),
    (&["ping", "ping6"], O(&i::PING)),
    (&["traceroute", "traceroute6"], O(&i::TRACEROUTE)),
    (&["tracepath"], O(&i::TRACEPATH)),
    (&["mtr"], O(&i::MTR)),
    (&["sensors"], O(&i::SENSORS)),
    (
        &[
            "smartctl", "mdadm", "pvs", "vgs", "lvs", "pvdisplay", "vgdisplay", "lvdisplay", "nvidia-smi", "numactl",
            "modinfo", "dmidecode", "ethtool",
        ],
        Custom(hardware::inspector),
    ),
    (&["nginx", "apachectl", "apache2ctl", "httpd"], Custom(hardware::web_server)),
    (&["resolvectl"], Custom(hardware::resolvectl)),
    (&["systemd-analyze"], Custom(procs::systemd_analyze)),
    (&["lsb_release"], O(&i::LSB_RELEASE)),
    (&["nm"], O(&i::NM)),
    (&["objdump"], O(&i::OBJDUMP)),
    (&["readelf"], O(&i::READELF)),
    (&["size"], O(&i::SIZE)),
    (&["history"], Custom(procs::history)),
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
    (&["helm"], Custom(infra::helm)),
    (&["terraform", "tofu"], Custom(infra::terraform)),
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
        Custom(tools::archiver),
    ),
    (&["vi", "vim", "nvim", "emacs", "ed", "gdb"], Custom(tools::editor)),
    (&["nano", "code"], Fixed(Medium, "opens an editor that can change files")),
    (
        &["make", "cmake", "ninja", "meson", "gradle", "gradlew", "mvn", "ant", "bazel", "just"],
        Fixed(Medium, "builds or runs project tasks (effect unknown)"),
    ),
    (&["ssh-add", "ssh-copy-id", "certbot"], Fixed(Medium, "creates or uses keys and certificates")),
    (&["openssl"], Custom(tools::openssl)),
    (&["gpg", "gpg2"], Custom(tools::gpg)),
    (&["ssh-keygen"], Custom(tools::ssh_keygen)),
    (&["tmux", "screen", "at", "batch", "systemd-run"], Fixed(Medium, "starts something that keeps running")),
    (
        &["strace", "ltrace", "perf", "valgrind", "nsenter", "unshare", "chroot", "firejail"],
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
    (
        &["java", "javac", "rustc", "gcc", "g++", "cc", "clang", "clang++", "dotnet", "kotlin", "scala", "swift"],
        Custom(tools::toolchain),
    ),
    (&["eval"], Custom(shells::eval)),
    (&["sudo", "doas", "pkexec", "run0", "su"], Custom(shells::sudo)),
    (
        &["env", "nice", "nohup", "timeout", "time", "command", "builtin", "exec", "stdbuf", "ionice", "chrt"],
        Custom(shells::wrapper),
    ),
    (&["setsid", "taskset", "coproc", "flock", "watch", "xargs"], Custom(shells::wrapper)),
    (&["set"], Custom(b::set)),
    // ── Destructive or system-wide ───────────────────────────────────────────────────────
    (&["shred", "wipefs", "srm"], Fixed(High, "destroys data irrecoverably")),
    (&["mkfs", "mke2fs", "mkswap", "mkdosfs", "newfs"], Fixed(High, "formats a filesystem")),
    (
        &["cryptsetup", "lvremove", "vgremove", "pvremove", "zpool", "blkdiscard"],
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
    // The model must not reach opsai's own settings, policy, key sources or sandbox through opsai
    // (`opsai config set safety.sandbox off`, `llm.api_key_cmd`, a new `llm.base_url` for the key):
    // High, so no `[a]` grant can ever cover it and a person types `yes` for each.
    (
        &["opsai", "opsai-sandbox-helper"],
        Fixed(High, "runs opsai itself, which can change its own settings, key sources, policy or sandbox"),
    ),
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
pub(crate) fn lookup(name: &str) -> Option<(&'static str, &'static Rule)> {
    if let Some((key, rule)) = INDEX.get_key_value(name) {
        return Some((key, rule));
    }
    let key = family(name)?;
    INDEX.get(key).map(|rule| (key, *rule))
}

/// Applies a rule to an invocation. `--help` or `--version` alone is Safe for every program opsai
/// knows, except the High ones, where a tool that ignores unknown options would act.
pub fn apply<'a>(rule: &Rule, inv: &Invocation<'a>) -> Outcome<'a> {
    if options::is_help_or_version(inv.args) && !matches!(rule, Fixed(High, _)) {
        return Verdict::SAFE.into();
    }
    if options::is_subcommand_help(inv.name, inv.args) {
        return Verdict::SAFE.into();
    }
    match rule {
        O(table) => table.check(inv).into(),
        DataArgs => Verdict::SAFE.into(),
        Fixed(risk, reason) => Verdict { risk: *risk, reason: (*reason).into() }.into(),
        Custom(function) => function(inv),
    }
}

/// Shells that run code from `-c`, a script file, or stdin.
pub(crate) fn is_shell(name: &str) -> bool {
    matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "fish" | "ash" | "busybox" | "csh" | "tcsh")
}

/// Programs that turn text into running code.
pub(crate) fn runs_code(name: &str) -> bool {
    is_shell(name)
        || matches!(lookup(name), Some((key, _)) if matches!(key, "python" | "python2" | "python3" | "perl" | "ruby"
            | "node" | "nodejs" | "php" | "lua" | "deno" | "bun" | "Rscript" | "osascript" | "pwsh" | "source" | "." | "eval"))
}

/// Programs that fetch data from the network onto stdout or a file.
pub(crate) fn is_downloader(name: &str) -> bool {
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
