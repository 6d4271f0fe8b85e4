//! Tools the model may call, behind one trait, and the registry that offers them. Every call ends
//! in exactly one effect: an observation for the model, a proposed command, or an abort.

pub mod analyze;
pub mod containers;
pub mod family;
pub mod files;
pub mod fleet;
pub mod gate;
pub mod grant;
pub mod kube;
pub mod propose;
pub mod run_command;
pub mod structured;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::Approver;
use crate::exec::Executor;
use crate::policy::PolicyConfig;
use crate::protocol::{AgentEvent, Assessment, Observation, ObservationStatus, ToolSpec};
use crate::redact::Redactor;
use crate::store::audit::AuditLog;

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolEffect {
    Observe(Observation),
    /// `propose_command`: the turn ends with this command for the user's own Enter.
    Propose {
        command: String,
        explanation: String,
        assessment: Assessment,
    },
    /// The user chose to abort the whole turn.
    Abort,
}

/// How commands are approved in this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunMode {
    /// Safe commands run without asking (`safety.auto_approve_safe`).
    pub auto_approve_safe: bool,
    /// `-y` / `/yes on`: Medium is approved up front; High still asks.
    pub approve_medium: bool,
    /// Plan only: nothing is executed.
    pub dry_run: bool,
    /// The Ctrl-G widget: only Safe commands run (without asking), at most this many per turn; any
    /// other command, and any past the limit, is refused with an observation. Nobody is ever asked.
    pub probe_limit: Option<u32>,
}

/// Ctrl-C routing: interrupts the running command if there is one, else cancels the turn.
#[derive(Debug, Default)]
pub struct Interrupts {
    pub turn: CancellationToken,
    command: Mutex<Option<CancellationToken>>,
}

impl Interrupts {
    /// Called on Ctrl-C.
    pub fn interrupt(&self) {
        let running = self.command.lock().ok().and_then(|mut slot| slot.take());
        match running {
            Some(token) => token.cancel(),
            None => self.turn.cancel(),
        }
    }

    pub(crate) fn command_started(&self) -> CancellationToken {
        let token = self.turn.child_token();
        if let Ok(mut slot) = self.command.lock() {
            *slot = Some(token.clone());
        }
        token
    }

    pub(crate) fn command_finished(&self) {
        if let Ok(mut slot) = self.command.lock() {
            *slot = None;
        }
    }
}

/// The seams every tool may use, shared by every call of a turn. A tool's own settings are given
/// to it when the registry is built ([`ToolsConfig`]).
pub struct Services<'a> {
    pub executor: &'a dyn Executor,
    pub approver: &'a dyn Approver,
    pub audit: &'a AuditLog,
    pub redactor: &'a Redactor,
    pub policy: &'a PolicyConfig,
    pub mode: RunMode,
    pub session: String,
    pub exec_timeout: Duration,
    pub interrupts: &'a Interrupts,
    /// Files on the machine commands run on (this one, or the SSH host).
    pub files: &'a dyn crate::exec::fs::FileSystem,
    /// `--ssh-host`/`/host`: commands and files are on this host; `None` is this machine.
    pub host: Option<&'a str>,
    /// `opsai serve`: the signed-in user the turn runs for, for the audit log; `None` in the terminal.
    pub user: Option<String>,
    /// `--hosts`/`/hosts`: every command runs on these hosts; files and `analyze` are refused.
    pub fleet: Option<&'a fleet::FleetTarget>,
}

/// Per-run state tools read and change.
#[derive(Debug, Default)]
pub struct RunState {
    pub cwd: PathBuf,
    /// "Always this session" grants: program, subcommand and option set (`grant::grant_key`).
    pub grants: HashSet<String>,
    /// A command above Safe was refused because no terminal could ask: the run exits 3.
    pub refused_without_terminal: bool,
    /// Commands run under `RunMode::probe_limit` so far.
    pub probes_run: u32,
    /// What the tools returned in this turn (each observation's text), so the gate knows a command
    /// copied out of it: output is data, and a line of it runs only after a person's yes.
    pub returned: Vec<String>,
}

pub struct ToolContext<'a, 'b> {
    pub services: &'b Services<'a>,
    pub state: &'b mut RunState,
    pub events: &'b mut (dyn FnMut(AgentEvent) + Send),
    /// The user's request, for the audit log.
    pub input: &'b str,
    /// The turn's model, for a tool's own side request (analyze's template generation).
    pub model: crate::llm::ModelRef<'b>,
}

pub trait Tool: Send + Sync {
    /// The name the model calls it by (the same as `spec().name`, without building the schema).
    fn name(&self) -> &'static str;
    fn spec(&self) -> ToolSpec;
    fn call<'c>(&'c self, id: &'c str, args: &'c Value, ctx: ToolContext<'c, 'c>) -> BoxFuture<'c, ToolEffect>;
}

/// The settings of the tools that have their own, given when the registry is built.
#[derive(Debug, Clone)]
pub struct ToolsConfig {
    /// The file tools' limits and allowed places (`files.*`).
    pub files: crate::config::FilesConfig,
    /// Where the file tools keep the previous content of what they change.
    pub backups: crate::store::backups::Backups,
    /// The Kubernetes tools' refusals (`kube.*`).
    pub kube: crate::config::KubeConfig,
    /// The kube context every kubectl line talks to (`--context=NAME`, checked against
    /// `kube.contexts`); `None` = kubectl's current one.
    pub kube_context: Option<String>,
    /// `--contexts`: every kube call runs once on each of these contexts (empty: as `kube_context`).
    pub kube_contexts: Vec<String>,
    /// Which optional families the model is offered.
    pub offer: Offer,
}

/// The families offered only where they can work, so a small model reads no schema it cannot use.
/// One not offered still answers when called (a resumed conversation, a model that guesses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// `container`: the Docker daemon answered (`docker info`, cached).
    pub containers: bool,
    /// `kube`: `kubectl` is on PATH.
    pub kube: bool,
}

impl Offer {
    pub const ALL: Offer = Offer { containers: true, kube: true };

    /// What the environment makes relevant (this machine's or an SSH host's).
    pub(crate) fn for_context(context: &crate::context::EnvContext) -> Self {
        Offer {
            containers: matches!(context.docker, crate::context::DockerStatus::Running { .. }),
            kube: context.tools.iter().any(|(tool, found)| tool == "kubectl" && *found),
        }
    }
}

/// The tools offered in one mode, and those that answer to a name without being offered.
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
    /// Family members under their old names, and families this run does not offer.
    hidden: Vec<Arc<dyn Tool>>,
}

impl Registry {
    /// The agent's tools: run commands, analyze an ops object, the structured tools (`cli`), the
    /// file tools, and where relevant the `container` and `kube` families.
    pub fn agent(config: ToolsConfig) -> Self {
        let mut registry = Self {
            tools: vec![
                Arc::new(run_command::RunCommand::FULL),
                Arc::new(fleet::SingleHost(Arc::new(analyze::Analyze))),
            ],
            hidden: Vec::new(),
        };
        registry.family(structured::family(), true);
        let files = files::family(config.files, config.backups);
        registry.hidden.extend(files.members().map(|tool| Arc::new(fleet::SingleHost(tool)) as Arc<dyn Tool>));
        registry.tools.push(Arc::new(fleet::SingleHost(Arc::new(files))));
        registry.family(containers::family(), config.offer.containers);
        registry.family(kube::family(config.kube, config.kube_context, config.kube_contexts), config.offer.kube);
        registry
    }

    fn family(&mut self, family: family::Family, offered: bool) {
        self.hidden.extend(family.members());
        let family: Arc<dyn Tool> = Arc::new(family);
        if offered { self.tools.push(family) } else { self.hidden.push(family) }
    }

    /// `opsai explain`'s tools: probes through `run_command`, and `analyze` (which runs only Safe
    /// commands). The input is untrusted text, so nothing it could talk the model into is offered
    /// beyond the normal approval path.
    pub fn explain() -> Self {
        Self { tools: vec![Arc::new(run_command::RunCommand::FULL), Arc::new(analyze::Analyze)], hidden: Vec::new() }
    }

    /// The widget's tools: safe probes, then a proposal.
    pub fn widget() -> Self {
        Self {
            tools: vec![Arc::new(run_command::RunCommand::PROBES), Arc::new(propose::ProposeCommand)],
            hidden: Vec::new(),
        }
    }

    pub(crate) fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|tool| tool.spec()).collect()
    }

    /// The names offered.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|tool| tool.name()).collect()
    }

    /// The tool called `name`: an offered one, or one that still answers to it.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.iter().chain(&self.hidden).find(|tool| tool.name() == name).map(|tool| tool.as_ref())
    }
}

/// An observation for a call the agent could not even attempt.
pub(crate) fn invalid_arguments(id: &str, message: impl Into<String>) -> Observation {
    Observation {
        call_id: id.to_owned(),
        status: ObservationStatus::InvalidArguments,
        exit_code: None,
        text: format!("[ERROR]: {}", message.into()),
        truncated_bytes: 0,
        duration_ms: 0,
    }
}

/// The `tool_result` event of a call that ran nothing (refused, invalid): the observation's
/// status and text, no exit code, no bytes, no time. One place builds it, so every such event
/// carries the same fields.
pub(crate) fn unran_result(observation: &Observation) -> AgentEvent {
    AgentEvent::ToolResult {
        id: observation.call_id.clone(),
        status: observation.status,
        exit_code: None,
        output: observation.text.clone(),
        truncated_bytes: 0,
        output_bytes: 0,
        duration_ms: 0,
    }
}

/// A required string argument, or an explanation of what is wrong for the model.
pub(crate) fn string_arg<'v>(args: &'v Value, name: &str) -> Result<&'v str, String> {
    match args.get(name) {
        Some(Value::String(text)) if !text.trim().is_empty() => Ok(text),
        Some(Value::String(_)) => Err(format!("`{name}` is empty")),
        Some(other) => Err(format!("`{name}` must be a string, got {other}")),
        None if !args.is_object() => Err(format!("arguments must be a JSON object with `{name}`, got {args}")),
        None => Err(format!("missing required argument `{name}`")),
    }
}

/// An optional string argument.
pub(crate) fn optional_string(args: &Value, name: &str) -> Option<String> {
    args.get(name).and_then(Value::as_str).map(str::to_owned).filter(|s| !s.trim().is_empty())
}
