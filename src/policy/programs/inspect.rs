//! Option tables of the process, system and network inspectors (procps, util-linux, iproute2's
//! cousins, DNS tools, binutils). Options that write a file, change the system or run a program
//! are left out (named in a comment where one exists), so they are Medium.

use super::options::{Operands, Options};

const fn opts(short: &'static str, long: &'static [&'static str]) -> Options {
    Options { short, long, words: &[], numeric: false, operands: Operands::Any }
}

const fn no_operands(short: &'static str, long: &'static [&'static str]) -> Options {
    Options { short, long, words: &[], numeric: false, operands: Operands::AtMost(0) }
}

/// UNIX-style `ps` options (`ps -ef`, `ps -eo pid,comm --sort=-%mem`).
pub(crate) static PS: Options = opts(
    "aAcdefFHjlLMNPTwxyZC:g:G:k:n:o:O:p:q:s:t:u:U:",
    &[
        "format=", "forest", "sort=", "pid=", "ppid=", "user=", "User=", "group=", "Group=", "cols=", "columns=",
        "cumulative", "headers", "no-headers", "width=", "lines=", "rows=", "sid=", "tty=", "deselect", "quick-pid=",
        "context", "info", "signames",
    ],
);

pub(crate) static PGREP: Options = opts(
    "acfilnovwxArd:F:g:G:P:s:t:u:U:",
    &[
        "list-name", "list-full", "newest", "oldest", "inverse", "lightweight", "exact", "count", "full",
        "ignore-case", "pgroup=", "group=", "parent=", "session=", "terminal=", "euid=", "uid=", "delimiter=",
        "pidfile=", "logpidfile", "ns=", "nslist=", "runstates=", "older=", "cgroup=", "env=", "require-handler",
    ],
);
pub(crate) static PIDOF: Options = opts("cnqsxzd:o:S:", &[]);
pub(crate) static PSTREE: Options = opts(
    "aAcglnpsStTuUVZC:H:N:",
    &[
        "arguments", "ascii", "compact-not", "color=", "show-pgids", "vt100", "highlight-all", "highlight-pid=",
        "long", "numeric-sort", "ns-sort=", "show-pids", "show-parents", "ns-changes", "thread-names", "hide-threads",
        "uid-changes", "unicode", "security-context",
    ],
);
pub(crate) static TOP: Options = opts("1bcEeHiOSsd:n:o:p:u:U:w::", &[]);
pub(crate) static HTOP: Options = opts(
    "CHhMtd:F:p:s:u::",
    &[
        "no-color", "no-colour", "tree", "sort-key=", "user[=]", "pid=", "delay=", "filter=", "readonly", "no-mouse",
        "no-meters", "highlight-changes[=]", "no-unicode",
    ],
);
// `-w FILE` writes a raw log: left out.
pub(crate) static ATOP: Options = opts("1aAcCdDfgGlmMnNopPsuvyr:", &[]);
pub(crate) static BTOP: Options = opts("lt", &["low-color", "tty_on", "tty_off", "utf-force", "debug", "preset="]);
pub(crate) static VMSTAT: Options = opts(
    "adDfmnstwyc:p:S:",
    &[
        "active", "forks", "slabs", "one-header", "stats", "disk", "disk-sum", "partition=", "unit=", "timestamp",
        "wide", "no-first",
    ],
);
pub(crate) static IOSTAT: Options = opts("cdhHkmNstxyzg:j:o:p:", &["dec=", "human", "pretty", "compact", "debuginfo"]);
pub(crate) static MPSTAT: Options = opts("ANnTuI:o:P:", &["dec="]);
// `-e PROGRAM` runs a program: left out.
pub(crate) static PIDSTAT: Options = opts("dhHIlRrsStuvwG:p:T:U::", &["dec=", "human"]);
// `-o FILE` writes the samples: left out.
pub(crate) static SAR: Options =
    opts("AbBdFhHpqrSuvWwyze:f:i:I:m:n:P:s:", &["dec=", "human", "sadc", "iface=", "int="]);
pub(crate) static FREE: Options = opts(
    "bghklmtvwc:s:",
    &[
        "bytes", "kilo", "mega", "giga", "tera", "peta", "kibi", "mebi", "gibi", "tebi", "pebi", "human", "si", "lohi",
        "total", "committed", "count=", "seconds=", "wide", "line",
    ],
);
pub(crate) static UPTIME: Options = no_operands("prs", &["pretty", "since", "raw", "container"]);
pub(crate) static W: Options =
    opts("fhinopsu", &["no-header", "no-current", "short", "from", "old-style", "ip-addr", "pids", "no-truncat"]);
pub(crate) static WHO: Options = opts(
    "abdHlmpqrstTuw",
    &[
        "all", "boot", "dead", "heading", "login", "lookup", "process", "count", "runlevel", "short", "time", "mesg",
        "writable", "users", "ips",
    ],
);
pub(crate) static BARE: Options = Options::NONE;
pub static ID: Options = opts("aZgGnruz", &["context", "group", "groups", "name", "real", "user", "zero"]);
pub(crate) static LAST: Options = Options {
    short: "adFiRswxf:n:p:s:t:T",
    long: &[
        "limit=", "file=", "present=", "since=", "until=", "hostlast", "dns", "fullnames", "ip", "nohostname",
        "time-format=", "system", "fulltimes",
    ],
    words: &[],
    numeric: true,
    operands: Operands::Any,
};
// `-C` clears and `-S` sets records: left out.
pub(crate) static LASTLOG: Options = opts("b:t:u:", &["before=", "time=", "user="]);
pub(crate) static UNAME: Options = no_operands(
    "aimnoprsv",
    &[
        "all", "kernel-name", "nodename", "kernel-release", "kernel-version", "machine", "processor",
        "hardware-platform", "operating-system",
    ],
);
pub(crate) static NPROC: Options = no_operands("", &["all", "ignore="]);
pub(crate) static LSCPU: Options = opts(
    "abBJsVxyC::e::p::",
    &[
        "all", "online", "offline", "bytes", "caches[=]", "extended[=]", "parse[=]", "json", "sysroot=", "hex",
        "physical", "output-all", "raw",
    ],
);
pub(crate) static LSMEM: Options = opts(
    "abJnPrSo:",
    &[
        "all", "bytes", "json", "noheadings", "output=", "output-all", "pairs", "raw", "split=", "sysroot=",
        "summary[=]",
    ],
);
// `-H` accesses hardware directly and `-Q` queries a network database: left out.
pub(crate) static LSPCI: Options = opts("bDkmMnNPqtuvxA:d:F:i:O:p:s:", &[]);
pub(crate) static LSUSB: Options = opts("tvVd:D:s:", &["verbose", "tree"]);
pub(crate) static LSBLK: Options = opts(
    "abdDfhiJlmMnOpPrsStTzyAe:E:I:o:Q:x:",
    &[
        "all", "bytes", "nodeps", "discard", "dedup=", "exclude=", "fs", "include=", "ascii", "json", "list", "merge",
        "perms", "noheadings", "output=", "output-all", "paths", "pairs", "raw", "inverse", "topology", "scsi",
        "sort=", "tree[=]", "width=", "zoned", "nvme", "virtio", "filter=", "highlight=", "ct=", "ct-filter=",
        "list-columns", "sysroot=", "properties-by=",
    ],
);
// `-g` garbage-collects and `-c` names the cache file: left out.
pub(crate) static BLKID: Options = opts(
    "dhiklpVL:n:o:O:s:S:t:u:U:",
    &[
        "label=", "uuid=", "output=", "match-tag=", "match-token=", "list-one", "probe", "info", "offset=", "size=",
        "no-part-details", "usages=", "match-types=", "list-filesystems", "no-encoding",
    ],
);
pub(crate) static FINDMNT: Options = opts(
    "AabcDefhiJklmnpPrRsuUvxyzd:F:M:N:o:O:S:t:T:w:",
    &[
        "all", "ascii", "bytes", "canonicalize", "df", "direction=", "evaluate", "fstab", "first-only", "invert",
        "json", "list", "kernel", "mtab", "noheadings", "notruncate", "output=", "output-all", "options=", "pairs",
        "poll[=]", "raw", "submounts", "source=", "target=", "mountpoint=", "types=", "uniq", "verify", "verbose",
        "real", "pseudo", "shadowed", "tree", "id=", "uniq-id=", "nocanonicalize", "task=", "timeout=", "tab-file=",
        "list-columns",
    ],
);
pub(crate) static LSNS: Options = opts(
    "JlnruWo:p:t:T::",
    &[
        "json", "list", "noheadings", "output=", "output-all", "task=", "raw", "notruncate", "nowrap", "type=",
        "tree[=]", "persistent", "filter=",
    ],
);
pub(crate) static LSIPC: Options = opts(
    "bceglJmnPqrstxyi:N:o:",
    &[
        "global", "json", "noheadings", "notruncate", "output=", "raw", "shell", "shmems", "queues", "semaphores",
        "posix-shmems", "posix-mqueues", "posix-semaphores", "human", "bytes", "time", "creator", "export", "id=",
        "name=", "newline", "numeric-perms",
    ],
);
pub(crate) static LSLOCKS: Options = opts(
    "bJinruo:p:",
    &["bytes", "json", "noinaccessible", "noheadings", "output=", "output-all", "pid=", "raw", "notruncate"],
);
pub(crate) static GETCONF: Options = opts("av:", &["all"]);
pub(crate) static GETENT: Options = opts("iA:s:", &["service=", "no-idn", "no-addrconfig"]);
pub(crate) static TTY: Options = no_operands("s", &["silent", "quiet"]);
pub(crate) static LOCALE: Options =
    opts("acekmv", &["all-locales", "category-name", "keyword-name", "charmaps", "verbose"]);
pub(crate) static CAL: Options = opts(
    "13jmsSvwyYA:B:c:n:",
    &[
        "one", "three", "julian", "monday", "sunday", "week[=]", "year", "twelve", "months=", "span", "reform=", "iso",
        "color[=]", "vertical", "columns=",
    ],
);
/// lsof: `+L1`, `+D dir` and `-i :80` are operands or attached values. `-i`, `-o`, `-r`, `-S`,
/// `-T`, `-g`, `-F`, `-D` take an optional value attached.
pub(crate) static LSOF: Options = opts("abClKLMnNOPQRtUvVwXxzZc:d:e:k:m:p:s:u:D::F::g::i::o::r::S::T::", &[]);
pub(crate) static NETSTAT: Options = opts(
    "46acCeFghilLMnNoprsStTuvwWxZA:f:I:",
    &[
        "route", "groups", "interfaces[=]", "masquerade", "statistics", "verbose", "wide", "numeric", "numeric-hosts",
        "numeric-ports", "numeric-users", "symbolic", "extend", "timers", "program", "listening", "all", "continuous",
        "tcp", "udp", "raw", "unix", "inet", "inet6", "protocol=", "sctp", "udplite",
    ],
);
pub(crate) static NSLOOKUP: Options = Options {
    short: "",
    long: &[],
    words: &[
        "type=", "query=", "querytype=", "port=", "timeout=", "retry=", "debug", "nodebug", "d2", "nod2", "vc", "novc",
        "recurse", "norecurse", "search", "nosearch", "domain=", "class=", "fail", "nofail", "ndots=",
    ],
    numeric: false,
    operands: Operands::Any,
};
pub static HOST: Options = opts("46aACdilrsTUvVwc:m:N:R:t:W:", &[]);
// `dig -f FILE` reads a batch file; `-k`/`-y` use TSIG keys (the path check sees the file).
pub(crate) static DIG: Options = opts("46hirumvb:c:f:k:p:q:t:x:y:", &[]);
// `drill -w FILE` writes the answer: left out.
pub(crate) static DRILL: Options = opts("46aDhQrsSTvVxc:i:k:o:p:r:y:", &[]);
pub(crate) static WHOIS: Options =
    opts("aAbBcdGHIKlLmMqQrRxg:h:i:p:s:t:T:v:", &["verbose", "no-recursion", "host=", "port=", "help", "version"]);
// `ping -f` floods: left out.
pub(crate) static PING: Options = opts("4678aAbBdDLnoOqrRUvzc:e:F:i:I:l:m:M:N:p:Q:s:S:t:T:w:W:", &[]);
pub(crate) static TRACEROUTE: Options = opts(
    "46AdeFIlnrTUVf:g:i:m:M:N:O:p:P:q:s:t:w:z:",
    &[
        "icmp", "tcp", "udp", "sport=", "mtu", "back", "resolve-hostnames", "max-hop=", "first=", "port=", "queries=",
        "wait=", "interface=", "source=",
    ],
);
pub(crate) static TRACEPATH: Options = opts("46bnl:m:p:", &[]);
pub(crate) static MTR: Options = opts(
    "46bbCeghjnrtuwxza:B:c:f:G:i:I:L:m:M:o:P:Q:s:T:U:Y:",
    &[
        "report", "report-wide", "report-cycles=", "no-dns", "show-ips", "json", "csv", "xml", "tcp", "udp", "port=",
        "interval=", "max-ttl=", "first-ttl=", "curses", "split", "raw", "displaymode=", "aslookup", "psize=",
        "gracetime=", "tos=", "timeout=", "address=", "order=", "bitpattern=", "mpls", "max-unknown=", "localport=",
        "mark=", "gtk", "mtr",
    ],
);
// `sensors -s` writes chip limits: left out.
pub(crate) static SENSORS: Options = opts("Afjuvc:", &["config-file=", "no-adapter", "fahrenheit", "json", "bus-list"]);
pub(crate) static NM: Options = opts(
    "aABCDegjlnoPprsSuvVf:t:",
    &[
        "debug-syms",
        "demangle[=]",
        "dynamic",
        "defined-only",
        "extern-only",
        "format=",
        "line-numbers",
        "numeric-sort",
        "no-sort",
        "portability",
        "print-armap",
        "print-file-name",
        "print-size",
        "radix=",
        "reverse-sort",
        "size-sort",
        "special-syms",
        "synthetic",
        "undefined-only",
        "with-symbol-versions",
        "without-symbol-versions",
        "target=",
        "quiet",
        "no-demangle",
        "unicode=",
    ],
);
pub(crate) static OBJDUMP: Options = opts(
    "aCdDeEfFgGhHilrRsStTvVWwxzb:I:j:m:M:P:",
    &[
        "disassemble[=]", "disassemble-all", "source", "syms", "dynamic-syms", "headers", "section-headers",
        "all-headers", "file-headers", "private-headers", "reloc", "dynamic-reloc", "full-contents", "demangle[=]",
        "line-numbers", "section=", "architecture=", "disassembler-options=", "start-address=", "stop-address=",
        "prefix-addresses", "show-raw-insn", "no-show-raw-insn", "wide", "dwarf[=]", "debugging", "stabs", "private=",
        "insn-width=", "visualize-jumps[=]", "no-addresses", "source-comment[=]", "target=", "endian=",
        "disassembler-color=", "no-recurse-limit", "recurse-limit",
    ],
);
pub(crate) static READELF: Options = opts(
    "aAcdDeghIlnNrsStTuVWwxp:R:",
    &[
        "all", "file-header", "program-headers", "segments", "section-headers", "sections", "section-groups",
        "section-details", "headers", "syms", "symbols", "dyn-syms", "lto-syms", "notes", "relocs", "unwind",
        "dynamic", "version-info", "arch-specific", "use-dynamic", "archive-index", "hex-dump=", "string-dump=",
        "relocated-dump=", "debug-dump[=]", "wide", "demangle[=]", "histogram", "ctf=", "sym-base=", "got-contents",
    ],
);
pub(crate) static SIZE: Options = opts("ABdGotx", &["format=", "radix=", "common", "totals", "target="]);
/// `history [N]` and `history -p`; `-c`, `-d`, `-w`… are rated by `system::read_only_with_history`.
pub static HISTORY: Options = opts("p", &[]);
// `-d`, `-s`, `-f` change the ARP table: left out.
pub(crate) static ARP: Options =
    opts("aenvDH:i:t:", &["all", "numeric", "verbose", "device=", "hw-type=", "use-device"]);
// Left out: `-K/--kill` (kills sockets), `-D/--diag` (writes a dump).
pub(crate) static SS: Options = opts(
    "046abeEhHilmMnNOprsStTuvVwxzZA:f:F:",
    &[
        "no-header", "numeric", "resolve", "all", "listening", "options", "extended", "memory", "processes", "threads",
        "info", "tos", "cgroup", "tipcinfo", "summary", "events", "context", "contexts", "net=", "bpf", "bpf-maps",
        "oneline", "ipv4", "ipv6", "packet", "tcp", "udp", "dccp", "raw", "unix", "sctp", "vsock", "xdp", "mptcp",
        "inet-sockets", "family=", "query=", "socket=", "filter=",
    ],
);
pub(crate) static CTL: Options = opts(
    "alp:n:o:M:",
    &[
        "no-pager", "no-legend", "json=", "value", "all", "property=", "machine=", "static", "transient", "pretty",
        "full", "lines=", "output=", "no-ask-password", "user", "system",
    ],
);
pub(crate) static DMESG: Options = opts(
    "dehHkPrStTuwxL::f:F:K:l:s:",
    &[
        "ctime", "human", "follow", "follow-new", "level=", "facility=", "kernel", "userspace", "decode", "raw",
        "notime", "time-format=", "since=", "until=", "reltime", "nopager", "color[=]", "show-delta", "syslog",
        "force-prefix", "json", "file=", "buffer-size=", "kmsg-file=", "noescape",
    ],
);
pub(crate) static SYSCTL: Options =
    opts("abAdeNnqXr:", &["all", "binary", "deprecated", "ignore", "names", "values", "quiet", "pattern="]);
pub(crate) static DATE: Options = opts(
    "juRI::d:f:r:v:",
    &[
        "date=", "file=", "iso-8601[=]", "rfc-email", "rfc-3339=", "rfc-822", "reference=", "utc", "universal",
        "debug", "resolution",
    ],
);
pub(crate) static HOSTNAME: Options = opts(
    "aAdfiIsvy",
    &[
        "alias", "all-fqdns", "domain", "fqdn", "long", "ip-address", "all-ip-addresses", "short", "yp", "nis",
        "verbose",
    ],
);
pub(crate) static IFCONFIG: Options = opts("asv", &[]);
pub(crate) static ROUTE: Options = opts("CeFnvA:", &["extend", "numeric", "verbose", "fib", "cache"]);
pub(crate) static IPTABLES: Options = opts(
    "46LnSvwxt:W:",
    &["list[=]", "list-rules", "numeric", "verbose", "exact", "line-numbers", "table=", "wait[=]", "wait-interval="],
);
pub(crate) static NFT: Options = opts(
    "acjnNsStTuyI:",
    &[
        "check", "json", "numeric", "stateless", "handle", "echo", "terse", "guid", "numeric-priority",
        "numeric-protocol", "numeric-time", "service", "reversedns", "includepath=",
    ],
);
pub(crate) static PFCTL: Options = opts("gnqvs:", &[]);
pub(crate) static CRONTAB_LIST: Options = no_operands("lu:", &[]);
pub(crate) static MOUNT_LIST: Options =
    no_operands("lht:", &["list", "show-labels", "types=", "summary", "show", "noheadings", "bytes", "output=", "raw"]);
pub(crate) static SUDO_LIST: Options = opts(
    "kKlnvVU:u:g:h:",
    &[
        "list", "validate", "reset-timestamp", "remove-timestamp", "non-interactive", "other-user=", "user=", "group=",
        "host=",
    ],
);
pub(crate) static LSB_RELEASE: Options =
    opts("acdirsv", &["all", "id", "description", "release", "codename", "short", "version"]);
