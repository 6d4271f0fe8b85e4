//! `git`: inspection is read-only unless an option makes git run another program; history-
//! rewriting and work-discarding commands are High; everything else changes the repository.

use super::git_tables::{GIT_CONFIG_READ, GIT_READ};
use crate::policy::invocation::Invocation;
use crate::policy::verdict::{Outcome, Verdict};
use crate::protocol::Risk;

const GLOBAL_WITH_VALUE: &[&str] =
    &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"];

const READ_ONLY: &[&str] = &[
    "status", "log", "diff", "show", "rev-parse", "rev-list", "ls-files", "ls-tree", "blame", "annotate", "shortlog",
    "describe", "cat-file", "grep", "whatchanged", "name-rev", "merge-base", "show-ref", "show-branch", "for-each-ref",
    "count-objects", "fsck", "check-ignore", "check-attr", "var", "version", "help", "cherry", "range-diff",
    "diff-tree", "diff-files", "diff-index", "--version", "--help",
];

/// Read commands that run a program the repository's or user's configuration names: the remote
/// transport (`core.sshCommand`, `credential.helper`), `gpg.program`, the help viewer.
const RUNS_CONFIGURED: &[(&str, &str)] = &[
    ("ls-remote", "contacts the remote, through the ssh command and credential helper the configuration names"),
    ("verify-commit", "runs the signature program the configuration names (gpg.program)"),
    ("verify-tag", "runs the signature program the configuration names (gpg.program)"),
];

/// Options of read-only subcommands that write files or run other programs.
const READ_VETOES: &[(&str, Risk, &str)] = &[
    ("--output", Risk::Medium, "writes its output to a file"),
    ("--ext-diff", Risk::High, "runs an external diff program (a code runner)"),
    ("--open-files-in-pager", Risk::High, "runs the program it names as a pager (a code runner)"),
    ("--textconv", Risk::High, "runs text conversion programs (a code runner)"),
    ("--upload-pack", Risk::High, "runs the given program as git's remote helper (a code runner)"),
    ("--receive-pack", Risk::High, "runs the given program as git's remote helper (a code runner)"),
    ("--exec", Risk::High, "runs the given program as git's remote helper (a code runner)"),
    ("--web", Risk::Medium, "starts a browser"),
];

/// `--opt`, `--opt=…`, or an abbreviation git would expand to it; an abbreviation that is itself a
/// read-only option (`--text` is not `--textconv`) is that option.
fn names_option(rest: &Invocation, opt: &str) -> bool {
    let want = opt.trim_start_matches("--");
    rest.texts().take_while(|t| *t != "--").any(|text| {
        let Some(key) = text.strip_prefix("--").map(|k| k.split_once('=').map_or(k, |(k, _)| k)) else {
            return false;
        };
        key == want || key.len() >= 3 && want.starts_with(key) && !GIT_READ.knows_long(key)
    })
}

/// `git -c KEY=VALUE`: keys that name a program git runs, or that load more configuration.
fn config_runs_program(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    const PREFIXES: &[&str] = &[
        "core.", "alias.", "include", "filter.", "pager.", "credential", "gpg.", "uploadpack.", "remote.", "diff.",
        "merge.", "mergetool.", "difftool.", "sequence.", "interactive.", "sendemail.", "man.", "browser.", "web.",
        "hook", "protocol.", "ssh.", "url.", "instaweb.", "gui.", "guitool.", "receive.", "transfer.",
    ];
    const WORDS: &[&str] = &[
        "hook", "cmd", "command", "program", "editor", "exec", "textconv", "helper", "driver", "external", "fsmonitor",
        "pager", "askpass", "proxy",
    ];
    PREFIXES.iter().any(|p| key.starts_with(p)) || WORDS.iter().any(|w| key.contains(w))
}

/// The global options before the subcommand: `Err` is the verdict when one is not read-only.
fn global_options(global: &Invocation) -> Result<(), Verdict> {
    let texts: Vec<&str> = global.texts().collect();
    let mut i = 0;
    while let Some(text) = texts.get(i) {
        i += 1;
        let (name, value) = text.split_once('=').map_or((*text, None), |(n, v)| (n, Some(v)));
        match name {
            "-p"
            | "--paginate"
            | "-P"
            | "--no-pager"
            | "--no-replace-objects"
            | "--no-lazy-fetch"
            | "--no-optional-locks"
            | "--no-advice"
            | "--bare"
            | "--literal-pathspecs"
            | "--glob-pathspecs"
            | "--noglob-pathspecs"
            | "--icase-pathspecs"
            | "--html-path"
            | "--man-path"
            | "--info-path"
                if value.is_none() => {}
            "--exec-path" if value.is_none() => {}
            "--namespace" | "--list-cmds" => i += usize::from(value.is_none()),
            "--exec-path" => {
                return Err(Verdict::high("--exec-path=DIR makes git run its helper programs from DIR"));
            }
            "-c" | "--config-env" => {
                let setting = value.or_else(|| texts.get(i).copied()).unwrap_or("");
                let key = setting.split_once('=').map_or(setting, |(k, _)| k);
                return Err(if config_runs_program(key) {
                    Verdict::high(format!("git -c {key} can make git run a program (a code runner)"))
                } else {
                    Verdict::medium(format!("git -c {key} changes git's configuration for this command"))
                });
            }
            _ if text.starts_with("-c") && !text.starts_with("--") => {
                let key = text[2..].split_once('=').map_or(&text[2..], |(k, _)| k);
                return Err(if config_runs_program(key) {
                    Verdict::high(format!("git -c {key} can make git run a program (a code runner)"))
                } else {
                    Verdict::medium(format!("git -c {key} changes git's configuration for this command"))
                });
            }
            "-C" | "--git-dir" | "--work-tree" => {
                return Err(Verdict::medium(format!(
                    "git {name} reads another repository, whose own config can run programs (hooks, fsmonitor)"
                )));
            }
            _ if text.starts_with("-C") && !text.starts_with("--") => {
                return Err(Verdict::medium(
                    "git -C reads another repository, whose own config can run programs (hooks, fsmonitor)",
                ));
            }
            _ => return Err(Verdict::medium(format!("git option {text} not known to be read-only"))),
        }
    }
    Ok(())
}

pub fn git<'a>(inv: &Invocation<'a>) -> Outcome<'a> {
    let Some((index, sub)) = inv.subcommand(GLOBAL_WITH_VALUE) else {
        if let Some(verdict) = super::value_where_subcommand_expected(inv.args, GLOBAL_WITH_VALUE, READ_ONLY) {
            return verdict.into();
        }
        let global = Invocation { args: inv.args, ..*inv };
        return global_options(&global).err().unwrap_or(Verdict::SAFE).into();
    };
    let global = Invocation { args: &inv.args[..index], ..*inv };
    if let Err(verdict) = global_options(&global) {
        // A code runner among the global options wins over whatever the subcommand is.
        if verdict.risk == Risk::High {
            return verdict.into();
        }
        let rest = sub_verdict(inv, index, sub);
        return rest.max(verdict).into();
    }
    sub_verdict(inv, index, sub).into()
}

fn sub_verdict(inv: &Invocation, index: usize, sub: &str) -> Verdict {
    let verdict = sub_rules(inv, index, sub);
    if verdict.risk != Risk::Safe {
        return verdict;
    }
    let rest = inv.after(index);
    let table = if sub == "config" { &GIT_CONFIG_READ } else { &GIT_READ };
    table.check(&rest)
}

fn sub_rules(inv: &Invocation, index: usize, sub: &str) -> Verdict {
    let rest = inv.after(index);
    // Code runners, whatever the subcommand (`git fetch --upload-pack=…`, `git push --exec=…`).
    if let Some((_, risk, reason)) =
        READ_VETOES.iter().find(|(opt, risk, _)| *risk == Risk::High && names_option(&rest, opt))
    {
        return Verdict { risk: *risk, reason: (*reason).into() };
    }
    let positional: Vec<&str> = rest.positionals().iter().map(|w| w.text.as_str()).collect();
    let has = |short: char, long: &str| rest.has_short(short) || rest.has_long(long);
    if sub == "cat-file" && rest.has_long("--filters") {
        return Verdict::high("runs the configured filter programs (a code runner)");
    }
    let runs = match sub {
        "rebase" => has('x', "--exec"),
        "bisect" => positional.first() == Some(&"run"),
        "submodule" => positional.first() == Some(&"foreach"),
        "difftool" => has('x', "--extcmd"),
        "send-email" => rest.has_long("--to-cmd") || rest.has_long("--cc-cmd") || rest.has_long("--sendmail-cmd"),
        _ => false,
    };
    if runs {
        return Verdict::high(format!("git {sub} runs the command it is given (a code runner)"));
    }
    if let Some((_, why)) = RUNS_CONFIGURED.iter().find(|(name, _)| *name == sub) {
        return Verdict::medium(*why);
    }
    // `git help log`, `git log --help`: the help viewer is whatever `man.viewer`/`help.format`
    // name. `git help` alone and `git help -a`/`-g` print lists.
    let viewer = sub == "help" && !positional.is_empty() || sub != "help" && names_option(&rest, "--help");
    if viewer && sub == "help" && rest.has_short('w') {
        return Verdict::medium("starts a browser");
    }
    if viewer {
        return Verdict::medium("opens a help viewer, which the configuration can name (man.viewer, help.format=web)");
    }
    let signature = names_option(&rest, "--show-signature")
        || rest.texts().any(|t| t.contains("%G"))
        || sub == "tag" && (rest.has_short('v') || rest.has_long("--verify"));
    if signature {
        return Verdict::medium("checks signatures with the program the configuration names (gpg.program)");
    }
    if READ_ONLY.contains(&sub) {
        if let Some((_, risk, reason)) = READ_VETOES.iter().find(|(opt, _, _)| names_option(&rest, opt)) {
            return Verdict { risk: *risk, reason: (*reason).into() };
        }
        if sub == "fsck" && rest.has_long("--lost-found") {
            return Verdict::medium("writes recovered objects into .git/lost-found");
        }
        if sub == "help" && rest.has_short('w') {
            return Verdict::medium("starts a browser");
        }
        if sub == "grep" && rest.has_short('O') {
            return Verdict::high("runs the program it names as a pager (a code runner)");
        }
        return Verdict::SAFE;
    }
    match sub {
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
        "clean" if has('n', "--dry-run") => Verdict::SAFE,
        "clean" => Verdict::medium("git clean deletes untracked files unless the repository's config stops it"),
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
        // `remote show NAME` contacts the remote unless `-n`.
        "remote" if positional.first() == Some(&"show") && positional.len() > 1 && !rest.has_short('n') => {
            Verdict::medium(
                "contacts the remote, through the ssh command and credential helper the configuration names",
            )
        }
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
            let new_style = matches!(positional.first(), Some(&("get" | "list")));
            let old_style = rest.texts().any(|t| t.starts_with("--get") || matches!(t, "--list" | "-l"));
            // `git config user.email`: one key and no value is a read.
            let plain_read = positional.len() == 1 && positional[0].contains('.');
            if new_style || old_style && positional.len() <= 2 || plain_read {
                Verdict::SAFE
            } else {
                Verdict::medium("changes git configuration")
            }
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
    }
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
