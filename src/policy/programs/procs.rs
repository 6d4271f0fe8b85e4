//! `ps` (UNIX and BSD option styles), `history` and `systemd-analyze`: readers with one form that
//! is not read-only or prints what it should not.

use super::inspect;
use super::options::{Operands, Options};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

/// BSD-style `ps` letters (`ps aux`), without `e`, which adds every process's environment.
const PS_BSD_FLAGS: &str = "aAcCfgGhjlLmMnrSTuvwxXZ";
/// BSD letters whose value is the next word (`ps p 1`, `ps o pid,comm`).
const PS_BSD_VALUED: &str = "kOopqtU";

pub fn ps<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if let Some(problem) = inspect::PS.first_unknown(inv.args) {
        return Verdict::medium(problem).into();
    }
    let operands = inspect::PS.operand_indices(inv.args);
    let mut skip = false;
    for &index in &operands {
        let text = inv.args[index].text.as_str();
        if std::mem::take(&mut skip) || text.chars().all(|c| c.is_ascii_digit() || c == ',') {
            continue;
        }
        for (offset, letter) in text.char_indices() {
            if letter == 'e' {
                return Verdict::medium("ps e shows the environment of every process (tokens included)").into();
            }
            if PS_BSD_VALUED.contains(letter) {
                skip = text[offset + 1..].is_empty();
                break;
            }
            if !PS_BSD_FLAGS.contains(letter) {
                return Verdict::medium(format!("ps {text}: option {letter} not known to be read-only")).into();
            }
        }
    }
    Verdict::SAFE.into()
}

/// `history`, `history 20`, `history -p`: read-only. `-c`/`-d` wipe it; `-a`/`-n`/`-r`/`-w`/`-s`
/// rewrite or reload it.
pub fn history<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    if inv.has_short('c') || inv.has_short('d') {
        return Verdict::high("wipes shell history").into();
    }
    if inv.has_short('w') || inv.has_short('a') || inv.has_short('r') || inv.has_short('n') || inv.has_short('s') {
        return Verdict::medium("rewrites the history file").into();
    }
    inspect::HISTORY.check(inv).into()
}

/// `systemd-analyze` reports; `set-log-level`/`set-log-target` (and `log-level X`) change the
/// service manager.
pub(crate) fn systemd_analyze<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    const OPTIONS: Options = Options {
        short: "hqM:H:",
        long: &[
            "user", "system", "global", "no-pager", "json=", "machine=", "root=", "order", "require", "fuzz=",
            "man[=]", "generators[=]", "recursive-errors=", "offline=", "threshold=", "security-policy=",
            "iterations=", "base-time=", "unit=", "table", "no-legend", "quiet", "tldr", "scale-svg=", "detailed",
            "from-pattern=", "to-pattern=", "profile=", "instance=",
        ],
        words: &[],
        numeric: false,
        operands: Operands::Any,
    };
    const READS: &[&str] = &[
        "time", "blame", "critical-chain", "plot", "dot", "dump", "cat-config", "unit-files", "unit-paths",
        "exit-status", "syscall-filter", "capability", "filesystems", "condition", "verify", "calendar", "timestamp",
        "timespan", "security", "inspect-elf", "fdstore", "image-policy", "pcrs", "architectures", "smbios11",
        "malloc", "compare-versions", "has-tpm2", "srk",
    ];
    let positionals = inv.positionals();
    let sub = positionals.first().map_or("time", |w| w.text.as_str());
    let reads = READS.contains(&sub)
        || matches!(sub, "log-level" | "log-target" | "service-watchdogs") && positionals.len() == 1;
    if !reads {
        return Verdict::medium(format!("systemd-analyze {sub} is not known to be read-only")).into();
    }
    if inv.has_word(&["-H"]) || inv.has_long("--host") {
        return Verdict::medium("-H connects to another host over ssh").into();
    }
    OPTIONS.check(inv).into()
}
