//! The seam builder: what every entry mode (and `config set-llm`'s test request) builds its model
//! client, executor, file seam, approver, audit log, redactor and policy with ([`Parts`]), the
//! configuration they come from ([`load_config`]), and the recorder that saves a conversation
//! ([`conversation`], over [`session_store`]). Nothing here prints or knows the command line.

pub mod conversation;

use std::sync::Arc;
use std::time::Duration;

use crate::agent::LoopSettings;
use crate::approval::{Approver, NoApprover};
use crate::config::{Config, LlmConfig, LlmField};
use crate::context::EnvContext;
use crate::exec::Executor;
use crate::exec::fs::{FileSystem, LocalFs};
use crate::exec::pty::PtyExecutor;
use crate::exec::ssh::{SshError, SshExecutor, SshFs, SshTransport};
use crate::home::Paths;
use crate::llm::LlmError;
use crate::llm::openai::OpenAiClient;
use crate::policy::PolicyConfig;
use crate::redact::Redactor;
use crate::store::audit::AuditLog;
use crate::store::backups::Backups;
use crate::store::sessions::{SessionError, SessionStore};
use crate::tools::Interrupts;
use crate::tools::{RunMode, Services, ToolsConfig};
use crate::ui::approve::TerminalApprover;

/// What the command line may change in the model's configuration for one run.
#[derive(Debug, Clone, Default)]
pub struct LlmOverrides {
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
}

/// The configuration with the environment and the overrides (`--model`, `--base-url`) applied,
/// and the API key fetched from the source the file names (`llm.api_key_cmd` runs here). Creates
/// the file with the defaults on first run.
pub(crate) fn load_config(paths: &Paths, overrides: &LlmOverrides) -> anyhow::Result<Config> {
    let (config, _) = Config::load_or_create(&paths.home)?;
    create_dirs(paths)?;
    with_key(overridden(config, overrides)?)
}

/// [`load_config`] that never creates or writes the file (`opsai doctor` only looks).
pub(crate) fn load_config_readonly(paths: &Paths, overrides: &LlmOverrides) -> anyhow::Result<Config> {
    with_key(overridden(Config::load(&paths.home)?, overrides)?)
}

/// [`load_config`] for what never talks to the model (`undo`, `sandbox`): no key is fetched, so no
/// key command runs.
pub(crate) fn load_config_without_key(paths: &Paths) -> anyhow::Result<Config> {
    let (config, _) = Config::load_or_create(&paths.home)?;
    create_dirs(paths)?;
    overridden(config, &LlmOverrides::default())
}

/// The data and state directories, before a store or log in them is opened.
fn create_dirs(paths: &Paths) -> anyhow::Result<()> {
    paths.create_dirs().map_err(|err| {
        anyhow::anyhow!(
            "cannot create {} or {}: {err}; set OPSAI_HOME to a directory opsai may use",
            paths.data_dir().display(),
            paths.state_dir().display()
        )
    })
}

fn with_key(mut config: Config) -> anyhow::Result<Config> {
    config.resolve_api_key(&crate::config::key_source::process_env)?;
    Ok(config)
}

fn overridden(mut config: Config, overrides: &LlmOverrides) -> anyhow::Result<Config> {
    config.apply_process_env()?;
    if let Some(model) = &overrides.model {
        config.set_override(LlmField::Model, model.clone(), "--model");
    }
    if let Some(url) = &overrides.base_url {
        config.set_override(LlmField::BaseUrl, url.trim_end_matches('/').to_owned(), "--base-url");
    }
    Ok(config)
}

/// The model client for `llm`: the one place a client is made, so every mode talks to the model alike.
/// Both timeouts apply: `llm.timeout` between bytes, `llm.local_first_byte_timeout` before the first
/// one from a model on this machine (reading a long prompt on a CPU). `llm.ca_file` is trusted too.
pub(crate) fn model_client(llm: &LlmConfig) -> Result<OpenAiClient, LlmError> {
    let timeout = Duration::from_secs(llm.timeout);
    let client = OpenAiClient::trusting(llm.base_url.clone(), llm.api_key.clone(), timeout, llm.ca_path().as_deref())?;
    let sampling = crate::llm::Sampling { temperature: llm.temperature, top_p: llm.top_p, top_k: llm.top_k };
    Ok(client.with_local_first_byte(Duration::from_secs(llm.local_first_byte_timeout)).with_sampling(sampling))
}

/// `llm.tool_mode` for the client: `auto` remembers what it finds under `$OPSAI_HOME/cache/`.
pub(crate) fn tool_setting(llm: &LlmConfig, paths: &Paths) -> crate::llm::tool_mode::ToolSetting {
    use crate::config::ToolMode;
    use crate::llm::tool_mode::{CACHE_FILE, ToolCalls, ToolSetting};
    match llm.tool_mode {
        ToolMode::Native => ToolSetting::Fixed(ToolCalls::Native),
        ToolMode::Text => ToolSetting::Fixed(ToolCalls::Text),
        ToolMode::Auto => ToolSetting::Auto(Some(paths.cache_dir().join(CACHE_FILE))),
    }
}

/// The audit log as configured.
pub(crate) fn audit_log(config: &Config, paths: &Paths, redactor: Arc<Redactor>) -> AuditLog {
    AuditLog::new(
        config.audit_log_path(paths.state_dir(), paths.user_home.as_deref()),
        config.audit.max_log_size_mb,
        u64::from(config.audit.retain_days),
        redactor,
    )
}

/// The prompt's environment layer for a host reached through ssh, with what contains the
/// commands that run there without asking (the model should know `ps` sees only itself there).
pub(crate) fn remote_environment(
    host: &str,
    context: &EnvContext,
    sandbox: Option<&crate::exec::ssh::RemoteSandbox>,
) -> String {
    let mut layer = format!(
        "{}- Remote: every command and file tool runs on `{host}` over ssh, not on the user's own machine\n",
        context.render()
    );
    if let Some(sandbox) = sandbox {
        layer.push_str(&format!("- Sandbox there for commands that run without asking: {}\n", sandbox.describe()));
    }
    layer
}

/// The session store (the recorder's home), next to the other state in `$OPSAI_HOME`.
pub(crate) fn session_store(paths: &Paths, redactor: Arc<Redactor>) -> Result<SessionStore, SessionError> {
    // A missing directory is reported by the open below.
    let _ = paths.create_dirs();
    SessionStore::open(&paths.sessions_db(), redactor)
}

/// Who answers the approval prompts of the turns a [`Parts`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Approvals {
    /// A person on `/dev/tty` when there is one (and `OPSAI_NONINTERACTIVE` is not set), else nobody.
    Terminal,
    /// Nobody (the widget: the shell's line is the only output, the user's Enter the approval).
    Nobody,
}

/// The real implementation of every seam a turn uses.
pub(crate) struct Parts {
    pub config: Config,
    pub redactor: Arc<Redactor>,
    pub audit: AuditLog,
    pub policy: PolicyConfig,
    pub model: OpenAiClient,
    /// Runs commands here, or on `host` through ssh.
    pub executor: Box<dyn Executor>,
    /// Files here, or on `host` through ssh.
    pub files: Box<dyn FileSystem>,
    pub backups: Backups,
    /// `--ssh-host`/`/host`: where commands and files are; `None` is this machine.
    pub host: Option<String>,
    /// What contains auto-run commands on `host` (probed when it was set).
    pub remote_sandbox: Option<crate::exec::ssh::RemoteSandbox>,
    pub approver: Box<dyn Approver>,
    /// `--hosts`/`/hosts`: the fleet every command runs on (instead of `host` or this machine).
    pub fleet: Option<crate::tools::fleet::FleetTarget>,
    /// `--contexts`: the kube contexts every kube tool call runs on (empty: kubectl's current one).
    pub kube_contexts: Vec<String>,
}

impl Parts {
    pub fn build(paths: &Paths, config: Config, approvals: Approvals) -> anyhow::Result<Self> {
        // Commands sandboxed from now on deny what this configuration says, not a second reading of it.
        crate::sandbox::configure(crate::sandbox::Settings::new(&config, paths));
        let redactor = Arc::new(Redactor::from_process_env_and_key(config.llm.api_key.as_deref()));
        let audit = audit_log(&config, paths, redactor.clone());
        let policy = config.policy()?;
        let model = model_client(&config.llm)?.with_tool_setting(tool_setting(&config.llm, paths));
        let executor = Box::new(
            PtyExecutor::new()
                .with_capture(config.exec.capture_head, config.exec.capture_tail)
                .without_env(&config.exec.hidden_env),
        );
        let backups = Backups::new(paths.backups_dir());
        // OPSAI_NONINTERACTIVE=1 behaves as if there were no terminal (docs/usage.md): it
        // can only take approvals away.
        let forced_off = std::env::var_os("OPSAI_NONINTERACTIVE").is_some_and(|v| !v.is_empty() && v != "0");
        let terminal = match approvals {
            Approvals::Terminal if !forced_off => TerminalApprover::open(),
            Approvals::Terminal | Approvals::Nobody => None,
        };
        let approver: Box<dyn Approver> = match terminal {
            Some(terminal) => Box::new(terminal),
            None => Box::new(NoApprover),
        };
        Ok(Self {
            config,
            redactor,
            audit,
            policy,
            model,
            executor,
            files: Box::new(LocalFs),
            backups,
            host: None,
            remote_sandbox: None,
            approver,
            fleet: None,
            kube_contexts: Vec::new(),
        })
    }

    /// Moves commands and files to `host` through ssh (`None`: back to this machine). Starts the
    /// master connection and collects the host's environment in one round trip; returns it for
    /// the prompt (its working directory is the remote login directory).
    pub(crate) async fn set_host(&mut self, paths: &Paths, host: Option<&str>) -> Result<Option<EnvContext>, SshError> {
        let local = PtyExecutor::new()
            .with_capture(self.config.exec.capture_head, self.config.exec.capture_tail)
            .without_env(&self.config.exec.hidden_env);
        let Some(host) = host else {
            self.executor = Box::new(local);
            self.files = Box::new(LocalFs);
            self.host = None;
            self.remote_sandbox = None;
            return Ok(None);
        };
        let ssh = &self.config.ssh;
        let transport =
            SshTransport::open(host, &paths.ssh_control_dir(), ssh.control_persist_s, ssh.options.clone()).await?;
        // The environment and the host's sandbox, in two calls at once over the master connection.
        let script = crate::context::remote::script();
        let (output, sandbox) =
            tokio::join!(transport.call(&script, None), crate::exec::ssh::sandbox::probe(&transport));
        let output = output.map_err(|error| SshError::Connect { host: host.to_owned(), message: error.to_string() })?;
        let context = crate::context::remote::parse(&String::from_utf8_lossy(&output.stdout));
        self.remote_sandbox = Some(sandbox.clone());
        self.executor = Box::new(SshExecutor::new(transport.clone(), local, sandbox));
        self.files = Box::new(SshFs::new(transport, context.home.clone()));
        self.host = Some(host.to_owned());
        Ok(Some(context))
    }

    /// The services of one turn; `interrupts` is fresh per turn (a cancelled turn stays cancelled).
    pub fn services<'a>(&'a self, mode: RunMode, session: String, interrupts: &'a Interrupts) -> Services<'a> {
        Services {
            executor: self.executor.as_ref(),
            approver: self.approver.as_ref(),
            audit: &self.audit,
            redactor: &self.redactor,
            policy: &self.policy,
            mode,
            session,
            exec_timeout: Duration::from_secs(self.config.exec.timeout_s),
            interrupts,
            files: self.files.as_ref(),
            host: self.host.as_deref(),
            user: None,
            fleet: self.fleet.as_ref(),
        }
    }

    /// The agent's tools' own settings, offering `offer`'s optional families (usually
    /// [`crate::tools::Offer::for_context`]).
    pub(crate) fn tools_config(&self, offer: crate::tools::Offer) -> ToolsConfig {
        // `--contexts` asked for the kube tools: offered even when this PATH has no kubectl.
        let offer = crate::tools::Offer { kube: offer.kube || !self.kube_contexts.is_empty(), ..offer };
        ToolsConfig {
            files: self.config.files.clone(),
            backups: self.backups.clone(),
            kube: self.config.kube.clone(),
            kube_context: None,
            kube_contexts: self.kube_contexts.clone(),
            offer,
        }
    }

    /// The run mode the configuration and these flags give.
    pub fn mode(&self, approve_medium: bool, dry_run: bool) -> RunMode {
        RunMode { auto_approve_safe: self.config.safety.auto_approve_safe, approve_medium, dry_run, probe_limit: None }
    }

    /// Loop settings for `model`, with the environment context (redacted: it leaves the machine).
    pub fn settings(&self, model: &str, environment: &str) -> LoopSettings {
        LoopSettings {
            model: model.to_owned(),
            max_iterations: self.config.agent.max_iterations,
            max_tokens: Some(self.config.llm.max_tokens),
            environment: self.redactor.redact(environment),
            prompt: crate::agent::prompt::PromptMode::Agent,
            outputs_shown: true,
        }
    }
}
