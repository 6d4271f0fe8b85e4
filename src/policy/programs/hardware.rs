//! Hardware, storage and service inspectors whose read forms are everyday SRE work, each behind
//! the options that only read: `smartctl -a`, `mdadm --detail`, LVM's `pvs`/`vgs`/`lvs`,
//! `nvidia-smi`, `numactl --hardware`, `modinfo`, `dmidecode`, `ethtool IFACE`, `nginx -t`,
//! `apachectl -S`, `resolvectl status`, `gzip -l`. Any other form keeps the program's old rating.

use super::options::{Operands, Options};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

static SMARTCTL_READ: Options = Options {
    short: "aAxHijicl:d:T:n:f:",
    long: &[
        "all", "xall", "health", "info", "attributes", "capabilities", "json[=]", "log=", "device=", "tolerance=",
        "nocheck=", "format=", "scan", "scan-open", "badsum=", "quietmode=", "vendorattribute=",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

static MDADM_READ: Options = Options {
    short: "DEQsbv",
    long: &["detail", "examine", "query", "scan", "brief", "verbose", "export", "detail-platform"],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

/// `pvs`, `vgs`, `lvs` and the `*display` commands only report.
static LVM_REPORT: Options = Options {
    short: "acdmqvCPS:O:o:",
    long: &[
        "all", "aligned", "binary", "noheadings", "nosuffix", "readonly", "reportformat=", "rows", "separator=",
        "segments", "sort=", "options=", "select=", "units=", "unbuffered", "verbose", "maps", "columns", "short",
        "nameprefixes", "unquoted", "shared", "foreign", "ignorelockingfailure", "headings=", "history",
        "configreport=",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

static NVIDIA_SMI_READ: Options = Options {
    short: "Lqxi:d:f:l:u:",
    long: &[
        "list-gpus", "query", "xml-format", "id=", "display=", "query-gpu=", "query-compute-apps=", "format=", "loop=",
        "loop-ms=", "filename=",
    ],
    words: &[],
    numeric: false,
    operands: Operands::AtMost(1),
};

static NUMACTL_READ: Options =
    Options { short: "Hs", long: &["hardware", "show"], words: &[], numeric: false, operands: Operands::AtMost(0) };

static MODINFO_READ: Options = Options {
    short: "0aFdlpnk:b:",
    long: &["author", "description", "license", "parameters", "filename", "field=", "null", "basedir=", "set-version="],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

static DMIDECODE_READ: Options = Options {
    short: "qus:t:H:",
    long: &["quiet", "string=", "type=", "handle=", "dump", "no-sysfs", "oem-string=", "list-strings", "list-types"],
    words: &[],
    numeric: false,
    operands: Operands::AtMost(0),
};

static ETHTOOL_READ: Options = Options {
    short: "ikgcSTmPdI",
    long: &[
        "driver", "show-features", "show-offload", "show-ring", "show-coalesce", "statistics", "show-time-stamping",
        "module-info", "show-permaddr", "show-pause", "show-channels", "show-eee", "show-fec", "include-statistics",
        "json", "show-priv-flags",
    ],
    words: &[],
    numeric: false,
    operands: Operands::AtMost(1),
};

static GZIP_LIST: Options = Options {
    short: "lvqN",
    long: &["list", "verbose", "quiet", "name"],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

/// The read forms; `None` means this program has no read table and keeps its old rating.
fn read_table(name: &str) -> Option<&'static Options> {
    Some(match name {
        "smartctl" => &SMARTCTL_READ,
        "mdadm" => &MDADM_READ,
        "pvs" | "vgs" | "lvs" | "pvdisplay" | "vgdisplay" | "lvdisplay" => &LVM_REPORT,
        "nvidia-smi" => &NVIDIA_SMI_READ,
        "numactl" => &NUMACTL_READ,
        "modinfo" => &MODINFO_READ,
        "dmidecode" => &DMIDECODE_READ,
        "ethtool" => &ETHTOOL_READ,
        _ => return None,
    })
}

/// The programs above with a read table: Safe within it, Medium (or the given risk) outside.
pub(crate) fn inspector<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let Some(table) = read_table(inv.name) else {
        return Verdict::medium(format!("{} (effect unknown)", inv.name)).into();
    };
    // `mdadm` without a query option assembles, grows or stops arrays; `smartctl -t` runs a test,
    // `-s on`/`-o on` change settings.
    let query = match inv.name {
        "mdadm" => inv.args.iter().any(|w| {
            matches!(w.text.as_str(), "-D" | "--detail" | "-E" | "--examine" | "-Q" | "--query" | "--detail-platform")
        }),
        "smartctl" => !inv.texts().any(|t| t.starts_with("-t") || t.starts_with("--test")),
        "nvidia-smi" => inv.args.is_empty() || table.first_unknown(inv.args).is_none(),
        _ => true,
    };
    if !query {
        let risk = if inv.name == "mdadm" {
            Verdict::high("changes disks or volumes")
        } else {
            Verdict::medium("changes device settings or starts a test")
        };
        return risk.into();
    }
    table.check(inv).into()
}

/// `nginx -t`/`-T`/`-V`, `apachectl -S`/`-t`/`-M`: test and print the configuration.
pub(crate) fn web_server<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const READ: &[&str] = &["-t", "-T", "-V", "-v", "-S", "-M", "-l", "-L", "configtest", "-tq", "-qt", "-h"];
    let known = !inv.args.is_empty() && inv.args.iter().all(|w| !w.dynamic && READ.contains(&w.text.as_str()));
    // `-T` and `apachectl -S` print the whole configuration; secrets in it are the redactor's.
    if known {
        return Verdict::SAFE.into();
    }
    Verdict::medium(format!("{} starts, stops or signals the server", inv.name)).into()
}

/// `resolvectl status|dns|domain|statistics|query` and friends, without changing anything.
pub(crate) fn resolvectl<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const READ: &[&str] = &[
        "status", "statistics", "query", "service", "openpgp", "tlsa", "show-cache", "show-server-state", "log-level",
    ];
    let sub = inv.args.iter().find(|w| !w.text.starts_with('-')).map(|w| w.text.as_str()).unwrap_or("status");
    let setting = matches!(sub, "dns" | "domain" | "default-route" | "llmnr" | "mdns" | "dnssec" | "dnsovertls")
        && inv.args.iter().filter(|w| !w.text.starts_with('-')).count() > 2;
    if READ.contains(&sub) && !(sub == "log-level" && inv.args.len() > 1) || matches!(sub, "dns" | "domain") && !setting
    {
        return Verdict::SAFE.into();
    }
    Verdict::medium("changes resolver settings").into()
}

/// `gzip -l`/`xz -l`/`zstd -l`: list an archive's sizes; anything else compresses or decompresses.
pub(crate) fn compressor_listing(inv: &Invocation) -> bool {
    matches!(inv.name, "gzip" | "gunzip" | "xz" | "unxz" | "zstd" | "unzstd")
        && inv.texts().any(|t| t == "-l" || t == "--list")
        && GZIP_LIST.first_unknown(inv.args).is_none()
}
