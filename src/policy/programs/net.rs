//! Programs that talk to other hosts: downloads are read-only only while nothing is written or
//! uploaded; remote commands are assessed like local ones and are at least Medium; sending files
//! off the host is High.

use super::options::{Operands, Options};
use super::{is_stdin, join_code, skip_options, write_target};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Nested, Outcome, Verdict};
use crate::policy::word::Word;

/// Cloud metadata addresses, in every spelling and for every program, are the engine's check
/// (`paths::metadata`).
fn common(inv: &Invocation) -> Option<Verdict> {
    if inv.any_dynamic() {
        return Some(Verdict::medium("the request is built from values computed at run time (could leak data)"));
    }
    None
}

/// Short curl options that take a value (`-o FILE`, `-oFILE`, or last in a cluster `-sSLo FILE`).
const CURL_VALUE_FLAGS: &str = "odFTXHDcKuAebwxrmyYzECUQtP";

/// curl's arguments as (option, value) pairs, clusters expanded.
fn curl_options<'t>(texts: &[&'t str]) -> Vec<(String, &'t str)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < texts.len() {
        let text = texts[i];
        let next = texts.get(i + 1).copied().unwrap_or("");
        if let Some(long) = text.strip_prefix("--") {
            match long.split_once('=') {
                Some((flag, value)) => out.push((format!("--{flag}"), value)),
                None => out.push((text.to_owned(), next)),
            }
        } else if let Some(cluster) = text.strip_prefix('-').filter(|c| !c.is_empty()) {
            for (offset, flag) in cluster.char_indices() {
                if CURL_VALUE_FLAGS.contains(flag) {
                    let attached = &cluster[offset + flag.len_utf8()..];
                    out.push((format!("-{flag}"), if attached.is_empty() { next } else { attached }));
                    break;
                }
                out.push((format!("-{flag}"), ""));
            }
        }
        i += 1;
    }
    out
}

pub fn curl<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let mut verdict = common(inv).unwrap_or(Verdict::SAFE);
    let texts: Vec<&str> = inv.texts().collect();
    for (flag, value) in curl_options(&texts) {
        let next = match flag.as_str() {
            "-T" | "--upload-file" => Verdict::high("uploads a file off the host"),
            "-d" | "--data" | "--data-binary" | "--data-raw" | "--data-urlencode" | "--json" | "--data-ascii" => {
                if value.starts_with('@') && flag != "--data-raw" {
                    Verdict::high("uploads a file off the host")
                } else {
                    Verdict::medium("sends data that can change remote state")
                }
            }
            "-F" | "--form" => {
                if value.contains('@') || value.contains('<') {
                    Verdict::high("uploads a file off the host")
                } else {
                    Verdict::medium("sends a form that can change remote state")
                }
            }
            "-X" | "--request" if !matches!(value.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS") => {
                Verdict::medium(format!("sends a {value} request"))
            }
            "-o" | "--output" if !matches!(value, "-" | "/dev/null" | "/dev/stdout") => {
                write_target(&Word::literal(value), "saves the download to")
            }
            "-O" | "--remote-name" | "--remote-name-all" | "-J" | "--remote-header-name" => {
                Verdict::medium("saves the download to a file")
            }
            "-D" | "--dump-header" | "-c" | "--cookie-jar" | "--trace" | "--trace-ascii" | "--stderr" | "--libcurl"
            | "--etag-save" | "--hsts" | "--alt-svc"
                if !matches!(value, "-" | "/dev/null") =>
            {
                write_target(&Word::literal(value), "writes")
            }
            "-K" | "--config" if is_stdin(value) => {
                Verdict::high("reads its options from stdin (they can upload files or write anywhere)")
            }
            "-K" | "--config" => Verdict::medium("reads its options from a file"),
            "-n" | "--netrc" | "--netrc-optional" | "--netrc-file" => {
                Verdict::medium("sends credentials from ~/.netrc (a secret)")
            }
            "-H" | "--header" | "--proxy-header" | "--url-query" | "--variable" if value.contains('@') => {
                Verdict::high("sends the contents of a file off the host")
            }
            "-w" | "--write-out" if value.contains("%output{") => Verdict::medium("writes a file (%output)"),
            _ => Verdict::SAFE,
        };
        verdict = verdict.max(next);
    }
    if verdict.risk == crate::protocol::Risk::Safe {
        verdict = CURL.check(inv);
    }
    verdict.into()
}

/// curl's options that only shape a download to stdout. Values of `-o`, `-D`, `-c`, `-X`, `-w`
/// and `-H` are vetted above; `-d`, `-F`, `-T`, `-K`, `-O`, `-J`, `-n` never reach this table.
static CURL: Options = Options {
    short: "#0123456fGiIjkLlNqRsSvVZA:b:c:C:D:e:E:H:m:o:r:u:U:w:x:X:y:Y:z:",
    long: &[
        "url=",
        "user-agent=",
        "referer=",
        "header=",
        "head",
        "include",
        "location",
        "location-trusted",
        "max-redirs=",
        "silent",
        "show-error",
        "fail",
        "fail-with-body",
        "fail-early",
        "verbose",
        "insecure",
        "compressed",
        "max-time=",
        "connect-timeout=",
        "retry=",
        "retry-delay=",
        "retry-max-time=",
        "retry-all-errors",
        "retry-connrefused",
        "write-out=",
        "output=",
        "proxy=",
        "noproxy=",
        "request=",
        "range=",
        "get",
        "user=",
        "cookie=",
        "ipv4",
        "ipv6",
        "http1.0",
        "http1.1",
        "http2",
        "http2-prior-knowledge",
        "http3",
        "http3-only",
        "tlsv1",
        "tlsv1.0",
        "tlsv1.1",
        "tlsv1.2",
        "tlsv1.3",
        "tls-max=",
        "cacert=",
        "capath=",
        "resolve=",
        "connect-to=",
        "interface=",
        "no-buffer",
        "no-progress-meter",
        "progress-bar",
        "trace-time",
        "limit-rate=",
        "speed-limit=",
        "speed-time=",
        "dns-servers=",
        "doh-url=",
        "raw",
        "path-as-is",
        "globoff",
        "disable",
        "no-keepalive",
        "keepalive-time=",
        "tcp-nodelay",
        "oauth2-bearer=",
        "basic",
        "digest",
        "ntlm",
        "negotiate",
        "anyauth",
        "proto=",
        "proto-redir=",
        "ssl-reqd",
        "ssl",
        "list-only",
        "dump-header=",
        "cookie-jar=",
        "cert-status",
        "pinnedpubkey=",
        "ssl-no-revoke",
        "styled-output",
        "no-styled-output",
        "show-headers",
        "parallel",
        "parallel-max=",
        "remote-time",
        "create-dirs",
        "max-filesize=",
        "continue-at=",
        "socks5=",
        "socks5-hostname=",
        "proxy-insecure",
        "proxytunnel",
        "haproxy-protocol",
        "ignore-content-length",
        "junk-session-cookies",
        "no-sessionid",
        "no-alpn",
        "no-npn",
        "happy-eyeballs-timeout-ms=",
        "expect100-timeout=",
        "aws-sigv4=",
        "compressed-ssh",
        "crlf",
        "ca-native",
        "ip-tos=",
        "ipfs-gateway=",
        "json-with-headers",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

pub fn wget<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let mut verdict = common(inv).unwrap_or(Verdict::SAFE);
    if inv.has_long("--post-file") || inv.has_long("--body-file") || inv.texts().any(|t| t.contains("post_file")) {
        return Verdict::high("uploads a file off the host").into();
    }
    if inv.has_long("--post-data") || inv.has_long("--method") || inv.has_long("--body-data") {
        verdict = verdict.max(Verdict::medium("sends data that can change remote state"));
    }
    if inv.value_of(None, "--config").is_some_and(is_stdin) {
        return Verdict::high("reads a wgetrc from stdin (it can run a program or write anywhere)").into();
    }
    let writes_or_runs = ["--use-askpass", "--config", "--save-cookies", "--rejected-log", "--warc-file", "--execute"];
    if inv.has_short('e') || writes_or_runs.iter().any(|o| inv.has_long(o)) {
        verdict = verdict.max(Verdict::medium("an option that runs a program, reads a config or writes a file"));
    }
    // The log is written whatever else the options say, `--spider` included.
    if let Some(log) = inv.value_of(Some('o'), "--output-file").or_else(|| inv.value_of(Some('a'), "--append-output")) {
        verdict = verdict.max(write_target(&Word::literal(log), "writes its log to"));
    }
    if inv.has_long("--spider") {
        return verdict.into();
    }
    match inv.value_of(Some('O'), "--output-document") {
        Some("-" | "/dev/null" | "/dev/stdout") => {}
        Some(file) => verdict = verdict.max(write_target(&Word::literal(file), "saves the download to")),
        None => verdict = verdict.max(Verdict::medium("saves the download to a file")),
    }
    if inv.has_short('r') || inv.has_long("--recursive") || inv.has_short('m') || inv.has_long("--mirror") {
        verdict = verdict.max(Verdict::medium("downloads a whole site into files"));
    }
    if verdict.risk == crate::protocol::Risk::Safe {
        verdict = WGET.check(inv);
    }
    verdict.into()
}

/// wget's options for a download to stdout (`-O -`) or a `--spider` check.
static WGET: Options = Options {
    short: "46dhkKnNqSvVO:t:T:U:w:Y:",
    long: &[
        "quiet", "verbose", "no-verbose", "server-response", "spider", "timeout=", "tries=", "user-agent=", "header=",
        "output-document=", "no-check-certificate", "max-redirect=", "dns-timeout=", "connect-timeout=",
        "read-timeout=", "wait=", "https-only", "inet4-only", "inet6-only", "user=", "password=", "http-user=",
        "http-password=", "no-cache", "no-dns-cache", "no-proxy", "referer=", "content-on-error", "compression=",
        "retry-connrefused", "show-progress", "progress=", "no-hsts", "secure-protocol=", "ca-certificate=",
        "ca-directory=", "debug", "no-config", "prefer-family=", "bind-address=", "limit-rate=", "quota=",
        "ignore-length", "no-cookies", "local-encoding=", "remote-encoding=", "max-redirect=", "save-headers",
        "content-disposition", "trust-server-names", "retry-on-http-error=", "waitretry=", "random-wait",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

/// `ssh [options] HOST [COMMAND…]`: the remote command is assessed; either way it is Medium at least.
pub fn ssh<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const WITH_VALUE: &[&str] = &[
        "-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S",
        "-W", "-w", "-B",
    ];
    let start = skip_options(inv.args, WITH_VALUE);
    let own = Invocation { args: &inv.args[..start.min(inv.args.len())], ..*inv };
    if let Some(verdict) = ssh_family_options(&own) {
        return verdict.into();
    }
    let host = inv.args.get(start).map(|w| w.text.as_str()).unwrap_or("?");
    if matches!(inv.texts().collect::<Vec<_>>().as_slice(), ["-V"]) || own.has_short('Q') && start == inv.args.len() {
        return Verdict::SAFE.into();
    }
    if own.has_short('G') {
        return Verdict::medium("ssh -G evaluates the config, whose Match exec lines run commands").into();
    }
    let command = inv.args.get(start + 1..).unwrap_or(&[]);
    if command.is_empty() {
        return Verdict::medium(format!("opens a remote shell on {host}")).into();
    }
    Outcome::from(Verdict::medium(format!("runs a command on {host}"))).then(Nested::Code(join_code(command)))
}

/// ssh options that run a program (`-o ProxyCommand=…`, `LocalCommand`, `KnownHostsCommand`,
/// `Match exec`), or read a config that can (`-F`), for ssh, scp and sftp.
fn ssh_family_options(own: &Invocation) -> Option<Verdict> {
    const RUNS: &[&str] = &[
        "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match", "remotecommand",
        "proxyusefdpass", "securitykeyprovider", "pkcs11provider", "sshaskpass",
    ];
    let texts: Vec<&str> = own.texts().collect();
    for (i, text) in texts.iter().enumerate() {
        let option = if *text == "-o" { texts.get(i + 1).copied() } else { text.strip_prefix("-o") };
        if let Some(option) = option.filter(|o| !o.is_empty()) {
            let key = option.split(['=', ' ']).next().unwrap_or("").to_ascii_lowercase();
            if RUNS.contains(&key.as_str()) {
                return Some(Verdict::high(format!("ssh -o {key} runs a local program (a code runner)")));
            }
        }
        let config = if *text == "-F" { texts.get(i + 1).copied() } else { None };
        if let Some(config) = config {
            return Some(if is_stdin(config) {
                Verdict::high("an ssh config from stdin can run any program (ProxyCommand)")
            } else {
                Verdict::medium("-F names an ssh config, which can run programs (ProxyCommand, Match exec)")
            });
        }
        if own.name != "ssh" && *text == "-S" {
            return Some(Verdict::high(format!("{} -S runs the program it names instead of ssh", own.name)));
        }
    }
    None
}

/// `host:path`, `user@host:path`, `scp://…`, `rsync://…`, or an rclone `remote:path`.
fn is_remote(spec: &str) -> bool {
    if spec.contains("://") {
        return !spec.starts_with("file://");
    }
    match spec.split_once(':') {
        Some((host, _)) => !host.is_empty() && !host.contains('/'),
        None => false,
    }
}

/// `scp`, `rsync`, `sftp`, `rclone`: sending to another host is High; fetching is Medium.
pub(crate) fn copy_remote<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.name != "rclone"
        && let Some(verdict) = ssh_family_options(inv)
    {
        return verdict.into();
    }
    if inv.name == "rsync" && (inv.has_short('e') || inv.has_long("--rsh") || inv.has_long("--rsync-path")) {
        return Verdict::high("rsync -e/--rsh/--rsync-path runs the command it is given (a code runner)").into();
    }
    if inv.name == "sftp" {
        return Verdict::medium("opens a file transfer session").into();
    }
    let mut positionals = inv.positionals();
    if inv.name == "rclone" && !positionals.is_empty() {
        let sub = positionals.remove(0).text.as_str();
        if matches!(
            sub,
            "ls" | "lsd"
                | "lsl"
                | "lsf"
                | "lsjson"
                | "size"
                | "about"
                | "listremotes"
                | "version"
                | "check"
                | "cat"
                | "md5sum"
                | "sha1sum"
                | "tree"
        ) {
            return RCLONE_READ.check(inv).into();
        }
        if matches!(sub, "delete" | "purge" | "deletefile" | "rmdir" | "rmdirs" | "cleanup" | "sync" | "move") {
            return Verdict::high("deletes or overwrites files on remote storage").into();
        }
    }
    let Some((dest, sources)) = positionals.split_last() else {
        return Verdict::medium("copies files").into();
    };
    if is_remote(&dest.text) && !sources.is_empty() {
        return Verdict::high(format!("sends files off the host (to {})", dest.text)).into();
    }
    if inv.name == "rsync" && (inv.has_long("--delete") || inv.has_long("--remove-source-files")) {
        return Verdict::high("deletes files that are not in the source").into();
    }
    let mut verdict = write_target(dest, "copies into");
    if sources.iter().any(|s| is_remote(&s.text)) {
        verdict = verdict.max(Verdict::medium("downloads files from another host"));
    }
    verdict.into()
}

/// `nc`, `socat`, `telnet`: a port check is read-only; attaching a program is a reverse shell.
pub fn sockets<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let lower: Vec<String> = inv.texts().map(str::to_ascii_lowercase).collect();
    if inv.has_short('e')
        || inv.has_short('c')
        || inv.has_long("--exec")
        || inv.has_long("--sh-exec")
        || inv.has_long("--lua-exec")
        || lower.iter().any(|t| t.starts_with("exec:") || t.starts_with("system:") || t.contains(",exec:"))
    {
        return Verdict::high("connects a program to the network (reverse shell)").into();
    }
    if inv.name != "socat" && inv.name != "telnet" && inv.has_short('z') {
        const PORT_CHECK: Options = Options { short: "46nuvzw:W:i:q:", ..Options::NONE };
        return PORT_CHECK.check(inv).into();
    }
    if inv.has_short('l') || inv.has_long("--listen") || lower.iter().any(|t| t.contains("listen:")) {
        return Verdict::medium("listens for network connections").into();
    }
    Verdict::medium("opens a raw network connection").into()
}

/// The file a `curl`/`wget` invocation saves its download to, if any (`-o F`, `-O`, `wget URL`).
pub(crate) fn download_target(name: &str, args: &[Word]) -> Option<String> {
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let url_name = || {
        let url = texts.iter().find(|t| t.contains("://"))?;
        let path = url.split(['?', '#']).next()?;
        path.rsplit('/').next().filter(|base| !base.is_empty()).map(str::to_owned)
    };
    match name {
        "curl" => {
            let options = curl_options(&texts);
            if let Some((_, out)) = options.iter().find(|(flag, _)| flag == "-o" || flag == "--output") {
                return Some((*out).to_owned()).filter(|o| o != "-");
            }
            options.iter().any(|(flag, _)| flag == "-O" || flag == "--remote-name").then(url_name).flatten()
        }
        "wget" => {
            let inv = Invocation { name, args, bulk: false };
            match inv.value_of(Some('O'), "--output-document") {
                Some("-") => None,
                Some(out) => Some(out.to_owned()),
                None => url_name(),
            }
        }
        _ => None,
    }
}

/// Options of rclone's listing and checking commands. `--config` (can name a password command)
/// and anything that transfers are left out.
static RCLONE_READ: Options = Options {
    short: "aCdhPqRv",
    long: &[
        "max-depth=", "recursive", "dirs-only", "files-only", "hash", "no-modtime", "no-mimetype", "original",
        "encrypted", "json", "level=", "include=", "exclude=", "filter=", "min-size=", "max-size=", "min-age=",
        "max-age=", "fast-list", "log-level=", "human-readable", "format=", "separator=", "absolute", "one-way",
        "size-only", "download", "combined=", "missing-on-src=", "missing-on-dst=", "match=", "differ=", "error=",
        "stat", "full", "long", "quiet", "verbose", "all", "checksum", "count=", "head=", "tail=", "offset=",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};
