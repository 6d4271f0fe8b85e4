//! `opsai init` and `opsai completions` through the real binary and the real shells: the scripts
//! parse, lint, source silently in strict mode, bind what they say, and call the binary by a path
//! that survives spaces and quotes. `widget_tmux` drives the widgets themselves.

mod harness;
mod widget_e2e;
mod widget_tmux;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use rstest::rstest;

use crate::support::TestEnv;
use crate::support::tmux::{Tmux, require};
use harness::{Setup, Sh, ShellTerm};

fn init(args: &[&str]) -> Output {
    TestEnv::new().cmd().arg("init").args(args).output().unwrap()
}

fn init_script(args: &[&str]) -> String {
    let out = init(args);
    assert!(out.status.success(), "opsai init {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `shell -c code` with the binary's directory first on PATH; (stdout, stderr, status).
fn shell(program: &str, flags: &[&str], code: &str, env: &[(&str, &str)]) -> (String, String, i32) {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_opsai")).parent().unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(program);
    command
        .args(flags)
        .arg("-c")
        .arg(code)
        .env_clear()
        .env("PATH", format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default()))
        .env("HOME", home.path())
        .env("OPSAI_HOME", home.path().join("opsai"))
        .env("LANG", "C.UTF-8")
        .current_dir(home.path());
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// How each shell loads `opsai init` in strict mode (zoxide's test flags); bash gets a line editor
/// with `set -o emacs`, as an interactive shell has one.
fn strict(sh: Sh, init_args: &str, before: &str, after: &str) -> (String, String, i32) {
    match sh {
        Sh::Zsh => shell(
            "zsh",
            &["-f", "-e", "-u"],
            &format!("{before}\neval \"$(opsai init zsh {init_args})\"\n{after}"),
            &[],
        ),
        Sh::Bash => shell(
            "bash",
            &["--noprofile", "--norc", "-e", "-u", "-o", "pipefail"],
            &format!("set -o emacs\n{before}\neval \"$(opsai init bash {init_args})\"\n{after}"),
            &[],
        ),
        Sh::Fish => {
            shell("fish", &["--no-config"], &format!("{before}\nopsai init fish {init_args} | source\n{after}"), &[])
        }
    }
}

#[rstest]
#[case::zsh(Sh::Zsh, &["zsh", "-n"])]
#[case::bash(Sh::Bash, &["bash", "-n"])]
#[case::fish(Sh::Fish, &["fish", "--no-execute"])]
fn every_rendered_script_parses(#[case] sh: Sh, #[case] check: &[&str]) {
    if !require(sh.name()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for args in [&[][..], &["--no-bind"], &["--key", "^X^G"]] {
        let script = init_script(&[&[sh.name()], args].concat());
        let file = dir.path().join("script");
        std::fs::write(&file, &script).unwrap();
        let out = std::process::Command::new(check[0]).args(&check[1..]).arg(&file).output().unwrap();
        assert!(out.status.success(), "{check:?} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// shellcheck at its default level, on the raw file and on a rendered script. The script itself
/// carries its one exclusion, with the reason.
#[test]
fn the_bash_script_passes_shellcheck() {
    if !require("shellcheck") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rendered = dir.path().join("opsai.bash");
    std::fs::write(&rendered, init_script(&["bash"])).unwrap();
    let raw = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("shell/opsai.bash");
    for file in [&raw, &rendered] {
        let out = std::process::Command::new("shellcheck").arg(file).output().unwrap();
        assert!(out.status.success(), "{}:\n{}", file.display(), String::from_utf8_lossy(&out.stdout));
    }
}

#[rstest]
#[case::zsh(Sh::Zsh)]
#[case::bash(Sh::Bash)]
#[case::fish(Sh::Fish)]
fn sourcing_in_strict_mode_prints_nothing_even_twice(#[case] sh: Sh) {
    if !require(sh.name()) {
        return;
    }
    for init_args in ["", "--no-bind", "--key '^X^G'"] {
        let again = match sh {
            Sh::Fish => format!("opsai init fish {init_args} | source"),
            _ => format!("eval \"$(opsai init {} {init_args})\"", sh.name()),
        };
        let (stdout, stderr, status) = strict(sh, init_args, "", &again);
        assert_eq!((stdout.as_str(), stderr.as_str(), status), ("", "", 0), "{init_args}");
    }
}

#[test]
fn bash_without_a_line_editor_sources_silently_and_binds_nothing() {
    if !require("bash") {
        return;
    }
    let (stdout, stderr, status) =
        shell("bash", &["--noprofile", "--norc", "-euo", "pipefail"], "eval \"$(opsai init bash)\"; bind -X 2>&1", &[]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stderr, "");
    assert!(!stdout.contains("__opsai_widget"), "{stdout}");
}

/// What each shell has bound to the widget's key, and to Ctrl-G.
fn bindings(sh: Sh, init_args: &str, env: &[(&str, &str)]) -> String {
    let (code, flags): (String, &[&str]) = match sh {
        Sh::Zsh => (
            format!(
                "eval \"$(opsai init zsh {init_args})\"; for m in emacs viins vicmd isearch; do \
                 print -r -- $m $(bindkey -M $m '^G') $(bindkey -M $m '^X^G'); done; print -r -- $precmd_functions"
            ),
            &["-f"],
        ),
        Sh::Bash => (
            format!(
                "set -o emacs; eval \"$(opsai init bash {init_args})\"; for m in emacs vi-insert vi-command; do \
                 echo $m; bind -m $m -X; done; echo \"${{PROMPT_COMMAND[*]}}\""
            ),
            &["--noprofile", "--norc"],
        ),
        Sh::Fish => (format!("opsai init fish {init_args} | source; bind --user -a"), &["--no-config"]),
    };
    let (stdout, stderr, status) = shell(sh.name(), flags, &code, env);
    assert_eq!((status, stderr.as_str()), (0, ""), "{stdout}");
    stdout
}

#[test]
fn zsh_binds_ctrl_g_in_every_keymap_and_keeps_it_cancelling_a_search() {
    if !require("zsh") {
        return;
    }
    let out = bindings(Sh::Zsh, "", &[]);
    assert_eq!(
        out,
        "emacs \"^G\" opsai-widget \"^X^G\" undefined-key\nviins \"^G\" opsai-widget \"^X^G\" undefined-key\n\
         vicmd \"^G\" opsai-widget \"^X^G\" undefined-key\nisearch \"^G\" send-break \"^X^G\" undefined-key\n\
         __opsai_precmd\n"
    );
    let out = bindings(Sh::Zsh, "--key '^X^G'", &[]);
    assert!(out.starts_with("emacs \"^G\" send-break \"^X^G\" opsai-widget\n"), "{out}");
    assert!(out.contains("isearch \"^G\" undefined-key \"^X^G\" send-break\n"), "{out}");
    assert_eq!(bindings(Sh::Zsh, "", &[("OPSAI_WIDGET_KEY", "^X^G")]), out, "OPSAI_WIDGET_KEY is --key");
    let out = bindings(Sh::Zsh, "--no-bind", &[]);
    assert!(out.starts_with("emacs \"^G\" send-break \"^X^G\" undefined-key\n"), "{out}");
    assert!(out.contains("isearch \"^G\" undefined-key"), "{out}");
    let (stdout, _, status) = shell("zsh", &["-f"], "eval \"$(opsai init zsh --no-bind)\"; zle -lL opsai-widget", &[]);
    assert_eq!(
        (stdout.as_str(), status),
        ("zle -N opsai-widget __opsai_widget\n", 0),
        "--no-bind still defines the widget"
    );
}

#[test]
fn bash_binds_the_key_in_every_keymap_and_hooks_prompt_command_first() {
    if !require("bash") {
        return;
    }
    let out = bindings(Sh::Bash, "", &[]);
    for map in ["emacs", "vi-insert", "vi-command"] {
        assert!(out.contains(&format!("{map}\n\"\\C-g\": \"__opsai_widget\"\n")), "{out}");
    }
    assert!(out.ends_with("\n__opsai_save_status\n"), "{out}");
    let out = bindings(Sh::Bash, "--key '^X^G'", &[]);
    assert!(out.contains("emacs\n\"\\C-x\\C-g\": \"__opsai_widget\"\nvi-insert"), "{out}");
    assert!(!out.contains("\"\\C-g\""), "{out}");
    assert_eq!(bindings(Sh::Bash, "", &[("OPSAI_WIDGET_KEY", "^X^G")]), out, "OPSAI_WIDGET_KEY is --key");
    let out = bindings(Sh::Bash, "--no-bind", &[]);
    assert!(!out.contains("__opsai_widget"), "{out}");
    let (stdout, _, _) =
        shell("bash", &["--norc"], "eval \"$(opsai init bash --no-bind)\"; declare -F __opsai_widget", &[]);
    assert_eq!(stdout, "__opsai_widget\n", "--no-bind still defines the widget");
}

/// PROMPT_COMMAND as a string or (bash 5.1+) an array: the status hook goes first, the rest stays.
#[rstest]
#[case::unset("", "declare -- PROMPT_COMMAND=\"__opsai_save_status\"")]
#[case::string("PROMPT_COMMAND='history -a'", "declare -- PROMPT_COMMAND=\"__opsai_save_status;history -a\"")]
#[case::leading_semicolon(
    "PROMPT_COMMAND=' ; history -a'",
    "declare -- PROMPT_COMMAND=\"__opsai_save_status;history -a\""
)]
#[case::array(
    "PROMPT_COMMAND=('history -a' 'echo x')",
    "declare -a PROMPT_COMMAND=([0]=\"__opsai_save_status\" [1]=\"history -a\" [2]=\"echo x\")"
)]
fn bash_prompt_command_gets_the_status_hook_first(#[case] before: &str, #[case] expected: &str) {
    if !require("bash") {
        return;
    }
    let (stdout, stderr, status) =
        strict(Sh::Bash, "", before, "eval \"$(opsai init bash)\"; declare -p PROMPT_COMMAND");
    assert_eq!((stderr.as_str(), status), ("", 0));
    assert_eq!(stdout.trim_end(), expected, "and only once after a second init");
}

#[test]
fn fish_binds_the_key_in_default_and_insert_mode() {
    if !require("fish") {
        return;
    }
    let out = bindings(Sh::Fish, "", &[]);
    assert!(out.contains("bind \\cg __opsai_widget\n"), "{out}");
    assert!(out.contains("bind -M insert \\cg __opsai_widget\n"), "{out}");
    let out = bindings(Sh::Fish, "--key '^X^G'", &[]);
    assert!(out.contains("bind \\cx\\cg __opsai_widget\n"), "{out}");
    assert!(out.contains("bind -M insert \\cx\\cg __opsai_widget\n"), "{out}");
    assert_eq!(out.matches("__opsai_widget").count(), 2, "Ctrl-G stays free: {out}");
    assert_eq!(bindings(Sh::Fish, "", &[("OPSAI_WIDGET_KEY", "^X^G")]), out, "OPSAI_WIDGET_KEY is --key");
    let out = bindings(Sh::Fish, "--no-bind", &[]);
    assert!(!out.contains("__opsai_widget"), "{out}");
    let (_, _, status) =
        shell("fish", &["--no-config"], "opsai init fish --no-bind | source; functions -q __opsai_widget", &[]);
    assert_eq!(status, 0, "--no-bind still defines the widget");
}

#[rstest]
#[case::zsh(Sh::Zsh, "bindkey '^G' beep", "opsai: ^G was bound to beep; it now opens the opsai widget")]
#[case::zsh_user_widget(Sh::Zsh, "f() {}; zle -N f; bindkey '^G' f", "opsai: ^G was bound to f;")]
#[case::bash(Sh::Bash, "bind -x '\"\\C-g\": echo hi'", "opsai: \\C-g was bound to \"echo hi\"; it now opens")]
#[case::bash_function(Sh::Bash, "bind '\"\\C-g\": beginning-of-line'", "opsai: \\C-g was bound to beginning-of-line;")]
#[case::fish(Sh::Fish, "bind \\cg 'echo hi'", "opsai: \\cg was bound (bind \\cg 'echo hi'); it now opens")]
fn a_key_bound_to_something_else_gets_one_warning(#[case] sh: Sh, #[case] before: &str, #[case] warning: &str) {
    if !require(sh.name()) {
        return;
    }
    let (stdout, stderr, status) = strict(sh, "", before, "");
    assert_eq!((stdout.as_str(), status), ("", 0));
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.starts_with(warning), "{stderr}");
    assert!(stderr.contains("--key") && stderr.contains("--no-bind"), "says what to do: {stderr}");
}

/// The stock binding, an unbound key, or the user's own key choice with a stock binding: no warning.
#[rstest]
#[case::zsh_custom_key_builtin(Sh::Zsh, "--key '^L'", "")]
#[case::zsh_vi(Sh::Zsh, "", "bindkey -v")]
#[case::bash_vi(Sh::Bash, "", "set -o vi")]
#[case::bash_custom_key(Sh::Bash, "--key '^L'", "")]
#[case::fish_custom_key(Sh::Fish, "--key '^L'", "")]
fn a_stock_binding_gets_no_warning(#[case] sh: Sh, #[case] init_args: &str, #[case] before: &str) {
    if !require(sh.name()) {
        return;
    }
    assert_eq!(strict(sh, init_args, before, ""), (String::new(), String::new(), 0));
}

#[test]
fn the_binary_path_is_quoted_for_each_shell() {
    let script = init_script(&["zsh"]);
    assert!(script.contains(&format!("\\command '{}' widget", env!("CARGO_BIN_EXE_opsai"))), "{script}");
    assert!(!script.contains("__OPSAI_"), "every placeholder is filled");
    let script = init_script(&["fish"]);
    assert!(script.contains(&format!("command '{}' widget", env!("CARGO_BIN_EXE_opsai"))), "{script}");
}

/// A copy of opsai in `my "odd" it's dir`: `init` quotes its path so each shell calls exactly that
/// file. The copy is then replaced by the fake, and each shell's widget calls it.
#[test]
fn a_binary_path_with_spaces_and_quotes_is_called_correctly() {
    let dir = tempfile::tempdir().unwrap();
    let odd_dir = dir.path().join("my \"odd\" it's dir");
    std::fs::create_dir(&odd_dir).unwrap();
    let odd = odd_dir.join("opsai");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_opsai"), &odd).is_err() {
        opsai::testing::copy_program(env!("CARGO_BIN_EXE_opsai"), &odd);
    }
    let render = |sh: Sh| {
        let out = std::process::Command::new(&odd).args(["init", sh.name()]).env_clear().output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let path = odd.display().to_string();
    let scripts = [(Sh::Zsh, render(Sh::Zsh)), (Sh::Bash, render(Sh::Bash)), (Sh::Fish, render(Sh::Fish))];
    let posix = format!("'{}'", path.replace('\'', r"'\''"));
    let fish = format!("'{}'", path.replace('\'', r"\'"));
    assert!(scripts[0].1.contains(&posix) && scripts[1].1.contains(&posix), "{posix}");
    assert!(scripts[2].1.contains(&fish), "{fish}");

    // The link is replaced, not written through: the real binary stays as it is.
    std::fs::remove_file(&odd).unwrap();
    for (sh, script) in scripts {
        let state = dir.path().join(format!("state-{}", sh.name()));
        let Some(shell) = ShellTerm::start(sh, Setup { script: Some(script), ..Setup::default() }) else { continue };
        let fake = harness::Fake::install(&odd, &state);
        fake.reply("echo found", 0);
        shell.term.type_text("find it");
        shell.term.press(&["C-g"]);
        shell.wait_line("echo found");
        assert_eq!(fake.wait_calls(1)[0].env["OPSAI_BUFFER"], "find it", "{}", sh.name());
        std::fs::remove_file(&odd).unwrap();
    }
}

#[test]
fn an_unsupported_shell_is_a_usage_error_naming_the_valid_ones() {
    let out = init(&["tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("tcsh"), "{stderr}");
    for name in ["zsh", "bash", "fish"] {
        assert!(stderr.contains(name), "{stderr}");
    }
    assert!(out.stdout.is_empty());
}

#[rstest]
#[case::empty("")]
#[case::double_quote("\"")]
#[case::newline("^G\n")]
fn a_key_that_cannot_be_bound_is_a_usage_error(#[case] key: &str) {
    let out = init(&["bash", "--key", key]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("opsai: --key "));
}

/// init runs at every shell start: it must not read the config (a corrupt one is no error) or need
/// a home at all.
#[test]
fn init_reads_no_config_and_needs_no_home() {
    let env = TestEnv::new();
    env.write_config("{ not json");
    let out = env.cmd().args(["init", "zsh"]).output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = env.cmd().env_remove("HOME").env_remove("OPSAI_HOME").args(["init", "fish"]).output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[rstest]
#[case::zsh("zsh", "_opsai")]
#[case::bash("bash", "opsai.bash")]
#[case::fish("fish", "opsai.fish")]
fn committed_completions_are_current(#[case] shell_name: &str, #[case] file: &str) {
    let out = TestEnv::new().cmd().args(["completions", shell_name]).output().unwrap();
    assert!(out.status.success());
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("completions").join(file);
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == out.stdout,
        "completions/{file} is stale; regenerate it with `cargo run -q -- completions {shell_name} > completions/{file}`"
    );
}

#[test]
fn completions_load_in_their_shells() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("completions");
    if require("bash") {
        let code = format!("source '{}'; complete -p opsai", dir.join("opsai.bash").display());
        let (stdout, stderr, status) = shell("bash", &["--noprofile", "--norc"], &code, &[]);
        assert_eq!(status, 0, "{stderr}");
        assert!(stdout.contains(" opsai"), "{stdout}");
    }
    if require("zsh") {
        let out = std::process::Command::new("zsh").arg("-n").arg(dir.join("_opsai")).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    if require("fish") {
        let code =
            format!("source '{}'; complete -c opsai | string match -q '*init*'", dir.join("opsai.fish").display());
        let (_, stderr, status) = shell("fish", &["--no-config"], &code, &[]);
        assert_eq!(status, 0, "{stderr}");
    }
}

/// The committed zsh completion, loaded by compinit in a bare `zsh -f` on a real terminal: a
/// subcommand's own subcommands complete (the optional TASK once made `config` the task, so
/// `opsai config se<Tab>` offered `sessions`), and the top level still does.
#[test]
fn zsh_completes_subcommands_of_subcommands() {
    if !require("zsh") || !require("tmux") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_opsai"));
    let bin_dir = bin.parent().unwrap().display().to_string();
    let completions = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("completions");
    let vars = [("HOME", home.path().display().to_string()), ("PATH", format!("{bin_dir}:/usr/bin:/bin"))];
    let term = Tmux::start("zsh", &["-f"], &vars, home.path());
    term.type_text(&format!(
        "PS1='$ '; fpath=('{}' $fpath); autoload -U compinit && compinit -u -D && echo re''ady\n",
        completions.display()
    ));
    term.wait_for("\nready", Duration::from_secs(10));
    term.type_text("opsai config set-");
    term.press(&["Tab"]);
    term.wait_for("$ opsai config set-llm ", Duration::from_secs(10));
    term.press(&["C-u"]);
    term.type_text("opsai sess");
    term.press(&["Tab"]);
    let screen = term.wait_for("$ opsai sessions ", Duration::from_secs(10));
    assert!(!screen.contains("config sessions"), "{screen}");
}
