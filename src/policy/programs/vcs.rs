//! `git`: inspection is read-only unless an option makes git run another program; history-
//! rewriting and work-discarding commands are High; everything else changes the repository.

use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};

const GLOBAL_WITH_VALUE: &[&str] = &[
    "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env", "--super-prefix",
    "--list-cmds",
];

const READ_ONLY: &[&str] = &[
    "status", "log", "diff", "show", "rev-parse", "rev-list", "ls-files", "ls-tree", "ls-remote", "blame", "annotate",
    "shortlog", "describe", "cat-file", "grep", "whatchanged", "name-rev", "merge-base", "show-ref", "show-branch",
    "for-each-ref", "count-objects", "fsck", "verify-commit", "verify-tag", "check-ignore", "check-attr", "var",
    "version", "help", "cherry", "range-diff", "diff-tree", "diff-files", "diff-index", "--version", "--help",
];

/// Options of read-only subcommands that write files or run other programs.
const READ_VETOES: &[(&str, &str)] = &[
    ("--output", "writes its output to a file"),
    ("--ext-diff", "runs an external diff program"),
    ("--open-files-in-pager", "runs a pager program"),
    ("--textconv", "runs text conversion programs"),
    ("--upload-pack", "runs the given program as git's remote helper"),
    ("--receive-pack", "runs the given program as git's remote helper"),
    ("--exec", "runs the given program as git's remote helper"),
    ("--web", "starts a browser"),
];

pub fn git<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let Some((index, sub)) = inv.subcommand(GLOBAL_WITH_VALUE) else {
        return Verdict::SAFE.into();
    };
    let global = Invocation { args: &inv.args[..index], ..*inv };
    if global.has_word(&["-c"])
        || global.has_long("--exec-path")
        || global.has_long("--config-env")
        || global.has_long("--git-dir")
        || global.texts().any(|t| t.starts_with("-c"))
    {
        return Verdict::medium("git -c, --git-dir or --exec-path can make git run another program").into();
    }
    let rest = inv.after(index);
    let positional: Vec<&str> = rest.positionals().iter().map(|w| w.text.as_str()).collect();
    let has = |short: char, long: &str| rest.has_short(short) || rest.has_long(long);
    if READ_ONLY.contains(&sub) {
        if let Some((_, reason)) = READ_VETOES.iter().find(|(opt, _)| rest.has_long(opt)) {
            return Verdict::medium(*reason).into();
        }
        if sub == "fsck" && rest.has_long("--lost-found") {
            return Verdict::medium("writes recovered objects into .git/lost-found").into();
        }
        if sub == "grep" && rest.has_short('O') {
            return Verdict::medium("runs a pager program").into();
        }
        return Verdict::SAFE.into();
    }
    let verdict = match sub {
        "push" => {
            let forced = has('f', "--force")
                || rest.has_long("--force-with-lease")
                || rest.has_long("--mirror")
                || has('d', "--delete")
                || positional.iter().any(|p| p.starts_with('+') || p.starts_with(':'));
            if forced {
                Verdict::high("force-push or remote delete rewrites shared history")
            } else {
                Verdict::medium("pushes commits to a remote")
            }
        }
        "reset" if rest.has_long("--hard") => Verdict::high("reset --hard discards uncommitted changes"),
        "clean" if !(has('n', "--dry-run")) && (has('f', "--force") || has('i', "--interactive")) => {
            Verdict::high("deletes untracked files")
        }
        "clean" => Verdict::SAFE,
        "checkout" | "switch" if has('f', "--force") || rest.has_long("--discard-changes") => {
            Verdict::high("discards uncommitted changes")
        }
        "checkout" if rest.texts().any(|t| t == "--") || positional.contains(&".") => {
            Verdict::high("discards uncommitted changes to files")
        }
        "restore" if !(has('S', "--staged")) || rest.has_short('W') || rest.has_long("--worktree") => {
            Verdict::high("discards uncommitted changes to files")
        }
        "branch" => branch(&rest, &positional),
        "tag" if has('d', "--delete") => Verdict::medium("deletes a tag"),
        "tag" if positional.is_empty() || has('l', "--list") => Verdict::SAFE,
        "remote" if positional.is_empty() || matches!(positional.first(), Some(&("show" | "get-url"))) => Verdict::SAFE,
        "stash" => match positional.first() {
            Some(&("list" | "show")) => Verdict::SAFE,
            Some(&("drop" | "clear")) => Verdict::high("permanently deletes stashed changes"),
            _ => Verdict::medium("stashes or restores changes"),
        },
        "reflog" => match positional.first() {
            Some(&("expire" | "delete")) => Verdict::high("destroys the history git uses for recovery"),
            _ => Verdict::SAFE,
        },
        "config" => {
            let reads = rest.texts().all(|t| {
                t.starts_with("--get")
                    || matches!(
                        t,
                        "--list"
                            | "-l"
                            | "--show-origin"
                            | "--show-scope"
                            | "--global"
                            | "--system"
                            | "--local"
                            | "-z"
                            | "--name-only"
                    )
            }) && positional.len() <= 1
                || positional.first() == Some(&"get")
                || positional.first() == Some(&"list");
            if reads { Verdict::SAFE } else { Verdict::medium("changes git configuration") }
        }
        "worktree" | "submodule" | "notes" | "bisect"
            if matches!(positional.first(), Some(&("list" | "status" | "show" | "log"))) =>
        {
            Verdict::SAFE
        }
        "gc" if rest.texts().any(|t| t.starts_with("--prune")) => Verdict::high("prunes objects git could recover"),
        "prune" => Verdict::high("prunes objects git could recover"),
        "filter-branch" | "filter-repo" => Verdict::high("rewrites the repository's history"),
        "update-ref" if has('d', "--delete") => Verdict::high("deletes a reference"),
        "add" | "commit" | "checkout" | "switch" | "restore" | "merge" | "rebase" | "pull" | "fetch"
        | "cherry-pick" | "revert" | "init" | "clone" | "mv" | "rm" | "am" | "apply" | "format-patch" | "submodule"
        | "worktree" | "tag" | "remote" | "gc" | "bisect" | "notes" | "lfs" | "reset" | "update-ref" | "archive"
        | "sparse-checkout" | "maintenance" | "repack" | "pack-refs" => {
            Verdict::medium(format!("git {sub} changes the repository"))
        }
        _ => Verdict::medium(format!("git {sub} (an alias or extension: effect unknown)")),
    };
    verdict.into()
}

fn branch(rest: &Invocation, positional: &[&str]) -> Verdict {
    if rest.has_short('D')
        || (rest.has_short('d') || rest.has_long("--delete")) && (rest.has_short('f') || rest.has_long("--force"))
    {
        return Verdict::high("force-deletes a branch (unmerged commits are lost)");
    }
    if rest.has_short('d') || rest.has_long("--delete") {
        return Verdict::medium("deletes a merged branch");
    }
    let changes = rest.has_short('m')
        || rest.has_short('M')
        || rest.has_short('c')
        || rest.has_short('C')
        || rest.has_long("--move")
        || rest.has_long("--copy")
        || rest.has_long("--set-upstream-to")
        || rest.has_short('u')
        || rest.has_long("--unset-upstream")
        || rest.has_long("--edit-description");
    let listing_flags = rest.has_short('l')
        || rest.has_long("--list")
        || rest.has_long("--contains")
        || rest.has_long("--merged")
        || rest.has_long("--no-merged")
        || rest.has_long("--points-at");
    if changes || (!positional.is_empty() && !listing_flags) {
        return Verdict::medium("creates or changes a branch");
    }
    Verdict::SAFE
}
