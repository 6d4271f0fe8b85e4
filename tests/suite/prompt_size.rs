//! Issue 15, a small prompt: each mode's first request (system prompt + tool schemas, as the real
//! binary sends them) stays within its byte budget, and the system prompt is byte-identical across
//! turns and across processes in one directory, so a local server's prompt cache is reused.
//! `python3 bench/request_size.py` prints the same numbers.

use std::path::{Path, PathBuf};
use std::time::Duration;

use opsai::context::DockerStatus;
use opsai::context::docker::{cache_path, write_cache};
use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::mock_llm::*;

/// The budgets of issue 15, in bytes of system prompt + tools JSON.
const AGENT_BUDGET: usize = 6000;
const WIDGET_BUDGET: usize = 3000;
const EXPLAIN_BUDGET: usize = 4000;

/// A `docker` that answers and a `kubectl` on PATH, and a fresh "daemon running" Docker result in
/// the cache, so the agent is offered every family (its largest first request), deterministically.
fn everything_installed(env: &TestEnv) -> String {
    let bin = env.user_home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, script) in [("docker", "echo '27.1.1|3|1'"), ("kubectl", "exit 0")] {
        let path = bin.join(name);
        opsai::testing::write_program(&path, format!("#!/bin/sh\n{script}\n"));
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let running = DockerStatus::Running { summary: "server 27.1.1, 3 containers (1 running)".into() };
    write_cache(&cache_path(&env.opsai_home().join("cache")), now, &running).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

fn system_prompt(request: &RecordedRequest) -> String {
    let messages = request.messages();
    messages.iter().find(|m| m["role"] == "system").and_then(|m| m["content"].as_str()).unwrap().to_owned()
}

/// Bytes of the system prompt and of the `tools` array as sent (compact JSON).
fn first_request_bytes(request: &RecordedRequest) -> (usize, usize) {
    let tools = match &request.json()["tools"] {
        Value::Null => 0,
        tools => serde_json::to_string(tools).unwrap().len(),
    };
    (system_prompt(request).len(), tools)
}

fn opsai(env: &TestEnv, mock: &MockLlm, path: &str) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_NONINTERACTIVE", "1")
        .env("PATH", path)
        .timeout(Duration::from_secs(60));
    cmd
}

/// `opsai widget` without a controlling terminal (`setsid -w` when installed), as the shell runs it.
fn widget(env: &TestEnv, mock: &MockLlm, path: &str) -> assert_cmd::Command {
    const SETSID: &str = "/usr/bin/setsid";
    let mut cmd = if Path::new(SETSID).exists() {
        let opsai = PathBuf::from(env!("CARGO_BIN_EXE_opsai"));
        let mut cmd = std::process::Command::new(SETSID);
        cmd.args(["-w".as_ref(), opsai.as_os_str()]).env_clear();
        for name in ["TMPDIR", "LANG", "LC_ALL"] {
            if let Some(value) = std::env::var_os(name) {
                cmd.env(name, value);
            }
        }
        cmd.env("OPSAI_HOME", env.opsai_home()).env("HOME", env.user_home()).env("NO_COLOR", "1");
        cmd.current_dir(env.user_home());
        cmd
    } else {
        env.std_cmd()
    };
    cmd.arg("widget")
        .env("PATH", path)
        .env("OPSAI_BASE_URL", mock.base_url())
        .env("OPSAI_SHELL", "bash")
        .env("OPSAI_SHELL_VERSION", "5.2")
        .env("OPSAI_BUFFER", "list files by size")
        .env("OPSAI_CURSOR", "18");
    let mut cmd = assert_cmd::Command::from_std(cmd);
    cmd.timeout(Duration::from_secs(60));
    cmd
}

#[test]
fn each_mode_s_first_request_fits_its_budget_with_every_tool_family_offered() {
    let env = TestEnv::new();
    // Native tool calls everywhere: the widget's largest first request (it starts with text calls,
    // no schemas, under `auto`; `tests/suite/widget_small_models.rs` measures that one).
    env.write_config(r#"{"llm": {"tool_mode": "native"}}"#);
    let path = everything_installed(&env);
    let mock = MockLlm::start([reply_text("Two files."), reply_text("```sh\nls -lS\n```"), reply_text("Disk full.")]);
    opsai(&env, &mock, &path).args(["-q", "list the files here"]).assert().success();
    widget(&env, &mock, &path).assert().success();
    opsai(&env, &mock, &path)
        .args(["explain", "-q"])
        .write_stdin("write error: No space left on device\n")
        .assert()
        .success();
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].tool_names(), ["run_command", "analyze", "cli", "file", "container", "kube"]);
    assert_eq!(requests[1].tool_names(), ["run_command", "propose_command"]);
    assert_eq!(requests[2].tool_names(), ["run_command", "analyze"]);
    for (request, mode, budget) in [
        (&requests[0], "agent", AGENT_BUDGET),
        (&requests[1], "widget", WIDGET_BUDGET),
        (&requests[2], "explain", EXPLAIN_BUDGET),
    ] {
        let (system, tools) = first_request_bytes(request);
        assert!(
            system + tools <= budget,
            "{mode}: {system} bytes of system prompt + {tools} of tools = {} > {budget}\n{}",
            system + tools,
            system_prompt(request)
        );
    }
}

#[test]
fn container_and_kube_tools_are_offered_only_where_they_can_work() {
    let env = TestEnv::new();
    // No docker and no kubectl on PATH (a text answer needs no program).
    let bin = env.user_home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let mock = MockLlm::start([reply_text("ok")]);
    opsai(&env, &mock, &bin.display().to_string()).args(["-q", "hi"]).assert().success();
    assert_eq!(mock.chat_requests()[0].tool_names(), ["run_command", "analyze", "cli", "file"]);
    assert!(system_prompt(&mock.chat_requests()[0]).contains("- Docker: not installed\n"));
}

#[test]
fn the_system_prompt_is_the_same_bytes_every_turn_and_in_every_process_of_a_directory() {
    let env = TestEnv::new();
    let path = everything_installed(&env);
    let mock = MockLlm::start([
        reply_tool_call("c1", "run_command", json!({"command": "echo hi", "why": "greet"})),
        reply_text("Said hi."),
        reply_text("Again."),
    ]);
    opsai(&env, &mock, &path).args(["-q", "say hi"]).assert().success();
    opsai(&env, &mock, &path).args(["-q", "say hi again"]).assert().success();
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 3);
    let first = system_prompt(&requests[0]);
    assert!(first.contains("- Docker: daemon running (server 27.1.1)\n"), "{first}");
    for (n, request) in requests.iter().enumerate().skip(1) {
        assert_eq!(system_prompt(request), first, "request {n} sends another system prompt");
        assert_eq!(request.json()["tools"], requests[0].json()["tools"], "request {n} offers other tools");
    }
}

/// Before the first `docker info` has answered the daemon is "not checked yet", after it "not
/// reachable": both read the same, so the first process and the next send the same prompt.
#[test]
fn a_docker_probe_finishing_between_two_processes_does_not_change_the_prompt() {
    let env = TestEnv::new();
    let bin = env.user_home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let docker = bin.join("docker");
    opsai::testing::write_program(&docker, "#!/bin/sh\necho 'Cannot connect to the Docker daemon' >&2\nexit 1\n");
    let path = bin.display().to_string();
    let mock = MockLlm::start([reply_text("one"), reply_text("two")]);
    opsai(&env, &mock, &path).args(["-q", "first"]).assert().success();
    opsai(&env, &mock, &path).args(["-q", "second"]).assert().success();
    let requests = mock.chat_requests();
    assert_eq!(system_prompt(&requests[1]), system_prompt(&requests[0]));
    assert!(system_prompt(&requests[0]).contains("- Docker: installed, daemon not answering\n"));
    assert_eq!(requests[0].tool_names(), ["run_command", "analyze", "cli", "file"]);
}

/// A conversation saved before the tools were folded holds calls by their old names; resumed, it is
/// sent back as it was, and the model may go on calling the old name: the tool still answers.
#[test]
fn a_resumed_conversation_with_old_tool_names_goes_on_working() {
    let env = TestEnv::new();
    std::fs::write(env.user_home().join("notes.txt"), "hello from the notes\n").unwrap();
    let mock = MockLlm::start([
        reply_tool_call("r1", "read_file", json!({"path": "notes.txt"})),
        reply_text("It says hello."),
        reply_tool_call("r2", "read_file", json!({"path": "notes.txt", "start_line": 1})),
        reply_tool_call("r3", "file", json!({"action": "read", "path": "notes.txt"})),
        reply_text("Still hello."),
    ]);
    let path = std::env::var("PATH").unwrap_or_default();
    opsai(&env, &mock, &path).args(["-q", "what do my notes say?"]).assert().success().stdout("It says hello.\n");
    opsai(&env, &mock, &path).args(["-q", "-c", "and now?"]).assert().success().stdout("Still hello.\n");
    let requests = mock.chat_requests();
    assert_eq!(requests.len(), 5);
    let resumed = &requests[2];
    let old_call = resumed
        .messages()
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .any(|call| call["id"] == "r1" && call["function"]["name"] == "read_file");
    assert!(old_call, "the saved call is sent back under its name: {:?}", resumed.messages());
    assert!(resumed.tool_names().iter().any(|name| name == "file"));
    let last = &requests[4];
    for id in ["r2", "r3"] {
        let result = last.tool_result(id).unwrap_or_default();
        assert!(result.contains("hello from the notes"), "{id}: {result}");
    }
    last.assert_tool_calls_answered();
}

/// A small model that prints its call as text under an old name (`read_file`) is understood too.
#[test]
fn an_old_name_printed_as_a_text_call_still_runs() {
    let env = TestEnv::new();
    std::fs::write(env.user_home().join("notes.txt"), "hello from the notes\n").unwrap();
    let mock = MockLlm::start([
        reply_text("<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_call>"),
        reply_text("It says hello."),
    ]);
    let path = std::env::var("PATH").unwrap_or_default();
    opsai(&env, &mock, &path).args(["-q", "what do my notes say?"]).assert().success().stdout("It says hello.\n");
    let messages = mock.chat_requests()[1].messages();
    let result = messages.iter().find(|m| m["role"] == "tool").map(|m| m["content"].to_string()).unwrap_or_default();
    assert!(result.contains("hello from the notes"), "{result}");
}
