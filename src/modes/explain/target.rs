//! `opsai explain TEXT` without piped input: is TEXT a command to explain, or an ops object
//! (a port, a pid, a file, a container, a service)?
//!
//! The heuristic, in order (also in docs/explain.md):
//! 1. `:8080`, `port 8080` → a port; a bare number → a pid, or a port when no process has it
//!    (`crate::analyze::object::identify`).
//! 2. One word naming a path that exists → a file (`./deploy.sh`, `/etc/nginx/nginx.conf`).
//! 3. Shell syntax (`|`, `&&`, `;`, a redirection, `$(…)`, backticks) or several simple commands → a command.
//! 4. One bare word (letters, digits, `_ . - @ :`) that is also a known program (`nginx`, `sshd`) →
//!    [`Target::CommandOrObject`]: the caller asks `docker ps -a` and systemd, and explains the
//!    container or unit of that name if there is one (noting it is also a program), else the command.
//!    Only this case costs a lookup; two quick probes, both through the audited executor.
//! 5. The first program word is one the policy knows, a shell builtin or keyword, or an executable
//!    on `PATH` → a command (`tar -xzvf a.tgz`, `nginx -t`).
//! 6. Anything else → an object: a container or service name (`compoder-mongo`), or a question in
//!    words (`what is nginx`).

use crate::protocol::Assessment;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Command,
    Object(ObjectKind),
    /// A bare word that is a program name but may also name a container or a unit (step 4).
    CommandOrObject,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ObjectKind {
    Port,
    Pid,
    File,
    /// A name (container, service, …) or a question in words.
    Name,
}

/// What the machine knows, behind closures so the heuristic is testable.
pub(crate) struct Lookup<'a> {
    /// A program the policy, the shell or `PATH` knows.
    pub is_program: &'a dyn Fn(&str) -> bool,
    /// A path that exists.
    pub exists: &'a dyn Fn(&str) -> bool,
}

/// Shell builtins and keywords: a line starting with one is a command even if no file has the name.
const BUILTINS: &[&str] = &[
    ".", ":", "[", "[[", "alias", "bg", "bind", "builtin", "case", "cd", "command", "declare", "echo", "eval", "exec",
    "exit", "export", "false", "fg", "for", "function", "getopts", "hash", "history", "if", "jobs", "kill", "let",
    "local", "printf", "pushd", "popd", "pwd", "read", "readonly", "return", "set", "shift", "source", "test", "time",
    "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
];

pub(crate) fn classify(text: &str, assessment: &Assessment, lookup: &Lookup<'_>) -> Target {
    let text = text.trim();
    let words: Vec<&str> = text.split_whitespace().collect();
    match crate::analyze::object::literal(text) {
        Some(found) if found.kind == "port" => return Target::Object(ObjectKind::Port),
        Some(_) => return Target::Object(ObjectKind::Pid),
        None => {}
    }
    if let [word] = words.as_slice()
        && (lookup.exists)(word)
    {
        return Target::Object(ObjectKind::File);
    }
    if has_shell_syntax(text) || assessment.commands.len() > 1 {
        return Target::Command;
    }
    let program = assessment.commands.first().and_then(|argv| argv.first()).map(String::as_str);
    let first_word = words.first().copied().unwrap_or("");
    let known = |word: &str| BUILTINS.contains(&word) || (lookup.is_program)(word);
    if let [word] = words.as_slice()
        && is_bare_name(word)
        && (lookup.is_program)(word)
    {
        return Target::CommandOrObject;
    }
    if program.is_some_and(known) || known(first_word) { Target::Command } else { Target::Object(ObjectKind::Name) }
}

/// A word that could be a container or unit name: letters, digits and `_ . - @ :`, starting with
/// a letter or digit (`nginx`, `web.1`, `getty@tty1`). Builtins and keywords are never one.
fn is_bare_name(word: &str) -> bool {
    word.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "_.-@:".contains(c))
        && !BUILTINS.contains(&word)
}

/// Operators outside quotes: `|`, `&`, `;`, `<`, `>`, `$(`, backticks.
fn has_shell_syntax(text: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '`') => return true,
            (Some('"'), '$') if chars.peek() == Some(&'(') => return true,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '\\') => {
                chars.next();
            }
            (None, '|' | '&' | ';' | '<' | '>' | '`') => return true,
            (None, '$') if chars.peek() == Some(&'(') => return true,
            (None, _) => {}
        }
    }
    false
}

/// The real lookup: the policy's program table, then `PATH`.
pub(crate) fn is_known_program(word: &str) -> bool {
    if crate::policy::PROGRAMS.iter().any(|(names, _)| names.contains(&word)) {
        return true;
    }
    let path = std::env::var("PATH").unwrap_or_default();
    !word.contains('/') && crate::context::probe::find_on_path(word, &path).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{PolicyConfig, assess};

    fn classify_with(text: &str) -> Target {
        let lookup = Lookup {
            is_program: &|word| ["tar", "find", "ls", "docker", "nginx"].contains(&word),
            exists: &|path| ["./deploy.sh", "/etc/hosts"].contains(&path),
        };
        classify(text, &assess(text, &PolicyConfig::default()), &lookup)
    }

    #[test]
    fn commands_and_objects_are_told_apart() {
        use ObjectKind::*;
        let cases = [
            ("find . -name \"*.log\" -mtime +7 -delete", Target::Command),
            ("tar -xzvf a.tgz", Target::Command),
            ("ls", Target::CommandOrObject),
            ("nginx", Target::CommandOrObject),
            ("cd", Target::Command),
            ("nginx -t", Target::Command),
            ("sudo tar -xzf a.tgz", Target::Command),
            ("cd /tmp", Target::Command),
            ("frobnicate --all | sort", Target::Command),
            ("FOO=1 mytool > out.txt", Target::Command),
            ("echo \"$(whoami)\"", Target::Command),
            (":8080", Target::Object(Port)),
            ("port 443", Target::Object(Port)),
            ("1234", Target::Object(Pid)),
            ("./deploy.sh", Target::Object(File)),
            ("/etc/hosts", Target::Object(File)),
            ("compoder-mongo", Target::Object(Name)),
            ("what is nginx", Target::Object(Name)),
            ("frob 'a|b' file", Target::Object(Name)),
        ];
        for (text, want) in cases {
            assert_eq!(classify_with(text), want, "{text}");
        }
    }

    #[test]
    fn quoted_operators_are_not_shell_syntax() {
        assert!(!has_shell_syntax("grep 'a|b;c' file"));
        assert!(!has_shell_syntax(r"echo a\|b"));
        assert!(has_shell_syntax("echo \"`id`\""));
        assert!(has_shell_syntax("a && b"));
    }
}
