//! The agent with a small local model (issue 22): a model whose name says it is small gets text
//! calls, is asked for its command in a ```sh block, and that block runs — through the same policy,
//! approval, sandbox and audit as a native call. A bigger model keeps native calls, and its
//! ```sh blocks stay text for the user to read.

use std::time::Duration;

use serde_json::Value;

use crate::support::TestEnv;
use crate::support::mock_llm::*;

const SMALL: &str = "qwen2.5-coder:1.5b";

fn opsai(env: &TestEnv, mock: &MockLlm, model: &str) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_MODEL", model)
        .env("OPSAI_NONINTERACTIVE", "1")
        .timeout(Duration::from_secs(60));
    cmd
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

fn system(request: &RecordedRequest) -> String {
    request.messages()[0]["content"].as_str().unwrap_or_default().to_owned()
}

/// `request`'s messages after what comes before the conversation (the system message and the
/// worked turns a small model is shown): the first request holds those, then the task alone.
fn conversation(first: &RecordedRequest, request: &RecordedRequest) -> Vec<Value> {
    let before = first.messages().len() - 1;
    assert_eq!(request.messages()[..before], first.messages()[..before], "the same prefix in every request");
    request.messages()[before..].to_vec()
}

fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout).lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

#[test]
fn a_small_models_sh_block_runs_and_its_output_goes_back() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_text("Counting them:\n```sh\necho from-block-4711\n```"),
        reply_text("It printed the marker."),
    ]);
    let out = opsai(&env, &mock, SMALL).args(["--json", "print the marker"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert!(first.json().get("tools").is_none(), "no schemas for a small model: {}", first.json());
    let prompt = system(first);
    assert!(prompt.contains("Reply with the command line alone in a ```sh block"), "{prompt}");
    assert!(prompt.starts_with("# Safety rules"), "{prompt}");
    // Worked turns before the task: a request, its ```sh block, the output, an answer in words.
    let messages = first.messages();
    assert!(first.worked_examples(&["user", "assistant", "user", "assistant"]) >= 3);
    for turn in messages[1..messages.len() - 1].chunks(4) {
        assert!(turn[1]["content"].as_str().unwrap_or_default().starts_with("```sh\n"), "{turn:?}");
        assert!(turn[2]["content"].as_str().unwrap_or_default().contains("[Answer the request from this output"));
        assert!(!turn[3]["content"].as_str().unwrap_or_default().contains("```"), "{turn:?}");
    }
    assert_eq!(messages.last().unwrap()["content"], "print the marker");
    let second = &requests[1];
    assert_eq!(conversation(first, second)[0]["content"], "print the marker");
    second.assert_tool_calls_answered();
    let observation = second.tool_result("call_1").unwrap_or_default();
    // The output, then what to do with it; no `exit 0 · 35 ms` header for the model to read back.
    assert!(observation.starts_with("from-block-4711\n[Answer the request from this output"), "{observation}");
    assert!(!observation.contains("exit 0") && !observation.contains(" ms"), "{observation}");
    let events = events(&out.stdout);
    let call = events.iter().find(|e| e["type"] == "tool_call").expect("a tool_call event");
    assert_eq!((call["tool"].as_str(), call["command"].as_str()), (Some("run_command"), Some("echo from-block-4711")));
    assert_eq!(call["args"]["why"], "Counting them");
    // The block was held back as a call, never streamed as answer text.
    let streamed: String =
        events.iter().filter(|e| e["type"] == "answer_delta").filter_map(|e| e["text"].as_str()).collect();
    assert!(!streamed.contains("```sh"), "{streamed}");
    assert!(events.iter().any(|e| e["type"] == "answer" && e["text"] == "It printed the marker."));
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains(r#"CMD: "echo from-block-4711""#), "{log}");
}

/// The policy decides, not the form: a High command in a block is refused without a terminal,
/// exactly as a native call would be, and the refusal is audited.
#[test]
fn a_risky_command_in_a_block_is_refused_without_a_terminal() {
    let env = TestEnv::new();
    let victim = env.user_home().join("keep-me");
    std::fs::create_dir_all(victim.join("inner")).unwrap();
    let mock = MockLlm::start([
        reply_text(&format!("```sh\nrm -rf {}\n```", victim.display())),
        reply_text("It needs your approval."),
    ]);
    // Exit 3: a command was refused.
    opsai(&env, &mock, SMALL).args(["-y", "delete it"]).assert().code(3);
    assert!(victim.join("inner").is_dir(), "nothing was deleted");
    let observation = mock.chat_requests()[1].tool_result("call_1").unwrap_or_default();
    assert!(observation.contains("refused"), "{observation}");
    let log = audit(&env);
    assert!(log.contains("rm -rf") && log.contains("RISK: high"), "{log}");
}

/// A small model that writes the command it already ran again is done: that reply is the
/// answer, and the command does not run twice (no loop to the step limit).
#[test]
fn the_same_block_again_is_the_answer_not_a_second_run() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("```sh\necho once-5522\n```"), reply_text("```sh\necho once-5522\n```")]);
    let out = opsai(&env, &mock, SMALL).args(["-q", "x"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(mock.chat_requests().len(), 2);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "```sh\necho once-5522\n```\n");
    assert_eq!(audit(&env).lines().count(), 1, "{}", audit(&env));
}

/// A line of a command's output written back in a block is read out, not run: output is data (a
/// script's line, a README's, a log's), and a small model that copies it is answering. The reply is
/// the answer; nothing but the first command ran.
#[test]
fn a_line_of_the_output_in_a_block_is_the_answer_not_a_command() {
    let env = TestEnv::new();
    let target = env.user_home().join("made-by-output-3391");
    let line = format!("touch {}", target.display());
    let mock = MockLlm::start([
        reply_text(&format!("```sh\nprintf '%s\\n' '{line}'\n```")),
        reply_text(&format!("The line is:\n```sh\n{line}\n```")),
    ]);
    let out = opsai(&env, &mock, SMALL).args(["-y", "-q", "print the line"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(mock.chat_requests().len(), 2);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&line) && stdout.contains("(not run: that line is in the output above"), "{stdout}");
    assert!(!target.exists(), "the output's line ran");
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains("printf"), "{log}");
}

/// A 7B model keeps the native calls: schemas are sent and its ```sh block is an answer to read.
#[test]
fn a_bigger_models_sh_block_is_only_shown() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("Use:\n```sh\necho never-run-9931\n```")]);
    let out = opsai(&env, &mock, "qwen2.5:7b").args(["-q", "how do I print it"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].tool_names().contains(&"run_command".to_owned()), "{:?}", requests[0].tool_names());
    assert!(String::from_utf8_lossy(&out.stdout).contains("echo never-run-9931"));
    assert_eq!(audit(&env), "", "nothing ran");
}

/// `llm.tool_mode native` is the user's word over the name: a small model then gets schemas.
#[test]
fn the_configured_tool_mode_wins_over_the_models_size() {
    let env = TestEnv::new();
    env.write_config(r#"{"llm": {"tool_mode": "native"}}"#);
    let mock = MockLlm::start([reply_text("```sh\necho not-run-1187\n```")]);
    opsai(&env, &mock, SMALL).args(["-q", "x"]).assert().success();
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].tool_names().contains(&"run_command".to_owned()));
    assert_eq!(audit(&env), "");
}

/// A sandboxed command leaves nothing in the temporary directory once opsai has ended: the
/// ruleset broker's socket and its directory go with the process.
#[test]
fn a_sandboxed_run_leaves_nothing_in_the_temp_directory() {
    let env = TestEnv::new();
    if env.sandbox_available().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mock = MockLlm::start([reply_text("```sh\ncat /etc/hostname\n```"), reply_text("done")]);
    let out = opsai(&env, &mock, SMALL)
        .env("TMPDIR", tmp.path())
        .env_remove("XDG_RUNTIME_DIR")
        .args(["--json", "x"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events = events(&out.stdout);
    let approval = events.iter().find(|e| e["type"] == "approval").expect("an approval event");
    assert_eq!(approval["decision"], "auto", "{approval}");
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// The choice follows the model: switching with the REPL's `/model` switches how calls travel,
/// both ways, in one process.
#[test]
fn the_repls_model_switch_changes_how_calls_travel() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("One."), reply_text("Two."), reply_text("Three.")]);
    let script = format!("first\n/model {SMALL}\nsecond\n/model qwen2.5:7b\nthird\n");
    let out = opsai(&env, &mock, "qwen2.5:7b").write_stdin(script).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 3);
    let sent_tools: Vec<bool> = requests.iter().map(|r| r.json().get("tools").is_some()).collect();
    assert_eq!(sent_tools, [true, false, true], "native, text for the small model, native again");
    assert!(system(&requests[1]).contains("```sh block") && !system(&requests[2]).contains("```sh block"));
}

/// Ten lines, each unique, for a model to recite.
fn notes(env: &TestEnv) -> (std::path::PathBuf, Vec<String>) {
    let lines: Vec<String> = (1..=10).map(|n| format!("note {n:02} of the recital file 7731")).collect();
    let path = env.user_home().join("notes.txt");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    (path, lines)
}

/// A small model that reads the whole output back (it ran minutes on a CPU) is stopped at the
/// sixth recited line: the run ends while the model's stream is still open, and what streamed is
/// the answer, closed with a line that says why it ends there.
#[test]
fn an_answer_reciting_the_output_is_stopped_while_the_model_still_writes() {
    let env = TestEnv::new();
    let (path, lines) = notes(&env);
    let recital = format!("The file holds:\n```\n{}\n", lines.join("\n"));
    let mock =
        MockLlm::start([reply_text(&format!("```sh\ncat {}\n```", path.display())), reply_hang_mid_stream(&recital)]);
    let out = opsai(&env, &mock, SMALL).args(["--json", "show my notes"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let events = events(&out.stdout);
    let answer = events.iter().find(|e| e["type"] == "answer").and_then(|e| e["text"].as_str()).unwrap_or_default();
    assert!(answer.contains(&lines[5]) && !answer.contains(&lines[6]), "{answer}");
    assert!(
        answer.ends_with("```\n\n(stopped: the answer was repeating the command's output, shown above)"),
        "{answer}"
    );
    let streamed: String =
        events.iter().filter(|e| e["type"] == "answer_delta").filter_map(|e| e["text"].as_str()).collect();
    assert_eq!(streamed, answer);
}

/// Under `-q` the answer is all the person gets (no output is shown), so a recital is the answer.
#[test]
fn under_quiet_the_recital_is_the_answer() {
    let env = TestEnv::new();
    let (path, lines) = notes(&env);
    let mock = MockLlm::start([
        reply_text(&format!("```sh\ncat {}\n```", path.display())),
        reply_text(&format!("The file holds:\n\n{}", lines.join("\n"))),
    ]);
    let out = opsai(&env, &mock, SMALL).args(["-q", "show my notes"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(lines.iter().all(|line| stdout.contains(line.as_str())), "{stdout}");
    assert!(!stdout.contains("(stopped"), "{stdout}");
}

/// A block that is no command (a bare path, only comments, text the shell cannot parse) is not
/// run: the model is told what is wrong and writes the command, which runs. Only that one is
/// audited.
#[test]
fn a_path_or_unparsable_block_is_not_run_and_the_model_writes_the_command() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_text("```sh\n/no/such/home-3321\n```"),
        reply_text("```sh\n#!/bin/bash\n# Prints the home directory.\n```"),
        reply_text("```sh\necho 'unclosed-3321\n```"),
        reply_text("```sh\necho fixed-3321\n```"),
        reply_text("Printed."),
    ]);
    let out = opsai(&env, &mock, SMALL).args(["--json", "print my home"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 5);
    let path = requests[1].tool_result("call_1").unwrap_or_default();
    assert!(path.contains("not run: That is only a path, not a command"), "{path}");
    assert!(path.contains("alone in a ```sh block"), "{path}");
    let comments = requests[2].tool_result("call_1_2").unwrap_or_default();
    assert!(comments.contains("not run: That holds only comments"), "{comments}");
    let syntax = requests[3].tool_result("call_1_3").unwrap_or_default();
    assert!(syntax.contains("not run: The shell cannot parse that"), "{syntax}");
    let ran = requests[4].tool_result("call_1_4").unwrap_or_default();
    assert!(ran.contains("fixed-3321"), "{ran}");
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains("echo fixed-3321"), "{log}");
}

/// A command the shell could not run at all (exit 127, 126) comes back with the ask to write the
/// corrected one: a small model otherwise answers as if it had run.
#[test]
fn a_command_the_shell_cannot_run_comes_back_with_the_ask_to_correct_it() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_text("```sh\nno-such-program-5512 --list\n```"),
        reply_text("```sh\necho instead-5512\n```"),
        reply_text("Done."),
    ]);
    let out = opsai(&env, &mock, SMALL).args(["--json", "-y", "list them"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.chat_requests();
    let failed = requests[1].tool_result("call_1").unwrap_or_default();
    assert!(failed.contains("[exit 127: the shell could not run this command."), "{failed}");
    let fine = requests[2].tool_result("call_1_2").unwrap_or_default();
    assert!(fine.contains("instead-5512") && !fine.contains("could not run"), "{fine}");
}

/// A failure keeps its header (the exit status is part of what the model must read), and a
/// command that printed nothing is said to have done so.
#[test]
fn a_failure_keeps_its_status_and_silence_is_said() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_text(
            "```sh
sh -c 'echo broke-7131; exit 3'
```",
        ),
        reply_text(
            "```sh
true
```",
        ),
        reply_text("Done."),
    ]);
    let out = opsai(&env, &mock, SMALL).args(["--json", "-y", "try it"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.chat_requests();
    let failed = requests[1].tool_result("call_1").unwrap_or_default();
    assert!(failed.starts_with("[ERROR]: exit 3 · ") && failed.contains("broke-7131\n[Answer the request"), "{failed}");
    let silent = requests[2].tool_result("call_1_2").unwrap_or_default();
    assert!(silent.starts_with("[It ran and printed nothing.] [Answer the request"), "{silent}");
}

/// A small model's first reply that holds nothing (an empty block, a fence and its tag) is asked
/// for once more, with the ask sent in that request only: the conversation keeps what was said.
#[test]
fn an_empty_first_reply_is_asked_for_again_once() {
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_text("```\nsh\n```"),
        reply_text("```sh\necho again-6610\n```"),
        reply_text("Printed it."),
    ]);
    let out = opsai(&env, &mock, SMALL).args(["--json", "print it"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 3);
    let last = |request: &RecordedRequest| request.messages().last().cloned().unwrap_or_default();
    assert_eq!(last(&requests[1])["role"], "user");
    assert!(last(&requests[1])["content"].as_str().unwrap_or_default().contains("alone in a ```sh block"));
    // The ask is not part of the conversation the third request carries.
    // The ask joined the task's message (no two user messages in a row) in that request only.
    assert_eq!(conversation(&requests[0], &requests[1]).iter().filter(|m| m["role"] == "user").count(), 1);
    let third = conversation(&requests[0], &requests[2]);
    let users: Vec<&Value> = third.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users.len(), 1, "{third:?}");
    assert_eq!(users[0]["content"], "print it", "{third:?}");
    let events = events(&out.stdout);
    let retry = events.iter().find(|e| e["type"] == "retry").expect("a retry event");
    assert_eq!(retry["wait_ms"], 0);
    assert!(audit(&env).contains("echo again-6610"));
}

/// An empty reply in a turn where nothing ran is an error, not a silent success: a small model's
/// second empty reply (after the one ask again), and a large model's first. The conversation keeps
/// the task, and the next request can go on from it.
#[test]
fn an_empty_reply_with_nothing_run_is_an_error_with_advice() {
    for (model, replies) in [(SMALL, 2), ("gpt-4o", 1)] {
        let env = TestEnv::new();
        let mock = MockLlm::start((0..replies).map(|_| reply_text("")));
        let out = opsai(&env, &mock, model).args(["-q", "print it"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{model}: {stderr}");
        assert!(stderr.contains("the model gave an empty reply, neither a command nor an answer"), "{model}: {stderr}");
        assert_eq!(mock.chat_requests().len(), replies, "{model}");
        assert!(out.stdout.is_empty(), "{model}");
    }
}

/// A first reply that loops is stopped by the repetition guard and asked for again; a second
/// unusable reply is not asked for a third time: the turn ends with the error.
#[test]
fn a_looping_first_reply_is_asked_for_again_and_a_second_is_the_end() {
    let looping = || {
        let mut payloads = vec![chunk(serde_json::json!({"role": "assistant", "content": ""}), None)];
        payloads.extend((0..200).map(|_| chunk(serde_json::json!({"content": "+ \\S"}), None)));
        payloads.extend([chunk(serde_json::json!({}), Some("stop")), "[DONE]".to_owned()]);
        reply_sse_events(&payloads)
    };
    let env = TestEnv::new();
    let mock = MockLlm::start([looping(), reply_text("```sh\necho after-loop-6611\n```"), reply_text("Done.")]);
    let out = opsai(&env, &mock, SMALL).args(["-q", "print it"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("opsai: the model repeated itself; asking again (attempt 2/2)"), "{stderr}");
    assert!(audit(&env).contains("echo after-loop-6611"));

    let env = TestEnv::new();
    let mock = MockLlm::start([looping(), looping()]);
    let out = opsai(&env, &mock, SMALL).args(["-q", "print it"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("kept repeating"));
    assert_eq!(mock.chat_requests().len(), 2);
}

/// A first reply that is a command line without its block (`locale`) is asked for again in the
/// block, rather than taken as the answer (the word "bash" may be one) or run unasked-for.
#[test]
fn a_bare_command_line_first_is_asked_for_in_its_block() {
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("locale"), reply_text("```sh\necho block-7781\n```"), reply_text("Shown.")]);
    let out = opsai(&env, &mock, SMALL).args(["--json", "show the locale"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(mock.chat_requests().len(), 3);
    let events = events(&out.stdout);
    let retry = events.iter().find(|e| e["type"] == "retry").expect("a retry event");
    assert_eq!(retry["reason"], "wrote a command without its ```sh block");
    assert!(audit(&env).contains("echo block-7781"));
}

/// Under `-q` stdout is the answer alone: the bare line asked for again never reaches it. Given
/// bare again, that line is the command, and runs like a block.
#[test]
fn a_bare_command_line_twice_is_the_command_and_quiet_prints_only_the_answer() {
    let env = TestEnv::new();
    let mock =
        MockLlm::start([reply_text("echo bare-8812"), reply_text("echo bare-8812"), reply_text("It said bare-8812.")]);
    let out = opsai(&env, &mock, SMALL).args(["-q", "say it"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "It said bare-8812.\n");
    assert_eq!(mock.chat_requests().len(), 3);
    let log = audit(&env);
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(log.contains(r#"CMD: "echo bare-8812""#), "{log}");

    // Another bare line the second time (`yes` is a word too) is the answer, not a command.
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("uptime"), reply_text("yes")]);
    let out = opsai(&env, &mock, SMALL).args(["-q", "is it up"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "yes\n");
    assert_eq!(audit(&env), "");
}

/// After a refusal the model is not asked again (that would push it to retry what was refused):
/// its empty reply ends the turn.
#[test]
fn after_a_refusal_an_empty_reply_is_not_asked_for_again() {
    let env = TestEnv::new();
    let victim = env.user_home().join("keep-me-too");
    std::fs::create_dir_all(&victim).unwrap();
    let mock = MockLlm::start([reply_text(&format!("```sh\nrm -rf {}\n```", victim.display())), reply_text("")]);
    opsai(&env, &mock, SMALL).args(["-y", "delete it"]).assert().code(3);
    assert_eq!(mock.chat_requests().len(), 2);
    assert!(victim.is_dir());
}
