//! Running an analysis: the planned commands run concurrently through an [`Executor`], each with a
//! timeout; output is bounded and ANSI-stripped by the executor and redacted here; each run is
//! audited (`TOOL: analyze`). Failures are skipped and listed as missing information.

use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::exec::Executor;
use crate::protocol::{CommandRequest, Risk, SandboxProfile};
use crate::redact::Redactor;
use crate::store::audit::{AuditLog, AuditRecord, Confirmed};

/// Each analysis command gets at most this long.
pub(crate) const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);

/// What an analysis run needs.
pub struct Collector<'a> {
    pub executor: &'a dyn Executor,
    pub redactor: &'a Redactor,
    pub audit: &'a AuditLog,
    pub session: String,
    /// The user's request, for the audit log.
    pub input: String,
    pub cwd: PathBuf,
    pub timeout: Duration,
    pub cancel: CancellationToken,
    /// `--ssh-host`: where the executor runs commands, for the audit log.
    pub host: Option<String>,
    /// `opsai serve`'s signed-in user, for the audit log.
    pub user: Option<String>,
}

/// One command's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub command: String,
    pub output: String,
}

/// The collected facts and what could not be collected.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    pub sections: Vec<Section>,
    /// `docker logs --tail 20 'x' (timed out)`, …
    pub missing: Vec<String>,
}

impl Report {
    /// The report as text for the model: each command with its output, then the missing ones.
    pub fn text(&self, target: &str, kind: &str) -> String {
        let mut text = format!("Analysis of {kind} `{target}`:\n");
        for section in &self.sections {
            text.push_str(&format!("\n$ {}\n{}\n", section.command, section.output.trim_end()));
        }
        if self.sections.is_empty() {
            text.push_str("\n(no command produced information)\n");
        }
        if !self.missing.is_empty() {
            text.push_str("\nmissing information:\n");
            for missing in &self.missing {
                text.push_str(&format!("- {missing}\n"));
            }
        }
        text
    }
}

impl Collector<'_> {
    /// Runs one command; `Ok(output)` when it exited 0, else why it failed (output included if any).
    pub(crate) async fn run_one(&self, command: &str) -> Result<String, String> {
        // Nobody said yes to these: a sandbox. The tool profile, as for opsai's other read-only
        // tools: the commands come from opsai's templates (generated ones only when the policy
        // finds every command Safe) with the name quoted in, and they need the docker socket and
        // D-Bus (`docker inspect`, `systemctl status`), which the strict profile closes. On an ssh
        // host, the host's sandbox (or, without one, plain words only: issue 21 §4). None when the
        // user switched it off; where none can be applied, the command does not run.
        let sandbox = match &self.host {
            Some(host) => match crate::exec::ssh::sandbox::auto_run_on(self.executor, SandboxProfile::Tool, command) {
                Ok(sandbox) => sandbox,
                Err(reason) => return Err(format!("not run: {reason}; host {host}")),
            },
            None => match crate::sandbox::for_auto_run(SandboxProfile::Tool) {
                Ok(sandbox) => sandbox,
                Err(reason) => return Err(format!("not run: no sandbox on this machine ({reason})")),
            },
        };
        self.run_in(command, sandbox).await
    }

    /// Runs one of opsai's own fixed readers on the ssh host, outside the host's sandbox: a line
    /// opsai wrote whole, with only a number in it (`procfs`), as the local reader reads `/proc`
    /// itself. Never a template's or the model's line.
    pub(crate) async fn run_reader(&self, command: &str) -> Result<String, String> {
        if self.host.is_none() {
            return Err("not run: a reader line runs only on an ssh host".into());
        }
        self.run_in(command, None).await
    }

    async fn run_in(&self, command: &str, sandbox: Option<SandboxProfile>) -> Result<String, String> {
        let request = CommandRequest {
            call_id: "analyze".into(),
            command: command.to_owned(),
            cwd: self.cwd.clone(),
            timeout: self.timeout,
            why: Some("analyze".into()),
            sandbox,
        };
        let mut sink = |_: &[u8]| {};
        let result = self.executor.run(&request, &mut sink, self.cancel.child_token()).await;
        let (exit, outcome) = match result {
            Ok(result) => {
                let output = self.redactor.redact(&result.output.text());
                let outcome = if result.timed_out {
                    Err("timed out".to_owned())
                } else if result.interrupted {
                    Err("interrupted".to_owned())
                } else if result.exit_code == Some(0) {
                    Ok(output)
                } else {
                    let first = output.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                    let code = result.exit_code.map_or("killed".to_owned(), |c| format!("exit {c}"));
                    Err(if first.is_empty() { code } else { format!("{code}: {}", cut(first, 160)) })
                };
                (result.exit_code, outcome)
            }
            Err(error) => (None, Err(error.to_string())),
        };
        let record = AuditRecord {
            session: self.session.clone(),
            input: self.input.clone(),
            tool: "analyze".into(),
            command: command.to_owned(),
            risk: Risk::Safe,
            confirmed: Confirmed::Auto,
            exit,
            output: match &outcome {
                Ok(output) => output.clone(),
                Err(why) => why.clone(),
            },
            host: self.host.clone(),
            user: self.user.clone(),
            approver: None,
        };
        // A failing audit log is named in the report rather than hiding the analysis.
        match self.audit.append(&record) {
            Ok(()) => outcome,
            Err(error) => outcome.map(|output| format!("{output}\n[ERROR]: {error}")),
        }
    }

    /// Runs `commands` concurrently; `dropped` (not Safe) are listed as missing first.
    pub(crate) async fn run_all(&self, commands: &[String], dropped: &[String]) -> Report {
        let results = futures_util::future::join_all(commands.iter().map(|c| self.run_one(c))).await;
        let mut report = Report { missing: dropped.to_vec(), ..Report::default() };
        for (command, result) in commands.iter().zip(results) {
            match result {
                Ok(output) => report.sections.push(Section { command: command.clone(), output }),
                Err(why) => report.missing.push(format!("{command} ({why})")),
            }
        }
        report
    }
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::exec::{ExecError, ExecResult};
    use crate::testing::{ScriptedExecutor, exited};

    /// Answers by command: `slow` times out, `fail` exits 1, `boom` cannot start, anything else prints.
    fn canned() -> ScriptedExecutor {
        ScriptedExecutor::new(|command| match command {
            "slow" => Ok(ExecResult { timed_out: true, exit_code: None, ..exited(0, "") }),
            "fail" => Ok(exited(1, "no such container\n")),
            "boom" => Err(ExecError::Spawn("no bash".into())),
            _ => Ok(exited(0, format!("out of {command} TOKEN=hunter2secret\n"))),
        })
    }

    #[tokio::test]
    async fn failures_are_listed_as_missing_and_output_is_redacted_and_audited() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_owned();
        let redactor = Arc::new(Redactor::new([("TOKEN".to_owned(), "hunter2secret".to_owned())]));
        let audit = AuditLog::new(dir.join("audit.log"), 10, 30, redactor.clone());
        let executor = canned();
        let collector = Collector {
            executor: &executor,
            redactor: &redactor,
            audit: &audit,
            session: "s1".into(),
            input: "what is x".into(),
            cwd: std::env::temp_dir(),
            timeout: COMMAND_TIMEOUT,
            cancel: CancellationToken::new(),
            host: None,
            user: None,
        };
        let commands: Vec<String> = ["ok", "slow", "fail", "boom"].map(String::from).to_vec();
        let report = collector.run_all(&commands, &["rm x (not read-only: high)".to_owned()]).await;
        assert_eq!(report.sections.len(), 1);
        assert!(!report.sections[0].output.contains("hunter2secret"));
        assert_eq!(report.missing[0], "rm x (not read-only: high)");
        assert_eq!(report.missing[1], "slow (timed out)");
        assert_eq!(report.missing[2], "fail (exit 1: no such container)");
        assert!(report.missing[3].starts_with("boom (cannot start"));
        let text = report.text("x", "container");
        assert!(text.contains("$ ok\nout of ok") && text.contains("missing information:\n- rm x"));
        let log = std::fs::read_to_string(dir.join("audit.log")).unwrap();
        assert_eq!(log.lines().count(), 4);
        assert!(log.contains("TOOL: analyze") && !log.contains("hunter2secret"));
    }
}
