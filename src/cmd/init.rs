//! `opsai init <shell>` and `opsai completions <shell>`.
//!
//! `init` prints one of the widget scripts in `shell/` with the path of the running binary and the
//! key filled in. It runs at every shell start, so it stays cheap: no config, no network, no
//! runtime — a string replace and one write.

use std::io::Write;

use anyhow::Context;

use crate::cli::{InitArgs, Shell};

const ZSH_SCRIPT: &str = include_str!("../../shell/opsai.zsh");
const BASH_SCRIPT: &str = include_str!("../../shell/opsai.bash");
const FISH_SCRIPT: &str = include_str!("../../shell/opsai.fish");

/// Placeholders in the scripts: each stands where one quoted word goes, so the raw files still parse
/// (and shellcheck) as they are.
const BIN_PLACEHOLDER: &str = "__OPSAI_BIN__";
const KEY_PLACEHOLDER: &str = "__OPSAI_KEY__";
const BIND_PLACEHOLDER: &str = "__OPSAI_BIND__";

pub fn run(args: &InitArgs) -> anyhow::Result<u8> {
    let key = match args.key.as_deref() {
        Some(key) => {
            if let Err(problem) = check_key(key) {
                writeln!(std::io::stderr(), "opsai: --key {key:?} {problem}; give it like '^G' or '^X^G'")?;
                return Ok(2);
            }
            key_for(args.shell, key)
        }
        None => default_key(args.shell).to_owned(),
    };
    let exe = match &args.bin {
        Some(bin) if bin.is_empty() || bin.contains(['\n', '\r', '\0']) => {
            writeln!(std::io::stderr(), "opsai: --bin {bin:?} is not a program path; give it like '/usr/bin/opsai'")?;
            return Ok(2);
        }
        Some(bin) => bin.clone(),
        None => {
            let exe = std::env::current_exe().context("cannot find the path of the running opsai binary")?;
            let Some(exe) = exe.to_str() else {
                anyhow::bail!(
                    "the path of this opsai binary is not valid UTF-8 ({}); move it to a plain path",
                    exe.display()
                );
            };
            exe.to_owned()
        }
    };
    let script = render(args.shell, &exe, &key, !args.no_bind);
    std::io::stdout().lock().write_all(script.as_bytes())?;
    Ok(0)
}

pub fn completions(shell: Shell) -> anyhow::Result<u8> {
    let mut command = <crate::cli::Cli as clap::CommandFactory>::command();
    if shell == Shell::Zsh {
        command = without_task(command);
    }
    let generator = match shell {
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    // Generated into memory first: clap_complete panics on a write error (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(generator, &mut command, "opsai", &mut script);
    std::io::stdout().lock().write_all(&script)?;
    Ok(0)
}

/// `command` without its optional `TASK` positional. clap_complete's zsh script numbers it as the
/// first positional, so the subcommand became the second word: `opsai config s<Tab>` took `config`
/// as the task and offered the top-level commands. A task is free text, so nothing is lost by not
/// completing it; clap has no way to remove an argument, hence the rebuild.
fn without_task(command: clap::Command) -> clap::Command {
    let mut rebuilt = clap::Command::new("opsai")
        .version(env!("CARGO_PKG_VERSION"))
        .args_conflicts_with_subcommands(true)
        .args(command.get_arguments().filter(|arg| arg.get_id() != "task").cloned())
        .subcommands(command.get_subcommands().cloned());
    if let Some(about) = command.get_about() {
        rebuilt = rebuilt.about(about.clone());
    }
    rebuilt
}

/// The widget script for `shell`, calling `exe` and bound to `key` (already in the shell's notation).
pub fn render(shell: Shell, exe: &str, key: &str, bind: bool) -> String {
    let (script, quote): (&str, fn(&str) -> String) = match shell {
        Shell::Zsh => (ZSH_SCRIPT, quote_posix),
        Shell::Bash => (BASH_SCRIPT, quote_posix),
        Shell::Fish => (FISH_SCRIPT, quote_fish),
    };
    script
        .replace(BIN_PLACEHOLDER, &quote(exe))
        .replace(KEY_PLACEHOLDER, &quote(key))
        .replace(BIND_PLACEHOLDER, if bind { "1" } else { "0" })
}

/// Ctrl-G in each shell's own key notation.
pub(crate) fn default_key(shell: Shell) -> &'static str {
    match shell {
        Shell::Zsh => "^G",
        Shell::Bash => r"\C-g",
        Shell::Fish => r"\cg",
    }
}

/// A key the scripts can bind: not empty, and nothing that would end bash's `"KEY": command` spec.
fn check_key(key: &str) -> Result<(), &'static str> {
    if key.is_empty() {
        Err("is empty")
    } else if key.contains(['"', '\n', '\r']) {
        Err("cannot contain a double quote or a line break")
    } else {
        Ok(())
    }
}

/// `key` in `shell`'s notation. Caret notation (`^G`, `^X^G`, `^[`) is zsh's; it is translated for
/// bash (`\C-g`) and fish (`\cg`), so one `OPSAI_WIDGET_KEY` works in every shell. Anything else
/// is taken as already written in the shell's notation.
pub(crate) fn key_for(shell: Shell, key: &str) -> String {
    if shell == Shell::Zsh {
        return key.to_owned();
    }
    let mut out = String::with_capacity(key.len() * 2);
    let mut chars = key.chars().peekable();
    while let Some(c) = chars.next() {
        let control =
            if c == '^' { chars.peek().copied().filter(|n| n.is_ascii_alphabetic() || *n == '[') } else { None };
        match (control, shell) {
            (Some('['), _) => out.push_str(r"\e"),
            (Some(letter), Shell::Bash) => {
                out.push_str(r"\C-");
                out.push(letter.to_ascii_lowercase());
            }
            (Some(letter), _) => {
                out.push_str(r"\c");
                out.push(letter.to_ascii_lowercase());
            }
            (None, _) => {
                out.push(c);
                continue;
            }
        }
        chars.next();
    }
    out
}

/// One word for zsh and bash: single quotes, with `'` written as `'\''`.
pub(crate) fn quote_posix(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// One word for fish: single quotes, where only `\'` and `\\` are escapes.
pub(crate) fn quote_fish(text: &str) -> String {
    format!("'{}'", text.replace('\\', r"\\").replace('\'', r"\'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn posix_quoting_keeps_every_character() {
        assert_eq!(quote_posix("/usr/bin/opsai"), "'/usr/bin/opsai'");
        assert_eq!(quote_posix(r#"/tmp/my "odd" dir/it's/opsai"#), r#"'/tmp/my "odd" dir/it'\''s/opsai'"#);
        assert_eq!(quote_posix(r"a\b$c`d"), r"'a\b$c`d'");
    }

    #[test]
    fn fish_quoting_escapes_backslash_and_quote_only() {
        assert_eq!(quote_fish("/usr/bin/opsai"), "'/usr/bin/opsai'");
        assert_eq!(quote_fish(r#"/tmp/my "odd" dir/it's/opsai"#), r#"'/tmp/my "odd" dir/it\'s/opsai'"#);
        assert_eq!(quote_fish(r"\cg"), r"'\\cg'");
        assert_eq!(quote_fish("$HOME (x)"), "'$HOME (x)'");
    }

    #[test]
    fn caret_keys_are_translated_for_bash_and_fish() {
        assert_eq!(key_for(Shell::Zsh, "^X^G"), "^X^G");
        assert_eq!(key_for(Shell::Bash, "^X^G"), r"\C-x\C-g");
        assert_eq!(key_for(Shell::Fish, "^X^G"), r"\cx\cg");
        assert_eq!(key_for(Shell::Bash, "^[g"), r"\eg");
        assert_eq!(key_for(Shell::Fish, "^[g"), r"\eg");
        // Already in the shell's notation: unchanged.
        assert_eq!(key_for(Shell::Bash, r"\C-x\C-g"), r"\C-x\C-g");
        assert_eq!(key_for(Shell::Fish, r"\cg"), r"\cg");
        assert_eq!(key_for(Shell::Fish, "ctrl-g"), "ctrl-g");
        assert_eq!(key_for(Shell::Bash, "^"), "^");
    }

    #[test]
    fn keys_that_cannot_be_bound_are_refused() {
        assert!(check_key("").is_err());
        assert!(check_key("\"").is_err());
        assert!(check_key("^G\n").is_err());
        assert!(check_key("^G").is_ok());
        assert!(check_key(r"\C-x'").is_ok());
    }

    #[test]
    fn every_placeholder_is_filled() {
        for shell in [Shell::Zsh, Shell::Bash, Shell::Fish] {
            let script = render(shell, "/opt/opsai", default_key(shell), true);
            assert!(!script.contains("__OPSAI_"), "{shell:?}: {script}");
            assert!(script.contains("'/opt/opsai' widget"), "{shell:?}");
        }
    }
}
