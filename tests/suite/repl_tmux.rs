//! The `Agent >` REPL in a real terminal (tmux), against the mock LLM: approvals, live output,
//! Ctrl-C, history across restarts, resumed conversations and the seed 001 follow-up dialogue.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::support::TestEnv;
use crate::support::mock_llm::*;
use crate::support::tmux::{Tmux, require};

const LIMIT: Duration = Duration::from_secs(30);
const PROMPT: &str = "Agent > ";

fn start_in(env: &TestEnv, mock: &MockLlm, args: &[&str], path: &str) -> Tmux {
    let mut vars = env.terminal_vars(&mock.base_url());
    vars[0].1 = path.to_owned();
    Tmux::start(env!("CARGO_BIN_EXE_opsai"), args, &vars, env.user_home())
}

fn start(env: &TestEnv, mock: &MockLlm, args: &[&str]) -> Tmux {
    start_in(env, mock, args, &std::env::var("PATH").unwrap_or_default())
}

/// How many `Agent > ` prompts the screen shows (each finished turn draws a new one).
fn prompts(screen: &str) -> usize {
    screen.lines().filter(|line| line.starts_with("Agent >")).count()
}

fn wait_prompts(term: &Tmux, n: usize) -> String {
    term.wait_until(LIMIT, &format!("{n} prompts"), |screen| prompts(screen) >= n)
}

fn audit(env: &TestEnv) -> String {
    std::fs::read_to_string(env.opsai_home().join("audit.log")).unwrap_or_default()
}

#[test]
fn a_task_asks_runs_live_and_answers_then_the_repl_waits_for_more() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "touch marker.txt && echo made-it", "why": "mark"})),
        reply_text("## Done\n\nThe **marker** is in place:\n\n```\nls marker.txt\n```"),
        reply_text("Second answer."),
    ]);
    let term = start(&env, &mock, &[]);
    let screen = term.wait_for(PROMPT, LIMIT);
    assert!(screen.contains("qwen2.5:7b"), "the model is shown: {screen}");
    term.line("create a marker file");
    let screen = term.wait_for("[y] run once", LIMIT);
    assert!(screen.contains("[MEDIUM] touch marker.txt && echo made-it"), "{screen}");
    // One key, no Enter (issue 23).
    term.type_text("y");
    let screen = wait_prompts(&term, 2);
    assert!(screen.contains("  │ made-it"), "live output in the gutter: {screen}");
    assert!(screen.contains("✓ exit 0"), "{screen}");
    // NO_COLOR: the answer is the Markdown source, cleaned.
    assert!(screen.contains("The **marker** is in place:"), "{screen}");
    assert!(env.user_home().join("marker.txt").exists());
    term.line("and another thing");
    let screen = wait_prompts(&term, 3);
    assert!(screen.contains("Second answer."), "{screen}");
    // The follow-up carried the whole first turn.
    let third = &mock.chat_requests()[2];
    let contents: Vec<String> =
        third.messages().iter().map(|m| m["content"].as_str().unwrap_or("").to_owned()).collect();
    assert!(contents.iter().any(|c| c == "create a marker file"), "{contents:?}");
    assert!(contents.iter().any(|c| c.contains("made-it")), "{contents:?}");
    third.assert_tool_calls_answered();
    term.line("exit");
    assert_eq!(term.wait_exit(LIMIT), 0);
    let log = audit(&env);
    assert!(
        log.contains("CMD: \"touch marker.txt && echo made-it\" | RISK: medium | CONFIRMED: yes | EXIT: 0"),
        "{log}"
    );
    assert!(log.contains("SESSION: c1 "), "the audit line names the conversation: {log}");
}

#[test]
fn ctrl_c_during_a_long_command_returns_to_the_prompt_and_the_repl_lives() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo started; sleep 60"})),
        reply_text("It was interrupted."),
        reply_text("Still here."),
    ]);
    let term = start(&env, &mock, &[]);
    term.wait_for(PROMPT, LIMIT);
    term.line("wait a minute");
    term.wait_for("│ started", LIMIT);
    term.press(&["C-c"]);
    let screen = wait_prompts(&term, 2);
    assert!(screen.contains("✗ interrupted after"), "{screen}");
    term.line("are you there?");
    let screen = wait_prompts(&term, 3);
    assert!(screen.contains("Still here."), "{screen}");
    let results: Vec<String> = mock.chat_requests()[1].tool_result("c1").into_iter().collect();
    assert_eq!(results.len(), 1);
    // Ctrl-C on a half-typed line clears it; Ctrl-D leaves.
    term.type_text("half a thought");
    term.press(&["C-c"]);
    let screen = wait_prompts(&term, 4);
    assert!(!screen.lines().last().unwrap_or("").contains("half a thought"), "{screen}");
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
    assert_eq!(mock.unused_replies(), 0);
}

#[test]
fn history_survives_a_restart_and_up_recalls_the_last_entry() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("Noted.")]);
    let term = start(&env, &mock, &[]);
    term.wait_for(PROMPT, LIMIT);
    term.line("remember the milk ghp_0123456789abcdefghijABCDEFGHIJ012345");
    wait_prompts(&term, 2);
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
    drop(term);
    let file = std::fs::read_to_string(env.opsai_home().join("history")).unwrap();
    assert!(file.contains("remember the milk"), "{file}");
    assert!(!file.contains("ghp_0123"), "the token never reaches the history file: {file}");

    let term = start(&env, &mock, &[]);
    term.wait_for(PROMPT, LIMIT);
    term.press(&["Up"]);
    term.wait_for("Agent > remember the milk [REDACTED", LIMIT);
    term.press(&["C-c"]);
    // Ctrl-D at the new prompt: pressed while the editor is still handling the Ctrl-C it is lost.
    wait_prompts(&term, 2);
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
}

#[test]
fn resume_restores_a_conversation_and_the_next_request_carries_it() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text("The first answer."), reply_text("Unrelated."), reply_text("Resumed.")]);
    let term = start(&env, &mock, &[]);
    term.wait_for(PROMPT, LIMIT);
    term.line("the first question");
    wait_prompts(&term, 2);
    term.line("exit");
    assert_eq!(term.wait_exit(LIMIT), 0);
    drop(term);

    let term = start(&env, &mock, &[]);
    term.wait_for(PROMPT, LIMIT);
    term.line("a different matter");
    wait_prompts(&term, 2);
    term.line("/sessions");
    term.wait_for("the first question", LIMIT);
    term.line("/resume c1");
    term.wait_for("continuing c1 “the first question”", LIMIT);
    term.line("and then?");
    let screen = wait_prompts(&term, 5);
    assert!(screen.contains("Resumed."), "{screen}");
    let last = &mock.chat_requests()[2];
    let contents: Vec<String> =
        last.messages().iter().map(|m| m["content"].as_str().unwrap_or("").to_owned()).collect();
    assert!(contents.iter().any(|c| c == "the first question"), "{contents:?}");
    assert!(contents.iter().any(|c| c == "The first answer."), "{contents:?}");
    assert!(!contents.iter().any(|c| c == "a different matter"), "the other conversation stays out: {contents:?}");
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
}

/// Seed 001: the follow-up "what is this docker service" must see the first answer's output.
#[test]
fn the_seed_001_docker_dialogue_passes_the_first_output_to_the_second_question() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let bin = env.user_home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    write_fake_docker(&bin);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "docker ps --format '{{.Names}}\t{{.Image}}'"})),
        reply_text("You have one service: compoder-mongo."),
        reply_text("compoder-mongo is a MongoDB database (image mongo:6)."),
    ]);
    let term = start_in(&env, &mock, &[], &path);
    term.wait_for(PROMPT, LIMIT);
    term.line("我有哪些 docker 服务");
    let screen = wait_prompts(&term, 2);
    assert!(screen.contains("│ compoder-mongo"), "{screen}");
    term.line("这个 docker 服务是干嘛的");
    let screen = wait_prompts(&term, 3);
    assert!(screen.contains("MongoDB database"), "{screen}");
    let second = &mock.chat_requests()[2];
    let messages = second.messages();
    let last_user = messages.iter().rposition(|m| m["role"] == "user").unwrap();
    assert_eq!(messages[last_user]["content"], "这个 docker 服务是干嘛的");
    let output = second.tool_result("c1").expect("the first turn's observation is sent along");
    assert!(output.contains("compoder-mongo\tmongo:6"), "{output}");
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
}

#[test]
fn cd_and_switches_act_locally_and_show_in_the_prompt() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    std::fs::create_dir_all(env.user_home().join("proj")).unwrap();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "pwd && touch made-here"})),
        reply_text("Done."),
    ]);
    let term = start(&env, &mock, &[]);
    term.wait_for(PROMPT, LIMIT);
    term.line("cd proj");
    term.wait_for("now in ~/proj", LIMIT);
    term.line("/yes on");
    term.wait_for("Agent [yes] > ", LIMIT);
    term.line("where am I?");
    let screen = term.wait_for("Done.", LIMIT);
    assert!(!screen.contains("[y] run once"), "medium ran without asking under /yes: {screen}");
    assert!(env.user_home().join("proj/made-here").exists(), "{screen}");
    assert_eq!(mock.chat_requests().len(), 2, "`cd` and `/yes` never reached the model");
    term.line("/help");
    term.wait_for("/resume ID", LIMIT);
    term.line("/bogus");
    term.wait_for("unknown command `/bogus`", LIMIT);
    term.line("/exit");
    assert_eq!(term.wait_exit(LIMIT), 0);
}

fn write_fake_docker(bin: &Path) {
    let docker = bin.join("docker");
    opsai::testing::write_program(&docker, "#!/bin/sh\nprintf 'compoder-mongo\\tmongo:6\\n'\n");
}

#[test]
fn ctrl_c_at_the_approval_prompt_stops_the_turn_without_waiting_for_enter() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "touch never-made"})),
        reply_text("Next task done."),
    ]);
    let term = start(&env, &mock, &[]);
    term.wait_for(PROMPT, LIMIT);
    term.line("make a file");
    term.wait_for("[y] run once", LIMIT);
    // A key that is no answer is ignored with a hint; the Ctrl-C then answers at once.
    term.type_text("x");
    term.wait_for("one key, no Enter", LIMIT);
    term.press(&["C-c"]);
    let screen = wait_prompts(&term, 2);
    assert!(screen.contains("interrupted; the conversation goes on"), "{screen}");
    assert!(!env.user_home().join("never-made").exists());
    assert_eq!(mock.chat_requests().len(), 1, "the turn ended; the model was not asked again");
    term.line("next");
    let screen = wait_prompts(&term, 3);
    assert!(screen.contains("Next task done."), "{screen}");
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
    let log = audit(&env);
    assert!(log.contains("CMD: \"touch never-made\"") && log.contains("CONFIRMED: no"), "{log}");
}

#[test]
fn q_at_the_approval_prompt_says_it_aborted_and_clear_clears_the_screen() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "touch never-made"})),
        reply_text("Still here."),
    ]);
    let term = start(&env, &mock, &[]);
    term.wait_for(PROMPT, LIMIT);
    term.line("make a file");
    term.wait_for("[q] abort", LIMIT);
    term.type_text("q");
    let screen = wait_prompts(&term, 2);
    assert!(screen.contains("  ✗ aborted: not run, and the task stops here"), "{screen}");
    assert!(!env.user_home().join("never-made").exists());
    // `clear`, as in a shell: nothing of the turn is left on the screen, the prompt is at the top,
    // and the word never reaches the model.
    term.line("clear");
    term.wait_until(LIMIT, "a cleared screen", |_| {
        let visible = term.visible();
        !visible.contains("make a file") && visible.starts_with(PROMPT) && prompts(&visible) == 1
    });
    term.line("are you there?");
    // The answer streams, so it shows before the turn ends: Ctrl-D waits for the next prompt (one
    // pressed during the turn is lost, as in a shell).
    term.wait_until(LIMIT, "the answer and a new prompt", |_| {
        let visible = term.visible();
        visible.contains("Still here.") && prompts(&visible) == 2
    });
    assert_eq!(mock.chat_requests().len(), 2, "`clear` was not sent to the model");
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
}

#[test]
fn markdown_on_a_color_terminal_and_multi_line_input_and_tab_completion() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_text(
        "## Disk report\n\n- **root** is at 91%\n- `/var` holds most of it\n\n| mount | use |\n|---|---|\n| / | 91% |\n",
    )]);
    let vars = vec![
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("OPSAI_HOME", env.opsai_home().display().to_string()),
        ("HOME", env.user_home().display().to_string()),
        ("OPSAI_BASE_URL", mock.base_url()),
    ];
    let term = Tmux::start(env!("CARGO_BIN_EXE_opsai"), &[], &vars, env.user_home());
    term.wait_for(PROMPT, LIMIT);
    term.type_text("first line");
    term.press(&["M-Enter"]);
    term.type_text("second line");
    term.press(&["Enter"]);
    let screen = wait_prompts(&term, 2);
    assert!(screen.contains("Disk report") && !screen.contains("## Disk"), "the heading is styled: {screen}");
    assert!(screen.contains("• root is at 91%"), "bullets, and bold without asterisks: {screen}");
    assert!(screen.contains("│") && screen.contains("91%"), "the table has borders: {screen}");
    let request = &mock.chat_requests()[0];
    let user = request.messages().iter().rev().find(|m| m["role"] == "user").cloned().unwrap();
    assert_eq!(user["content"], "first line\nsecond line");
    term.type_text("/hel");
    term.press(&["Tab"]);
    term.wait_for("this list", LIMIT);
    term.press(&["Enter"]);
    term.wait_for("Agent > /help ", LIMIT);
    term.press(&["Enter"]);
    term.wait_for("/resume ID", LIMIT);
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
}

#[test]
fn ctrl_c_while_the_model_thinks_cancels_the_turn_and_the_repl_goes_on() {
    if !require("tmux") {
        return;
    }
    let env = TestEnv::new();
    let mock = MockLlm::start([reply_hang_before_head(), reply_text("Back again.")]);
    let term = start(&env, &mock, &[]);
    term.wait_for(PROMPT, LIMIT);
    term.line("think forever");
    term.wait_until(LIMIT, "the spinner", |s| s.contains("waiting for the model") || s.contains("reading the prompt"));
    // The request must have arrived, or the hang would be served to the next one.
    term.wait_until(LIMIT, "the request", |_| !mock.chat_requests().is_empty());
    term.press(&["C-c"]);
    let screen = wait_prompts(&term, 2);
    assert!(screen.contains("interrupted; the conversation goes on"), "{screen}");
    term.line("hello again");
    let screen = wait_prompts(&term, 3);
    assert!(screen.contains("Back again."), "{screen}");
    term.press(&["C-d"]);
    assert_eq!(term.wait_exit(LIMIT), 0);
}
