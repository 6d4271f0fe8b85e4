//! Rules that need more than a flag list: subcommands, targets, and the commands a program runs in
//! turn. Each module keeps its own small tables beside the logic; `rules.rs` says which program
//! goes where.

pub mod builtins;
pub mod cluster;
pub mod cluster_tables;
pub mod files;
pub mod git_tables;
pub mod hardware;
pub mod infra;
pub mod inspect;
pub mod kube_output;
pub mod net;
pub mod options;
pub mod packages;
pub mod procs;
pub mod readers;
pub mod search_tables;
pub mod shells;
pub mod system;
pub mod text;
pub mod tools;
pub mod vcs;
pub mod viewers;

use super::paths;
use super::verdict::Verdict;
use super::word::Word;

/// Index of the first word that is not an option of a wrapper-like program. `with_value` lists the
/// options (`-n`, `--signal`) whose value is the next word unless attached (`-n10`, `--signal=9`).
pub(crate) fn skip_options(args: &[Word], with_value: &[&str]) -> usize {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        if text == "--" {
            return i + 1;
        }
        if !text.starts_with('-') || text == "-" {
            return i;
        }
        let takes_value = if text.starts_with("--") {
            !text.contains('=') && with_value.contains(&text)
        } else {
            // `-n 10` takes the next word; `-n10` carries its value.
            text.len() == 2 && with_value.contains(&text)
        };
        i += if takes_value { 2 } else { 1 };
    }
    i
}

/// `git --namespace status`, `docker -l ps`: with no subcommand left, an option's value that is
/// a subcommand's name was most likely meant as one; what the program will do is unclear.
pub(crate) fn value_where_subcommand_expected(
    args: &[Word],
    with_value: &[&str],
    subcommands: &[&str],
) -> Option<Verdict> {
    args.windows(2).find_map(|pair| {
        (with_value.contains(&pair[0].text.as_str()) && subcommands.contains(&pair[1].text.as_str())).then(|| {
            Verdict::medium(format!(
                "{} takes {} as its value where a subcommand is expected: not a known read-only form",
                pair[0].text, pair[1].text
            ))
        })
    })
}

/// A file argument that means "read standard input" (`-`, `/dev/stdin`, `/dev/fd/0`…): a config
/// taken from there is whatever a here-string or pipe says.
pub(crate) fn is_stdin(path: &str) -> bool {
    matches!(path, "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/dev/tty")
        || path.starts_with("/proc/") && path.ends_with("/fd/0")
}

/// Verdict for writing (creating, truncating, deleting, re-permissioning) `target`.
pub(crate) fn write_target(target: &Word, action: &str) -> Verdict {
    if let Some(place) = paths::sensitive(&target.text) {
        return Verdict::high(format!("{action} {} ({})", place.describe(), target.text));
    }
    if target.dynamic {
        return Verdict::medium(format!("{action} a path computed at run time ({})", target.text));
    }
    Verdict::medium(format!("{action} {}", target.text))
}

/// The strictest `write_target` over several targets, or `fallback` when there are none.
pub(crate) fn write_targets<'w>(
    targets: impl IntoIterator<Item = &'w Word>,
    action: &str,
    fallback: Verdict,
) -> Verdict {
    let mut verdict: Option<Verdict> = None;
    for target in targets {
        let next = write_target(target, action);
        verdict = Some(match verdict {
            None => next,
            Some(current) => current.max(next),
        });
    }
    verdict.unwrap_or(fallback)
}

/// Joins words into one line of shell code (`eval a b`, `ssh host cmd…`, `watch cmd…`).
pub(crate) fn join_code(words: &[Word]) -> Word {
    let mut joined = Word { quoted: true, ..Word::default() };
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            joined.text.push(' ');
        }
        joined.text.push_str(&word.text);
        joined.dynamic |= word.dynamic;
        joined.vars.extend(word.vars.iter().cloned());
        joined.subs.extend(word.subs.iter().cloned());
    }
    joined
}

/// Subcommand tables: `(names, verdict)` rows; the first row whose names contain `sub` wins.
pub(crate) fn by_subcommand(
    sub: &str,
    safe: &[&str],
    high: &[(&[&str], &'static str)],
    medium: &'static str,
) -> Verdict {
    if safe.contains(&sub) {
        return Verdict::SAFE;
    }
    if let Some((_, reason)) = high.iter().find(|(names, _)| names.contains(&sub)) {
        return Verdict::high(*reason);
    }
    Verdict::medium(medium)
}
