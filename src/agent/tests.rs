//! The loop as a table of scenarios: a scripted model, a scripted executor, a scripted (or absent)
//! approver, a real audit log in a temp dir. Each asserts on what the model was sent, what ran,
//! what the user saw and what was audited.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{Agent, LoopSettings, after_run};
use crate::approval::{Approver, NoApprover};
use crate::llm::{ChatRequest, LlmError, ModelReply};
use crate::policy::PolicyConfig;
use crate::protocol::{AgentEvent, Approval, ChatMessage, Role, ToolCall, TurnOutcome};
use crate::redact::Redactor;
use crate::store::audit::AuditLog;
use crate::testing::ScriptedApprover;
use crate::testing::{ScriptedExecutor, ScriptedModel, answer, command_call as call, tool_call};
use crate::tools::Interrupts;
use crate::tools::{Registry, RunMode, RunState, Services};

struct Run {
    outcome: TurnOutcome,
    requests: Vec<ChatRequest>,
    ran: Vec<String>,
    events: Vec<AgentEvent>,
    audit: String,
    refused_without_terminal: bool,
    history: Vec<ChatMessage>,
}

struct Scenario {
    replies: Vec<Result<ModelReply, LlmError>>,
    approver: Option<Vec<Approval>>,
    mode: RunMode,
    policy: PolicyConfig,
    output: fn(&str) -> (i32, String),
    max_iterations: u32,
    env: Vec<(String, String)>,
    audit_broken: bool,
}

impl Scenario {
    fn new(replies: Vec<Result<ModelReply, LlmError>>) -> Self {
        Self {
            replies,
            approver: Some(vec![]),
            mode: RunMode { auto_approve_safe: true, approve_medium: false, dry_run: false, probe_limit: None },
            policy: PolicyConfig::default(),
            output: |command| (0, format!("ran {command}\n")),
            max_iterations: 10,
            env: vec![],
            audit_broken: false,
        }
    }

    fn run(self, task: &str) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let redactor = Arc::new(Redactor::new(self.env.clone()));
        let audit_path = if self.audit_broken {
            // A regular file where the log's directory should be: the log cannot be written.
            std::fs::write(dir.path().join("not-a-dir"), "").unwrap();
            dir.path().join("not-a-dir/audit.log")
        } else {
            dir.path().join("audit.log")
        };
        let audit = AuditLog::new(audit_path, 10, 90, redactor.clone());
        let model = ScriptedModel::new(self.replies);
        let executor = ScriptedExecutor::printing(self.output);
        let scripted = self.approver.map(ScriptedApprover::new);
        let approver: &dyn Approver = match &scripted {
            Some(scripted) => scripted,
            None => &NoApprover,
        };
        let interrupts = Interrupts::default();
        let tools = crate::tools::ToolsConfig {
            files: crate::config::FilesConfig::default(),
            backups: crate::store::backups::Backups::new(dir.path().join("backups")),
            kube: crate::config::KubeConfig::default(),
            kube_context: None,
            kube_contexts: Vec::new(),
            offer: crate::tools::Offer::ALL,
        };
        let mut agent = Agent {
            model: &model,
            recorder: None,
            services: Services {
                executor: &executor,
                approver,
                audit: &audit,
                redactor: &redactor,
                policy: &self.policy,
                mode: self.mode,
                session: "s1".into(),
                exec_timeout: Duration::from_secs(5),
                interrupts: &interrupts,
                files: &crate::exec::fs::LocalFs,
                host: None,
                user: None,
                fleet: None,
            },
            tools: Registry::agent(tools),
            settings: LoopSettings {
                model: "test-model".into(),
                max_iterations: self.max_iterations,
                max_tokens: None,
                environment: "os: test".into(),
                prompt: Default::default(),
                outputs_shown: true,
            },
            state: RunState { cwd: dir.path().to_owned(), ..RunState::default() },
        };
        let mut events = Vec::new();
        let mut history = Vec::new();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let outcome = runtime
            .block_on(agent.run_turn(&mut history, task, &mut |event| events.push(event)))
            .unwrap_or(TurnOutcome::Aborted);
        let refused_without_terminal = agent.state.refused_without_terminal;
        Run {
            outcome,
            requests: model.requests(),
            ran: executor.ran(),
            events,
            audit: std::fs::read_to_string(dir.path().join("audit.log")).unwrap_or_default(),
            refused_without_terminal,
            history,
        }
    }
}

fn tool_messages(request: &ChatRequest) -> Vec<(String, String)> {
    request
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| (m.tool_call_id.clone().unwrap_or_default(), m.content.clone()))
        .collect()
}

#[test]
fn one_command_then_answer_links_the_observation_to_its_call() {
    let run = Scenario::new(vec![Ok(call("call_123", "ls -la")), Ok(answer("Two files."))]).run("what is here?");
    assert_eq!(run.outcome, TurnOutcome::Answer("Two files.".into()));
    assert_eq!(run.ran, vec!["ls -la"]);
    assert_eq!(run.requests.len(), 2);
    let first = &run.requests[0];
    assert_eq!(first.messages[0].role, Role::System);
    assert!(first.messages[0].content.starts_with("# Safety rules"));
    assert_eq!(
        first.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["run_command", "analyze", "cli", "file", "container", "kube"]
    );
    let tools = tool_messages(&run.requests[1]);
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].0, "call_123");
    assert!(tools[0].1.contains("ran ls -la"), "{}", tools[0].1);
    let assistant = run.requests[1].messages.iter().find(|m| m.role == Role::Assistant).unwrap();
    assert_eq!(assistant.tool_calls[0].id, "call_123");
    assert_eq!(run.audit.lines().count(), 1);
    assert!(run.audit.contains("CMD: \"ls -la\" | RISK: safe | CONFIRMED: auto | EXIT: 0"), "{}", run.audit);
    assert_eq!(run.history.len(), 4, "user, assistant+call, tool, answer");
}

#[test]
fn no_terminal_refuses_above_safe_and_the_model_is_told() {
    let mut scenario = Scenario::new(vec![Ok(call("c1", "touch notes.txt")), Ok(answer("I could not create it."))]);
    scenario.approver = None;
    let run = scenario.run("create notes.txt");
    assert!(run.ran.is_empty());
    assert!(run.refused_without_terminal);
    assert_eq!(tool_messages(&run.requests[1])[0].1, "refused: medium requires confirmation in a terminal");
    assert!(run.audit.contains("RISK: medium | CONFIRMED: no"), "{}", run.audit);
}

#[test]
fn high_asks_even_with_yes_and_a_no_is_reported() {
    let mut scenario =
        Scenario::new(vec![Ok(call("c1", "rm -rf build")), Ok(call("c2", "mkdir out")), Ok(answer("ok"))]);
    scenario.mode.approve_medium = true;
    scenario.approver = Some(vec![Approval::Denied]);
    let run = scenario.run("clean up");
    assert_eq!(run.ran, vec!["mkdir out"], "-y approves medium, the high delete was declined");
    assert_eq!(tool_messages(&run.requests[1])[0].1, "the user declined to run this command");
    assert!(run.audit.contains("RISK: high | CONFIRMED: no"));
    assert!(run.audit.contains("CMD: \"mkdir out\" | RISK: medium | CONFIRMED: auto"));
}

#[test]
fn dry_run_executes_nothing() {
    let mut scenario = Scenario::new(vec![Ok(call("c1", "ls")), Ok(call("c2", "rm notes.txt")), Ok(answer("planned"))]);
    scenario.mode.dry_run = true;
    let run = scenario.run("plan");
    assert!(run.ran.is_empty());
    assert_eq!(tool_messages(&run.requests[2])[1].1, "dry run: not executed (risk medium)");
    assert_eq!(run.audit.matches("CONFIRMED: dry-run").count(), 2);
}

#[test]
fn an_edited_command_is_assessed_again_and_runs_as_edited() {
    let mut scenario = Scenario::new(vec![Ok(call("c1", "rm -rf build")), Ok(answer("done"))]);
    scenario.approver = Some(vec![Approval::Edited("rm build/out.o".into()), Approval::Approved]);
    let run = scenario.run("clean");
    assert_eq!(run.ran, vec!["rm build/out.o"]);
    let risks: Vec<_> = run
        .events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall { risk, .. } => *risk,
            _ => None,
        })
        .collect();
    assert_eq!(risks, [crate::protocol::Risk::High, crate::protocol::Risk::Medium]);
    // The model, the history and the `tool_result` event hear what ran, not what it sent.
    let observation = &tool_messages(&run.requests[1])[0].1;
    assert!(
        observation
            .contains("[edited]: the user edited the command at the prompt; what follows is for `rm build/out.o`")
            && observation.contains("not for the command you sent: `rm -rf build`")
            && observation.contains("ran rm build/out.o"),
        "{observation}"
    );
    assert!(observation.starts_with("exit 0"), "the outcome stays the first line: {observation}");
    let result = run.events.iter().find_map(|e| match e {
        AgentEvent::ToolResult { output, .. } => Some(output.clone()),
        _ => None,
    });
    assert_eq!(result.as_deref(), Some(observation.as_str()));
    assert!(run.audit.contains("CMD: \"rm build/out.o\""), "{}", run.audit);
    assert_eq!(crate::tools::run_command::edited_command(observation), Some("rm build/out.o"));
}

/// A password the model wrote into a command runs as written but is not sent back to it in the
/// history's copy of its own tool call.
#[test]
fn the_model_s_own_credentials_are_not_sent_back_in_the_history() {
    let mut scenario = Scenario::new(vec![Ok(call("c1", "echo pass=EchoPw12345;rm -rf x")), Ok(answer("done"))]);
    scenario.approver = Some(vec![Approval::Approved]);
    let run = scenario.run("go");
    assert_eq!(run.ran, vec!["echo pass=EchoPw12345;rm -rf x"], "ran byte for byte");
    let second = serde_json::to_string(&run.requests[1].messages).unwrap();
    assert!(!second.contains("EchoPw12345"), "{second}");
    assert!(second.contains("echo pass=[REDACTED:password];rm -rf x"), "{second}");
    assert!(run.audit.contains("CMD: \"echo pass=[REDACTED:password];rm -rf x\""), "{}", run.audit);
}

#[test]
fn a_session_grant_covers_the_same_program_and_subcommand_only() {
    let mut scenario = Scenario::new(vec![
        Ok(call("c1", "git commit -m one")),
        Ok(call("c2", "git commit -m two")),
        Ok(call("c3", "git push origin main")),
        Ok(answer("pushed")),
    ]);
    scenario.approver = Some(vec![Approval::ApprovedForSession, Approval::Denied]);
    let run = scenario.run("commit and push");
    assert_eq!(run.ran, vec!["git commit -m one", "git commit -m two"]);
}

#[test]
fn invalid_arguments_and_unknown_tools_are_observations_and_the_loop_goes_on() {
    let bad_args = ModelReply {
        tool_calls: vec![ToolCall { id: "c1".into(), name: "run_command".into(), arguments: json!({"cmd": "ls"}) }],
        ..ModelReply::default()
    };
    let unknown = ModelReply {
        tool_calls: vec![ToolCall { id: "c2".into(), name: "delete_everything".into(), arguments: json!({}) }],
        ..ModelReply::default()
    };
    let run = Scenario::new(vec![Ok(bad_args), Ok(unknown), Ok(answer("sorry"))]).run("x");
    assert_eq!(run.outcome, TurnOutcome::Answer("sorry".into()));
    assert_eq!(tool_messages(&run.requests[1])[0].1, "[ERROR]: missing required argument `command`");
    assert_eq!(
        tool_messages(&run.requests[2])[1].1,
        "[ERROR]: unknown tool `delete_everything`; the tools are: run_command, analyze, cli, file, container, kube"
    );
}

#[test]
fn the_step_limit_ends_the_turn() {
    let mut scenario = Scenario::new((0..5).map(|i| Ok(call(&format!("c{i}"), &format!("echo {i}")))).collect());
    scenario.max_iterations = 3;
    let run = scenario.run("loop");
    assert_eq!(run.outcome, TurnOutcome::StepLimit);
    assert_eq!(run.ran.len(), 3);
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, AgentEvent::Error { message } if message.contains("Stopped after 3 steps")))
    );
}

#[test]
fn the_same_failing_call_three_times_stops_the_turn() {
    let mut scenario = Scenario::new((0..6).map(|i| Ok(call(&format!("c{i}"), "cat missing.txt"))).collect());
    scenario.output = |_| (1, "cat: missing.txt: No such file or directory\n".into());
    let run = scenario.run("read it");
    assert_eq!(run.ran.len(), 3);
    assert_eq!(run.outcome, TurnOutcome::StepLimit);
    assert!(
        run.events.iter().any(|e| matches!(e, AgentEvent::Error { message } if message.contains("failed 3 times")))
    );
}

#[test]
fn secrets_in_output_never_reach_the_model_or_the_audit_log() {
    let mut scenario = Scenario::new(vec![Ok(call("c1", "printenv DEPLOY_URL")), Ok(answer("done"))]);
    scenario.env = vec![("DEPLOY_TOKEN".into(), "hunter2-very-secret".into())];
    scenario.output = |_| (0, "token=hunter2-very-secret key ghp_abcdefghijklmnopqrstuvwxyz0123456789\n".into());
    let run = scenario.run("show it");
    let sent = serde_json::to_string(&run.requests.iter().map(|r| &r.messages).collect::<Vec<_>>()).unwrap();
    assert!(!sent.contains("hunter2-very-secret"), "{sent}");
    assert!(!sent.contains("ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
    assert!(!run.audit.contains("hunter2-very-secret"));
    assert!(sent.contains("[REDACTED"));
}

#[test]
fn a_deny_rule_refuses_and_abort_ends_the_turn() {
    let mut scenario =
        Scenario::new(vec![Ok(call("c1", "terraform apply prod")), Ok(call("c2", "touch x")), Ok(answer("never"))]);
    scenario.policy =
        PolicyConfig::from_json(&json!({"deny": [{"pattern": "terraform apply", "reason": "CI only"}]})).unwrap();
    scenario.approver = Some(vec![Approval::Abort]);
    let run = scenario.run("apply");
    assert!(tool_messages(&run.requests[1])[0].1.starts_with("refused by the user's policy"));
    assert_eq!(run.outcome, TurnOutcome::Aborted);
    assert!(run.ran.is_empty());
    assert_eq!(run.audit.lines().count(), 2, "the refusal and the abort are both audited");
}

#[test]
fn context_too_long_is_retried_once_with_a_shorter_history() {
    let run = Scenario::new(vec![Err(LlmError::ContextTooLong), Ok(answer("fine"))]).run("x");
    assert_eq!(run.outcome, TurnOutcome::Answer("fine".into()));
    assert_eq!(run.requests.len(), 2);
}

#[test]
fn repeated_call_ids_are_made_unique_so_each_observation_answers_one_call() {
    let run = Scenario::new(vec![Ok(call("call_1", "ls")), Ok(call("call_1", "pwd")), Ok(answer("ok"))]).run("x");
    let last = run.requests.last().unwrap();
    let ids: Vec<String> = tool_messages(last).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, ["call_1", "call_1_2"]);
    let call_ids: Vec<String> = last.messages.iter().flat_map(|m| m.tool_calls.iter().map(|c| c.id.clone())).collect();
    assert_eq!(call_ids, ids);
}

#[test]
fn an_unwritable_audit_log_stops_everything_above_safe() {
    let mut scenario = Scenario::new(vec![Ok(call("c1", "ls")), Ok(call("c2", "touch x")), Ok(answer("done"))]);
    scenario.mode.approve_medium = true;
    scenario.audit_broken = true;
    let run = scenario.run("x");
    assert_eq!(run.ran, vec!["ls"], "safe still runs; medium is refused even with -y");
    let refusal = &tool_messages(&run.requests[2])[1].1;
    assert!(refusal.starts_with("refused: the audit log cannot be written"), "{refusal}");
}

/// Issue 15: the structured tools are one `cli` schema picked by `action`; the old names still
/// answer (a resumed conversation, a model that calls `grep`), and an unknown action says which exist.
#[test]
fn a_family_runs_its_member_by_action_and_old_names_still_answer() {
    let run = Scenario::new(vec![
        Ok(tool_call("c1", "cli", json!({"action": "grep", "pattern": "error", "file": "app.log"}))),
        Ok(tool_call("c2", "grep", json!({"pattern": "warn", "file": "app.log"}))),
        Ok(tool_call("c3", "cli", json!({"action": "rm", "path": "/"}))),
        Ok(answer("done")),
    ])
    .run("errors?");
    assert_eq!(run.outcome, TurnOutcome::Answer("done".into()));
    assert_eq!(run.ran, vec!["grep -e error -- app.log", "grep -e warn -- app.log"]);
    let observed = tool_messages(&run.requests[3]);
    assert!(
        observed[2].1.starts_with("[ERROR]: `action` must be one of find, grep, wget, ps, ss, lsof, got \"rm\""),
        "{}",
        observed[2].1
    );
    assert_eq!(run.audit.matches("TOOL: shell.grep").count(), 2, "{}", run.audit);
}

/// What a small model reads of a `run_command` observation: the output and what to do with it, not
/// the status line it read back as its answer; failures, refusals and the user's edit note kept.
#[test]
fn a_small_model_reads_the_output_and_the_next_step_not_the_status_line() {
    let next = "[Answer the request from this output in a sentence or two; if it does not answer it, reply \
                with the next command line alone in a ```sh block.]";
    assert_eq!(after_run("exit 0 · 471 ms\n2\n"), format!("2\n{next}"));
    assert_eq!(after_run("exit 0 · 3 ms"), format!("[It ran and printed nothing.] {next}"));
    let edited = "exit 0 · 3 ms\n[edited]: the user edited the command at the prompt; what follows is for `nproc`, \
                  not for the command you sent: `lscpu`";
    assert_eq!(after_run(edited), format!("{}\n[It ran and printed nothing.] {next}", edited.lines().nth(1).unwrap()));
    assert_eq!(after_run(&format!("{edited}\n2")), format!("{}\n2\n{next}", edited.lines().nth(1).unwrap()));
    assert_eq!(
        after_run("[ERROR]: exit 1 · 9 ms\nno such file\n"),
        format!("[ERROR]: exit 1 · 9 ms\nno such file\n{next}")
    );
    assert!(after_run("[ERROR]: exit 127 · 2 ms\nsh: 1: frob: not found").ends_with(
        "not found\n[exit 127: the shell could not run this command. If the task still needs one, reply with the \
         corrected command line alone in a ```sh block.]"
    ));
    // A line of output that looks like a status line is output.
    assert_eq!(after_run("exit 0 · 1 ms\nexit 0 · 2 ms"), format!("exit 0 · 2 ms\n{next}"));
}
