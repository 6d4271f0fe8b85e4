//! Issue 15 "Streaming": reply text reaches the person (and `-q`, `--json`) while the model still
//! writes. The mock holds the rest of its stream until the test has seen the first part (a gate,
//! not a sleep), so text seen before the gate opens was streamed.

use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// A command whose output (`ran-ok`) is not in its own text: seeing it proves the command ran.
const RAN: &str = "printf '%s-%s\\n' ran ok";

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::tmux::{Tmux, require};

const LIMIT: Duration = Duration::from_secs(60);

fn deltas(pieces: &[&str]) -> Vec<String> {
    pieces.iter().map(|piece| (*piece).to_owned()).collect()
}

/// opsai with `args`, stdout and stderr piped; stdout read on a thread as it arrives.
fn spawn(env: &TestEnv, mock: &MockLlm, args: &[&str]) -> (Child, Receiver<Vec<u8>>) {
    let mut child = env
        .std_cmd()
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start opsai");
    let mut stdout = child.stdout.take().expect("stdout");
    let (send, receive) = channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buffer) {
            if n == 0 || send.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    (child, receive)
}

/// Reads stdout until `done` holds for what arrived; panics after [`LIMIT`].
fn read_until(receive: &Receiver<Vec<u8>>, seen: &mut Vec<u8>, done: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + LIMIT;
    while !done(&String::from_utf8_lossy(seen)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match receive.recv_timeout(left) {
            Ok(bytes) => seen.extend(bytes),
            Err(_) => panic!("stdout so far: {:?}", String::from_utf8_lossy(seen)),
        }
    }
}

/// Everything else on stdout, and the exit code.
fn finish(mut child: Child, receive: &Receiver<Vec<u8>>, seen: &mut Vec<u8>) -> (i32, String) {
    while let Ok(bytes) = receive.recv_timeout(LIMIT) {
        seen.extend(bytes);
    }
    let mut stderr = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut stderr).expect("read stderr");
    let status = child.wait().expect("wait");
    (status.code().unwrap_or(-1), stderr)
}

/// `-q` writes the answer once it is decided: the reply finished without a tool call. That is when
/// its `finish_reason` arrives, before the stream closes; the mock holds the rest (usage, `[DONE]`).
#[test]
fn quiet_into_a_pipe_writes_the_answer_while_the_model_still_writes() {
    let env = TestEnv::new();
    let gate = Gate::new();
    // Role chunk, four deltas, the finish chunk; then the stream waits for the gate.
    let reply = reply_text_deltas(&deltas(&["The disk ", "is ", "\x1b[31mfull", ".\n"])).held_after(6, &gate);
    let mock = MockLlm::start([reply]);
    let (child, receive) = spawn(&env, &mock, &["-q", "how full is the disk"]);
    let mut seen = Vec::new();
    read_until(&receive, &mut seen, |out| out.contains("full."));
    assert_eq!(String::from_utf8_lossy(&seen), "The disk is \x1b[31mfull.", "the stream is still open");
    gate.open();
    let (code, stderr) = finish(child, &receive, &mut seen);
    assert_eq!(code, 0, "{stderr}");
    // Into a pipe: the bytes the model wrote, as the whole answer was before.
    assert_eq!(String::from_utf8_lossy(&seen), "The disk is \x1b[31mfull.\n");
}

/// stdout is a protocol: a sentence the model writes before a native tool call is no answer.
#[test]
fn quiet_writes_only_the_final_answer_not_the_text_before_a_call() {
    let env = TestEnv::new();
    let args = json!({"command": RAN, "why": "look"});
    let mock = MockLlm::start([
        reply_text_then_tool_call("Let me check.", "c1", "run_command", args),
        reply_text("It printed hi."),
    ]);
    let out = env
        .cmd()
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .args(["-q", "show me"])
        .timeout(LIMIT)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(mock.chat_requests()[1].tool_result("c1").unwrap().contains("ran-ok"), "the call ran");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "It printed hi.\n");
}

/// While the model streams a native tool call, the spinner says so instead of "reading the prompt";
/// text written before the call stays on screen, once.
#[test]
fn the_spinner_says_when_the_model_writes_a_tool_call() {
    if !require("tmux") {
        return;
    }
    let args = json!({"command": RAN, "why": "look"});
    // Role chunk, the call's name, its first arguments fragment (after three pieces of text in the
    // second case); then the stream waits.
    let cases = [
        (reply_tool_call("c1", "run_command", args.clone()), 3, ""),
        (reply_text_then_tool_call("Let me check.", "c1", "run_command", args), 6, "Let me check."),
    ];
    for (call, writes, before) in cases {
        let env = TestEnv::new();
        let gate = Gate::new();
        let mock = MockLlm::start([call.held_after(writes, &gate), reply_text("It printed hi.")]);
        let vars = env.terminal_vars(&mock.base_url());
        let term = Tmux::start(env!("CARGO_BIN_EXE_opsai"), &["show me"], &vars, env.user_home());
        let screen = term.wait_for("writing a tool call", LIMIT);
        assert!(screen.contains(before), "{screen}");
        gate.open();
        let screen = term.wait_until(LIMIT, "the approval or the answer", |s| {
            s.contains("[y] run once") || s.contains("It printed hi.")
        });
        if screen.contains("[y] run once") {
            term.type_text("y");
        }
        let screen = term.wait_for("It printed hi.", LIMIT);
        assert_eq!(term.wait_exit(LIMIT), 0, "{screen}");
        let screen = term.screen();
        assert!(!screen.contains("writing a tool call"), "the spinner is erased: {screen}");
        if !before.is_empty() {
            assert_eq!(screen.matches(before).count(), 1, "{screen}");
        }
    }
}

#[test]
fn json_streams_answer_deltas_then_the_whole_answer() {
    let env = TestEnv::new();
    let gate = Gate::new();
    let reply = reply_text_deltas(&deltas(&["Two ", "files", " here."])).held_after(2, &gate);
    let mock = MockLlm::start([reply]);
    let (child, receive) = spawn(&env, &mock, &["--json", "count files"]);
    let mut seen = Vec::new();
    read_until(&receive, &mut seen, |out| out.contains("\"answer_delta\""));
    assert!(!String::from_utf8_lossy(&seen).contains("\"type\":\"answer\""));
    gate.open();
    let (code, stderr) = finish(child, &receive, &mut seen);
    assert_eq!(code, 0, "{stderr}");
    let events: Vec<Value> =
        String::from_utf8_lossy(&seen).lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    let kinds: Vec<&str> = events.iter().filter_map(|event| event["type"].as_str()).collect();
    assert_eq!(kinds, ["answer_delta", "answer_delta", "answer_delta", "answer", "done"]);
    let streamed: String =
        events.iter().filter(|e| e["type"] == "answer_delta").filter_map(|e| e["text"].as_str()).collect();
    assert_eq!(streamed, "Two files here.");
    assert_eq!(events[3], json!({"type": "answer", "text": "Two files here."}));
}

/// A small model writes its tool calls as text, token by token: the call runs, and its JSON is on
/// no screen, in no `answer_delta`, under no mode.
#[test]
fn a_tool_call_streamed_as_text_never_reaches_the_screen() {
    let forms = [
        "{\"name\": \"run_command\", \"arguments\": {\"command\": \"printf '%s-%s\\\\n' ran ok\", \"why\": \"look\"}}",
        "Let me look.\n<tool_call>\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"printf '%s-%s\\\\n' ran ok\", \"why\": \"look\"}}\n</tool_call>",
        "Let me look.\n```json\n{\"name\": \"run_command\", \"arguments\": {\"command\": \"printf '%s-%s\\\\n' ran ok\", \"why\": \"look\"}}\n```",
    ];
    for form in forms {
        let pieces: Vec<String> =
            form.chars().collect::<Vec<_>>().chunks(3).map(|piece| piece.iter().collect()).collect();
        for args in [&["show me"][..], &["-q", "show me"], &["--json", "show me"]] {
            let env = TestEnv::new();
            let mock = MockLlm::start([reply_text_deltas(&pieces), reply_text("It printed hi.")]);
            let out = env
                .cmd()
                .env("OPSAI_BASE_URL", mock.base_url())
                .env("OPSAI_NONINTERACTIVE", "1")
                .args(args)
                .timeout(LIMIT)
                .output()
                .unwrap();
            let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert_eq!(out.status.code(), Some(0), "{args:?} {form:?}: {stderr}");
            let observation = mock.chat_requests()[1].tool_result("call_1").unwrap_or_default();
            assert!(observation.contains("ran-ok"), "{args:?} {form:?}: the recovered call ran: {observation}");
            let shown = if args[0] == "--json" {
                let lines = stdout.lines().map(|line| serde_json::from_str::<Value>(line).unwrap());
                lines
                    .filter(|e| e["type"] == "answer_delta")
                    .map(|e| e["text"].as_str().unwrap_or("").to_owned())
                    .collect()
            } else {
                format!("{stdout}{stderr}")
            };
            for raw in ["\"arguments\"", "<tool_call>", "```json", "{\"name\""] {
                assert!(!shown.contains(raw), "{args:?} {form:?}: {shown:?}");
            }
            assert!(stdout.contains("It printed hi."), "{args:?}: {stdout}");
            // The prose before the call is shown, once; `-q` shows only the answer.
            if form.starts_with("Let me look.") && args[0] != "--json" {
                let times = if args[0] == "-q" { 0 } else { 1 };
                assert_eq!(shown.matches("Let me look.").count(), times, "{args:?} {form:?}: {shown:?}");
            }
        }
    }
}

#[test]
fn the_repl_shows_the_answer_while_it_streams_in_colour_and_without() {
    if !require("tmux") {
        return;
    }
    for colour in [false, true] {
        let env = TestEnv::new();
        let gate = Gate::new();
        let first = "## Disk\n\nThe disk is **full**.\n\nFree some space";
        let reply = reply_text_deltas(&deltas(&[first, " with `du`.", "\n"])).held_after(2, &gate);
        let mock = MockLlm::start([reply]);
        let mut vars = env.terminal_vars(&mock.base_url());
        if colour {
            vars.retain(|(name, _)| *name != "NO_COLOR");
        }
        let term = Tmux::start(env!("CARGO_BIN_EXE_opsai"), &[], &vars, env.user_home());
        term.wait_for("Agent > ", LIMIT);
        term.line("is the disk full");
        let screen = term.wait_for("Free some space", LIMIT);
        assert!(!screen.contains("with du") && !screen.contains("with `du`"), "colour {colour}: {screen}");
        assert!(screen.contains("The disk is"), "colour {colour}: {screen}");
        gate.open();
        let screen = term.wait_until(LIMIT, "the whole answer and a new prompt", |screen| {
            screen.contains("space with") && screen.lines().filter(|line| line.starts_with("Agent >")).count() >= 2
        });
        // Each line once: the preview of a block is replaced by its rendering, not added to it.
        assert_eq!(screen.matches("The disk is").count(), 1, "colour {colour}: {screen}");
        assert_eq!(screen.matches("Free some space").count(), 1, "colour {colour}: {screen}");
        if colour {
            assert!(!screen.contains("**full**") && !screen.contains("## Disk"), "Markdown rendered: {screen}");
        }
        term.press(&["C-d"]);
        assert_eq!(term.wait_exit(LIMIT), 0);
    }
}

/// One-shot on a terminal: the text before a tool call streams once, and while the approved
/// command runs the spinner names it and counts; the command waits for a file the test creates
/// once it has seen the spinner.
#[test]
fn a_terminal_shows_the_text_before_a_call_once_and_the_spinner_names_the_running_command() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let command = "while [ ! -e go ]; do sleep 0.1; done; echo ready";
    let mock = MockLlm::start([
        reply_text_then_tool_call("Let me check.", "c1", "run_command", json!({"command": command, "why": "wait"})),
        reply_text("All set."),
    ]);
    let term = Tmux::start(
        env!("CARGO_BIN_EXE_opsai"),
        &["wait for it"],
        &env.terminal_vars(&mock.base_url()),
        env.user_home(),
    );
    let screen = term.wait_until(LIMIT, "the approval or the spinner", |s| {
        s.contains("[y] run once") || s.contains("running while")
    });
    if screen.contains("[y] run once") {
        term.type_text("y");
    }
    term.wait_until(LIMIT, "the spinner naming the command", |s| s.contains("running while [ ! -e go ]"));
    std::fs::write(env.user_home().join("go"), "").unwrap();
    let screen = term.wait_for("All set.", LIMIT);
    assert_eq!(term.wait_exit(LIMIT), 0, "{screen}");
    let screen = term.screen();
    assert_eq!(screen.matches("Let me check.").count(), 1, "{screen}");
    assert!(screen.contains("│ ready"), "{screen}");
    assert!(!screen.contains("running while"), "the spinner is erased once the command ends: {screen}");
}
