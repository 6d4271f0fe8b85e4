//! Issue 13 §3: what the screen shows is what runs. The model (over real HTTP/SSE from the mock)
//! puts cursor movement, erase, OSC 52 (clipboard), OSC 8 (hyperlink), OSC 0 (title) and a carriage
//! return into every field that reaches the terminal — a thought, an unknown tool's name, a
//! command that needs approval, its `why`, the reasoning and the final answer — and the real screen
//! is read back from tmux: the approval block shows the command that runs, nothing was erased, no
//! title or clipboard buffer was set.

use std::time::Duration;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::tmux::{Tmux, require};

const LIMIT: Duration = Duration::from_secs(30);

/// Every hostile kind at once: up a line and erase it, set the clipboard, a hyperlink around
/// `LINK`, set the title, and a carriage return before `X` (which would overwrite the line's start).
const HOSTILE: &str =
    "\x1b[1A\x1b[2K\x1b]52;c;cHduZWQ=\x07\x1b]8;;http://evil.example/\x1b\\LINK\x1b]8;;\x1b\\\x1b]0;pwned\x07\rX";

/// `HOSTILE` as the screen must show it where removed characters are written out.
const HOSTILE_SHOWN: &str = "\\x1b[1A\\x1b[2K\\x1b]52;c;cHduZWQ=\\x07\\x1b]8;;http://evil.example/\\x1b\\LINK\\x1b]8;;\\x1b\\\\x1b]0;pwned\\x07\\rX";

/// Starts `opsai ARGS` in tmux behind a shell that waits for one Enter, so the tmux server can be
/// told to accept OSC 52 from applications first (it ignores them by default, which would make
/// the clipboard check pass for the wrong reason).
fn start(env: &TestEnv, mock: &MockLlm, args: &[&str]) -> Tmux {
    let mut argv = vec!["-c", "read go; exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_opsai")];
    argv.extend_from_slice(args);
    let term = Tmux::start("/bin/sh", &argv, &env.terminal_vars(&mock.base_url()), env.user_home());
    term.run(&["set", "-g", "set-clipboard", "on"]);
    term
}

fn title(term: &Tmux) -> String {
    term.run(&["display", "-p", "-t", "0", "#{pane_title}"]).trim_end().to_owned()
}

fn buffers(term: &Tmux) -> String {
    term.run(&["list-buffers"])
}

/// The checks below can fail: the same bytes printed raw do set the title and a clipboard buffer,
/// and do erase the line above.
#[test]
fn the_hostile_bytes_do_act_on_this_terminal_when_printed_raw() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([]);
    let script = format!("read go; printf 'KEPT-LINE\\nsecond'; printf '%s' '{HOSTILE}'; printf 'END\\n'");
    let term = Tmux::start("/bin/sh", &["-c", &script], &env.terminal_vars(&mock.base_url()), env.user_home());
    term.run(&["set", "-g", "set-clipboard", "on"]);
    term.press(&["Enter"]);
    term.wait_until(LIMIT, "the title to change", |_| title(&term) == "pwned");
    let screen = term.wait_for("END", LIMIT);
    assert!(!screen.contains("KEPT-LINE"), "the line above was erased: {screen}");
    assert!(buffers(&term).contains("pwned"), "OSC 52 made a buffer: {}", buffers(&term));
}

#[test]
fn every_model_field_reaches_the_screen_without_acting_on_the_terminal() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_text_then_tool_call(&format!("THOUGHT-A{HOSTILE}THOUGHT-B"), "c1", &format!("bogus{HOSTILE}"), json!({})),
        reply_tool_call(
            "c2",
            "run_command",
            json!({"command": format!("touch {HOSTILE} marker.txt"), "why": format!("WHY-A{HOSTILE}WHY-B")}),
        ),
        reply_reasoning_then_text(
            &format!("REASON-A{HOSTILE}REASON-B"),
            &format!("ANSWER-A{HOSTILE}ANSWER-B\nsecond line"),
        ),
    ]);
    let term = start(&env, &mock, &["make a marker"]);
    let before = title(&term);
    term.press(&["Enter"]);
    let screen = term.wait_for("[y] run once", LIMIT);
    // The approval block: the command that runs, then what the model typed with every removed
    // character written out, then its reason, all on their own lines.
    let block =
        ["  [MEDIUM] touch LINKX marker.txt".to_owned(), format!("  typed as: touch {HOSTILE_SHOWN} marker.txt")];
    for line in &block {
        assert!(screen.lines().any(|l| l == line), "missing {line:?}:\n{screen}");
    }
    assert!(screen.lines().any(|l| l == format!("  why: WHY-A{HOSTILE_SHOWN}WHY-B")), "{screen}");
    assert!(screen.contains("[a] always allow `touch` for this session"), "{screen}");
    // The unknown tool's name and the error quoting it, shown whole.
    assert!(screen.lines().any(|l| l.starts_with(&format!("▶ bogus{HOSTILE_SHOWN}"))), "{screen}");
    assert!(screen.contains(&format!("unknown tool `bogus{HOSTILE_SHOWN}`")), "{screen}");
    // The thought: escapes removed, its text kept (nothing above it erased).
    assert!(screen.contains("THOUGHT-ALINKXTHOUGHT-B"), "{screen}");
    term.line("y");
    let screen = term.wait_for("ANSWER-B", LIMIT);
    assert_eq!(term.wait_exit(LIMIT), 0, "{screen}");
    let screen = term.screen();
    assert!(screen.contains("ANSWER-ALINKXANSWER-B\nsecond line"), "{screen}");
    assert!(screen.contains("REASON-ALINKXREASON-B"), "{screen}");
    // What ran is what was shown: `touch LINKX marker.txt`.
    assert!(env.user_home().join("LINKX").exists() && env.user_home().join("marker.txt").exists());
    // Every line drawn is still there, in order: nothing moved the cursor up and erased it.
    let order = ["THOUGHT-A", "▶ bogus", "unknown tool `bogus", "▶ run_command", "[MEDIUM] touch LINKX", "why: WHY-A"];
    let mut at = 0;
    for needle in order {
        let found =
            screen[at..].find(needle).unwrap_or_else(|| panic!("{needle:?} missing or out of order:\n{screen}"));
        at += found + needle.len();
    }
    assert_eq!(title(&term), before, "the title was not changed");
    assert!(!buffers(&term).contains("pwned") && !buffers(&term).contains("cHduZWQ"), "{}", buffers(&term));
}

/// `-q` on a terminal: the answer is sanitized like everything else.
#[test]
fn a_quiet_answer_on_a_terminal_is_sanitized() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text(&format!("KEEP-ME\nANSWER-A{HOSTILE}ANSWER-B"))]);
    let term = start(&env, &mock, &["-q", "say it"]);
    let before = title(&term);
    term.press(&["Enter"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
    let screen = term.screen();
    assert!(screen.contains("KEEP-ME\nANSWER-ALINKXANSWER-B"), "{screen}");
    assert_eq!(title(&term), before);
    assert!(!buffers(&term).contains("pwned"), "{}", buffers(&term));
}

/// `-q` into a pipe or a file: the bytes the model wrote (docs/policy.md "What you see is what runs").
#[test]
fn a_quiet_answer_into_a_pipe_is_the_model_s_bytes() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text(&format!("ANSWER-A{HOSTILE}ANSWER-B"))]);
    let out = env.cmd().env("OPSAI_BASE_URL", mock.base_url()).args(["-q", "say it"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("ANSWER-A{HOSTILE}ANSWER-B\n"));
}

/// The prompt says what `[a]` covers, and it covers exactly that: the same program, subcommand and
/// option set with other operands runs without asking; another option set asks again.
#[test]
fn the_prompt_names_what_a_grant_covers_and_it_covers_only_that() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "mkdir -p d1/x"})),
        reply_tool_call("c2", "run_command", json!({"command": "mkdir -p d2/x"})),
        reply_tool_call("c3", "run_command", json!({"command": "mkdir d3"})),
        reply_text("made three"),
    ]);
    let term = start(&env, &mock, &["make dirs"]);
    term.press(&["Enter"]);
    let screen = term.wait_for("[y] run once", LIMIT);
    assert!(screen.contains("[a] always allow `mkdir -p` for this session"), "{screen}");
    term.line("a");
    let screen = term.wait_until(LIMIT, "a second prompt", |s| s.matches("[y] run once").count() == 2);
    assert!(env.user_home().join("d2/x").is_dir(), "the grant ran `mkdir -p d2/x` without asking:\n{screen}");
    assert!(screen.contains("[a] always allow `mkdir` for this session"), "{screen}");
    assert!(!env.user_home().join("d3").exists());
    term.line("y");
    assert_eq!(term.wait_exit(LIMIT), 0);
    assert!(env.user_home().join("d3").is_dir());
    assert_eq!(term.screen().matches("[y] run once").count(), 2, "{}", term.screen());
}

/// Issue 21 §6: output that the model reads must not be hidden from the person. A command prints a
/// concealed line, a black-on-black one and a 256-colour and a truecolor one in their background's
/// colour; tmux's screen, read back with its attributes, shows each without conceal or a
/// background, while an ordinary colour survives. The same bytes printed raw are concealed (the
/// check can fail).
#[test]
fn output_that_hides_text_from_the_person_is_shown_plainly() {
    if !require("tmux") {
        return;
    }
    // Each word's last letter is an octal escape, so the command line shown does not contain it.
    let printf = r"printf '\033[8mHIDDEN-ON\105\033[0m\n\033[30;40mHIDDEN-TW\117\033[0m\n\033[38;5;16;48;5;16mHIDDEN-THRE\105\033[0m\n\033[38;2;9;9;9;48;2;9;9;9mHIDDEN-FOU\122\033[0m\n\033[31mRED-KEP\124\033[0m\n'";
    let attributes = |term: &Tmux| term.run(&["capture-pane", "-p", "-e", "-S", "-2000"]);
    // Control: raw, tmux keeps the conceal attribute on the cell.
    let env = TestEnv::new();
    let mock = MockLlm::start([]);
    let raw = format!("read go; {printf}; echo END-RAW; sleep 30");
    let term = Tmux::start("/bin/sh", &["-c", &raw], &env.terminal_vars(&mock.base_url()), env.user_home());
    term.press(&["Enter"]);
    term.wait_for("END-RAW", LIMIT);
    let screen = attributes(&term);
    let line = screen.lines().find(|l| l.contains("HIDDEN-ONE")).unwrap_or_default();
    assert!(line.contains("\x1b[8m") || line.contains(";8m"), "raw output is concealed: {line:?}");
    drop(term);

    let mock =
        MockLlm::start([reply_tool_call("c1", "run_command", json!({"command": printf})), reply_text("ALL-DONE")]);
    let term = start(&env, &mock, &["show the file"]);
    term.press(&["Enter"]);
    term.wait_for("ALL-DONE", LIMIT);
    let screen = attributes(&term);
    for word in ["HIDDEN-ONE", "HIDDEN-TWO", "HIDDEN-THREE", "HIDDEN-FOUR"] {
        let line = screen.lines().find(|l| l.contains(word)).unwrap_or_else(|| panic!("{word} missing:\n{screen}"));
        let codes: Vec<&str> = line.split("\x1b[").skip(1).map(|part| part.split('m').next().unwrap_or("")).collect();
        for code in &codes {
            let params: Vec<&str> = code.split(';').collect();
            assert!(!params.contains(&"8"), "{word} concealed: {line:?}");
            assert!(
                !params.iter().any(|p| p.starts_with('4') && p.len() == 2 && *p != "49"),
                "{word} background: {line:?}"
            );
            assert!(!params.contains(&"48"), "{word} background: {line:?}");
        }
    }
    let red = screen.lines().find(|l| l.contains("RED-KEPT")).unwrap_or_default();
    assert!(red.contains("31m") || red.contains(";31"), "ordinary colours stay: {red:?}");
    // The model read the same text the person saw.
    let observation = mock.chat_requests()[1].tool_result("c1").unwrap_or_default();
    assert!(observation.contains("HIDDEN-ONE") && observation.contains("HIDDEN-FOUR"), "{observation}");
}
