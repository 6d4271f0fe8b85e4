//! System administration: services, logs, processes, networking, firewalls, disks, packages and
//! the clock. Each function keeps its read-only subcommands and its dangerous ones side by side.

use super::inspect;
use super::options::{Operands, Options};
use super::{by_subcommand, skip_options};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Nested, Outcome, Verdict};

/// Readers that can also set the hostname, clock or kernel state.
pub(crate) fn clocks_and_kernel<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let positionals = inv.positionals();
    let first = positionals.first().map(|w| w.text.as_str());
    match inv.name {
        "hostname" if inv.has_short('F') || inv.has_short('b') || inv.has_long("--file") || first.is_some() => {
            Verdict::high("changes the hostname").into()
        }
        "hostnamectl" | "timedatectl" | "loginctl"
            if first.is_some_and(|sub| {
                !(sub == "status"
                    || sub == "show"
                    || sub.starts_with("list")
                    || sub.ends_with("-status")
                    || sub.starts_with("show-"))
            }) =>
        {
            match inv.name {
                "hostnamectl" => Verdict::high("changes the hostname"),
                "timedatectl" => Verdict::high("changes the system clock or time zone"),
                _ => Verdict::medium("changes login sessions"),
            }
            .into()
        }
        "date" if date_set_option(inv) || inv.has_long("--set") || date_sets_clock(inv) => {
            Verdict::high("sets the system clock").into()
        }
        "dmesg"
            if inv.has_short('C') || inv.has_short('c') || inv.has_long("--clear") || inv.has_long("--read-clear") =>
        {
            Verdict::high("clears the kernel log").into()
        }
        "dmesg"
            if inv.has_short('n') || inv.has_short('D') || inv.has_short('E') || inv.has_long("--console-level") =>
        {
            Verdict::medium("changes kernel console logging").into()
        }
        "sysctl"
            if inv.has_short('w')
                || inv.has_short('p')
                || inv.has_short('f')
                || inv.has_long("--load")
                || inv.has_long("--system")
                || positionals.iter().any(|w| w.text.contains('=')) =>
        {
            Verdict::high("changes kernel settings system-wide").into()
        }
        "hostname" => inspect::HOSTNAME.check(inv).into(),
        "date" => inspect::DATE.check(inv).into(),
        "dmesg" => inspect::DMESG.check(inv).into(),
        "sysctl" => inspect::SYSCTL.check(inv).into(),
        _ if inv.has_word(&["-H"]) || inv.has_long("--host") => {
            Verdict::medium("-H connects to another host over ssh").into()
        }
        _ => inspect::CTL.check(inv).into(),
    }
}

/// `-s TIME` alone or in a cluster, but not the `s` inside an attached value (`-Iseconds`).
fn date_set_option(inv: &Invocation) -> bool {
    inv.texts().take_while(|t| *t != "--").any(|text| {
        let Some(cluster) = text.strip_prefix('-').filter(|c| !c.starts_with('-')) else {
            return false;
        };
        for letter in cluster.chars() {
            match letter {
                's' => return true,
                'd' | 'f' | 'r' | 'v' | 'I' => return false,
                _ => {}
            }
        }
        false
    })
}

/// `date MMDDhhmm`: a positional that is not a `+FORMAT` (and not an option's value) sets the clock.
fn date_sets_clock(inv: &Invocation) -> bool {
    let mut skip = false;
    for word in inv.args {
        let text = word.text.as_str();
        if skip {
            skip = false;
        } else if matches!(text, "-d" | "--date" | "-r" | "--reference" | "-f" | "--file" | "-I" | "--iso-8601") {
            skip = !matches!(text, "-I" | "--iso-8601");
        } else if !text.starts_with('-') && !text.starts_with('+') {
            return true;
        }
    }
    false
}

/// `mount`/`umount`/`swapon`/`swapoff`: listing is read-only.
pub fn mounts<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let listing = inv.args.is_empty()
        || inv.has_word(&["-l", "--list", "-s", "--summary", "--show", "-h", "--help", "-V", "--version"]);
    let everything = inv.has_short('a') || inv.has_long("--all");
    if listing && !everything && inv.positionals().is_empty() {
        return inspect::MOUNT_LIST.check(inv).into();
    }
    match inv.name {
        "swapoff" => Verdict::high("turns swap off (memory pressure can kill processes)").into(),
        "umount" => Verdict::medium("unmounts a filesystem").into(),
        "swapon" => Verdict::medium("turns swap on").into(),
        _ => Verdict::medium("mounts a filesystem").into(),
    }
}

/// `ip`: `show`/`list`/`get` read; `down`, `flush` and deletions can cut this host off the network.
pub(crate) fn ip<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.has_word(&["-b", "-batch", "-force"]) {
        return Verdict::medium("runs ip commands from a file or stdin").into();
    }
    let start = skip_options(inv.args, &["-n", "-netns", "-rc", "-rcvbuf", "-f", "-family", "-l", "-loops"]);
    // iproute2 takes any prefix of its option words (`-br`, `-brie`); only these spellings are known.
    const IP_GLOBAL: Options = Options {
        short: "",
        long: &["json", "pretty", "brief", "color[=]", "details", "stats", "oneline", "resolve", "numeric"],
        words: &[
            "4", "6", "0", "B", "M", "V", "h", "human", "human-readable", "iec", "s", "stats", "statistics", "d",
            "details", "r", "resolve", "o", "oneline", "t", "timestamp", "ts", "tshort", "f=", "family=", "l=",
            "loops=", "c", "color", "col", "br", "brief", "j", "json", "p", "pretty", "n=", "netns=", "a", "all", "N",
            "Numeric", "rc=", "rcvbuf=",
        ],
        numeric: false,
        operands: Operands::Any,
    };
    if let Some(problem) = IP_GLOBAL.first_unknown(inv.args.get(..start).unwrap_or(&[])) {
        return Verdict::medium(problem).into();
    }
    let rest: Vec<&str> = inv.args.get(start..).unwrap_or(&[]).iter().map(|w| w.text.as_str()).collect();
    let Some(object) = rest.first() else {
        return Verdict::SAFE.into();
    };
    if *object == "netns" && rest.get(1) == Some(&"exec") {
        let words = inv.args.get(start + 3..).unwrap_or(&[]);
        return Outcome::from(Verdict::medium("runs a command in another network namespace"))
            .then(Nested::Exec { words, bulk: false });
    }
    let action = rest.get(1).copied().unwrap_or("show");
    if matches!(action, "show" | "list" | "ls" | "lst" | "get" | "help")
        || *object == "monitor"
        || action.starts_with('-')
    {
        return Verdict::SAFE.into();
    }
    if rest.contains(&"down") || matches!(action, "flush" | "del" | "delete") {
        return Verdict::high("can take the network down (interface down, flush or delete)").into();
    }
    Verdict::medium("changes network configuration").into()
}

/// `ifconfig`/`route` without changes only print.
pub(crate) fn ifconfig<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let positionals = inv.positionals();
    if positionals.iter().any(|w| w.text == "down" || w.text == "del") {
        return Verdict::high("can take the network down").into();
    }
    let reads = match inv.name {
        "route" => positionals.is_empty(),
        _ => positionals.len() <= 1,
    };
    if !reads {
        return Verdict::medium("changes network configuration").into();
    }
    let table = if inv.name == "route" { &inspect::ROUTE } else { &inspect::IFCONFIG };
    table.check(inv).into()
}

/// Firewalls: listing reads, flushing or disabling opens the host, other rules change it.
pub(crate) fn firewall<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let positionals: Vec<&str> = inv.positionals().iter().map(|w| w.text.as_str()).collect();
    let first = positionals.first().copied().unwrap_or("");
    let (open, read) = match inv.name {
        "nft" => (
            matches!(first, "flush" | "delete"),
            matches!(first, "list" | "monitor" | "describe") || positionals.is_empty(),
        ),
        "ufw" => (
            matches!(first, "disable" | "reset"),
            matches!(first, "status" | "show" | "version" | "app") || positionals.is_empty(),
        ),
        "firewall-cmd" => (
            inv.has_long("--panic-off") || inv.has_long("--remove-service") || inv.has_long("--set-default-zone"),
            inv.texts().all(|t| {
                t.starts_with("--list")
                    || t.starts_with("--get")
                    || t.starts_with("--query")
                    || t == "--state"
                    || t.starts_with("--zone")
                    || t == "--permanent"
            }),
        ),
        "pfctl" => (inv.has_short('d') || inv.has_short('F'), inv.has_short('s') && !inv.has_short('f')),
        _ => (
            inv.has_short('F')
                || inv.has_long("--flush")
                || inv.has_short('X')
                || inv.has_long("--delete-chain")
                || inv.has_short('P')
                || inv.has_long("--policy"),
            (inv.has_short('L') || inv.has_long("--list") || inv.has_short('S') || inv.has_long("--list-rules"))
                && !(inv.has_short('A')
                    || inv.has_short('I')
                    || inv.has_short('D')
                    || inv.has_short('R')
                    || inv.has_short('N')),
        ),
    };
    if open {
        return Verdict::high("flushes or disables the firewall").into();
    }
    if !read {
        return Verdict::medium("changes firewall rules").into();
    }
    match inv.name {
        "nft" => inspect::NFT.check(inv).into(),
        "pfctl" => inspect::PFCTL.check(inv).into(),
        "ufw" | "firewall-cmd" => Verdict::SAFE.into(),
        _ => inspect::IPTABLES.check(inv).into(),
    }
}

/// Units whose stopping cuts access, opens the host or hides what happens.
fn critical_unit(unit: &str) -> Option<&'static str> {
    let unit = unit.trim_end_matches(".service").trim_end_matches(".socket");
    match unit {
        "firewalld" | "ufw" | "nftables" | "iptables" | "ip6tables" | "netfilter-persistent" | "apparmor" => {
            Some("disables the firewall or security enforcement")
        }
        "ssh" | "sshd" | "network" | "networking" | "NetworkManager" | "systemd-networkd" | "systemd-resolved"
        | "wpa_supplicant" | "dbus" => Some("can cut network or remote access"),
        "systemd-journald" | "rsyslog" | "syslog" | "auditd" | "syslog-ng" => Some("stops system logging"),
        _ => None,
    }
}

pub fn systemctl<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const WITH_VALUE: &[&str] = &[
        "-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property", "-n", "--lines", "-o", "--output", "-s",
        "--signal", "--state", "--root", "--job-mode", "--kill-whom", "--what", "--timestamp", "--boot-loader-entry",
        "--message",
    ];
    const SAFE: &[&str] = &[
        "status", "show", "cat", "list-units", "list-unit-files", "list-sockets", "list-timers", "list-jobs",
        "list-dependencies", "list-machines", "list-automounts", "list-paths", "is-active", "is-enabled", "is-failed",
        "is-system-running", "get-default", "help", "--version",
    ];
    const HIGH: &[(&[&str], &str)] = &[
        (
            &[
                "poweroff", "reboot", "halt", "kexec", "soft-reboot", "suspend", "hibernate", "hybrid-sleep",
                "suspend-then-hibernate",
            ],
            "restarts, stops or suspends the machine",
        ),
        (&["rescue", "emergency", "isolate", "default", "switch-root"], "switches the whole system to another target"),
        (&["set-default"], "changes what the system boots into"),
    ];
    let Some((index, sub)) = inv.subcommand(WITH_VALUE) else {
        return SYSTEMCTL.check(inv).into();
    };
    if matches!(sub, "stop" | "disable" | "mask" | "kill" | "restart" | "try-restart" | "reload-or-restart" | "freeze")
    {
        let units = inv.after(index).positionals();
        if let Some(reason) = units.iter().find_map(|u| critical_unit(&u.text))
            && sub != "restart"
            && sub != "try-restart"
            && sub != "reload-or-restart"
        {
            return Verdict::high(reason).into();
        }
    }
    if sub == "show-environment" {
        return Verdict::medium("prints the service manager's environment (can hold tokens)").into();
    }
    let verdict = by_subcommand(sub, SAFE, HIGH, "changes a service");
    if verdict.risk != crate::protocol::Risk::Safe {
        return verdict.into();
    }
    if inv.has_word(&["-H"]) || inv.has_long("--host") {
        return Verdict::medium("-H connects to another host over ssh").into();
    }
    SYSTEMCTL.check(inv).into()
}

/// Options of systemctl's read-only commands. `-H/--host` (ssh to another host) is left out.
static SYSTEMCTL: Options = Options {
    short: "afilqrM:n:o:p:P:s:t:",
    long: &[
        "no-pager", "no-legend", "all", "full", "plain", "user", "system", "global", "quiet", "type=", "state=",
        "property=", "value", "lines=", "output=", "recursive", "reverse", "after", "before", "failed", "show-types",
        "with-dependencies", "machine=", "legend=", "timestamp=", "no-ask-password", "firmware-setup", "root=",
        "runtime", "signal=", "kill-whom=", "what=", "job-mode=", "check-inhibitors=", "wait", "no-block", "no-reload",
        "preset-mode=", "marked", "no-warn", "capsule=", "json=",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

pub fn service<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let positionals = inv.positionals();
    let unit = positionals.first().map(|w| w.text.as_str()).unwrap_or("");
    let action = positionals.get(1).map(|w| w.text.as_str()).unwrap_or("");
    let options_known = inv.texts().all(|t| !t.starts_with('-') || t == "--status-all");
    let reads = inv.args.is_empty()
        || inv.texts().eq(["--status-all"])
        || matches!(action, "status" | "") && !unit.is_empty() && positionals.len() <= 2;
    if reads && options_known {
        return Verdict::SAFE.into();
    }
    if action == "stop"
        && let Some(reason) = critical_unit(unit)
    {
        return Verdict::high(reason).into();
    }
    Verdict::medium("changes a service").into()
}

pub fn journalctl<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if ["--vacuum-size", "--vacuum-time", "--vacuum-files"].iter().any(|o| inv.has_long(o)) {
        return Verdict::high("deletes journal logs").into();
    }
    if [
        "--rotate", "--flush", "--sync", "--relinquish-var", "--smart-relinquish-var", "--setup-keys",
        "--update-catalog", "--cursor-file",
    ]
    .iter()
    .any(|o| inv.has_long_exact(o))
    {
        return Verdict::medium("changes the journal or writes a file").into();
    }
    JOURNALCTL.check(inv).into()
}

/// journalctl's reading options; `--cursor-file` (writes the cursor back) is left out.
static JOURNALCTL: Options = Options {
    short: "aeEfhklmNqrxb::n::c:D:F:g:i:I:M:o:p:S:t:T:u:U:",
    long: &[
        "since=", "until=", "unit=", "user-unit=", "identifier=", "exclude-identifier=", "priority=", "facility=",
        "grep=", "case-sensitive[=]", "output=", "output-fields=", "lines[=]", "no-tail", "no-pager", "no-hostname",
        "no-full", "full", "all", "boot[=]", "list-boots", "dmesg", "system", "user", "utc", "directory=", "file=",
        "root=", "namespace=", "merge", "cursor=", "after-cursor=", "show-cursor", "follow", "reverse", "pager-end",
        "quiet", "catalog", "field=", "fields", "disk-usage", "list-catalog", "dump-catalog", "header", "verify",
        "invocation=", "list-invocations", "list-namespaces", "machine=", "truncate-newline", "list-fields",
        "output-fields=", "synchronize-on-exit=",
    ],
    words: &[],
    numeric: true,
    operands: Operands::Any,
};

pub(crate) fn crontab<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.has_short('r') {
        return Verdict::high("removes all cron jobs").into();
    }
    if inv.has_short('l') && inspect::CRONTAB_LIST.first_unknown(inv.args).is_none() {
        return Verdict::SAFE.into();
    }
    Verdict::high("installs cron jobs (commands that run on a schedule)").into()
}

/// `kill`: one named process is Medium; init, every process or process groups are High.
pub fn kill<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.has_word(&["-l", "-L", "--list", "--table"]) {
        return Verdict::SAFE.into();
    }
    let texts: Vec<&str> = inv.texts().collect();
    let mut targets: Vec<usize> = Vec::new();
    let mut i = 0;
    let mut signal_seen = false;
    let mut after_dashes = false;
    while i < texts.len() {
        let text = texts[i];
        if !after_dashes && text == "--" {
            after_dashes = true;
        } else if !after_dashes && matches!(text, "-s" | "-n" | "--signal") {
            i += 1;
            signal_seen = true;
        } else if !after_dashes && !signal_seen && text.starts_with('-') && texts.len() > 1 {
            signal_seen = true;
        } else {
            targets.push(i);
        }
        i += 1;
    }
    if texts.len() == 1 && texts[0] == "-1" {
        return Verdict::high("signals every process you can reach").into();
    }
    for &index in &targets {
        let word = &inv.args[index];
        match word.text.as_str() {
            "1" => return Verdict::high("signals init (pid 1)").into(),
            "-1" => return Verdict::high("signals every process you can reach").into(),
            "0" => return Verdict::high("signals the whole process group").into(),
            t if t.starts_with('-') => {
                return Verdict::high("signals a whole process group").into();
            }
            _ if !word.subs.is_empty() => {
                return Verdict::high("kills processes chosen at run time").into();
            }
            _ => {}
        }
    }
    let names: Vec<&str> = targets.iter().map(|&i| texts[i]).collect();
    Verdict::medium(format!("sends a signal to process {}", names.join(" "))).into()
}

/// Partition tools: printing the table is read-only; everything else rewrites a disk. Each tool
/// has its own listing options (`parted -s` is script mode, not a listing).
pub(crate) fn partitioning<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let (listing, table): (&[&str], Options) = match inv.name {
        "fdisk" => (
            &["-l", "--list", "-x", "--list-details"],
            Options {
                short: "lxbBcuLo:s:t:",
                long: &["list", "list-details", "bytes", "output=", "type=", "color[=]", "sector-size=", "lock[=]"],
                ..Options::NONE
            },
        ),
        "sfdisk" => (
            &[
                "-l", "--list", "-d", "--dump", "-s", "--show-size", "-J", "--json", "-F", "--list-free", "-V",
                "--verify",
            ],
            Options {
                short: "dFJlrsVX:o:",
                long: &[
                    "list", "dump", "show-size", "json", "list-free", "verify", "bytes", "output=", "color[=]",
                    "label=", "lock[=]", "quiet",
                ],
                ..Options::NONE
            },
        ),
        "gdisk" | "sgdisk" => (
            &["-l", "-p", "--print", "-v", "--verify", "-i", "--info"],
            Options { short: "lpvi:", long: &["print", "verify", "info="], ..Options::NONE },
        ),
        "parted" => {
            (&["-l", "--list"], Options { short: "lms", long: &["list", "machine", "script"], ..Options::NONE })
        }
        _ => (&[], Options::NONE),
    };
    let parted_print = inv.name == "parted"
        && inv.positionals().iter().skip(1).all(|w| {
            matches!(
                w.text.as_str(),
                "print" | "unit" | "s" | "B" | "MB" | "GB" | "MiB" | "GiB" | "%" | "chs" | "cyl" | "compact"
            )
        })
        && inv.positionals().iter().any(|w| w.text == "print");
    if inv.has_word(listing) || parted_print {
        return table.check(inv).into();
    }
    Verdict::high("changes disk partitions").into()
}
