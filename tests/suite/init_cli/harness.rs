//! A real zsh, bash or fish in tmux with the rendered widget script, whose `opsai widget` is a fake:
//! a small sh script that records what it was given and answers as told. The real buffer and cursor
//! are read back through a dump key (`^X^Y`), not only from the screen.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use opsai::testing::wait_until;
use tempfile::TempDir;

use crate::support::TestEnv;
use crate::support::tmux::{Tmux, require};

pub const LIMIT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sh {
    Zsh,
    Bash,
    Fish,
}

impl Sh {
    pub fn name(self) -> &'static str {
        match self {
            Sh::Zsh => "zsh",
            Sh::Bash => "bash",
            Sh::Fish => "fish",
        }
    }

    /// The prompt's last line, as the rc file sets it.
    pub fn prompt(self) -> &'static str {
        match self {
            Sh::Zsh => "ZSH> ",
            Sh::Bash => "BASH> ",
            Sh::Fish => "FISH> ",
        }
    }

    /// The binary path as `opsai init` writes it for this shell (plain paths only).
    pub fn quote(self, path: &Path) -> String {
        format!("'{}'", path.display())
    }
}

/// The variables the widget passes to `opsai widget`.
pub const WIDGET_VARS: [&str; 6] =
    ["OPSAI_BUFFER", "OPSAI_CURSOR", "OPSAI_SHELL", "OPSAI_SHELL_VERSION", "OPSAI_LAST_STATUS", "OPSAI_KEYMAP"];

/// One call of the fake `opsai widget`.
#[derive(Debug)]
pub struct Call {
    pub argv: Vec<String>,
    pub stdin: String,
    /// The OPSAI_* variables that were set.
    pub env: BTreeMap<String, String>,
}

/// The stand-in for `opsai`: records each call in `state/calls/N/`, then prints `state/out` and
/// exits with `state/status` (after `state/sleep` seconds, if that file exists). It writes a line to
/// stderr too, which the widget must hide.
pub struct Fake {
    state: PathBuf,
}

impl Fake {
    pub fn install(program: &Path, state: &Path) -> Fake {
        std::fs::create_dir_all(state.join("calls")).unwrap();
        let mut script = String::from("#!/bin/sh\n");
        script += &format!("state='{}'\n", state.display());
        script += "n=$(ls \"$state/calls\" | wc -l | tr -d ' ')\ncall=\"$state/calls/.$n\"\nmkdir \"$call\"\n";
        script += "printf '%s\\n' \"$@\" > \"$call/argv\"\n";
        for var in WIDGET_VARS {
            script += &format!("if [ \"${{{var}+set}}\" ]; then printf '%s' \"${var}\" > \"$call/{var}\"; fi\n");
        }
        script += "cat > \"$call/stdin\"\nmv \"$call\" \"$state/calls/$n\"\n";
        script += "echo 'FAKE-STDERR must not reach the screen' >&2\n";
        script += "if [ -f \"$state/sleep\" ]; then sleep \"$(cat \"$state/sleep\")\"; fi\n";
        script += "cat \"$state/out\" 2>/dev/null\nexit \"$(cat \"$state/status\" 2>/dev/null || echo 0)\"\n";
        opsai::testing::write_program(program, script);
        Fake { state: state.to_owned() }
    }

    /// The next calls print `out` (plus a newline, as a program would) and exit with `status`.
    pub fn reply(&self, out: &str, status: i32) {
        let text = if out.is_empty() { String::new() } else { format!("{out}\n") };
        std::fs::write(self.state.join("out"), text).unwrap();
        std::fs::write(self.state.join("status"), status.to_string()).unwrap();
    }

    /// The next calls sleep this long before answering.
    pub fn sleep(&self, seconds: u32) {
        std::fs::write(self.state.join("sleep"), seconds.to_string()).unwrap();
    }

    pub fn calls(&self) -> Vec<Call> {
        let mut numbers: Vec<usize> =
            TestEnv::entries(&self.state.join("calls")).iter().filter_map(|name| name.parse().ok()).collect();
        numbers.sort_unstable();
        numbers.into_iter().map(|n| self.call(n)).collect()
    }

    fn call(&self, n: usize) -> Call {
        let dir = self.state.join("calls").join(n.to_string());
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        let env = WIDGET_VARS.iter().filter_map(|var| Some(((*var).to_owned(), read(var)?))).collect();
        Call {
            argv: read("argv").unwrap_or_default().lines().map(str::to_owned).collect(),
            stdin: read("stdin").unwrap_or_default(),
            env,
        }
    }

    /// Waits until the fake has been called `n` times in all.
    pub fn wait_calls(&self, n: usize) -> Vec<Call> {
        let mut calls = Vec::new();
        let called = wait_until(LIMIT, || {
            calls = self.calls();
            calls.len() >= n
        });
        assert!(called, "the fake was called {} times, not {n}", calls.len());
        calls
    }
}

/// How the shell is set up.
#[derive(Default)]
pub struct Setup {
    pub two_line_prompt: bool,
    pub vi: bool,
    /// More variables for the shell (`OPSAI_NO_HISTORY=1`).
    pub env: Vec<(&'static str, String)>,
    /// More arguments for the shell (`--private`).
    pub args: Vec<&'static str>,
    /// The widget script to source instead of `opsai init <shell>` with the fake's path filled in.
    pub script: Option<String>,
}

/// A shell in tmux with the widget sourced, on its own tmux server.
pub struct ShellTerm {
    pub sh: Sh,
    pub term: Tmux,
    pub fake: Fake,
    pub home: TempDir,
    dump: PathBuf,
}

impl ShellTerm {
    /// Starts `sh` (None, with the reason printed, when it or tmux is missing outside CI) and
    /// waits for its first prompt.
    pub fn start(sh: Sh, setup: Setup) -> Option<ShellTerm> {
        if !require("tmux") || !require(sh.name()) {
            return None;
        }
        let home = tempfile::Builder::new().prefix("opsai-shell-").tempdir().unwrap();
        let fake = Fake::install(&home.path().join("fake-opsai"), &home.path().join("fake"));
        fake.reply("", 0);
        let script = setup.script.clone().unwrap_or_else(|| render_with_fake(sh, &home.path().join("fake-opsai")));
        std::fs::write(home.path().join("opsai-widget"), script).unwrap();
        let dump = home.path().join("dump");
        write_rc(sh, home.path(), &setup);

        let mut env = vec![
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("HOME", home.path().display().to_string()),
            ("LANG", "C.UTF-8".to_owned()),
            ("DUMP", dump.display().to_string()),
            // No history file: the shell writes it as it exits after the tmux server is killed,
            // racing the removal of `home` and leaving the directory behind in $TMPDIR.
            ("HISTFILE", String::new()),
            ("fish_history", String::new()),
        ];
        env.extend(setup.env.iter().cloned());
        let mut args: Vec<&str> = match sh {
            Sh::Zsh => {
                env.push(("ZDOTDIR", home.path().display().to_string()));
                vec!["-d", "-i"]
            }
            Sh::Bash => vec!["--noprofile", "--rcfile", "RCFILE", "-i"],
            Sh::Fish => vec![],
        };
        let rcfile = home.path().join(".bashrc").display().to_string();
        for arg in &mut args {
            if *arg == "RCFILE" {
                *arg = &rcfile;
            }
        }
        args.extend(setup.args.iter().copied());
        let term = Tmux::start(sh.name(), &args, &env, home.path());
        let shell = ShellTerm { sh, term, fake, home, dump };
        shell.wait_prompts(1);
        Some(shell)
    }

    /// Lines of the screen that hold the prompt.
    pub fn prompts(&self, screen: &str) -> usize {
        screen.lines().filter(|line| line.contains(self.sh.prompt())).count()
    }

    pub fn wait_prompts(&self, n: usize) -> String {
        self.term.wait_until(LIMIT, &format!("{n} prompts"), |screen| self.prompts(screen) >= n)
    }

    /// Runs `command` and waits for the prompt after it (the screen then has `prompts` prompts).
    pub fn run(&self, command: &str, prompts: usize) -> String {
        self.term.line(command);
        self.wait_prompts(prompts)
    }

    /// Prints a marker line above the prompt (the screen then has 2 prompts).
    pub fn mark(&self) {
        self.run("echo MARK-BEFORE", 2);
        self.term.wait_until(LIMIT, "the marker", |screen| screen.lines().any(|line| line == "MARK-BEFORE"));
    }

    /// The real buffer and cursor (in characters), read through the dump key.
    pub fn dump(&self) -> (String, usize) {
        let _ = std::fs::remove_file(&self.dump);
        // bash erases the prompt line while a `bind -x` function runs and draws it again after: the
        // file is written in between, so wait for the prompts to be back before anyone reads the screen.
        let prompts = self.prompts(&self.term.screen());
        // A key pressed while fish is still repainting after a cancelled widget can be dropped
        // (seen under CI load): the dump is idempotent, so the key is pressed again, up to 3 times.
        let mut dump = None;
        let mut dumped = false;
        for _ in 0..3 {
            self.term.press(&["C-x", "C-y"]);
            dumped = wait_until(LIMIT / 3, || {
                dump = std::fs::read_to_string(&self.dump).ok();
                dump.is_some()
            });
            if dumped {
                break;
            }
        }
        assert!(dumped, "no dump; the screen was:\n{}", self.term.screen());
        self.wait_prompts(prompts);
        let text = dump.unwrap();
        let (cursor, buffer) = text.split_once('\n').unwrap_or((&text, ""));
        (buffer.to_owned(), cursor.trim().parse().unwrap_or_else(|_| panic!("bad dump {text:?}")))
    }

    /// Waits until the screen shows the prompt followed by `text` and, anywhere, `also`.
    pub fn wait_line_and(&self, text: &str, also: &str) -> String {
        let want = format!("{}{text}", self.sh.prompt());
        self.term.wait_until(LIMIT, &format!("{want:?} and {also:?}"), |screen| {
            screen.lines().any(|line| line.trim_end().ends_with(&want)) && screen.contains(also)
        })
    }

    /// Waits until the last line is the prompt followed by `text`.
    pub fn wait_line(&self, text: &str) -> String {
        let want = format!("{}{text}", self.sh.prompt());
        self.term.wait_until(LIMIT, &want, |screen| {
            // Trailing blanks are where a spinner was erased; they are not part of the line.
            screen
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
                .is_some_and(|line| line.trim_end().ends_with(&want))
        })
    }

    /// Checks what every widget run must leave: the marker, no stray output, no status text.
    pub fn assert_clean(&self, screen: &str, prompts: usize) {
        assert!(screen.lines().any(|line| line == "MARK-BEFORE"), "the line above is intact:\n{screen}");
        assert_eq!(self.prompts(screen), prompts, "no prompt eaten or doubled:\n{screen}");
        for stray in ["FAKE-STDERR", "opsai: thinking", "(opsai:"] {
            assert!(!screen.contains(stray), "{stray:?} is left on the screen:\n{screen}");
        }
    }
}

/// `opsai init <sh>` with the fake's path where the real binary's is.
pub fn render_with_fake(sh: Sh, fake: &Path) -> String {
    let out = TestEnv::new().cmd().args(["init", sh.name()]).output().unwrap();
    assert!(out.status.success(), "opsai init {}: {}", sh.name(), String::from_utf8_lossy(&out.stderr));
    let script = String::from_utf8(out.stdout).unwrap();
    let real = sh.quote(Path::new(env!("CARGO_BIN_EXE_opsai")));
    assert!(script.contains(&real), "the script calls {real}");
    script.replace(&real, &sh.quote(fake))
}

fn write_rc(sh: Sh, home: &Path, setup: &Setup) {
    let top = if setup.two_line_prompt { "[top line]\\n" } else { "" };
    match sh {
        Sh::Zsh => {
            let mut rc = format!("PS1=$'{top}ZSH> '\nKEYTIMEOUT=1\n");
            if setup.vi {
                rc += "bindkey -v\n";
                // The keymap in the prompt, so a test can wait for normal mode.
                rc += "zle-line-init zle-keymap-select() { PS1=\"[${KEYMAP/main/viins}]ZSH> \"; zle reset-prompt }\n";
                rc += "zle -N zle-line-init; zle -N zle-keymap-select\n";
            }
            rc += "source ~/opsai-widget\n";
            rc += "__dump() { print -rn -- \"$CURSOR\"$'\\n'\"$BUFFER\" > $DUMP.tmp && command mv $DUMP.tmp $DUMP }\n";
            rc += "zle -N __dump\nfor m in emacs viins vicmd; do bindkey -M $m '^X^Y' __dump; done\n";
            std::fs::write(home.join(".zshrc"), rc).unwrap();
        }
        Sh::Bash => {
            let mut rc = format!("PS1='{top}BASH> '\n");
            if setup.vi {
                rc += "set -o vi\nbind 'set show-mode-in-prompt on'\n";
                rc += "bind 'set vi-ins-mode-string [I]'\nbind 'set vi-cmd-mode-string [N]'\n";
            }
            rc += "source ~/opsai-widget\n";
            rc += "__dump() { printf '%s\\n%s' \"$READLINE_POINT\" \"$READLINE_LINE\" > \"$DUMP.tmp\" && command mv \"$DUMP.tmp\" \"$DUMP\"; }\n";
            rc += "for m in emacs vi-insert vi-command; do bind -m $m -x '\"\\C-x\\C-y\": __dump'; done\n";
            std::fs::write(home.join(".bashrc"), rc).unwrap();
        }
        Sh::Fish => {
            let dir = home.join(".config/fish");
            std::fs::create_dir_all(&dir).unwrap();
            let mut rc = String::from("set -g fish_greeting\nset -g fish_autosuggestion_enabled 0\n");
            rc += &format!("function fish_prompt; printf '{top}FISH> '; end\n");
            if setup.vi {
                rc += "fish_vi_key_bindings\nfunction fish_mode_prompt; printf '[%s] ' $fish_bind_mode; end\n";
            } else {
                rc += "function fish_mode_prompt; end\n";
            }
            rc += "source ~/opsai-widget\n";
            rc += "function __dump\n    printf '%s\\n%s' (commandline -C) (commandline | string collect) > $DUMP.tmp\n";
            rc += "    and command mv $DUMP.tmp $DUMP\nend\n";
            rc += "bind \\cx\\cy __dump\nbind -M insert \\cx\\cy __dump\n";
            std::fs::write(dir.join("config.fish"), rc).unwrap();
        }
    }
}

impl Drop for ShellTerm {
    /// Ends the shell before `home` is removed: a shell saves its state (fish's `~/.local`) as it
    /// exits after the tmux server is killed, which would otherwise race the removal and leave
    /// the directory behind in $TMPDIR.
    fn drop(&mut self) {
        let pid = self.term.run(&["display", "-p", "#{pane_pid}"]).trim().parse::<u32>().ok();
        self.term.run(&["kill-server"]);
        if let Some(pid) = pid {
            // Gone, or a zombie nobody reaps yet: either way it writes nothing more.
            let running = || {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
            };
            let _ = wait_until(Duration::from_secs(5), || !running());
        }
    }
}
