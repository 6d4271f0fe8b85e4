//! The file tools called directly, as the loop calls them: a temp home, the real `LocalFs`, a real
//! audit log and backup store, a scripted (or absent) approver.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::approval::{ApprovalRequest, Approver, NoApprover};
use crate::config::FilesConfig;
use crate::exec::fs::LocalFs;
use crate::policy::PolicyConfig;
use crate::protocol::{AgentEvent, Approval, ObservationStatus};
use crate::redact::Redactor;
use crate::store::audit::AuditLog;
use crate::store::backups::Backups;
use crate::testing::ScriptedApprover;
use crate::testing::{HomeFs, ScriptedExecutor, ScriptedModel};
use crate::tools::Interrupts;
use crate::tools::{RunMode, RunState, Services, ToolContext, ToolEffect};

/// A temp home (`home/`, the working directory) and OPSAI_HOME (`opsai/`).
struct Harness {
    _dir: tempfile::TempDir,
    home: PathBuf,
    opsai: PathBuf,
    config: FilesConfig,
    mode: RunMode,
    /// `None`: no terminal.
    answers: Option<Vec<Approval>>,
    /// `Services::user` (a web turn's signed-in user).
    user: Option<String>,
}

struct Outcome {
    status: ObservationStatus,
    text: String,
    events: Vec<AgentEvent>,
    asked: Vec<ApprovalRequest>,
    audit: String,
    refused_without_terminal: bool,
}

impl Harness {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        std::fs::create_dir_all(root.join("opsai")).unwrap();
        Self {
            _dir: dir,
            home: root.join("home"),
            opsai: root.join("opsai"),
            config: FilesConfig::default(),
            mode: RunMode { auto_approve_safe: true, approve_medium: false, dry_run: false, probe_limit: None },
            answers: None,
            user: None,
        }
    }

    fn yes(mut self) -> Self {
        self.mode.approve_medium = true;
        self
    }

    fn backups(&self) -> Backups {
        Backups::new(self.opsai.join("backups"))
    }

    fn file(&self, name: &str, content: &str) -> PathBuf {
        let path = self.home.join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.home.join(name)).unwrap()
    }

    fn call(&self, tool: &str, args: Value) -> Outcome {
        let redactor = Arc::new(Redactor::new(Vec::new()));
        let audit = AuditLog::new(self.opsai.join("audit.log"), 10, 90, redactor.clone());
        let scripted = self.answers.clone().map(ScriptedApprover::new);
        let approver: &dyn Approver = match &scripted {
            Some(scripted) => scripted,
            None => &NoApprover,
        };
        let interrupts = Interrupts::default();
        let backups = self.backups();
        let fs = HomeFs(self.home.clone());
        let executor = ScriptedExecutor::unused();
        let model = ScriptedModel::new([]);
        let policy = PolicyConfig::default();
        let services = Services {
            executor: &executor,
            approver,
            audit: &audit,
            redactor: &redactor,
            policy: &policy,
            mode: self.mode.clone(),
            session: "c7".into(),
            exec_timeout: Duration::from_secs(5),
            interrupts: &interrupts,
            files: &fs,
            host: None,
            user: self.user.clone(),
            fleet: None,
        };
        let mut state = RunState { cwd: self.home.clone(), ..RunState::default() };
        let mut events = Vec::new();
        let tools: Vec<_> = super::family(self.config.clone(), backups).members().collect();
        let tool = tools.iter().find(|t| t.name() == tool).unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let effect = runtime.block_on(async {
            let mut sink = |event| events.push(event);
            let ctx = ToolContext {
                services: &services,
                state: &mut state,
                events: &mut sink,
                input: "the task",
                model: crate::llm::ModelRef { client: &model, name: "m" },
            };
            tool.call("call_1", &args, ctx).await
        });
        let ToolEffect::Observe(observation) = effect else { panic!("expected an observation, got {effect:?}") };
        Outcome {
            status: observation.status,
            text: observation.text,
            events,
            asked: scripted.map(|s| s.asked.into_inner().unwrap()).unwrap_or_default(),
            audit: std::fs::read_to_string(self.opsai.join("audit.log")).unwrap_or_default(),
            refused_without_terminal: state.refused_without_terminal,
        }
    }
}

#[test]
fn read_returns_a_line_range_redacted_and_audited() {
    let h = Harness::new();
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    h.file("notes.txt", &format!("one\ntwo\nthree {token}\nfour\n"));
    let out = h.call("read_file", json!({"path": "notes.txt", "start_line": 2, "end_line": "3"}));
    assert_eq!(out.status, ObservationStatus::Ran);
    assert!(out.text.starts_with("~/notes.txt · lines 2-3 of 4\ntwo\nthree "), "{}", out.text);
    assert!(!out.text.contains(&token), "redacted before the model sees it: {}", out.text);
    assert!(!out.text.contains("four"));
    assert!(
        out.audit.contains("TOOL: file.read_file | CMD: \"read_file ~/notes.txt\" | RISK: safe | CONFIRMED: auto"),
        "{}",
        out.audit
    );
    assert!(out.asked.is_empty());
}

#[test]
fn binary_and_oversized_files_are_refused() {
    let mut h = Harness::new();
    std::fs::write(h.home.join("tool.txt"), b"\x7fELF\x02\x01\x01\x00\x00").unwrap();
    let out = h.call("read_file", json!({"path": "~/tool.txt"}));
    assert_eq!(out.status, ObservationStatus::DeniedByPolicy);
    assert!(out.text.contains("looks binary (a NUL byte at offset 7)"), "{}", out.text);
    let out = h.clone_yes().call("edit_file", json!({"path": "tool.txt", "search": "ELF", "replace": "X"}));
    assert_eq!(out.status, ObservationStatus::DeniedByPolicy, "{}", out.text);
    h.config.max_size_mb = 1;
    std::fs::write(h.home.join("big.txt"), vec![b'x'; 1024 * 1024 + 1]).unwrap();
    let out = h.call("read_file", json!({"path": "big.txt"}));
    assert_eq!(out.status, ObservationStatus::DeniedByPolicy);
    assert!(out.text.contains("over the limit of 1048576 bytes"), "{}", out.text);
    let huge = "y".repeat(1024 * 1024 + 1);
    let out = h.clone_yes().call("write_file", json!({"path": "new.txt", "content": huge}));
    assert_eq!(out.status, ObservationStatus::DeniedByPolicy);
    assert!(!h.home.join("new.txt").exists());
}

impl Harness {
    /// The same directories and config, with `-y`.
    fn clone_yes(&self) -> Harness {
        Harness {
            _dir: tempfile::tempdir().unwrap(),
            home: self.home.clone(),
            opsai: self.opsai.clone(),
            config: self.config.clone(),
            mode: self.mode.clone(),
            answers: self.answers.clone(),
            user: self.user.clone(),
        }
        .yes()
    }
}

#[test]
fn edit_with_yes_backs_up_then_replaces_and_says_how_to_undo() {
    let h = Harness::new().yes();
    h.file("a.sh", "#!/bin/sh\necho 1\n");
    let out = h.call("edit_file", json!({"path": "~/a.sh", "search": "echo 1", "replace": "echo 2"}));
    assert_eq!(out.status, ObservationStatus::Ran, "{}", out.text);
    assert_eq!(h.read("a.sh"), "#!/bin/sh\necho 2\n");
    assert!(out.text.starts_with("edited ~/a.sh: 1 occurrence replaced (+1 line -1)"), "{}", out.text);
    assert!(out.text.contains("`opsai undo` restores it") && out.text.contains("+echo 2"), "{}", out.text);
    let entry = h.backups().last(Some("c7")).unwrap().unwrap();
    assert_eq!(entry.path, h.home.join("a.sh"));
    assert_eq!(std::fs::read_to_string(entry.backup.unwrap()).unwrap(), "#!/bin/sh\necho 1\n");
    assert!(
        out.audit
            .contains("TOOL: file.edit_file | CMD: \"edit_file ~/a.sh\" | RISK: medium | CONFIRMED: auto | EXIT: 0"),
        "{}",
        out.audit
    );
    // With nobody asked, the diff is shown as the call's output.
    assert!(out.events.iter().any(|e| matches!(e, AgentEvent::Output { chunk, .. } if chunk.contains("-echo 1"))));
}

#[test]
fn the_approval_shows_the_diff_and_a_no_leaves_the_file() {
    let mut h = Harness::new();
    h.file("a.sh", "echo 1\n");
    h.answers = Some(vec![Approval::Denied]);
    let out = h.call("edit_file", json!({"path": "a.sh", "search": "echo 1", "replace": "echo 2"}));
    assert_eq!(out.status, ObservationStatus::DeniedByUser);
    assert_eq!(h.read("a.sh"), "echo 1\n");
    let asked = &out.asked[0];
    assert_eq!((asked.call_id.as_str(), asked.command.as_str()), ("call_1", "edit_file ~/a.sh"));
    assert_eq!(asked.detail.as_deref(), Some("--- ~/a.sh\n+++ ~/a.sh\n@@ -1 +1 @@\n-echo 1\n+echo 2\n"));
    assert!(!out.audit.contains("USER:"), "{}", out.audit);
    h.answers = Some(vec![Approval::Approved]);
    h.user = Some("alice".into());
    let out = h.call("edit_file", json!({"path": "a.sh", "search": "echo 1", "replace": "echo 2"}));
    assert_eq!(out.status, ObservationStatus::Ran);
    assert_eq!(h.read("a.sh"), "echo 2\n");
    let last = out.audit.lines().last().unwrap_or_default();
    assert!(last.contains("CONFIRMED: yes") && last.contains("| TOOL: file.edit_file | USER: alice | CMD:"), "{last}");
}

#[test]
fn without_a_terminal_or_yes_a_write_is_refused_and_the_run_exits_3() {
    let h = Harness::new();
    h.file("a.sh", "echo 1\n");
    let out = h.call("write_file", json!({"path": "a.sh", "content": "echo 2\n"}));
    assert_eq!(out.status, ObservationStatus::DeniedByPolicy);
    assert_eq!(out.text, "refused: medium requires confirmation in a terminal");
    assert!(out.refused_without_terminal);
    assert_eq!(h.read("a.sh"), "echo 1\n");
    assert_eq!(h.backups().last(None).unwrap(), None);
}

#[test]
fn dry_run_writes_nothing() {
    let mut h = Harness::new().yes();
    h.mode.dry_run = true;
    h.file("a.txt", "old\n");
    let out = h.call("write_file", json!({"path": "a.txt", "content": "new\n"}));
    assert_eq!(out.status, ObservationStatus::DeniedByPolicy);
    assert!(out.text.starts_with("dry run"), "{}", out.text);
    assert_eq!(h.read("a.txt"), "old\n");
    assert!(out.audit.contains("CONFIRMED: dry-run") || out.audit.contains("CONFIRMED: dry"), "{}", out.audit);
}

#[test]
fn a_wrong_match_count_changes_nothing_and_names_the_count() {
    let h = Harness::new().yes();
    h.file("a.sh", "echo 1\necho 1\n");
    let out = h.call("edit_file", json!({"path": "a.sh", "search": "echo 1", "replace": "echo 2"}));
    assert_eq!(out.status, ObservationStatus::InvalidArguments);
    assert!(out.text.contains("occurs 2 times in ~/a.sh, expected 1"), "{}", out.text);
    assert_eq!(h.read("a.sh"), "echo 1\necho 1\n");
    let out =
        h.call("edit_file", json!({"path": "a.sh", "search": "echo 1", "replace": "echo 2", "expected_count": 2}));
    assert_eq!(out.status, ObservationStatus::Ran, "{}", out.text);
    assert_eq!(h.read("a.sh"), "echo 2\necho 2\n");
}

#[test]
fn regex_edits_and_appends() {
    let h = Harness::new().yes();
    h.file("app.conf", "port = 80\n");
    let out = h.call(
        "edit_file",
        json!({"path": "app.conf", "search": r"port = (\d+)", "replace": "port = 8${1}", "regex": true}),
    );
    assert_eq!(out.status, ObservationStatus::Ran, "{}", out.text);
    assert_eq!(h.read("app.conf"), "port = 880\n");
    let out = h.call("edit_file", json!({"path": "app.conf", "search": "(", "replace": "", "regex": true}));
    assert_eq!(out.status, ObservationStatus::InvalidArguments);
    let out = h.call("write_file", json!({"path": "app.conf", "content": "debug = true\n", "mode": "append"}));
    assert!(out.text.starts_with("appended 13 bytes to ~/app.conf"), "{}", out.text);
    assert_eq!(h.read("app.conf"), "port = 880\ndebug = true\n");
}

#[test]
fn a_created_file_is_removed_by_undo() {
    let h = Harness::new().yes();
    let out = h.call("write_file", json!({"path": "new.md", "content": "# hi\n"}));
    assert!(out.text.starts_with("created ~/new.md (5 bytes, 1 line); /undo"), "{}", out.text);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let audit = AuditLog::new(h.opsai.join("audit.log"), 10, 90, Arc::new(Redactor::new(Vec::new())));
    let ssh = crate::config::SshConfig { control_persist_s: 5, options: Vec::new() };
    let backups = h.backups();
    let undo = crate::undo::Undo {
        backups: &backups,
        audit: &audit,
        ssh: &ssh,
        control_dir: h.opsai.join("ssh"),
        force: false,
        input: "/undo",
    };
    let done = runtime.block_on(undo.last(Some("c7"), &LocalFs, None)).unwrap();
    assert!(matches!(done, crate::undo::Undone::Removed { .. }), "{done:?}");
    assert!(!h.home.join("new.md").exists());
}

#[test]
fn path_refusals_are_observations_and_audited() {
    let h = Harness::new().yes();
    std::os::unix::fs::symlink("/etc", h.home.join("etc-link")).unwrap();
    let out = h.call("write_file", json!({"path": "etc-link/opsai-test.conf", "content": "x"}));
    assert_eq!(out.status, ObservationStatus::DeniedByPolicy);
    assert!(out.text.contains("/etc/opsai-test.conf is under /etc"), "{}", out.text);
    assert!(!Path::new("/etc/opsai-test.conf").exists());
    assert!(out.audit.contains("TOOL: file.write_file") && out.audit.contains("CONFIRMED: no"), "{}", out.audit);
    let out = h.call("write_file", json!({"path": "run.exe", "content": "x"}));
    assert_eq!(out.status, ObservationStatus::DeniedByPolicy);
}

#[test]
fn shell_startup_files_are_high_even_with_yes() {
    let mut h = Harness::new().yes();
    h.config.write_extensions.clear();
    h.file(".bashrc", "alias ll='ls -l'\n");
    let out = h.call("edit_file", json!({"path": "~/.bashrc", "search": "ls -l", "replace": "ls -la"}));
    assert_eq!(out.status, ObservationStatus::DeniedByPolicy);
    assert_eq!(out.text, "refused: high requires confirmation in a terminal");
    assert_eq!(h.read(".bashrc"), "alias ll='ls -l'\n");
}

#[test]
fn a_failed_backup_means_no_write() {
    let h = Harness::new().yes();
    h.file("a.sh", "echo 1\n");
    std::fs::write(h.opsai.join("backups"), "not a directory").unwrap();
    let out = h.call("edit_file", json!({"path": "a.sh", "search": "1", "replace": "2"}));
    assert!(out.text.starts_with("[ERROR]: cannot create the backup directory"), "{}", out.text);
    assert!(out.text.ends_with("nothing was written"), "{}", out.text);
    assert_eq!(h.read("a.sh"), "echo 1\n");
}
