//! Programs that create, copy, move, delete or re-permission files, and the file-walking readers
//! (`find`, `tar`, `unzip`, `uniq`) whose options can turn them into writers.

use super::options::{Operands, Options};
use super::{readers, write_target, write_targets};
use crate::policy::invocation::{Invocation, long_matches};
use crate::policy::paths::{self, Sensitive};
use crate::policy::verdict::{Nested, Outcome, Verdict};
use crate::policy::word::Word;

/// `rm`, `unlink`, `rmdir`.
pub fn remove<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let targets = inv.positionals();
    let root = targets.iter().find(|t| paths::sensitive(&t.text) == Some(Sensitive::Root));
    let recursive = inv.name == "rm" && (inv.has_short('r') || inv.has_short('R') || inv.has_long("--recursive"));
    match (recursive, root) {
        (true, Some(root)) => {
            return Verdict::high(format!("recursive delete of everything under {}", root.text)).into();
        }
        (true, None) => return Verdict::high("recursive delete").into(),
        (false, Some(root)) => return Verdict::high(format!("deletes {}", root.text)).into(),
        (false, None) => {}
    }
    if inv.bulk {
        return Verdict::high("deletes every file it is given").into();
    }
    if let Some(glob) = targets.iter().find(|t| t.glob) {
        return Verdict::high(format!("wildcard delete ({})", glob.text)).into();
    }
    if let Some(dynamic) = targets.iter().find(|t| t.dynamic || t.text.contains("{}")) {
        return Verdict::high(format!("deletes a path computed at run time ({})", dynamic.text)).into();
    }
    let action = if inv.name == "rmdir" { "removes the directory" } else { "deletes" };
    write_targets(targets, action, Verdict::medium("deletes files")).into()
}

/// `cp`, `ln`, `install`: only the destination is written.
pub fn copy<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let action = match inv.name {
        "ln" => "links into",
        "install" => "installs into",
        _ => "copies into",
    };
    if let Some(dir) = inv.value_of(Some('t'), "--target-directory") {
        return write_target(&Word::literal(dir), action).into();
    }
    let targets = inv.positionals();
    match targets.last() {
        Some(dest) if targets.len() >= 2 || inv.name == "ln" => write_target(dest, action).into(),
        _ => Verdict::medium(format!("{action} the current directory")).into(),
    }
}

/// `mv`: both the sources (removed from where they were) and the destination are written.
pub(crate) fn move_<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    write_targets(inv.positionals(), "moves", Verdict::medium("moves files")).into()
}

/// `touch`, `mkdir`, `truncate`, `tee`, …: every named file is written. `tee` with no file only
/// copies its input to its output.
pub fn create<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let action = match inv.name {
        "mkdir" => "creates the directory",
        "truncate" => "truncates",
        "tee" => "writes",
        "fallocate" => "allocates",
        _ => "creates",
    };
    let mut targets: Vec<&Word> = inv.positionals();
    if inv.name == "truncate" {
        // `truncate -s 0 f`: the size is the value of -s, not a file.
        if let Some(size) = inv.value_of(Some('s'), "--size")
            && let Some(pos) = targets.iter().position(|t| t.text == size)
        {
            targets.remove(pos);
        }
    }
    let written: Vec<&Word> = targets.into_iter().filter(|t| !is_harmless_device(&t.text)).collect();
    if written.is_empty() {
        if inv.name == "tee" {
            const TEE: Options =
                Options { short: "aip", long: &["append", "ignore-interrupts", "output-error[=]"], ..Options::NONE };
            return TEE.check(inv).into();
        }
        return Verdict::medium(action.to_owned()).into();
    }
    write_targets(written, action, Verdict::medium(action.to_owned())).into()
}

fn is_harmless_device(path: &str) -> bool {
    matches!(path, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty")
}

/// `chmod`, `chown`, `chgrp`, `chattr`, `setfacl`.
pub fn permissions<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let positionals = inv.positionals();
    let has_reference = inv.has_long("--reference");
    let (mode, targets) = match (inv.name, has_reference) {
        ("setfacl", _) | (_, true) => (None, positionals.as_slice()),
        _ => (positionals.first(), positionals.get(1..).unwrap_or(&[])),
    };
    let recursive = inv.has_short('R') || inv.has_long("--recursive");
    let action = if inv.name == "chmod" { "changes permissions of" } else { "changes ownership of" };
    if let Some(mode) = mode {
        let setuid = inv.name == "chmod"
            && (mode.text.contains('s') && mode.text.contains('+')
                || mode.text.len() == 4 && mode.text.starts_with(['4', '2', '6']));
        if setuid {
            return Verdict::high(format!("makes files run with their owner's privileges ({})", mode.text)).into();
        }
    }
    let verdict = write_targets(targets.iter().copied(), action, Verdict::medium(action.to_owned()));
    if recursive && verdict.risk < crate::protocol::Risk::High {
        let wide = targets.iter().any(|t| t.glob || t.dynamic);
        if wide {
            return Verdict::high(format!("{action} a whole tree chosen by a pattern")).into();
        }
        return Verdict::medium(format!("recursively {action} {}", names(targets))).into();
    }
    verdict.into()
}

fn names(words: &[&Word]) -> String {
    words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ")
}

/// `dd`: `of=` writes raw bytes wherever it points.
pub fn dd<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let Some(word) = inv.args.iter().find(|w| w.text.starts_with("of=")) else {
        return Verdict::medium("copies raw data").into();
    };
    let out = &word.text[3..];
    if is_harmless_device(out) {
        return Verdict::medium("copies raw data").into();
    }
    if word.dynamic {
        return Verdict::high(format!("writes raw data over a path computed at run time ({out})")).into();
    }
    match paths::sensitive(out) {
        Some(place) => Verdict::high(format!("writes raw data over {} ({out})", place.describe())).into(),
        None => Verdict::medium(format!("writes raw data to {out}")).into(),
    }
}

/// `sort -o FILE` writes FILE; `--compress-program` runs one.
pub fn sort<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.has_long("--compress-program") {
        return Verdict::medium("an option that runs another program").into();
    }
    match inv.value_of(Some('o'), "--output") {
        Some(out) if !is_harmless_device(out) => write_target(&Word::literal(out), "writes its output to").into(),
        _ => readers::SORT.check(inv).into(),
    }
}

/// `uniq IN OUT` writes OUT.
pub(crate) fn uniq<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    second_operand_is_output(inv, &readers::UNIQ)
}

/// `xxd IN OUT` writes OUT (also with `-r`, which turns a dump back into bytes).
pub(crate) fn xxd<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    second_operand_is_output(inv, &readers::XXD)
}

fn second_operand_is_output<'a>(inv: &Invocation<'a>, table: &Options) -> Outcome<'a> {
    let operands = table.operand_indices(inv.args);
    match operands.get(1).and_then(|&i| inv.args.get(i)) {
        Some(out) if !is_harmless_device(&out.text) => write_target(out, "writes").into(),
        _ => table.check(inv).into(),
    }
}

/// The tests, options and operators `find` is known to evaluate without side effects.
static FIND: Options = Options {
    short: "HLPD:O:",
    long: &[],
    words: &[
        "name=", "iname=", "path=", "ipath=", "wholename=", "iwholename=", "regex=", "iregex=", "regextype=", "type=",
        "xtype=", "size=", "mtime=", "atime=", "ctime=", "mmin=", "amin=", "cmin=", "newer=", "anewer=", "cnewer=",
        "newermt=", "newerct=", "newerat=", "newerBt=", "newermm=", "used=", "empty", "user=", "group=", "uid=",
        "gid=", "nouser", "nogroup", "perm=", "links=", "inum=", "samefile=", "maxdepth=", "mindepth=", "depth",
        "xdev", "mount", "follow", "noleaf", "readable", "writable", "executable", "true", "false", "prune", "quit",
        "print", "print0", "printf=", "ls", "fstype=", "lname=", "ilname=", "daystart", "warn", "nowarn",
        "ignore_readdir_race", "noignore_readdir_race", "context=", "a", "o", "and", "or", "not", "d", "files0-from=",
        "help", "version",
    ],
    numeric: false,
    operands: Operands::Any,
};

/// `find`: a reader, unless it deletes, writes, or runs a command per match.
pub fn find<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let mut outcome = Outcome::from(Verdict::SAFE);
    let args = inv.args;
    // find's own words, without the commands of `-exec … ;`, for its option table.
    let mut own: Vec<Word> = Vec::new();
    let mut runs = false;
    let mut i = 0;
    while let Some(word) = args.get(i) {
        match word.text.as_str() {
            "-delete" => {
                outcome.verdict = outcome.verdict.max(Verdict::high("find -delete deletes every match"));
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                // The command is assessed on its own (`Nested::Exec`); `-ok` asks on the terminal,
                // which an unattended run does not have.
                if word.text.starts_with("-ok") {
                    outcome.verdict = outcome
                        .verdict
                        .max(Verdict::medium(format!("find {} asks on the terminal before each command", word.text)));
                }
                runs = true;
                let start = i + 1;
                // The command ends at `;`, or at `+` right after `{}`.
                let end = (start..args.len())
                    .find(|&j| args[j].text == ";" || (args[j].text == "+" && j > start && args[j - 1].text == "{}"))
                    .unwrap_or(args.len());
                let words = &args[start..end];
                if words.is_empty() {
                    outcome.verdict = outcome.verdict.max(Verdict::medium("-exec without a command"));
                } else {
                    outcome = outcome.then(Nested::Exec { words, bulk: true });
                }
                i = end;
            }
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                let target = args.get(i + 1).cloned().unwrap_or_default();
                let verdict = write_target(&target, "writes the list of matches to");
                outcome.verdict = outcome.verdict.max(Verdict::high(verdict.reason));
                own.push(word.clone());
            }
            _ => own.push(word.clone()),
        }
        i += 1;
    }
    if runs && let Some(why) = exec_reaches_secrets(&own) {
        outcome.verdict = outcome.verdict.max(Verdict::high(why));
    }
    if outcome.verdict == Verdict::SAFE {
        outcome.verdict = FIND.check(&Invocation { args: &own, ..*inv });
    }
    outcome
}

/// Names of files that hold credentials, to test a `-name` glob against (`id_*`, `*.pem`).
const SECRET_SAMPLES: &[&str] = &[
    "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", ".env", "prod.env", ".env.local", "credentials", ".netrc", ".pgpass",
    "server.pem", "server.key", "tls.key", "kubeconfig", "terraform.tfstate", ".npmrc", ".pypirc", "secrets.yaml",
    "shadow", "master.key", "service-account.json", ".git-credentials", "token", "keystore.jks", "cert.p12",
];

/// `fnmatch` for `*`, `?` and `[…]` (enough to ask whether a `-name` pattern can match a name).
fn glob_matches(pattern: &[u8], name: &[u8]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob_matches(&pattern[1..], name) || !name.is_empty() && glob_matches(pattern, &name[1..]),
        (Some(b'?'), Some(_)) => glob_matches(&pattern[1..], &name[1..]),
        (Some(b'['), Some(&c)) => match pattern.iter().position(|&b| b == b']') {
            Some(end) if end > 1 => {
                let set = &pattern[1..end];
                let (negated, set) = match set.first() {
                    Some(b'!' | b'^') => (true, &set[1..]),
                    _ => (false, set),
                };
                let hit = set.iter().enumerate().any(|(i, &b)| {
                    b == c || b == b'-' && i > 0 && i + 1 < set.len() && set[i - 1] <= c && c <= set[i + 1]
                });
                hit != negated && glob_matches(&pattern[end + 1..], &name[1..])
            }
            _ => c == b'[' && glob_matches(&pattern[1..], &name[1..]),
        },
        (Some(&p), Some(&c)) => p == c && glob_matches(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// `find ~ -exec cat {} ;`, `find . -name '*.pem' -exec …`: the command would run on secret
/// files, which its own words do not show.
fn exec_reaches_secrets(own: &[Word]) -> Option<String> {
    let roots = own.iter().take_while(|w| !w.text.starts_with('-') && !matches!(w.text.as_str(), "(" | "!"));
    for root in roots {
        let text = root.text.trim_end_matches('/');
        let home = text.is_empty() || text == "~" || text.starts_with("~/") && text.len() == 2;
        let home = home || matches!(text, "/root" | "/home" | "/etc" | "/var" | "/run" | "/proc") || root.dynamic;
        if home || paths::secret(text) {
            return Some(format!(
                "find -exec runs a command on every match under {}, which holds secrets",
                if root.text.is_empty() { "/" } else { &root.text }
            ));
        }
    }
    let patterns = own.windows(2).filter(|p| {
        matches!(p[0].text.as_str(), "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-regex" | "-iregex")
    });
    for pair in patterns {
        let pattern = pair[1].text.trim_start_matches("*/").trim_start_matches('*');
        // Many stars make the matcher's work grow fast; such a pattern is taken to match.
        let stars = pair[1].text.matches('*').count();
        let matches_secret =
            stars > 6 || SECRET_SAMPLES.iter().any(|name| glob_matches(pair[1].text.as_bytes(), name.as_bytes()));
        if matches_secret
            || paths::secret(&pair[1].text)
            || paths::glob_may_reach_secret(&pair[1].text)
            || paths::secret(pattern)
        {
            return Some(format!("find -exec runs a command on files named like secrets ({})", pair[1].text));
        }
    }
    None
}

/// `tar`: listing is read-only, extracting and creating write, some options run programs.
pub fn tar<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const RUNS: &[&str] = &[
        "--to-command", "--checkpoint-action", "--use-compress-program", "--info-script", "--new-volume-script",
        "--rsh-command", "--rmt-command",
    ];
    let attached = inv.texts().any(|t| (t.starts_with("-I") || t.starts_with("-F")) && !t.starts_with("--"));
    // `--checkpoint=N` (progress) is not an abbreviation of `--checkpoint-action`.
    let progress = |t: &str| t == "--checkpoint" || t.starts_with("--checkpoint=");
    let runs =
        RUNS.iter().any(|opt| inv.texts().take_while(|t| *t != "--").any(|t| long_matches(t, opt) && !progress(t)));
    if runs || attached {
        return Verdict::high("an option that makes tar run a program it names (a code runner)").into();
    }
    if inv.has_long("--index-file") {
        return Verdict::medium("writes an index file").into();
    }
    // Old-style `tar xzf a.tgz`: the first word is a cluster of mode letters without a dash.
    let first = inv.args.first().map(|w| w.text.as_str()).unwrap_or("");
    let old_style = !first.starts_with('-') && first.chars().all(|c| c.is_ascii_alphabetic()) && !first.is_empty();
    let mode =
        |short: char, long: &str| inv.has_short(short) || inv.has_long(long) || (old_style && first.contains(short));
    if mode('t', "--list") || mode('d', "--diff") || mode('d', "--compare") {
        if old_style && let Some(letter) = first.chars().find(|c| !"tdvfzjJaZOpwk".contains(*c)) {
            return Verdict::medium(format!("tar {first}: letter {letter} not known to be read-only")).into();
        }
        return TAR_READ.check(inv).into();
    }
    let to_stdout = inv.has_short('O') || inv.has_long("--to-stdout") || old_style && first.contains('O');
    if (mode('x', "--extract") || inv.has_long("--get")) && to_stdout {
        if old_style && let Some(letter) = first.chars().find(|c| !"xvfzjJaZOpwk".contains(*c)) {
            return Verdict::medium(format!("tar {first}: letter {letter} not known to be read-only")).into();
        }
        return TAR_READ.check(inv).into();
    }
    if mode('x', "--extract") || inv.has_long("--get") {
        let dir = inv.value_of(Some('C'), "--directory");
        if let Some(dir) = dir {
            return write_target(&Word::literal(dir), "extracts files into").into();
        }
        return Verdict::medium("extracts files into the current directory").into();
    }
    Verdict::medium("creates or changes an archive").into()
}

/// Options of `tar --list`/`--diff` (old-style letters are checked separately).
static TAR_READ: Options = Options {
    short: "adjJkOptvwxzZb:f:C:T:X:",
    long: &[
        "extract", "get", "list", "diff", "compare", "verbose", "file=", "gzip", "gunzip", "bzip2", "xz", "lzma",
        "lzip", "lzop", "zstd", "auto-compress", "wildcards", "no-wildcards", "wildcards-match-slash", "exclude=",
        "exclude-from=", "numeric-owner", "full-time", "utc", "occurrence[=]", "strip-components=", "no-recursion",
        "recursion", "ignore-case", "quoting-style=", "show-transformed-names", "block-number", "directory=",
        "files-from=", "null", "anchored", "no-anchored", "totals[=]", "force-local", "blocking-factor=", "to-stdout",
        "xattrs", "acls", "selinux", "quiet", "label=", "multi-volume", "exclude-vcs", "exclude-caches",
    ],
    words: &[],
    numeric: false,
    operands: Operands::Any,
};

/// `unzip -l/-t/-v/-p/-Z` only read (`-p` and `-c` extract to stdout); anything else extracts.
pub(crate) fn unzip<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const READ: Options = Options { short: "aCcLlMpqtvzZP:", ..Options::NONE };
    // Every word after `-x` is a member to exclude, `-l` included: `unzip -x a -l x.zip` extracts.
    let cut = inv.args.iter().position(|w| w.text == "-x").unwrap_or(inv.args.len());
    let head = Invocation { args: &inv.args[..cut], ..*inv };
    if head.has_word(&["-l", "-t", "-v", "-p", "-c", "-Z", "-lv", "-tq", "-qq", "-Z1"])
        && !inv.has_short('d')
        && !inv.has_short('o')
    {
        return READ.check(&head).into();
    }
    if let Some(dir) = inv.value_of(Some('d'), "--d") {
        return write_target(&Word::literal(dir), "extracts files into").into();
    }
    Verdict::medium("extracts files into the current directory").into()
}
