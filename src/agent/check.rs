//! Is a candidate a command line the user can run? (Issue 22.) A small model answers with a bare
//! path (`/home/root` for "print my home directory"), two alternatives, a half-closed quote or a
//! program that is not installed often enough to matter; each is found here, before the widget's
//! answer replaces the user's line or the agent runs a command it read from a ```sh block, and
//! worded so the model can correct it in a second candidate.
//!
//! Pure except for [`syntax`] (the user's own shell with `-n`, which parses without running) and
//! the `PATH` lookups the caller passes in.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::agent::prompt::WIDGET_REPLY_FORM;
use crate::context::probe::output_within;
use crate::policy::parse::parse;

/// How long the shell may take to parse a candidate.
const SYNTAX_TIMEOUT: Duration = Duration::from_secs(2);

/// Shell words that start a command without being programs on `PATH`.
const BUILTINS: &[&str] = &[
    ".", ":", "[", "[[", "alias", "bg", "bind", "break", "builtin", "caller", "case", "cd", "command", "compgen",
    "complete", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit", "export", "false",
    "fc", "fg", "for", "function", "getopts", "hash", "help", "history", "if", "jobs", "kill", "let", "local",
    "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray", "readonly", "return", "select", "set",
    "shift", "shopt", "source", "suspend", "test", "time", "times", "trap", "true", "type", "typeset", "ulimit",
    "umask", "unalias", "unset", "until", "wait", "while", "{", "(", "!", "coproc", "print", "setopt", "unsetopt",
    "autoload", "noglob", "whence", "where", "which", "rehash", "functions", "abbr", "contains", "string", "math",
    "set_color", "status", "argparse", "count",
];

/// What is wrong with a candidate, as the model is told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// Only a path: names a file or directory, runs nothing.
    Path,
    /// Only comments (or nothing the shell runs): a small model's made-up file content.
    Nothing,
    /// More than one command on separate lines: alternatives or steps the user must choose from.
    Several,
    /// The shell cannot parse it.
    Syntax(String),
    /// A program that is not installed (not on `PATH`, not a builtin, not an executable path).
    Missing(String),
}

impl Problem {
    /// Lower is better when neither of two candidates is clean: a program missing here may still
    /// be the right command elsewhere; a path or unparsable text never is.
    pub(crate) fn rank(&self) -> u8 {
        match self {
            Problem::Missing(_) => 1,
            Problem::Several => 2,
            Problem::Syntax(_) => 3,
            Problem::Path | Problem::Nothing => 4,
        }
    }

    /// The follow-up message: what is wrong and the form of the answer wanted.
    pub(crate) fn feedback(&self) -> String {
        format!("{} Reply with the corrected {WIDGET_REPLY_FORM}.", self.what())
    }

    /// What is wrong, in one sentence the model can act on.
    pub(crate) fn what(&self) -> String {
        match self {
            Problem::Path => "That is only a path, not a command: it runs nothing.".to_owned(),
            Problem::Nothing => "That holds only comments, not a command: it runs nothing.".to_owned(),
            Problem::Several => {
                "That is several commands. Give one command line (join steps that all must run with &&).".to_owned()
            }
            Problem::Syntax(error) => format!("The shell cannot parse that: {error}"),
            Problem::Missing(program) => format!("`{program}` is not installed here; use another program."),
        }
    }
}

/// The first problem with `command`, if any: `is_program` says whether a word is a program on
/// `PATH`; `shell` is the user's shell (its `-n` parses the candidate when it is installed).
pub(crate) fn review(command: &str, shell: Option<&str>, is_program: &dyn Fn(&str) -> bool) -> Option<Problem> {
    let command = command.trim();
    if is_bare_path(command) {
        return Some(Problem::Path);
    }
    if runs_nothing(command) {
        return Some(Problem::Nothing);
    }
    if several_commands(command, shell) {
        return Some(Problem::Several);
    }
    if let Some(error) = syntax(command, shell) {
        return Some(Problem::Syntax(error));
    }
    missing_program(command, is_program).map(Problem::Missing)
}

/// One word that names a file or directory (`/home/root`, `~/logs`, `./build/`) and is not an
/// executable file: typing it runs nothing useful.
pub(crate) fn is_bare_path(command: &str) -> bool {
    if command.is_empty() || command.contains(char::is_whitespace) {
        return false;
    }
    let pathlike = command.starts_with(['/', '~', '.']) || command.contains('/');
    if !pathlike {
        return false;
    }
    let expanded = match command.strip_prefix('~') {
        Some(rest) => std::env::var("HOME").map(|home| format!("{home}{rest}")).unwrap_or_else(|_| command.to_owned()),
        None => command.to_owned(),
    };
    let path = Path::new(&expanded);
    let runnable = path.is_file() && {
        use std::os::unix::fs::PermissionsExt;
        path.metadata().is_ok_and(|meta| meta.permissions().mode() & 0o111 != 0)
    };
    !runnable
}

/// A reply that is one command line without its code block (`locale`, `ps -ef`): one line that
/// parses, whose first word is a builtin or a program on `PATH`. "Paris" or a sentence is not.
pub(crate) fn is_bare_command(text: &str) -> bool {
    let text = text.trim();
    if text.is_empty() || text.contains('\n') || text.contains('`') {
        return false;
    }
    let script = parse(text);
    let first = script.commands.first().and_then(|simple| simple.words.first()).and_then(|word| word.fixed());
    script.errors.is_empty() && first.is_some_and(|word| BUILTINS.contains(&word) || is_program(word))
}

/// A program opsai knows or one found on `PATH` (not a path).
pub(crate) fn is_program(word: &str) -> bool {
    if crate::policy::PROGRAMS.iter().any(|(names, _)| names.contains(&word)) {
        return true;
    }
    let path = std::env::var("PATH").unwrap_or_default();
    !word.contains('/') && crate::context::probe::find_on_path(word, &path).is_some()
}

/// Text that parses but holds no command: only comments and blank lines (`#!/bin/bash` and a
/// description of a script the model did not write).
pub(crate) fn runs_nothing(command: &str) -> bool {
    command.lines().map(str::trim).all(|line| line.is_empty() || line.starts_with('#'))
}

/// Two or more lines that each parse as a whole command by themselves, outside a loop, a
/// here-document or a continued line: alternatives (`ls -l` then `ls -la`) or separate steps.
fn several_commands(command: &str, shell: Option<&str>) -> bool {
    let lines: Vec<&str> = command.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    if lines.len() < 2 {
        return false;
    }
    // A comment line between commands is how "or" alternatives are usually written.
    let code: Vec<&str> = lines.iter().copied().filter(|line| !line.starts_with('#')).collect();
    if code.len() < 2 {
        return false;
    }
    if command.contains("<<") {
        return false;
    }
    let continued = |line: &str| {
        line.ends_with(['\\', '|', '{', '(']) || line.ends_with("&&") || line.ends_with("||") || line.ends_with(" do")
    };
    if code.iter().any(|line| continued(line)) {
        return false;
    }
    // Each line whole by itself: no line opens what a later one closes.
    code.iter().all(|line| syntax(line, shell).is_none() && parse(line).errors.is_empty())
}

/// The shell's own parse (`bash -n -c`), for the shells that have one and are installed: its first
/// error line, or `None` when it parses (or cannot be checked).
pub(crate) fn syntax(command: &str, shell: Option<&str>) -> Option<String> {
    let name = shell.and_then(|shell| shell.split_whitespace().next()).unwrap_or("bash");
    let name = Path::new(name).file_name().and_then(|name| name.to_str()).unwrap_or("bash");
    if !["bash", "zsh", "sh", "dash", "ksh", "mksh", "fish"].contains(&name) {
        return None;
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let program = crate::context::probe::find_on_path(name, &path)?;
    let mut check = Command::new(program);
    check.args(["-n", "-c", command]);
    let output = output_within(check, SYNTAX_TIMEOUT)?;
    if output.success {
        return None;
    }
    let error = output.stderr.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("a syntax error");
    // `bash: -c: line 1: syntax error …`: the prefix names the check, not the command.
    let error = error.rsplit_once(": line ").map_or(error, |(_, rest)| rest.split_once(": ").map_or(rest, |(_, e)| e));
    Some(error.chars().take(200).collect())
}

/// The first program the command runs that cannot be found: not a builtin or keyword, not on
/// `PATH`, not an executable path. Words that are not literal (`$EDITOR`) are not judged.
fn missing_program(command: &str, is_program: &dyn Fn(&str) -> bool) -> Option<String> {
    let script = parse(command);
    let defined: Vec<&str> = script.functions.iter().map(|(name, _)| name.as_str()).collect();
    script.commands.iter().find_map(|simple| {
        let word = simple.words.first()?.fixed()?;
        if word.is_empty() || BUILTINS.contains(&word) || defined.contains(&word) || is_program(word) {
            return None;
        }
        if word.contains('/') {
            return (!Path::new(word).exists()).then(|| word.to_owned());
        }
        Some(word.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn installed(word: &str) -> bool {
        ["ls", "find", "head", "grep", "wc", "sort", "du", "tar", "gzip", "echo"].contains(&word)
    }

    fn problem(command: &str) -> Option<Problem> {
        review(command, Some("bash 5.2"), &installed)
    }

    #[test]
    fn commands_pass() {
        for command in [
            "ls -la",
            "head -n 5 file.txt",
            "find . -name '*.log' | wc -l",
            "for f in *.txt; do\n  wc -l \"$f\"\ndone",
            "cd /srv && du -sh *",
            "X=1 echo $X",
            "cat <<EOF\nhello\nEOF",
            "f() { ls; }; f",
            "/bin/sh -c true",
            "find . -type f \\\n  -name '*.gz'",
        ] {
            let found = problem(command);
            // `cat` is not in this test's PATH list; everything else must pass.
            assert!(found.is_none() || found == Some(Problem::Missing("cat".into())), "{command}: {found:?}");
        }
    }

    #[test]
    fn a_bare_path_is_not_a_command() {
        assert_eq!(problem("/home/root"), Some(Problem::Path));
        assert_eq!(problem("~/logs"), Some(Problem::Path));
        assert_eq!(problem("./build/"), Some(Problem::Path));
        assert_eq!(problem("/bin/sh"), None, "an executable file runs");
        assert!(Problem::Path.feedback().contains("only a path"));
    }

    #[test]
    fn a_bare_command_line_is_told_from_words() {
        for command in ["locale", "ps -ef", "echo $TERM", "cd /tmp && pwd"] {
            assert!(is_bare_command(command), "{command}");
        }
        for text in ["Paris", "The command failed.", "", "```sh\nls\n```", "`ls`", "ls\nls -la", "echo 'open"] {
            assert!(!is_bare_command(text), "{text}");
        }
    }

    #[test]
    fn only_comments_run_nothing() {
        assert_eq!(problem("#!/bin/bash\n# Sets up a bridge.\n\n# Usage: setup.sh eth0"), Some(Problem::Nothing));
        assert_eq!(problem("# list the files"), Some(Problem::Nothing));
        assert_eq!(problem("# list the files\nls -la"), None, "a comment above the command");
        assert!(Problem::Nothing.feedback().contains("only comments"));
    }

    #[test]
    fn several_lines_of_whole_commands_are_several_commands() {
        assert_eq!(problem("ls -l\nls -la"), Some(Problem::Several));
        assert_eq!(problem("ls -l\n# or\nls -la"), Some(Problem::Several));
        assert_eq!(problem("ls -l |\n  wc -l"), None);
        assert!(Problem::Several.feedback().contains("&&"));
    }

    #[test]
    fn the_shell_finds_syntax_errors() {
        if crate::context::probe::find_on_path("bash", &std::env::var("PATH").unwrap_or_default()).is_none() {
            assert!(std::env::var_os("CI").is_none(), "bash is missing under CI");
            return;
        }
        match problem("echo 'unclosed") {
            Some(Problem::Syntax(error)) => assert!(error.contains("unexpected EOF"), "{error}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(syntax("ls -la", Some("bash")), None);
        assert_eq!(syntax("ls (", Some("elvish")), None, "a shell without -n is not judged");
    }

    #[test]
    fn a_program_that_is_not_installed_is_named() {
        assert_eq!(problem("tree -L 2"), Some(Problem::Missing("tree".into())));
        assert_eq!(problem("ls | nosuchprog-7a"), Some(Problem::Missing("nosuchprog-7a".into())));
        assert_eq!(problem("$EDITOR notes.txt"), None, "not literal, not judged");
        assert_eq!(problem("cd /tmp && echo hi"), None, "builtins");
        assert!(Problem::Missing("tree".into()).feedback().contains("`tree` is not installed"));
    }
}
