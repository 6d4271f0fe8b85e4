//! Pagers, `man` and the JSON/YAML query tools: readers whose options or programs can run a
//! command, write a file or print the environment.

use super::readers;
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

/// `less` and friends read, unless told to write a log file or to run a command at startup
/// (`less '+!rm -rf ~' f` runs it through the shell).
pub fn pager<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.has_short('k') || inv.has_long("--lesskey-file") || inv.has_long("--lesskey-src") {
        return Verdict::medium("reads a key file that can run commands").into();
    }
    if inv.name.ends_with("less") && (inv.has_short('o') || inv.has_short('O'))
        || inv.has_long("--log-file")
        || inv.has_long("--LOG-FILE")
    {
        return Verdict::medium("writes a log file").into();
    }
    let startup: Vec<&str> = inv.texts().filter_map(|t| t.strip_prefix('+')).collect();
    if startup.iter().any(|cmd| cmd.contains(['!', '|'])) {
        return Verdict::high("runs a shell command from the pager at startup (+!cmd)").into();
    }
    if startup.iter().any(|cmd| cmd.contains(['s', 'o'])) {
        return Verdict::medium("a pager command at startup that can write files").into();
    }
    let table = if inv.name.ends_with("more") { &readers::MORE } else { &readers::LESS };
    table.check(inv).into()
}

/// `man`: reading a page is Safe; a pager, browser or preprocessor given on the command line
/// runs that program, so it is a code runner (High).
pub(crate) fn man<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let runs = inv.has_short('P')
        || inv.has_long("--pager")
        || inv.has_short('H')
        || inv.has_long("--html")
        || inv.has_short('p')
        || inv.has_long("--preprocessor");
    if runs {
        return Verdict::high("an option that makes man run a program it names (-P, -H, -p)").into();
    }
    readers::MAN.check(inv).into()
}

/// `jq`/`yq`: the filter language reads; `env`, `$ENV` (jq) and `env()`/`strenv()`/`load()` (yq)
/// reach the environment or other files, and `yq -i` edits in place.
pub(crate) fn jq<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.name == "yq" && (inv.has_short('i') || inv.has_long("--inplace")) {
        return Verdict::medium("edits files in place").into();
    }
    let table = if inv.name == "yq" { &readers::YQ } else { &readers::JQ };
    let operands = table.operand_indices(inv.args);
    let filter = operands.first().and_then(|&i| inv.args.get(i)).map_or("", |w| w.text.as_str());
    if reads_environment(filter) {
        return Verdict::medium("the filter reads the environment (env / $ENV), where tokens live").into();
    }
    if inv.name == "yq" && ["load(", "load_str(", "load_xml(", "load_props("].iter().any(|f| filter.contains(f)) {
        return Verdict::medium("the expression loads another file").into();
    }
    table.check(inv).into()
}

/// `$ENV`, `strenv(…)`, or the builtin `env` (not a field such as `.env` or `.spec.env`).
fn reads_environment(filter: &str) -> bool {
    if filter.contains("$ENV") || filter.contains("strenv(") {
        return true;
    }
    let bytes = filter.as_bytes();
    filter.match_indices("env").any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + 3).copied();
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        !before.is_some_and(|b| word(b) || b == b'.' || b == b'$' || b == b'"')
            && !after.is_some_and(|b| word(b) || b == b'"')
    })
}

#[cfg(test)]
mod tests {
    use super::reads_environment;

    #[test]
    fn env_builtin_not_env_fields() {
        for filter in ["env", "env.HOME", "$ENV.PATH", "[env]", "env | keys", "strenv(A)", ". as $x | env"] {
            assert!(reads_environment(filter), "{filter}");
        }
        for filter in [".env", ".spec.containers[].env", ".environment", "select(.name == \"env\")", ".x.env[0]"] {
            assert!(!reads_environment(filter), "{filter}");
        }
    }
}
