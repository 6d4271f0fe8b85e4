//! Option allowlists: for a program rated Safe, the options known to be read-only for it and the
//! operands it may take. Anything else (an unknown option, an abbreviation of a long option, a
//! value attached where the table does not expect one) makes the invocation Medium, with a reason
//! naming the option. Being strict here is what makes Safe an allowlist rather than a list of
//! known dangers.

use crate::policy::invocation::Invocation;
use crate::policy::verdict::Verdict;
use crate::policy::word::Word;

/// The options and operands known to be read-only for one program.
#[derive(Debug)]
pub(crate) struct Options {
    /// Short options in getopt syntax: `"lah"` are flags, `"w:"` takes a value (`-w 80`, `-w80`),
    /// `"d::"` takes a value only when attached (`-d5`).
    pub short: &'static str,
    /// Long options by full name without dashes: `"all"` is a flag, `"width="` takes a value
    /// (`--width=80`, `--width 80`), `"color[=]"` takes one only after `=`. Abbreviations, which
    /// GNU getopt accepts, are not matched: only the names listed here are known.
    pub long: &'static [&'static str],
    /// Whole single-dash words (`find -name X`, `openssl -noout`): `"name="` takes the next word.
    pub words: &'static [&'static str],
    /// `-NUM` is accepted (`head -20`, `grep -3`).
    pub numeric: bool,
    /// How many operands (non-option words) are read-only.
    pub operands: Operands,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operands {
    /// Files, patterns, names: any number.
    Any,
    /// At most this many (`cd DIR`, `ulimit -n` without a new limit).
    AtMost(usize),
}

impl Options {
    /// No options at all; any operands.
    pub(crate) const NONE: Options =
        Options { short: "", long: &[], words: &[], numeric: false, operands: Operands::Any };

    /// Safe when every argument is known; otherwise Medium naming the first unknown one.
    pub fn check(&self, inv: &Invocation) -> Verdict {
        match self.first_unknown(inv.args) {
            None => Verdict::SAFE,
            Some(problem) => Verdict::medium(problem),
        }
    }

    /// Why the arguments are not all known read-only, if they are not.
    pub(crate) fn first_unknown(&self, args: &[Word]) -> Option<String> {
        self.walk(args, &mut Vec::new())
    }

    /// Is `--name` (without dashes) one of this table's long options?
    pub(crate) fn knows_long(&self, name: &str) -> bool {
        self.long.iter().any(|entry| entry_name(entry) == name)
    }

    /// The indices of the operands (words that are neither options nor option values).
    pub(crate) fn operand_indices(&self, args: &[Word]) -> Vec<usize> {
        let mut indices = Vec::new();
        let _ = self.walk(args, &mut indices);
        indices
    }

    fn walk(&self, args: &[Word], operand_indices: &mut Vec<usize>) -> Option<String> {
        let mut operands = 0usize;
        let mut after_dashes = false;
        let mut i = 0;
        while let Some(word) = args.get(i) {
            i += 1;
            let text = word.text.as_str();
            if after_dashes || text == "-" || !text.starts_with('-') {
                operands += 1;
                operand_indices.push(i - 1);
                continue;
            }
            if text == "--" {
                after_dashes = true;
                continue;
            }
            if word.dynamic {
                return Some(format!("option {text} is computed at run time, so it is not known to be read-only"));
            }
            let consumed =
                if let Some(long) = text.strip_prefix("--") { self.long_option(long) } else { self.short_option(text) };
            match consumed {
                Ok(takes_next) => i += usize::from(takes_next),
                Err(problem) => return Some(problem),
            }
        }
        if let Operands::AtMost(max) = self.operands
            && operands > max
        {
            return Some(match max {
                0 => "an argument here sets a value instead of printing it: not known to be read-only".to_owned(),
                1 => "more than one argument: not a read-only form".to_owned(),
                n => format!("more than {n} arguments: not a read-only form"),
            });
        }
        None
    }

    /// `Ok(true)` when the option's value is the next word.
    fn long_option(&self, long: &str) -> Result<bool, String> {
        let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
        let unknown = || Err(format!("option --{name} not known to be read-only"));
        let Some(entry) = self.long.iter().find(|entry| entry_name(entry) == name) else {
            return unknown();
        };
        match (entry_kind(entry), value) {
            (Kind::Flag, None) => Ok(false),
            (Kind::Flag, Some(_)) => Err(format!("option --{name} takes no value; --{long} is not a known form")),
            (Kind::Required, None) => Ok(true),
            (Kind::Required | Kind::Optional, Some(_)) | (Kind::Optional, None) => Ok(false),
        }
    }

    fn short_option(&self, text: &str) -> Result<bool, String> {
        let cluster = &text[1..];
        if let Some(entry) = self.words.iter().find(|entry| entry_name(entry) == cluster) {
            return Ok(entry_kind(entry) == Kind::Required);
        }
        // `-type=mx` (nslookup), `-newermt=…`: a word that takes a value, with it attached.
        if let Some((name, _)) = cluster.split_once('=')
            && self.words.iter().any(|entry| entry_kind(entry) == Kind::Required && entry_name(entry) == name)
        {
            return Ok(false);
        }
        if self.numeric && cluster.chars().all(|c| c.is_ascii_digit()) {
            return Ok(false);
        }
        for (offset, flag) in cluster.char_indices() {
            let Some(kind) = short_kind(self.short, flag) else {
                let whole = if cluster.chars().count() > 1 { format!(" (in {text})") } else { String::new() };
                return Err(format!("option -{flag}{whole} not known to be read-only"));
            };
            let attached = !cluster[offset + flag.len_utf8()..].is_empty();
            match kind {
                Kind::Flag => {}
                Kind::Required => return Ok(!attached),
                Kind::Optional => return Ok(false),
            }
        }
        Ok(false)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    Required,
    Optional,
}

fn entry_name(entry: &str) -> &str {
    entry.trim_end_matches("[=]").trim_end_matches('=')
}

fn entry_kind(entry: &str) -> Kind {
    if entry.ends_with("[=]") {
        Kind::Optional
    } else if entry.ends_with('=') {
        Kind::Required
    } else {
        Kind::Flag
    }
}

/// The kind of short option `flag` in a getopt string, if it is listed.
fn short_kind(spec: &str, flag: char) -> Option<Kind> {
    if flag == ':' {
        return None;
    }
    let pos = spec.find(flag)?;
    let rest = &spec[pos + flag.len_utf8()..];
    Some(if rest.starts_with("::") {
        Kind::Optional
    } else if rest.starts_with(':') {
        Kind::Required
    } else {
        Kind::Flag
    })
}

/// Tools whose every subcommand prints its usage for `--help` wherever it sits before `--`
/// (cobra, getopt with permutation, optparse): `kubectl get --help`. Not git (`git log --help`
/// opens the help viewer the configuration names), nor tools whose subcommands run a program
/// with the words after it (`go run x --help`, `uv run`, `conda run`, `snap run`, `rustup run`,
/// cargo's and brew's external commands).
const SUBCOMMAND_HELP: &[&str] = &[
    "kubectl", "oc", "helm", "systemctl", "journalctl", "loginctl", "hostnamectl", "timedatectl", "resolvectl",
    "networkctl", "busctl", "apt", "apt-get", "apt-cache", "dnf", "yum", "pip", "pip3", "npm", "pnpm", "terraform",
    "tofu", "gh", "virsh",
];

/// docker's words before `--help`: after `run IMAGE` the words are the container's command
/// (`docker run nginx --help` starts nginx), so `--help` counts only right after subcommands.
const DOCKER_HELP: &[&str] = &["docker", "podman", "nerdctl", "docker-compose", "podman-compose"];
const DOCKER_WORDS: &[&str] = &[
    "ps", "ls", "list", "logs", "inspect", "images", "image", "version", "info", "stats", "top", "port", "history",
    "diff", "events", "search", "df", "show", "run", "exec", "create", "start", "stop", "restart", "kill", "rm", "rmi",
    "pull", "push", "build", "tag", "login", "logout", "network", "volume", "container", "system", "context",
    "builder", "buildx", "plugin", "secret", "service", "stack", "node", "swarm", "config", "manifest", "trust",
    "compose", "up", "down", "prune", "cp", "commit", "export", "import", "load", "save", "pause", "unpause", "rename",
    "update", "wait", "attach", "pod", "machine",
];

/// `kubectl get --help`, `docker compose ps --help`: up to three plain subcommand words, then
/// `--help`, for a tool on `SUBCOMMAND_HELP` (or docker's, with subcommand words only).
pub(crate) fn is_subcommand_help(name: &str, args: &[Word]) -> bool {
    let Some((last, words)) = args.split_last() else { return false };
    let plain = |w: &Word| {
        !w.dynamic
            && !w.glob
            && w.text.bytes().next().is_some_and(|c| c.is_ascii_lowercase())
            && w.text.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    let docker = DOCKER_HELP.contains(&name);
    let words_ok = if docker {
        words.iter().all(|w| plain(w) && DOCKER_WORDS.contains(&w.text.as_str()))
    } else {
        SUBCOMMAND_HELP.contains(&name) && words.iter().all(plain)
    };
    words_ok && !last.dynamic && last.text == "--help" && (1..=3).contains(&words.len())
}

/// `--help` or `--version` as the only argument: every program opsai knows prints and exits.
pub(crate) fn is_help_or_version(args: &[Word]) -> bool {
    matches!(args, [only] if !only.dynamic && matches!(only.text.as_str(), "--help" | "--version"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LS: Options = Options {
        short: "lahw:I:T::",
        long: &["all", "width=", "color[=]"],
        words: &[],
        numeric: false,
        operands: Operands::Any,
    };

    fn check(options: &Options, line: &str) -> Option<String> {
        let words: Vec<Word> = line.split_whitespace().map(Word::literal).collect();
        options.first_unknown(&words)
    }

    #[test]
    fn known_forms_pass() {
        for line in [
            "", "-la", "-l -a dir", "-w 80", "-w80", "-lw80", "-lw 80 x", "--all", "--width=3", "--width 3", "--color",
            "--color=never", "-T", "-T4", "-- --zz", "-", "dir -l",
        ] {
            assert_eq!(check(&LS, line), None, "{line}");
        }
    }

    #[test]
    fn unknown_forms_are_named() {
        for (line, named) in [
            ("--zz", "--zz"),
            ("--al", "--al"),
            ("--all=yes", "--all"),
            ("-lx", "-x (in -lx)"),
            ("-5", "-5"),
            ("--color x --bogus", "--bogus"),
        ] {
            let problem = check(&LS, line).unwrap_or_default();
            assert!(problem.contains(named), "{line}: {problem}");
        }
        // The value of -w is data, not an option: `-w --zz` passes, `-T --zz` does not (optional).
        assert_eq!(check(&LS, "-w --zz"), None);
        assert!(check(&LS, "-T --zz").is_some());
    }

    #[test]
    fn operand_limits_and_numbers() {
        let cd = Options { short: "LP", operands: Operands::AtMost(1), ..Options::NONE };
        assert_eq!(check(&cd, "-P /tmp"), None);
        assert!(check(&cd, "a b").is_some());
        let head = Options { short: "n:", numeric: true, ..Options::NONE };
        assert_eq!(check(&head, "-20 f"), None);
        let find = Options { words: &["name=", "print"], ..Options::NONE };
        assert_eq!(check(&find, ". -name -x -print"), None);
        assert!(check(&find, ". -delete").is_some());
    }
}
