//! Shell builtins and the programs that print the environment. A builtin that assigns a variable
//! (`read`, `printf -v`, `declare`, `export`…) is never Safe: later words of the same line can
//! expand it, and what it assigns is only known at run time. Printing the whole environment
//! (`env`, `printenv`, `set`, `declare -p`, `ps e`) is never Safe either: tokens live there.

use super::options::{Operands, Options};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

const fn at_most(short: &'static str, operands: usize) -> Options {
    Options { short, long: &[], words: &[], numeric: false, operands: Operands::AtMost(operands) }
}

/// `cd [-L|-P] [DIR]`. Safe: opsai runs each line in a fresh `bash -c`, so the new directory dies
/// with the line; a secret directory is caught by the path check (cd is not a metadata reader), and
/// the sandbox denies secret paths whatever the working directory.
pub(crate) static CD: Options = at_most("LPe@", 1);
pub(crate) static PUSHD: Options = at_most("n", 1);
pub(crate) static POPD: Options = at_most("n", 1);
// `dirs -c` clears the stack: left out.
pub(crate) static DIRS: Options = at_most("lpv", 1);
// `wait -p VAR` assigns a variable: left out.
pub(crate) static WAIT: Options = Options { short: "fn", ..Options::NONE };
// `jobs -x CMD` runs a command: left out.
pub(crate) static JOBS: Options = Options { short: "lnprs", ..Options::NONE };
pub(crate) static SHOPT: Options = Options { short: "opqsu", ..Options::NONE };
/// `ulimit -a`, `ulimit -n`: a new limit as an operand changes the shell's limits.
pub(crate) static ULIMIT: Options = at_most("SHabcdefiklmnpqrstuvxPRT", 0);
pub(crate) static TPUT: Options = Options { short: "SxVT:", ..Options::NONE };
pub(crate) static CLEAR: Options = Options { short: "xVT:", ..Options::NONE };
/// `hash`, `hash -l`, `hash NAME`; `-p PATH NAME` rebinds a name to another program: left out.
pub(crate) static HASH: Options = Options { short: "lrt", ..Options::NONE };
/// `alias` and `alias -p` print; `alias name=value` changes what later words run.
pub(crate) static ALIAS: Options = at_most("p", 0);
/// `umask` and `umask -S` print; `umask 077` changes the mode of files created later.
pub(crate) static UMASK: Options = at_most("pS", 0);
pub(crate) static HELP: Options = Options { short: "dms", ..Options::NONE };
pub(crate) static TYPE: Options = Options { short: "afptP", ..Options::NONE };

pub(crate) const ASSIGNS: &str = "assigns shell variables (what it assigns is only known at run time)";
pub(crate) const SETS_OR_PRINTS: &str =
    "sets shell variables or attributes, or prints them all (secrets included): never Safe";

/// `printf FORMAT ARGS…`: the arguments are data; `-v VAR` assigns instead of printing.
pub fn printf<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    match inv.args.first().map(|w| w.text.as_str()) {
        Some(first) if first.starts_with("-v") => Verdict::medium("printf -v assigns a shell variable").into(),
        Some(first) if first.starts_with('-') && first != "--" && first != "-" => {
            Verdict::medium(format!("option {first} not known to be read-only")).into()
        }
        _ => Verdict::SAFE.into(),
    }
}

/// `printenv NAME…` prints those variables (a secret-looking name is High by the argument check);
/// `printenv` alone prints the whole environment.
pub(crate) fn printenv<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const PRINTENV: Options = Options { short: "0", long: &["null"], ..Options::NONE };
    if inv.positionals().is_empty() {
        return Verdict::medium("prints the whole environment (tokens and passwords included)").into();
    }
    PRINTENV.check(inv).into()
}

/// `set -euo pipefail`, `set -x`, `set -o`: shell options. `set` alone prints every variable;
/// `set -- a b` assigns the positional parameters; `set +o history` switches history off.
pub fn set<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const LETTERS: &str = "abefhkmnptuvxBCEHPT";
    const NAMED: &[&str] = &[
        "allexport", "braceexpand", "emacs", "errexit", "errtrace", "functrace", "hashall", "histexpand", "ignoreeof",
        "interactive-comments", "keyword", "monitor", "noclobber", "noexec", "noglob", "nolog", "notify", "nounset",
        "onecmd", "physical", "pipefail", "posix", "privileged", "verbose", "vi", "xtrace",
    ];
    let texts: Vec<&str> = inv.texts().collect();
    if texts.windows(2).any(|pair| pair[0] == "+o" && pair[1] == "history") {
        return Verdict::high("switches off shell history").into();
    }
    if texts.is_empty() {
        return Verdict::medium("prints every shell variable (tokens and passwords included)").into();
    }
    let mut i = 0;
    while let Some(text) = texts.get(i) {
        i += 1;
        let letters = text.strip_prefix('-').or_else(|| text.strip_prefix('+')).unwrap_or("");
        // `-o NAME` and clusters ending in it (`-euo pipefail`); `set -o` alone prints the options.
        let (flags, named) = letters.strip_suffix('o').map_or((letters, false), |rest| (rest, true));
        if (letters.is_empty() && !named) || !flags.chars().all(|c| LETTERS.contains(c)) {
            return Verdict::medium(format!(
                "set {text}: assigns the positional parameters or is not a known shell option"
            ))
            .into();
        }
        if named && let Some(name) = texts.get(i) {
            if !NAMED.contains(name) {
                return Verdict::medium(format!("set -o {name}: not a shell option known to be harmless")).into();
            }
            i += 1;
        }
    }
    Verdict::SAFE.into()
}
