//! Shells, interpreters, `eval`/`source`, privilege switches and wrappers: programs whose risk is
//! mostly the risk of what they run. The wrapped command or code string is returned as `Nested`
//! so the engine assesses it like any other.

use super::options::{Operands, Options};
use super::{join_code, skip_options};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Nested, Outcome, Verdict};
use crate::policy::word::Word;

/// Environment variables that change which program runs or what it loads.
pub(crate) const LOADER_VARIABLES: &[&str] = &[
    "PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "BASH_ENV",
    "ENV", "PROMPT_COMMAND", "IFS", "PYTHONPATH", "PYTHONSTARTUP", "PERL5OPT", "NODE_OPTIONS", "RUBYOPT", "LESSOPEN",
    "LESSCLOSE", "PAGER", "GIT_PAGER", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "EDITOR", "VISUAL", "SHELLOPTS",
];

/// True when setting `name` changes which program runs, what it loads or what it executes.
pub(crate) fn changes_what_runs(name: &str) -> bool {
    const MORE: &[&str] = &[
        "GIT_DIR", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_PROXY_COMMAND", "MANPAGER",
        "SYSTEMD_PAGER", "LESS", "LESSKEYIN", "RIPGREP_CONFIG_PATH", "PS4", "BROWSER", "SUDO_ASKPASS",
        "PROMPT_COMMAND",
    ];
    LOADER_VARIABLES.contains(&name)
        || MORE.contains(&name)
        || name.starts_with("GIT_CONFIG")
        || name.starts_with("BASH_FUNC_")
        || name.starts_with("LD_")
}

/// Variables that, changed, switch off shell history.
pub(crate) const HISTORY_VARIABLES: &[&str] = &["HISTFILE", "HISTSIZE", "HISTFILESIZE", "HISTCONTROL", "HISTIGNORE"];

/// `sh`, `bash`, `zsh`… : `-c STR` runs STR, a file argument runs a script, nothing reads stdin.
pub fn shell<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.name == "busybox" {
        return Outcome::from(Verdict::SAFE).then(Nested::Exec { words: inv.args, bulk: inv.bulk });
    }
    let mut command_string = false;
    let mut i = 0;
    while let Some(word) = inv.args.get(i) {
        let text = word.text.as_str();
        if text == "--" || text == "-" {
            i += 1;
            break;
        }
        if matches!(text, "--version" | "-version") {
            return Verdict::SAFE.into();
        }
        if let Some(flags) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) {
            if !flags.starts_with('-') && flags.contains('c') {
                command_string = true;
            }
            let takes_value = matches!(text, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file");
            i += if takes_value { 2 } else { 1 };
            continue;
        }
        break;
    }
    match (command_string, inv.args.get(i)) {
        (true, Some(code)) => Outcome::from(Verdict::SAFE).then(Nested::Code(code.clone())),
        (true, None) => Verdict::medium("-c without a command").into(),
        (false, Some(script)) => Verdict::medium(format!("runs the script {} (effect unknown)", script.text)).into(),
        (false, None) => Verdict::medium(format!("starts {} reading commands from its input", inv.name)).into(),
    }
}

/// The option letters and long options that introduce inline code, per interpreter family.
fn inline_code_flags(name: &str) -> (&'static str, &'static [&'static str]) {
    match name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.') {
        "python" => ("c", &[]),
        "perl" => ("eE", &[]),
        "ruby" | "lua" | "osascript" | "Rscript" => ("e", &[]),
        "bun" => ("ep", &["--eval", "--print"]),
        "node" | "nodejs" => ("ep", &["--eval", "--print"]),
        "php" => ("r", &["--run"]),
        "deno" => ("", &["eval"]),
        _ => ("", &[]),
    }
}

/// The inline code an interpreter is given (`-c CODE`, `-cCODE`, `-ne CODE`, `--eval=CODE`).
fn inline_code<'w>(name: &str, args: &'w [Word]) -> Option<&'w str> {
    let (letters, long) = inline_code_flags(name);
    for (i, word) in args.iter().enumerate() {
        let text = word.text.as_str();
        let next = || args.get(i + 1).map_or("", |w| w.text.as_str());
        if name == "pwsh" {
            let lower = text.to_ascii_lowercase();
            if lower.starts_with("-c") || lower.starts_with("-e") || lower.starts_with("/c") {
                return Some(next());
            }
            continue;
        }
        if let Some(long) =
            long.iter().find(|l| text == **l || text.strip_prefix(**l).is_some_and(|r| r.starts_with('=')))
        {
            return Some(text.strip_prefix(long).and_then(|r| r.strip_prefix('=')).unwrap_or_else(next));
        }
        let Some(cluster) = text.strip_prefix('-').filter(|c| !c.starts_with('-') && !letters.is_empty()) else {
            continue;
        };
        for (offset, letter) in cluster.char_indices() {
            if letters.contains(letter) {
                let rest = &cluster[offset + 1..];
                return Some(if rest.is_empty() { next() } else { rest });
            }
            if !letter.is_ascii_alphanumeric() {
                break;
            }
        }
    }
    None
}

/// Python, Perl, Ruby, Node…: versions are safe; inline code is a code runner (High, so no grant
/// covers it); scripts and modules are Medium.
pub(crate) fn interpreter<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let texts: Vec<&str> = inv.texts().collect();
    if let [only] = texts.as_slice()
        && version_only(inv.name, only)
    {
        return Verdict::SAFE.into();
    }
    if let Some(code) = inline_code(inv.name, inv.args) {
        if looks_like_reverse_shell(code) {
            return Verdict::high("inline code connects a shell to the network (reverse shell)").into();
        }
        return Verdict::high(format!("runs inline {} code (a code runner: never auto-run or granted)", inv.name))
            .into();
    }
    if let Some(pos) = texts.iter().position(|t| *t == "-m") {
        let module = texts.get(pos + 1).copied().unwrap_or("");
        return Verdict::medium(format!("runs the module {module} (effect unknown)")).into();
    }
    match inv.positionals().first() {
        Some(script) if script.text != "-" && script.text != "/dev/stdin" => {
            Verdict::medium(format!("runs the script {} (effect unknown)", script.text)).into()
        }
        _ => Verdict::medium(format!("starts {} reading code from its input", inv.name)).into(),
    }
}

/// The flags that print a version and exit before any code is read. Not `python -v` or `ruby -v`
/// (verbose mode: both then run the code on stdin), nor a bare word (`python version` runs a file).
fn version_only(name: &str, flag: &str) -> bool {
    let family = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    match family {
        "python" => matches!(flag, "--version" | "-V" | "-VV"),
        "perl" => matches!(flag, "--version" | "-v" | "-V"),
        "ruby" => flag == "--version",
        "node" | "nodejs" | "bun" | "php" | "pwsh" => matches!(flag, "--version" | "-v"),
        "deno" => matches!(flag, "--version" | "-V"),
        "lua" => flag == "-v",
        _ => flag == "--version",
    }
}

fn looks_like_reverse_shell(code: &str) -> bool {
    let lower = code.to_ascii_lowercase();
    let network =
        ["socket", "/dev/tcp", "tcpsocket", "net.connect", "fsockopen", "io::socket"].iter().any(|k| lower.contains(k));
    let shell = ["subprocess", "pty.spawn", "dup2", "/bin/sh", "/bin/bash", "exec(", "spawn(", "system(", "popen"]
        .iter()
        .any(|k| lower.contains(k));
    network && shell
}

/// True when this interpreter or shell invocation takes its code from stdin (`curl … | sh`).
pub(crate) fn reads_code_from_stdin(name: &str, args: &[Word]) -> bool {
    let texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    if crate::policy::rules::is_shell(name) {
        if texts.contains(&"-s") {
            return true;
        }
        let first = skip_options(args, &["-o", "+o", "-O", "+O", "--rcfile", "--init-file"]);
        let has_c = texts[..first.min(texts.len())]
            .iter()
            .any(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('c'));
        return !has_c && args.get(first).is_none_or(|w| w.text == "-" || w.text == "/dev/stdin");
    }
    if matches!(name, "source" | ".") {
        return texts.first().is_some_and(|t| *t == "/dev/stdin" || *t == "-");
    }
    if inline_code(name, args).is_some() || texts.contains(&"-m") {
        return false;
    }
    let positional = args.iter().find(|w| !w.text.starts_with('-') || w.text == "-");
    positional.is_none_or(|w| w.text == "-" || w.text == "/dev/stdin")
}

pub fn source<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let target = inv.args.first().map(|w| w.text.as_str()).unwrap_or("");
    Verdict::medium(format!("runs {target} in the current shell (effect unknown)")).into()
}

pub fn eval<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.args.is_empty() {
        return Verdict::SAFE.into();
    }
    Outcome::from(Verdict::SAFE).then(Nested::Code(join_code(inv.args)))
}

/// `sudo`, `doas`, `pkexec`, `run0`, `su`: at least Medium, and the command they run counts too.
pub fn sudo<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.name == "su" {
        if let Some(pos) = inv.texts().position(|t| t == "-c" || t == "--command")
            && let Some(code) = inv.args.get(pos + 1)
        {
            return Outcome::from(Verdict::medium("runs as another user")).then(Nested::Code(code.clone()));
        }
        return Verdict::medium("opens a shell as another user").into();
    }
    let with_value: &[&str] = match inv.name {
        "doas" => &["-u", "-C"],
        "pkexec" => &["--user"],
        "run0" => &["--user", "-u", "--group", "-g", "--chdir", "-D", "--setenv", "--property", "--unit", "--nice"],
        _ => &[
            "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--host", "--prompt",
            "--close-from", "--chdir", "--role", "--type", "--command-timeout", "--other-user",
        ],
    };
    let start = skip_options(inv.args, with_value);
    let own = options_only(inv, start);
    let rest = inv.args.get(start..).unwrap_or(&[]);
    if own.has_short('e') || own.has_long("--edit") {
        return Verdict::medium("edits files as root").into();
    }
    if rest.is_empty() {
        let listing = own.has_word(&[
            "-l", "-ll", "--list", "-v", "--validate", "-k", "-K", "--reset-timestamp", "--remove-timestamp", "-V",
            "--version",
        ]);
        if !listing {
            return Verdict::medium("opens a root shell").into();
        }
        return super::inspect::SUDO_LIST.check(&own).into();
    }
    Outcome::from(Verdict::medium("runs as root")).then(Nested::Exec { words: rest, bulk: inv.bulk })
}

/// Wrappers that run the rest of their arguments as a command, after their own options. Their
/// own options must be in the wrapper's table (`nice --zz ls` is Medium); the command they run is
/// assessed on its own.
pub fn wrapper<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let mut outcome = wrapper_command(inv);
    if let Some(table) = wrapper_options(inv.name) {
        let end = table.operand_indices(inv.args).first().copied().unwrap_or(inv.args.len());
        if let Some(problem) = table.first_unknown(&inv.args[..end]) {
            outcome.verdict = outcome.verdict.max(Verdict::medium(problem));
        }
    }
    outcome
}

fn wrapper_options(name: &str) -> Option<Options> {
    const fn t(short: &'static str, long: &'static [&'static str], numeric: bool) -> Option<Options> {
        Some(Options { short, long, words: &[], numeric, operands: Operands::Any })
    }
    match name {
        "nice" => t("n:", &["adjustment="], true),
        "timeout" => t("vk:s:", &["signal=", "kill-after=", "preserve-status", "foreground", "verbose"], false),
        "time" => t("apqvf:o:", &["format=", "output=", "append", "portability", "quiet", "verbose"], false),
        "command" => t("pvV", &[], false),
        "exec" => t("cla:", &[], false),
        "stdbuf" => t("i:o:e:", &["input=", "output=", "error="], false),
        "ionice" => t("tc:n:p:P:u:", &["class=", "classdata=", "ignore", "pid=", "pgid=", "uid="], false),
        "chrt" => t(
            "abdefiomprvRT:P:D:",
            &[
                "all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "pid", "max", "verbose",
                "reset-on-fork", "sched-runtime=", "sched-period=", "sched-deadline=",
            ],
            false,
        ),
        "taskset" => t("acp", &["all-tasks", "cpu-list", "pid"], false),
        "setsid" => t("cfw", &["ctty", "fork", "wait"], false),
        "xargs" => t(
            "0eoprtxa:d:E:I:i::L:l::n:P:s:",
            &[
                "null", "arg-file=", "delimiter=", "eof[=]", "replace[=]", "max-lines[=]", "max-args=", "max-procs=",
                "max-chars=", "no-run-if-empty", "open-tty", "interactive", "verbose", "exit", "process-slot-var=",
                "show-limits",
            ],
            false,
        ),
        "watch" => t(
            "bceghptwxrqd::n:",
            &[
                "interval=", "beep", "color", "no-color", "differences[=]", "errexit", "chgexit", "exec", "no-title",
                "no-wrap", "precise", "equexit=", "no-rerun",
            ],
            false,
        ),
        "flock" => t(
            "Fnosuxc:E:w:",
            &[
                "shared", "exclusive", "unlock", "nonblock", "nb", "timeout=", "wait=", "conflict-exit-code=", "close",
                "command=", "no-fork", "verbose",
            ],
            false,
        ),
        "env" => t(
            "0ivu:C:P:S:",
            &[
                "ignore-environment", "null", "unset=", "chdir=", "split-string=", "block-signal[=]",
                "default-signal[=]", "ignore-signal[=]", "list-signal-handling", "debug",
            ],
            false,
        ),
        _ => None,
    }
}

fn wrapper_command<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let args = inv.args;
    let (start, mut verdict) = match inv.name {
        "env" => return env(inv),
        "watch" => return watch(inv),
        "flock" => return flock(inv),
        "nice" => (skip_options(args, &["-n", "--adjustment"]), Verdict::SAFE),
        "timeout" => {
            let options = skip_options(args, &["-s", "--signal", "-k", "--kill-after"]);
            (options + 1, Verdict::SAFE)
        }
        "time" => {
            let start = skip_options(args, &["-f", "--format", "-o", "--output"]);
            let verdict = match options_only(inv, start).value_of(Some('o'), "--output") {
                Some(file) => Verdict::medium(format!("writes timing to {file}")),
                None => Verdict::SAFE,
            };
            (start, verdict)
        }
        "command" => {
            let start = skip_options(args, &[]);
            if options_only(inv, start).has_word(&["-v", "-V"]) {
                return Verdict::SAFE.into();
            }
            (start, Verdict::SAFE)
        }
        "exec" => (skip_options(args, &["-a"]), Verdict::SAFE),
        "stdbuf" => (skip_options(args, &["-i", "-o", "-e", "--input", "--output", "--error"]), Verdict::SAFE),
        "ionice" => {
            let start = skip_options(args, &["-c", "-n", "--class", "--classdata"]);
            if options_only(inv, start).has_short('p') || options_only(inv, start).has_long("--pid") {
                return Verdict::medium("changes the I/O priority of a running process").into();
            }
            (start, Verdict::SAFE)
        }
        "chrt" => {
            let options =
                skip_options(args, &["-T", "-P", "-D", "--sched-runtime", "--sched-period", "--sched-deadline"]);
            if options_only(inv, options).has_short('p') || options_only(inv, options).has_long("--pid") {
                return Verdict::medium("changes the scheduling of a running process").into();
            }
            let priority = usize::from(args.get(options).is_some_and(|w| w.text.chars().all(|c| c.is_ascii_digit())));
            (options + priority, Verdict::SAFE)
        }
        "taskset" => {
            let start = skip_options(args, &[]);
            if options_only(inv, start).has_short('p') || options_only(inv, start).has_long("--pid") {
                return Verdict::medium("changes the CPU affinity of a running process").into();
            }
            (start + 1, Verdict::SAFE)
        }
        "xargs" => {
            let options = skip_options(
                args,
                &[
                    "-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args",
                    "--max-procs", "--max-chars", "--max-lines",
                ],
            );
            let rest = args.get(options..).unwrap_or(&[]);
            if rest.is_empty() {
                return Verdict::SAFE.into();
            }
            let runner = rest.first().map(|w| w.text.rsplit('/').next().unwrap_or(&w.text)).unwrap_or("");
            // `xargs -I ls ls`: the command name itself is replaced by each input line.
            let replaced = xargs_replace_string(&args[..options]).filter(|r| rest[0].text.contains(r.as_str()));
            let verdict = if let Some(token) = replaced {
                Verdict::medium(format!(
                    "xargs replaces {token} in the command name with its input, so the input names the program"
                ))
            } else if crate::policy::rules::runs_code(runner) {
                Verdict::high(format!("xargs runs {runner} on every input (a code runner fed by data)"))
            } else {
                Verdict::SAFE
            };
            return Outcome::from(verdict).then(Nested::Exec { words: rest, bulk: true });
        }
        _ => (skip_options(args, &[]), Verdict::SAFE),
    };
    let rest = args.get(start..).unwrap_or(&[]);
    if rest.is_empty() {
        verdict = verdict.max(Verdict::SAFE);
        return verdict.into();
    }
    Outcome::from(verdict).then(Nested::Exec { words: rest, bulk: inv.bulk })
}

/// The string `-I`/`-i`/`--replace` makes xargs replace (`{}` unless one is given).
fn xargs_replace_string(options: &[Word]) -> Option<String> {
    let texts: Vec<&str> = options.iter().map(|w| w.text.as_str()).collect();
    texts.iter().enumerate().find_map(|(i, text)| match *text {
        "-I" => texts.get(i + 1).map(|v| (*v).to_owned()),
        "-i" | "--replace" => Some("{}".to_owned()),
        _ => text
            .strip_prefix("--replace=")
            .or_else(|| text.strip_prefix("-I"))
            .or_else(|| text.strip_prefix("-i"))
            .filter(|v| !v.is_empty())
            .map(str::to_owned),
    })
}

fn env<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let args = inv.args;
    if let Some(pos) = args.iter().position(|w| w.text.starts_with("-S") || w.text.starts_with("--split-string")) {
        let mut code_words: Vec<Word> = Vec::new();
        let text = args[pos].text.as_str();
        let inline = if text.starts_with("--") { text.split_once('=').map(|(_, v)| v) } else { text.get(2..) };
        if let Some(inline) = inline.filter(|v| !v.is_empty()) {
            code_words.push(Word { text: inline.to_owned(), ..args[pos].clone() });
        }
        code_words.extend(args.get(pos + 1..).unwrap_or(&[]).iter().cloned());
        return Outcome::from(Verdict::SAFE).then(Nested::Code(join_code(&code_words)));
    }
    let mut i = skip_options(args, &["-u", "--unset", "-C", "--chdir", "-P"]);
    let mut verdict = Verdict::SAFE;
    while let Some(word) = args.get(i) {
        let Some((name, _)) = word.text.split_once('=') else {
            break;
        };
        if HISTORY_VARIABLES.contains(&name) {
            verdict = verdict.max(Verdict::high(format!("sets {name}, which can switch off shell history")));
        } else if changes_what_runs(name) {
            verdict = verdict.max(Verdict::medium(format!("sets {name}, which changes what runs")));
        }
        i += 1;
    }
    let rest = args.get(i..).unwrap_or(&[]);
    if rest.is_empty() {
        return verdict.max(Verdict::medium("prints the whole environment (tokens and passwords included)")).into();
    }
    Outcome::from(verdict).then(Nested::Exec { words: rest, bulk: inv.bulk })
}

fn watch<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let start = skip_options(inv.args, &["-n", "--interval", "-q", "--equexit"]);
    let rest = inv.args.get(start..).unwrap_or(&[]);
    if rest.is_empty() {
        return Verdict::SAFE.into();
    }
    let own = options_only(inv, start);
    if own.has_short('x') || own.has_long("--exec") {
        return Outcome::from(Verdict::SAFE).then(Nested::Exec { words: rest, bulk: false });
    }
    Outcome::from(Verdict::SAFE).then(Nested::Code(join_code(rest)))
}

fn flock<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if let Some(pos) = inv.texts().position(|t| t == "-c" || t == "--command")
        && let Some(code) = inv.args.get(pos + 1)
    {
        return Outcome::from(Verdict::SAFE).then(Nested::Code(code.clone()));
    }
    let start = skip_options(inv.args, &["-w", "--wait", "--timeout", "-E", "--conflict-exit-code"]) + 1;
    match inv.args.get(start..) {
        Some(rest) if !rest.is_empty() => Outcome::from(Verdict::SAFE).then(Nested::Exec { words: rest, bulk: false }),
        _ => Verdict::SAFE.into(),
    }
}

/// The wrapper's own options: the words before the command it runs.
fn options_only<'a>(inv: &Invocation<'a>, end: usize) -> Invocation<'a> {
    Invocation { name: inv.name, args: inv.args.get(..end.min(inv.args.len())).unwrap_or(&[]), bulk: inv.bulk }
}
