//! Built-in analysis templates and placeholder substitution.
//!
//! A template is a list of commands with `{name}`, `{port}`, `{pid}` and `{path}` placeholders. A
//! placeholder may only stand in an unquoted word whose other characters are plain literals
//! (letters, digits, `/ . _ : - = , @ % +`): `docker inspect {name}`, `ss sport = :{port}`,
//! `/proc/{pid}/status`. The target is substituted single-quoted there, so the word is provably one
//! literal argument whatever the target holds (`x; rm -rf /`, `$(id)`, quotes, backslashes). A
//! placeholder inside single or double quotes, after a backslash, or next to any other shell
//! character (`$`, `{`, `*`, `~`, …) makes the command unusable: it is dropped and reported, never
//! run. Each substituted command is assessed by the policy too; anything not Safe is dropped.

use crate::policy::{PolicyConfig, assess};
use crate::protocol::Risk;

/// The placeholders a template may hold.
pub(crate) const PLACEHOLDERS: [&str; 4] = ["{name}", "{port}", "{pid}", "{path}"];

/// The built-in template for `kind`, if any (`container`, `port`, `process`, `file`, `service`).
pub(crate) fn builtin(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        // A full `docker inspect` prints the container's environment, where tokens live: the
        // fields here are its state and image only.
        "container" | "docker" => &[
            "docker inspect --format '{{.Name}} {{.State.Status}} {{.Config.Image}} restarts={{.RestartCount}}' {name}",
            "docker logs --tail 20 {name}",
        ],
        // ss reads its filter from the remaining words: no quotes needed around `sport = :PORT`.
        // Which process owns the port, and a process's working directory, are read by opsai
        // itself (`procfs`): `ss -p`, `lsof` and `/proc/PID/cwd` cannot see other processes from
        // inside the sandbox.
        "port" => &["ss -ltnu sport = :{port}"],
        "process" | "pid" => &["ps -o pid,ppid,user,etime,stat,cmd -p {pid}"],
        "file" => &["file {path}", "ls -la {path}", "stat {path}"],
        "service" => &["systemctl status {name} --no-pager", "journalctl -u {name} -n 20 --no-pager"],
        _ => return None,
    })
}

/// One word for POSIX shells: single quotes, with `'` written as `'\''`.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Why a template command cannot take a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsafe(pub String);

/// Characters that may share an unquoted word with a placeholder: none of them quotes, expands,
/// globs, escapes or ends the word.
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "/._:-=,@%+".contains(c)
}

/// `command` with every placeholder replaced by the single-quoted target, or why it cannot be: a
/// placeholder must sit in an unquoted word made of plain characters only (see the module doc).
pub(crate) fn substitute(command: &str, target: &str) -> Result<String, Unsafe> {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    if command.contains("<<") && placeholder_count(command) > 0 {
        // A here-document's body is expanded even where quotes would be literal.
        return Err(Unsafe("a placeholder in a command with a here-document".into()));
    }
    let mut out = String::with_capacity(command.len() + target.len());
    let mut quote_state = Quote::None;
    let mut escaped = false;
    let mut rest = command;
    while let Some(c) = rest.chars().next() {
        if let Some(placeholder) = PLACEHOLDERS.into_iter().find(|p| rest.starts_with(p)) {
            let why = if escaped {
                Some("after a backslash")
            } else {
                match quote_state {
                    Quote::Single => Some("inside single quotes"),
                    Quote::Double => Some("inside double quotes"),
                    Quote::None => None,
                }
            };
            if let Some(why) = why {
                return Err(Unsafe(format!("placeholder {placeholder} {why}")));
            }
            let start = command.len() - rest.len();
            let end = start + placeholder.len();
            if !in_plain_word(command, start, end) {
                return Err(Unsafe(format!(
                    "placeholder {placeholder} is not a plain word (only letters, digits and / . _ : - = , @ % + may touch it)"
                )));
            }
            out.push_str(&quote(target));
            rest = &rest[placeholder.len()..];
            continue;
        }
        match (quote_state, c) {
            _ if escaped => escaped = false,
            (Quote::None | Quote::Double, '\\') => escaped = true,
            (Quote::None, '\'') => quote_state = Quote::Single,
            (Quote::Single, '\'') => quote_state = Quote::None,
            (Quote::None, '"') => quote_state = Quote::Double,
            (Quote::Double, '"') => quote_state = Quote::None,
            _ => {}
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Ok(out)
}

/// What ends a word for the shell: a blank or a newline. Nothing else does — a no-break space
/// (U+00A0) or an ideographic space (U+3000) is part of the word, so next to a placeholder it is a
/// character that is not plain and the command is refused. All three are one byte, so the bounds
/// below are always character boundaries.
fn shell_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

/// Whether the placeholder at `start..end` lies in a word (ended by a shell blank or the line's
/// ends) whose other characters are plain or other placeholders.
fn in_plain_word(command: &str, start: usize, end: usize) -> bool {
    let word_start = command[..start].rfind(shell_blank).map_or(0, |at| at + 1);
    let word_end = command[end..].find(shell_blank).map_or(command.len(), |at| end + at);
    let mut word = command[word_start..word_end].to_owned();
    for placeholder in PLACEHOLDERS {
        word = word.replace(placeholder, "");
    }
    word.chars().all(plain)
}

/// How many placeholders `command` holds.
pub(crate) fn placeholder_count(command: &str) -> usize {
    PLACEHOLDERS.iter().map(|p| command.matches(p).count()).sum()
}

/// The commands to run for `target`, and the ones dropped with why.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    pub commands: Vec<String>,
    pub dropped: Vec<String>,
}

/// Substitutes `target` into each template command and keeps the Safe ones.
pub fn plan(template: &[String], target: &str, policy: &PolicyConfig) -> Plan {
    let mut plan = Plan::default();
    for command in template {
        let concrete = match substitute(command, target) {
            Ok(concrete) => concrete,
            Err(Unsafe(why)) => {
                plan.dropped.push(format!("{command} (cannot take a target safely: {why})"));
                continue;
            }
        };
        let assessment = assess(&concrete, policy);
        if assessment.risk == Risk::Safe && !assessment.changed_by_sanitizer {
            plan.commands.push(concrete);
        } else {
            plan.dropped.push(format!("{concrete} (not read-only: {})", assessment.risk.as_str()));
        }
    }
    plan
}
#[cfg(test)]
mod tests {
    use super::*;

    fn owned(commands: &[&str]) -> Vec<String> {
        commands.iter().map(|c| (*c).to_owned()).collect()
    }

    #[test]
    fn builtin_container_template_substitutes_and_is_safe() {
        let plan = plan(&owned(builtin("container").unwrap()), "compoder-mongo", &PolicyConfig::default());
        assert_eq!(
            plan.commands,
            [
                "docker inspect --format '{{.Name}} {{.State.Status}} {{.Config.Image}} restarts={{.RestartCount}}' 'compoder-mongo'",
                "docker logs --tail 20 'compoder-mongo'"
            ]
        );
        assert!(plan.dropped.is_empty());
    }

    #[test]
    fn every_builtin_is_safe_with_a_plain_target() {
        for (kind, target) in [("port", "8080"), ("process", "1234"), ("file", "/etc/hosts"), ("service", "nginx")] {
            let plan = plan(&owned(builtin(kind).unwrap()), target, &PolicyConfig::default());
            assert!(plan.dropped.is_empty(), "{kind}: {:?}", plan.dropped);
        }
    }

    #[test]
    fn injection_stays_one_argument() {
        let evil = "x; rm -rf /";
        assert_eq!(substitute("docker inspect {name}", evil).unwrap(), "docker inspect 'x; rm -rf /'");
        for target in ["x'; touch pwned; '", "a$(id)", "a\"`id`\\'b", "1 ; id"] {
            for (template, at) in [("docker inspect {name}", 2), ("lsof -nP -i :{port}", 3), ("ls /proc/{pid}/cwd", 1)]
            {
                let quoted = substitute(template, target).unwrap();
                let assessment = assess(&quoted, &PolicyConfig::default());
                assert_eq!(assessment.commands.len(), 1, "{quoted}");
                assert!(assessment.commands[0][at].contains(target), "{quoted}: {:?}", assessment.commands);
            }
        }
    }

    #[test]
    fn a_placeholder_in_quotes_after_a_backslash_or_beside_shell_characters_is_refused() {
        for template in [
            "journalctl -u \"{name}\"",
            "journalctl -u \"x {name} y\"",
            "ss -ltn 'sport = :{port}'",
            "echo \\{name}",
            "echo $HOME{name}",
            "echo ${name}",
            "ls ~{name}",
            "ls *{name}",
            "echo $(cat {name})",
            "cat <<EOF\n{name}\nEOF",
        ] {
            assert!(substitute(template, "a$(id)").is_err(), "{template}");
            let plan = plan(&owned(&[template]), "a$(id)", &PolicyConfig::default());
            assert!(plan.commands.is_empty(), "{template}: {:?}", plan.commands);
            assert!(plan.dropped[0].contains("cannot take a target safely"), "{:?}", plan.dropped);
        }
        // Quotes elsewhere in the command are fine.
        assert_eq!(
            substitute("docker ps --format '{{.Names}}' --filter name={name}", "a$(id)").unwrap(),
            "docker ps --format '{{.Names}}' --filter name='a$(id)'"
        );
    }

    #[test]
    fn unicode_spaces_are_part_of_the_word_and_never_split_a_character() {
        // The shell splits words on blanks and newlines only: a no-break or ideographic space next
        // to a placeholder is in its word, which is then not plain.
        for space in ['\u{a0}', '\u{3000}'] {
            for template in [
                format!("docker inspect{space}{{name}}"),
                format!("docker inspect {{name}}{space}"),
                format!("docker inspect {{name}}{space}$(id)"),
                format!("docker inspect a{space}{{name}}"),
                format!("docker inspect {{name}}{space}b"),
                format!("ls /proc/{{pid}}{space}/cwd"),
                format!("ls {space}{{path}}"),
                format!("{space}{{path}}"),
                format!("{{path}}{space}"),
            ] {
                let refused = substitute(&template, "a$(id)");
                assert!(refused.is_err(), "{template:?}: {refused:?}");
                assert!(refused.unwrap_err().0.contains("not a plain word"), "{template:?}");
            }
            // Away from the placeholder's word, such a space is just another character.
            assert_eq!(
                substitute(&format!("echo a{space}b {{name}} c{space}d"), "x y").unwrap(),
                format!("echo a{space}b 'x y' c{space}d")
            );
            assert_eq!(substitute(&format!("ls {space} {{path}}"), "p").unwrap(), format!("ls {space} 'p'"));
            // Targets with them are quoted like any other.
            assert_eq!(substitute("file {path}", &format!("a{space}b")).unwrap(), format!("file 'a{space}b'"));
        }
        // Tabs and newlines do end a word.
        assert_eq!(substitute("docker inspect\t{name}\n", "w").unwrap(), "docker inspect\t'w'\n");
    }

    proptest::proptest! {
        #[test]
        fn substitution_and_planning_never_panic(command in "\\PC*", target in "\\PC*", seed in proptest::collection::vec(0usize..12, 0..12)) {
            // Arbitrary text, and the same text with placeholders and odd spaces woven in.
            let pieces = ["{name}", "{port}", "{pid}", "{path}", "\u{a0}", "\u{3000}", " ", "'", "\"", "\\", "<<", "é"];
            let mut woven = String::new();
            let mut chars = command.chars();
            for at in &seed {
                woven.extend(chars.by_ref().take(2));
                woven.push_str(pieces[*at]);
            }
            woven.extend(chars);
            for text in [&command, &woven] {
                if let Ok(out) = substitute(text, &target) {
                    proptest::prop_assert_eq!(placeholder_count(text) == 0, out == *text);
                }
                let _ = plan(std::slice::from_ref(text), &target, &PolicyConfig::default());
            }
        }
    }

    #[test]
    fn non_safe_commands_are_dropped_and_named() {
        let commands = owned(&["docker logs {name}", "docker rm -f {name}", "docker inspect {name}"]);
        let plan = plan(&commands, "web", &PolicyConfig::default());
        assert_eq!(plan.commands, ["docker logs 'web'"]);
        assert_eq!(plan.dropped.len(), 2);
        assert!(plan.dropped[0].starts_with("docker rm -f 'web'"));
        // The whole configuration prints the environment (issue 21).
        assert!(plan.dropped[1].starts_with("docker inspect 'web'"));
    }
}
