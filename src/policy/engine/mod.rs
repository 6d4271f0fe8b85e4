//! Step 3–5 of the policy: walk a parsed script, classify every simple command through the rule
//! table (looking through wrappers and into nested code), add the checks that span commands
//! (pipelines, redirections, assignments), and apply the user's rules.

mod checks;
mod user;

use std::collections::{HashMap, HashSet};

use super::invocation::Invocation;
use super::parse::{self, Script, SimpleCommand};
use super::programs::shells::{self, HISTORY_VARIABLES, changes_what_runs};
use super::rules::{self, is_downloader};
use super::user_rules::PolicyConfig;
use super::verdict::{Nested, Verdict};
use super::word::Word;
use crate::protocol::Risk;

/// Code nested in strings (`bash -c "eval '…'"`) deeper than this is refused.
const MAX_NESTING: usize = 8;
/// Standard locations whose programs are the ones the rule table describes (`/usr/bin/rm` is `rm`).
const SYSTEM_BIN_DIRS: &[&str] = &[
    "/bin",
    "/usr/bin",
    "/usr/local/bin",
    "/sbin",
    "/usr/sbin",
    "/usr/local/sbin",
    "/opt/homebrew/bin",
    "/snap/bin",
    "/run/current-system/sw/bin",
    "/usr/libexec",
];
/// Programs that show metadata or use a key without printing its contents.
const NOT_READERS: &[&str] = &[
    "ls", "stat", "file", "test", "[", "[[", "du", "wc", "find", "chmod", "chown", "chgrp", "ssh", "scp", "sftp",
    "rsync", "ssh-keygen", "ssh-add", "realpath", "readlink", "dirname", "basename", "rm", "mv", "touch", "mkdir",
    "ln", "shred", "echo", "printf", "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "lsattr",
    "getfacl", "kubectl", "docker", "helm", "terraform", "curl", "wget", "openssl", "gpg", "which", "type", "unlink",
    "truncate", "df", "lsblk", "blkid", "findmnt", "lsof", "fuser", "udevadm", "smartctl", "partx", "mdadm", "pvs",
    "vgs", "lvs", "pvdisplay", "vgdisplay", "lvdisplay",
];
/// Programs that print what they are given.
const PRINTERS: &[&str] = &["echo", "printf", "printenv", "cat", "env", "declare", "export", "set", "print", "tee"];

/// One non-Safe verdict on one part of the command, ready to show: `subject: reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub risk: Risk,
    pub text: String,
}

/// One program in a chain of wrappers (`sudo` → `timeout` → `rm`).
struct Entry {
    argv: Vec<String>,
    verdict: Verdict,
}

/// What the pipeline check needs to know about a command's final program.
#[derive(Default, Clone)]
struct Leaf {
    downloads: bool,
    runs_stdin_code: bool,
    sends_stdin: bool,
    name: String,
    /// The literal text it writes to stdout (`echo …`, `printf …`, `cat <<EOF`), when known.
    prints: Option<Word>,
}

pub(crate) struct Engine<'c> {
    config: &'c PolicyConfig,
    pub findings: Vec<Finding>,
    pub commands: Vec<Vec<String>>,
    pub denied: bool,
    /// Variables assigned from a download (`x=$(curl …)`), so `bash -c "$x"` is seen for what it is.
    downloaded_vars: HashSet<String>,
    /// Variables assigned a literal earlier in the script (`A=rm`), to see through `$A -rf /`.
    known_vars: HashMap<String, String>,
    /// Variables assigned from a secret variable earlier in the line.
    secret_copies: HashSet<String>,
    /// Files a download in this script wrote (`curl -o x.sh …`), so `bash x.sh` after it is seen.
    downloaded_files: HashSet<String>,
}

impl<'c> Engine<'c> {
    pub fn new(config: &'c PolicyConfig) -> Self {
        Self {
            config,
            findings: Vec::new(),
            commands: Vec::new(),
            denied: false,
            downloaded_vars: HashSet::new(),
            known_vars: HashMap::new(),
            secret_copies: HashSet::new(),
            downloaded_files: HashSet::new(),
        }
    }

    fn add(&mut self, subject: &str, verdict: &Verdict) {
        // A Safe verdict has no reason, except one set by the user's allow rule: that one is shown,
        // so the user sees which rule made the command Safe (as for a rule that sets Medium).
        if verdict.risk == Risk::Safe && verdict.reason.is_empty() {
            return;
        }
        let text = format!("{}: {}", shorten(subject), verdict.reason);
        if !self.findings.iter().any(|f| f.text == text) {
            self.findings.push(Finding { risk: verdict.risk, text });
        }
    }

    pub fn script(&mut self, script: &Script, nesting: usize) {
        for error in script.errors.iter().take(3) {
            self.add(
                "unparseable input",
                &Verdict::high(format!("{error} (cannot be assessed, so it counts as high)")),
            );
        }
        for why in &script.constructs {
            self.add("the command line", &Verdict::medium(why.clone()));
        }
        let functions: Vec<&str> = script.functions.iter().map(|(name, _)| name.as_str()).collect();
        for (name, body) in &script.functions {
            // A definition can shadow any program (`ls() { …; }`) for the rest of the line.
            self.add(
                &format!("{name}()"),
                &Verdict::medium("defines a shell function, which changes what later names in this line run"),
            );
            let recursive = body
                .iter()
                .any(|&i| script.commands.get(i).and_then(|c| c.words.first()).is_some_and(|w| w.text == *name));
            if recursive {
                self.add(&format!("{name}()"), &Verdict::high("a function that calls itself (fork bomb)"));
            }
        }
        let leaves: Vec<Vec<Leaf>> = script.commands.iter().map(|cmd| self.simple(cmd, &functions, nesting)).collect();
        for redirect in &script.redirects {
            self.redirect(redirect, "a compound command", false, nesting);
        }
        for pipeline in &script.pipelines {
            self.pipeline(pipeline, &leaves, &script.commands, nesting);
        }
    }

    fn pipeline(&mut self, stages: &[Vec<usize>], leaves: &[Vec<Leaf>], commands: &[SimpleCommand], nesting: usize) {
        let stage_leaves = |stage: &Vec<usize>| {
            stage.iter().flat_map(|&i| leaves.get(i).into_iter().flatten()).cloned().collect::<Vec<_>>()
        };
        let mut downloaded = false;
        let mut printed: Vec<Word> = Vec::new();
        for (position, stage) in stages.iter().enumerate() {
            let here = stage_leaves(stage);
            let subject = stage.first().and_then(|&i| commands.get(i)).map_or("", |c| c.source.as_str());
            // `echo 'rm -rf /' | sh`: the text piped into a shell is code, so it is assessed as code.
            if here.iter().any(|l| l.runs_stdin_code) {
                for text in std::mem::take(&mut printed) {
                    self.code(&text, nesting);
                }
            }
            printed.extend(here.iter().filter_map(|l| l.prints.clone()));
            if downloaded && let Some(leaf) = here.iter().find(|l| l.runs_stdin_code) {
                let verdict =
                    Verdict::high(format!("runs code downloaded from the network (piped into {})", leaf.name));
                self.add(subject, &verdict);
            }
            if position > 0
                && let Some(leaf) = here.iter().find(|l| l.sends_stdin)
            {
                self.add(subject, &Verdict::high(format!("sends piped data off the host ({})", leaf.name)));
            }
            downloaded |= here.iter().any(|l| l.downloads);
        }
    }

    /// Classifies one simple command; returns what its final programs are, for the pipeline check.
    fn simple(&mut self, cmd: &SimpleCommand, functions: &[&str], nesting: usize) -> Vec<Leaf> {
        for assignment in &cmd.assignments {
            for sub in &assignment.value.subs {
                self.script(sub, nesting);
            }
            match assignment.value.fixed() {
                Some(value) => self.known_vars.insert(assignment.name.clone(), value.to_owned()),
                None => self.known_vars.remove(&assignment.name),
            };
            if has_subscript_substitution(&assignment.value.text) {
                self.add(
                    &format!("{}={}", assignment.name, assignment.value.text),
                    &Verdict::medium(
                        "an array subscript with a command substitution runs it when bash does arithmetic",
                    ),
                );
            }
            if word_downloads(&assignment.value, &self.downloaded_vars) {
                self.downloaded_vars.insert(assignment.name.clone());
            }
            if assignment.value.vars.iter().any(|v| self.secret_variable(v)) {
                self.secret_copies.insert(assignment.name.clone());
            } else {
                self.secret_copies.remove(&assignment.name);
            }
            let name = assignment.name.as_str();
            let subject = format!("{name}={}", assignment.value.text);
            if HISTORY_VARIABLES.contains(&name) {
                self.add(&subject, &Verdict::high(format!("changes {name}, which can switch off shell history")));
            } else if changes_what_runs(name) && !harmless_prefix(name, &assignment.value) {
                self.add(&subject, &Verdict::medium(format!("changes {name}, which changes what programs run")));
            }
        }
        for word in &cmd.words {
            for sub in &word.subs {
                self.script(sub, nesting);
            }
        }
        if !cmd.words.is_empty() {
            // Names the loop above already flagged (loaders, pagers, history) get one reason, not two.
            let flagged = |name: &str| HISTORY_VARIABLES.contains(&name) || changes_what_runs(name);
            for assignment in
                cmd.assignments.iter().filter(|a| !harmless_prefix(&a.name, &a.value) && !flagged(&a.name))
            {
                self.add(
                    &format!("{}={}", assignment.name, assignment.value.text),
                    &Verdict::medium(format!(
                        "sets {} for the command; only locale, time zone, terminal and colour variables are known to be harmless",
                        assignment.name
                    )),
                );
            }
        }
        if cmd.words.first().is_some_and(|w| w.text == "exec") && !cmd.redirects.is_empty() {
            self.add(
                &cmd.source,
                &Verdict::medium("`exec` with redirections changes where everything after it reads and writes"),
            );
        }
        let code_runner_input = cmd.redirects.iter().any(|r| r.heredoc.is_some() || r.op == "<<<");
        let mut leaves = Vec::new();
        if let Some(first) = cmd.words.first() {
            if first.text == "unset"
                && let Some(var) = cmd.words.iter().skip(1).find(|w| HISTORY_VARIABLES.contains(&w.text.as_str()))
            {
                self.add(&cmd.source, &Verdict::high(format!("unsets {}, which switches off shell history", var.text)));
            }
            let mut entries = Vec::new();
            let mut codes = Vec::new();
            self.invoke(&cmd.words, false, functions, nesting, &mut entries, &mut codes, &mut leaves);
            if let Some(leaf) = leaves.last_mut().filter(|l| l.name == "cat" && cmd.words.len() == 1) {
                leaf.prints = cmd
                    .redirects
                    .iter()
                    .find_map(|r| r.heredoc.clone().or_else(|| if r.op == "<<<" { r.target.clone() } else { None }));
            }
            if code_runner_input && let Some(leaf) = leaves.last() {
                if rules::is_shell(&leaf.name) {
                    for redirect in &cmd.redirects {
                        if let Some(body) = redirect.heredoc.as_ref().or(if redirect.op == "<<<" {
                            redirect.target.as_ref()
                        } else {
                            None
                        }) {
                            codes.push(body.clone());
                        }
                    }
                } else if rules::runs_code(&leaf.name) {
                    entries.push(Entry {
                        argv: vec![leaf.name.clone()],
                        verdict: Verdict::medium(format!("runs an inline {} script", leaf.name)),
                    });
                }
            }
            self.apply_user_rules(cmd, &mut entries);
            for entry in &entries {
                self.add(&display(&entry.argv), &entry.verdict);
            }
            for code in codes {
                self.code(&code, nesting);
            }
        }
        let reader = leaves.last().map(|l| l.name.clone()).unwrap_or_default();
        if leaves.last().is_some_and(|l| l.downloads) {
            let saved = cmd.redirects.iter().filter(|r| !r.is_input() && !r.op.contains('&') || r.op.starts_with("&>"));
            for target in saved.filter_map(|r| r.target.as_ref()) {
                self.downloaded_files.insert(target.text.trim_start_matches("./").to_owned());
            }
        }
        if leaves.last().is_some_and(|l| l.sends_stdin) {
            let sent =
                cmd.redirects.iter().find(|r| r.op == "<" && r.target.as_ref().is_some_and(|t| t.text != "/dev/null"));
            if let Some(file) = sent.and_then(|r| r.target.as_ref()) {
                self.add(&cmd.source, &Verdict::high(format!("sends {} off the host", file.text)));
            }
        }
        for redirect in &cmd.redirects {
            self.redirect(redirect, &cmd.source, NOT_READERS.contains(&reader.as_str()), nesting);
        }
        leaves
    }

    /// Follows one program and whatever it runs in turn, collecting one entry per program.
    #[allow(clippy::too_many_arguments)]
    fn invoke(
        &mut self,
        words: &[Word],
        bulk: bool,
        functions: &[&str],
        nesting: usize,
        entries: &mut Vec<Entry>,
        codes: &mut Vec<Word>,
        leaves: &mut Vec<Leaf>,
    ) {
        let Some(first) = words.first() else { return };
        let argv: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let mut leaf = Leaf { name: first.text.clone(), ..Leaf::default() };
        let (name, extra) = match self.program_name(first) {
            Ok(resolved) => resolved,
            Err(verdict) => {
                self.commands.push(argv.clone());
                entries.push(Entry { argv, verdict });
                leaves.push(leaf);
                return;
            }
        };
        leaf.name = name.clone();
        let args = &words[1..];
        let inv = Invocation { name: &name, args, bulk };
        let outcome = if functions.contains(&name.as_str()) {
            Verdict::medium(format!("calls the function {name} defined in this line")).into()
        } else {
            match rules::lookup(&name) {
                Some((_, rule)) => rules::apply(rule, &inv),
                None => Verdict::medium(format!("unknown program {name} (effect unknown)")).into(),
            }
        };
        let mut verdict = outcome.verdict.max(self.argument_checks(&inv)).max(extra);
        if !first.text.is_ascii() {
            verdict = verdict.max(Verdict::medium(format!(
                "the command name contains a non-ASCII character ({}) that may imitate another",
                first
                    .text
                    .chars()
                    .filter(|c| !c.is_ascii())
                    .map(|c| format!("U+{:04X}", c as u32))
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
        }
        entries.push(Entry { argv: argv.clone(), verdict });
        let mut runs_more = false;
        // A program that runs a code string (`bash -c`, `ssh host cmd`) is a wrapper too: `commands`
        // lists what the string runs, not the wrapper.
        let runs_code_string = outcome.nested.iter().any(|n| matches!(n, Nested::Code(_)));
        for nested in outcome.nested {
            match nested {
                Nested::Exec { words: inner, bulk } => {
                    runs_more = true;
                    if nesting + entries.len() > MAX_NESTING * 2 {
                        entries.push(Entry {
                            argv: argv.clone(),
                            verdict: Verdict::high("wrappers nested too deeply to assess"),
                        });
                    } else {
                        self.invoke(inner, bulk, functions, nesting, entries, codes, leaves);
                    }
                }
                Nested::Code(code) => codes.push(code),
            }
        }
        if !runs_more {
            leaf.downloads = is_downloader(&name);
            if let Some(file) = super::programs::net::download_target(&name, args) {
                self.downloaded_files.insert(file.trim_start_matches("./").to_owned());
            }
            leaf.runs_stdin_code = rules::runs_code(&name) && shells::reads_code_from_stdin(&name, args);
            leaf.sends_stdin = matches!(name.as_str(), "nc" | "ncat" | "netcat" | "socat" | "telnet");
            if matches!(name.as_str(), "echo" | "printf") {
                let text = args
                    .iter()
                    .skip_while(|w| matches!(w.text.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                    .cloned()
                    .collect::<Vec<_>>();
                leaf.prints = Some(super::programs::join_code(&text));
            }
            if !runs_code_string {
                self.commands.push(argv);
            }
            leaves.push(leaf);
        }
    }

    /// Resolves the program a command word names, or says why it cannot be trusted. A name made at
    /// run time is resolved when this script itself makes it plainly (`A=rm; $A …`, `` `echo rm` ``),
    /// so the verdict on what it runs still counts, and is never Safe.
    fn program_name(&self, first: &Word) -> Result<(String, Verdict), Verdict> {
        let mut extra = Verdict::SAFE;
        let text = if first.dynamic || first.glob {
            if word_downloads(first, &self.downloaded_vars) {
                return Err(Verdict::high("runs a command downloaded from the network"));
            }
            let unknown = Verdict::medium("the command name is computed at run time");
            let resolved = self.resolve(first).ok_or(unknown)?;
            extra = Verdict::medium(format!("the command name is computed at run time ({} is {resolved})", first.text));
            resolved
        } else {
            first.text.clone()
        };
        if text.is_empty() {
            return Err(Verdict::medium("an empty command name"));
        }
        if let Some((dir, base)) = text.rsplit_once('/') {
            if SYSTEM_BIN_DIRS.contains(&dir) && !base.is_empty() {
                return Ok((base.to_owned(), extra));
            }
            if self.downloaded_files.contains(text.trim_start_matches("./")) {
                return Err(Verdict::high(format!("runs {text}, which was just downloaded")));
            }
            return Err(Verdict::medium(format!("runs the local program {text} (effect unknown)")));
        }
        Ok((text, extra))
    }

    /// The value of `$A` assigned literally earlier in this script, or the text of `` `echo rm` ``.
    fn resolve(&self, word: &Word) -> Option<String> {
        if word.subs.is_empty() {
            let [var] = word.vars.as_slice() else { return None };
            let plain = word.text == format!("${var}") || word.text == format!("${{{var}}}");
            return plain.then(|| self.known_vars.get(var).cloned()).flatten();
        }
        let [script] = word.subs.as_slice() else { return None };
        let whole = (word.text.starts_with("$(") && word.text.ends_with(')'))
            || (word.text.starts_with('`') && word.text.ends_with('`'));
        let [command] = script.commands.as_slice() else { return None };
        let (printer, args) = command.words.split_first()?;
        let prints = matches!(printer.text.as_str(), "echo" | "printf") && !printer.dynamic;
        let static_args = args.iter().all(|w| !w.dynamic && w.text != "-e");
        (whole && prints && static_args && word.vars.is_empty())
            .then(|| args.iter().filter(|w| w.text != "-n").map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "))
            .map(|text| text.trim().to_owned())
    }

    /// Shell code held in a string: parsed and assessed like the top level, one level deeper.
    fn code(&mut self, code: &Word, nesting: usize) {
        if code.dynamic {
            let verdict = if word_downloads(code, &self.downloaded_vars) {
                Verdict::high("runs code downloaded from the network")
            } else {
                Verdict::medium("runs code computed at run time")
            };
            self.add(&code.text, &verdict);
        }
        if nesting >= MAX_NESTING {
            self.add(&code.text, &Verdict::high("code nested too deeply to assess"));
            return;
        }
        let script = parse::parse(&code.text);
        self.script(&script, nesting + 1);
    }
}

/// Variables a command may be given inline without changing what it does to the machine.
fn harmless_prefix(name: &str, value: &Word) -> bool {
    const NAMES: &[&str] = &[
        "LANG", "LANGUAGE", "TZ", "COLUMNS", "LINES", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "TERM",
        "TIME_STYLE", "SYSTEMD_COLORS", "DEBIAN_FRONTEND",
    ];
    const PAGERS: &[&str] = &["PAGER", "GIT_PAGER", "SYSTEMD_PAGER", "MANPAGER", "AWS_PAGER"];
    if PAGERS.contains(&name) {
        return matches!(value.fixed(), Some("" | "cat"));
    }
    (NAMES.contains(&name) || name.starts_with("LC_")) && value.subs.is_empty()
}

/// True when the word's value comes from a download: a substitution running curl/wget/…, or a
/// variable assigned from one.
fn word_downloads(word: &Word, downloaded_vars: &HashSet<String>) -> bool {
    word.vars.iter().any(|v| downloaded_vars.contains(v)) || word.subs.iter().any(script_downloads)
}

fn script_downloads(script: &Script) -> bool {
    script.commands.iter().any(|cmd| {
        cmd.words.iter().any(|w| {
            let base = w.text.rsplit('/').next().unwrap_or(&w.text);
            is_downloader(base) || w.subs.iter().any(script_downloads)
        })
    })
}

/// `a[$(cmd)]`: bash runs the substitution whenever it evaluates the subscript arithmetically
/// (`$((x))`, `let`, `test -v`, `printf -v`, `read`, `unset`, …), even from a quoted string.
pub(super) fn has_subscript_substitution(text: &str) -> bool {
    text.contains("[$(") || text.contains("[`") || text.contains("[${") && text.contains("$(")
}

/// argv as a user would type it: words with spaces or quotes are single-quoted.
fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|word| {
            let plain = !word.is_empty()
                && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+~{}$()*?[]".contains(c));
            if plain { word.clone() } else { format!("'{}'", word.replace('\'', r"'\''")) }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Keeps reasons to one readable line.
fn shorten(subject: &str) -> String {
    let one_line: String = subject.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= 80 {
        return one_line;
    }
    let cut: String = one_line.chars().take(77).collect();
    format!("{cut}…")
}
