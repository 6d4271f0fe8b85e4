//! What an "always allow" (`[a]`) answer covers for the rest of the session (issue 13 §2).
//!
//! A grant is the program, its subcommand (for programs that have them) and the exact set of option
//! words it was given, as written (`git fetch --prune`, `kubectl rollout --namespace=web`); a later
//! command is covered only when it has the same program, subcommand and option set, and the policy
//! rates it Medium again. Operands — paths, names, and values given as their own word (`-m msg`) —
//! may differ: `git commit -m one` covers `git commit -m two`, not `git commit --amend -m two`. The
//! policy assesses every command anew, so an operand that makes a command High (a secret path, a
//! system directory, a metadata address) is asked about whatever was granted.
//!
//! No grant is offered for:
//! - a line that is not one simple command starting with the program itself (`sudo rm`, `X=1 git`,
//!   `a && b`), or that has redirections, pipes, substitutions, backslashes or line breaks;
//! - a program that runs code or other programs named by its arguments, where a different operand is
//!   a different program: shells, interpreters, wrappers (`env`, `xargs`, `timeout`…), task runners
//!   (`make`, `npx`), and subcommands such as `npm run`, `cargo run`, `docker exec`, package installs;
//! - a code-running option (`-c`, `-e`, `--eval`, `--exec`, `--upload-pack`…);
//! - global options before the subcommand (`git -C dir commit`): the subcommand must come first.
//!
//! High commands never get one (the approval prompt offers `[a]` for Medium only).

use crate::protocol::Assessment;

/// Programs whose first word is a subcommand, so a grant names both (`git commit`, not all of git).
const WITH_SUBCOMMANDS: &[&str] = &[
    "git", "docker", "podman", "kubectl", "helm", "terraform", "systemctl", "apt", "apt-get", "dnf", "yum", "npm",
    "yarn", "pnpm", "bun", "cargo", "go", "pip", "pip3", "brew", "journalctl", "ip", "gh", "aws", "gcloud", "az",
    "snap", "flatpak", "gem", "uv", "poetry", "composer",
];

/// Programs that run code or another program named by their arguments: a grant for one operand
/// would cover every other program.
const CODE_RUNNERS: &[&str] = &[
    // Shells and interpreters.
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "python", "python2", "python3",
    "perl", "ruby", "node", "nodejs", "deno", "php", "lua", "luajit", "tclsh", "wish", "Rscript", "java", "jshell",
    "osascript", "pwsh", "powershell", "awk", "gawk", "mawk", "nawk", "expect", "gdb", "lldb",
    // Wrappers that run their arguments.
    "sudo", "doas", "su", "env", "xargs", "timeout", "nice", "ionice", "nohup", "stdbuf", "time", "watch", "chroot",
    "unshare", "nsenter", "setsid", "flock", "strace", "ltrace", "exec", "eval", "source", ".", "command", "builtin",
    "parallel", "script", "ssh", "firejail", "systemd-run", "runuser", "chpst", "taskset", "prlimit", "catchsegv",
    // Task and build runners whose targets are code in the tree.
    "make", "gmake", "just", "ninja", "rake", "npx", "pnpx", "bunx", "uvx", "pipx", "tox", "nox",
];

/// Subcommands that run code named by their operands (a script, an image, a package's install hooks).
const CODE_SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "npm",
        &["run", "run-script", "exec", "x", "start", "test", "t", "install", "i", "ci", "add", "restart", "explore"],
    ),
    ("yarn", &["run", "exec", "dlx", "start", "test", "add", "install", "node"]),
    ("pnpm", &["run", "exec", "dlx", "start", "test", "add", "install", "i"]),
    ("bun", &["run", "x", "add", "install", "i", "test"]),
    ("cargo", &["run", "r", "install", "test", "t", "bench", "build", "b", "script"]),
    ("go", &["run", "generate", "test", "tool", "install", "build"]),
    ("docker", &["run", "exec", "create", "build", "buildx", "compose"]),
    ("podman", &["run", "exec", "create", "build", "compose"]),
    ("kubectl", &["exec", "run", "debug", "attach", "cp", "apply", "create", "replace", "patch"]),
    ("helm", &["install", "upgrade", "template", "plugin"]),
    ("pip", &["install", "download", "wheel"]),
    ("pip3", &["install", "download", "wheel"]),
    ("uv", &["run", "pip", "tool", "add", "sync"]),
    ("poetry", &["run", "install", "add"]),
    ("gem", &["install", "exec"]),
    ("composer", &["run", "run-script", "exec", "install", "require"]),
    ("git", &["submodule", "filter-branch", "bisect", "rebase"]),
    ("terraform", &["apply", "destroy", "import"]),
    ("brew", &["install", "reinstall", "upgrade", "tap", "bundle"]),
    ("apt", &["install", "reinstall"]),
    ("apt-get", &["install", "reinstall", "source"]),
    ("dnf", &["install", "reinstall"]),
    ("yum", &["install", "reinstall"]),
    ("snap", &["install", "run"]),
    ("flatpak", &["install", "run"]),
    ("gh", &["extension", "api", "alias"]),
    ("aws", &["ssm", "lambda"]),
];

/// Options that take code or a program to run, in any program: no grant carries them.
const CODE_OPTIONS: &[&str] = &[
    "-c", "-e", "--eval", "--exec", "-exec", "-execdir", "-ok", "-okdir", "--command", "--upload-pack",
    "--receive-pack", "--config", "--rsh", "--run", "--command-string", "--script", "--init-file", "--rcfile",
    "--to-command", "--checkpoint-action", "--use-compress-program", "--filter", "--ext-diff", "--textconv",
    "--require", "--import", "--loader", "--preload", "--eval-command",
];

/// Characters that make a line more than one plain command: redirections, pipes, lists,
/// substitutions, escapes, line breaks. Quoted or not, a line with one gets no grant.
const NOT_PLAIN: &[char] = &['<', '>', '|', '&', ';', '(', ')', '$', '`', '\\', '\n', '\r', '{', '}'];

/// What "always this session" allows, as shown in the prompt and kept in the session's grants:
/// `git fetch --prune` (the options sorted, each once); `None` when no grant may be offered.
pub(crate) fn grant_key(assessment: &Assessment) -> Option<String> {
    let [argv] = assessment.commands.as_slice() else { return None };
    let program = argv.first()?;
    if assessment.sanitized.contains(NOT_PLAIN) {
        return None;
    }
    // `commands` looks through wrappers; a grant for `rm` must not cover `sudo rm`, so only a
    // command line that starts with the program itself can be granted.
    let first_word = assessment.sanitized.split_whitespace().next()?;
    let name = first_word.rsplit('/').next()?;
    if name != program.as_str() || CODE_RUNNERS.contains(&name) {
        return None;
    }
    let mut key = vec![program.clone()];
    let mut rest = &argv[1..];
    if WITH_SUBCOMMANDS.contains(&name) {
        let (sub, after) = rest.split_first()?;
        if sub.starts_with('-') || runs_code(name, sub) {
            return None;
        }
        key.push(sub.clone());
        rest = after;
    }
    let mut options: Vec<&str> = Vec::new();
    for word in rest {
        if word == "--" {
            // Everything after it is an operand.
            break;
        }
        if word.starts_with('-') && word.len() > 1 {
            let option_name = word.split('=').next().unwrap_or(word);
            if CODE_OPTIONS.contains(&option_name) {
                return None;
            }
            options.push(word);
        }
    }
    options.sort_unstable();
    options.dedup();
    key.extend(options.into_iter().map(str::to_owned));
    Some(key.join(" "))
}

fn runs_code(program: &str, sub: &str) -> bool {
    CODE_SUBCOMMANDS.iter().any(|(name, subs)| *name == program && subs.contains(&sub))
}

#[cfg(test)]
mod tests {
    use super::grant_key;
    use crate::policy::{PolicyConfig, assess};

    fn grant(command: &str) -> Option<String> {
        grant_key(&assess(command, &PolicyConfig::default()))
    }

    #[test]
    fn a_grant_is_program_subcommand_and_the_exact_option_set() {
        assert_eq!(grant("git fetch --prune origin").as_deref(), Some("git fetch --prune"));
        assert_eq!(grant("git commit -m x").as_deref(), Some("git commit -m"));
        assert_eq!(grant("rm notes.txt").as_deref(), Some("rm"));
        assert_eq!(grant("rm -f -r a b").as_deref(), Some("rm -f -r"));
        assert_eq!(grant("rm -r -f -r a").as_deref(), Some("rm -f -r"), "sorted, each once");
        assert_eq!(grant("systemctl restart --now nginx").as_deref(), Some("systemctl restart --now"));
        assert_eq!(grant("rm -- -f").as_deref(), Some("rm"), "after -- it is an operand");
    }

    #[test]
    fn the_same_program_with_another_option_is_not_covered() {
        let granted = grant("git fetch --prune");
        for other in ["git fetch", "git fetch --prune --all", "git fetch --prune=yes", "git pull --prune"] {
            assert_ne!(grant(other), granted, "{other}");
        }
        assert_eq!(grant("git commit -m one"), grant("git commit -m two"), "operands may differ");
        assert_ne!(grant("git commit -m one"), grant("git commit --amend -m one"));
        assert_ne!(grant("rm a"), grant("rm -rf a"));
    }

    #[test]
    fn wrapped_lines_redirections_and_pipelines_get_no_grant() {
        for command in [
            "sudo rm notes.txt",
            "env X=1 git commit -m x",
            "X=1 git commit -m x",
            "touch a && touch b",
            "touch a; touch b",
            "echo hi > notes.txt",
            "sort < in.txt",
            "git log | tee out.txt",
            "touch $(whoami)",
            "touch `id`",
            "touch a\\\nb",
            "git -C /tmp commit -m x",
            "git --git-dir=/x commit -m x",
        ] {
            assert_eq!(grant(command), None, "{command}");
        }
    }

    #[test]
    fn code_runners_get_no_grant() {
        for command in [
            "bash x.sh",
            "python3 tool.py",
            "make build",
            "npm install left-pad",
            "npm run build",
            "cargo run",
            "docker exec web ls",
            "kubectl exec pod -- ls",
            "xargs rm",
            "timeout 5 rm a",
            "git fetch --upload-pack=evil origin",
            "sed -e s/a/b/ f",
            "tar --to-command=sh -xf a.tar",
            "pip install requests",
        ] {
            assert_eq!(grant(command), None, "{command}");
        }
    }
}
