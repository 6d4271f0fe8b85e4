//! What a line typed at `Agent >` means: a slash command, a local `cd`, leaving, or a task for the
//! model. Pure parsing, so every form is unit-tested.

/// A line that the REPL handles itself; everything else goes to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Help,
    New,
    Sessions,
    Resume(i64),
    Model(Option<String>),
    DryRun(Option<bool>),
    Yes(Option<bool>),
    Cd(String),
    /// `/host HOST` (`Some`), `/host local` (`None`); `/host` alone shows where commands run.
    Host(Option<Option<String>>),
    /// `/hosts PATTERN` (`Some`), `/hosts off` (`None`); `/hosts` alone shows the fleet.
    Hosts(Option<Option<String>>),
    Config,
    Audit(usize),
    Undo,
    /// `clear`, `/clear`: the screen, as in a shell; the conversation goes on (`/new` starts afresh).
    Clear,
    Exit,
}

/// What to do with one submitted line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    Empty,
    Command(Command),
    /// A slash command that could not be understood: the message says how to use it.
    Invalid(String),
    Task(String),
}

/// Slash commands with their one-line help, in the order `/help` shows them (also Tab completion).
pub(crate) const SLASH_COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list"),
    ("/new", "start a new conversation"),
    ("/sessions", "list saved conversations"),
    ("/resume", "ID  continue a saved conversation"),
    ("/model", "[NAME]  show or switch the model"),
    ("/dry-run", "[on|off]  plan only: show each command and its risk, run nothing"),
    ("/yes", "[on|off]  approve medium-risk commands for this session (high always asks)"),
    ("/cd", "DIR  change the working directory (a bare `cd DIR` works too)"),
    ("/host", "[HOST|local]  run commands and file tools on HOST over ssh, or here again"),
    ("/hosts", "[PATTERN|off]  run every command on the hosts PATTERN selects (docs/fleet.md), or stop"),
    ("/config", "show the configuration"),
    // The default is `crate::cli::AUDIT_TAIL` (a test checks they agree).
    ("/audit", "[N]  the last N audit-log lines (default 20, as `opsai audit`)"),
    ("/undo", "restore the file this session's last write_file/edit_file changed"),
    ("/clear", "clear the screen (also `clear`, Ctrl-L); the conversation goes on"),
    ("/exit", "leave (also `exit`, `quit`, Ctrl-D)"),
];

/// Joins continuation lines (a line ending in `\`) and classifies the result.
pub fn parse(submitted: &str) -> Line {
    let text = join_continuations(submitted);
    let line = text.trim();
    if line.is_empty() {
        return Line::Empty;
    }
    if matches!(line, "exit" | "quit") {
        return Line::Command(Command::Exit);
    }
    // What `clear` does in a shell; `clear the old logs` (more words) stays a task.
    if line == "clear" {
        return Line::Command(Command::Clear);
    }
    if let Some(dir) = bare_cd(line) {
        return Line::Command(Command::Cd(dir));
    }
    match line.strip_prefix('/') {
        // `/var/log is full` is a task about a path, not a command.
        Some(rest) if is_command_word(rest) => slash(rest),
        _ => Line::Task(line.to_owned()),
    }
}

fn is_command_word(rest: &str) -> bool {
    let word = rest.split_whitespace().next().unwrap_or("");
    !word.is_empty() && !word.contains('/') && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

fn join_continuations(submitted: &str) -> String {
    let mut joined = String::with_capacity(submitted.len());
    let mut lines = submitted.split('\n').peekable();
    while let Some(line) = lines.next() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        match line.strip_suffix('\\') {
            Some(head) if lines.peek().is_some() => {
                joined.push_str(head);
                joined.push(' ');
            }
            _ => {
                joined.push_str(line);
                if lines.peek().is_some() {
                    joined.push('\n');
                }
            }
        }
    }
    joined
}

/// `cd`, `cd DIR` or `cd 'a dir'`: exactly one directory, so "cd into /var and list it" stays a task.
fn bare_cd(line: &str) -> Option<String> {
    let rest = line.strip_prefix("cd")?;
    if rest.is_empty() {
        return Some("~".to_owned());
    }
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim();
    for quote in ['\'', '"'] {
        if let Some(inner) = rest.strip_prefix(quote).and_then(|r| r.strip_suffix(quote))
            && !inner.contains(quote)
        {
            return Some(inner.to_owned());
        }
    }
    (!rest.contains(char::is_whitespace)).then(|| rest.to_owned())
}

fn slash(rest: &str) -> Line {
    let mut words = rest.split_whitespace();
    let name = words.next().unwrap_or("");
    let args: Vec<&str> = words.collect();
    let arg = args.first().copied();
    let too_many = |usage: &str| Line::Invalid(format!("usage: {usage}"));
    let command = match name {
        "help" | "h" | "?" => Command::Help,
        "new" => Command::New,
        "clear" | "cls" if args.is_empty() => Command::Clear,
        "clear" | "cls" => return too_many("/clear  (it clears the screen; /new starts a new conversation)"),
        "sessions" | "history" => Command::Sessions,
        "resume" => match (arg.map(crate::store::sessions::parse_id), args.len()) {
            (Some(Ok(id)), 1) => Command::Resume(id),
            _ => return too_many("/resume ID  (the ids are in /sessions)"),
        },
        "model" if args.len() <= 1 => Command::Model(arg.map(str::to_owned)),
        "model" => return too_many("/model [NAME]"),
        "dry-run" | "dryrun" => match switch(&args) {
            Ok(value) => Command::DryRun(value),
            Err(()) => return too_many("/dry-run [on|off]"),
        },
        "yes" => match switch(&args) {
            Ok(value) => Command::Yes(value),
            Err(()) => return too_many("/yes [on|off]"),
        },
        "cd" => {
            let dir = rest[name.len()..].trim();
            Command::Cd(if dir.is_empty() { "~".to_owned() } else { dir.to_owned() })
        }
        "host" => match (arg, args.len()) {
            (None, _) => Command::Host(None),
            (Some("local"), 1) => Command::Host(Some(None)),
            (Some(host), 1) => Command::Host(Some(Some(host.to_owned()))),
            _ => return too_many("/host [HOST|local]"),
        },
        "hosts" => match (arg, args.len()) {
            (None, _) => Command::Hosts(None),
            (Some("off"), 1) => Command::Hosts(Some(None)),
            (Some(_), _) => Command::Hosts(Some(Some(rest[name.len()..].trim().to_owned()))),
        },
        "config" => Command::Config,
        "audit" => match arg.map(str::parse::<usize>) {
            None => Command::Audit(crate::cli::AUDIT_TAIL),
            Some(Ok(n)) if args.len() == 1 && n > 0 => Command::Audit(n),
            _ => return too_many("/audit [N]  (a positive number of lines)"),
        },
        "undo" if args.is_empty() => Command::Undo,
        "undo" => return too_many("/undo  (it takes no arguments; run it again to go further back)"),
        "exit" | "quit" | "q" => Command::Exit,
        other => return Line::Invalid(format!("unknown command `/{other}`; /help lists them")),
    };
    Line::Command(command)
}

/// `on`/`off` sets, nothing toggles.
fn switch(args: &[&str]) -> Result<Option<bool>, ()> {
    match args {
        [] => Ok(None),
        [word] => match word.to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" => Ok(Some(true)),
            "off" | "false" | "no" | "0" => Ok(Some(false)),
            _ => Err(()),
        },
        _ => Err(()),
    }
}

/// The `/help` text.
pub fn help() -> String {
    let mut text = String::from("Type a task in plain language; each command is shown with its risk before it runs.\n");
    for (name, what) in SLASH_COMMANDS {
        let (args, what) = match what.split_once("  ") {
            Some((args, what)) => (args, what),
            None => ("", *what),
        };
        text.push_str(&format!("  {:<22}{what}\n", format!("{name} {args}").trim_end()));
    }
    text.push_str("Alt-Enter or a trailing \\ continues on the next line; Ctrl-C clears the line or stops a turn.\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(line: &str) -> Command {
        match parse(line) {
            Line::Command(command) => command,
            other => panic!("{line:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn tasks_go_to_the_model() {
        assert_eq!(parse("  list docker services "), Line::Task("list docker services".into()));
        assert_eq!(parse("/var/log is full, why?"), Line::Task("/var/log is full, why?".into()));
        assert_eq!(parse("cd into /var and list it"), Line::Task("cd into /var and list it".into()));
        assert_eq!(parse("cdrom status"), Line::Task("cdrom status".into()));
        assert_eq!(parse("   \n  "), Line::Empty);
        assert_eq!(parse("exit the vim session?"), Line::Task("exit the vim session?".into()));
        assert_eq!(parse("clear the old logs"), Line::Task("clear the old logs".into()));
    }

    #[test]
    fn continuation_lines_join_and_newlines_stay() {
        assert_eq!(parse("find big files \\\nunder /var"), Line::Task("find big files  under /var".into()));
        assert_eq!(parse("first line\nsecond line"), Line::Task("first line\nsecond line".into()));
        assert_eq!(parse("ends with a backslash \\"), Line::Task("ends with a backslash \\".into()));
    }

    #[test]
    fn local_commands() {
        assert_eq!(command("exit"), Command::Exit);
        assert_eq!(command("quit"), Command::Exit);
        assert_eq!(command("/exit"), Command::Exit);
        assert_eq!(command("cd /tmp"), Command::Cd("/tmp".into()));
        assert_eq!(command("cd"), Command::Cd("~".into()));
        assert_eq!(command("cd 'my dir'"), Command::Cd("my dir".into()));
        assert_eq!(command("/cd my dir"), Command::Cd("my dir".into()));
        assert_eq!(command("/resume 12"), Command::Resume(12));
        assert_eq!(command("/resume #12"), Command::Resume(12));
        assert_eq!(command("/resume c12"), Command::Resume(12), "as `sessions list` prints it");
        assert_eq!(command("/model"), Command::Model(None));
        assert_eq!(command("/model llama3.1:8b"), Command::Model(Some("llama3.1:8b".into())));
        assert_eq!(command("/yes"), Command::Yes(None));
        assert_eq!(command("/host"), Command::Host(None));
        assert_eq!(command("/host local"), Command::Host(Some(None)));
        assert_eq!(command("/host db-1"), Command::Host(Some(Some("db-1".into()))));
        assert_eq!(command("/hosts"), Command::Hosts(None));
        assert_eq!(command("/hosts off"), Command::Hosts(Some(None)));
        assert_eq!(command("/hosts web-*:&eu"), Command::Hosts(Some(Some("web-*:&eu".into()))));
        assert_eq!(command("/yes on"), Command::Yes(Some(true)));
        assert_eq!(command("/dry-run off"), Command::DryRun(Some(false)));
        assert_eq!(command("/audit"), Command::Audit(crate::cli::AUDIT_TAIL));
        assert_eq!(command("/audit 3"), Command::Audit(3));
        assert_eq!(command("/new"), Command::New);
        assert_eq!(command("/sessions"), Command::Sessions);
        assert_eq!(command("/config"), Command::Config);
        assert_eq!(command("/help"), Command::Help);
        assert_eq!(command("/undo"), Command::Undo);
        assert_eq!(command("clear"), Command::Clear);
        assert_eq!(command("/clear"), Command::Clear);
    }

    #[test]
    fn bad_slash_commands_say_how_to_use_them() {
        assert_eq!(parse("/resume"), Line::Invalid("usage: /resume ID  (the ids are in /sessions)".into()));
        assert_eq!(parse("/resume abc"), Line::Invalid("usage: /resume ID  (the ids are in /sessions)".into()));
        assert_eq!(parse("/yes maybe"), Line::Invalid("usage: /yes [on|off]".into()));
        assert_eq!(parse("/audit 0"), Line::Invalid("usage: /audit [N]  (a positive number of lines)".into()));
        assert_eq!(
            parse("/undo all"),
            Line::Invalid("usage: /undo  (it takes no arguments; run it again to go further back)".into())
        );
        assert_eq!(parse("/frobnicate"), Line::Invalid("unknown command `/frobnicate`; /help lists them".into()));
    }

    #[test]
    fn help_lists_every_command() {
        let help = help();
        for (name, _) in SLASH_COMMANDS {
            assert!(help.contains(name), "{name} missing from\n{help}");
        }
        assert!(help.contains("  /resume ID            continue a saved conversation\n"), "{help}");
        // `/audit` and `opsai audit` show the same number of lines by default, and say so.
        assert!(help.contains(&format!("(default {}, as `opsai audit`)", crate::cli::AUDIT_TAIL)), "{help}");
    }
}
