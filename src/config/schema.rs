//! The typed schema of `config.json` (DESIGN §4). Every section and every field is optional: a
//! missing one takes the default written beside it. Values are checked by [`Config::validate`],
//! which names the offending key.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

/// The model endpoint: any OpenAI-compatible `/v1` API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmConfig {
    #[serde(default = "default_base_url")]
    pub base_url: String,
    #[serde(default = "default_model")]
    pub model: String,
    /// `null`, a missing key and `""` all mean "no key" (Ollama needs none).
    #[serde(default, deserialize_with = "empty_is_none")]
    pub api_key: Option<String>,
    /// The name of an environment variable that holds the key (read at start).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "empty_is_none")]
    pub api_key_env: Option<String>,
    /// A command run through `sh -c` at start whose first line of output is the key
    /// (`pass show openai`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "empty_is_none")]
    pub api_key_cmd: Option<String>,
    /// The account of an OS keyring entry of service `opsai` that holds the key.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "empty_is_none")]
    pub api_key_keyring: Option<String>,
    /// Seconds to wait for the first byte of a reply and for each idle gap while it streams.
    #[serde(default = "default_llm_timeout")]
    pub timeout: u64,
    /// Seconds a model on this machine (localhost) may take before the first byte of its reply: on a
    /// laptop CPU a 7B model reads a few thousand prompt tokens in one to three minutes. Idle gaps
    /// once it streams still end at `timeout`.
    #[serde(default = "default_local_first_byte_timeout")]
    pub local_first_byte_timeout: u64,
    /// Upper bound on the tokens of one reply (REPL, one-shot, explain): room for a long answer or
    /// a reasoning model's thinking.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// The same for the Ctrl-G widget, whose reply is one short command: a model that loops stops
    /// early instead of holding the prompt for minutes.
    #[serde(default = "default_widget_max_tokens")]
    pub widget_max_tokens: u32,
    /// A PEM file of CA certificates to trust for an `https://` endpoint, on top of the system's
    /// (a private CA); an absolute path or `~/…`. `SSL_CERT_FILE` replaces the system's roots instead.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "empty_is_none")]
    pub ca_file: Option<String>,
    /// Sampling temperature sent with every request; `null` leaves the endpoint's default. `0`
    /// is greedy: the same request gives the same command every time.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Nucleus sampling (`top_p`, 0 < p ≤ 1); `null` leaves the endpoint's default.
    #[serde(default)]
    pub top_p: Option<f64>,
    /// `top_k` (llama.cpp, vLLM and Ollama read it; OpenAI's own API does not): `null` sends none.
    #[serde(default)]
    pub top_k: Option<u32>,
    /// How tool calls travel: `native` (the API's `tools`), `text` (the model writes
    /// `<tool_call>{…}</tool_call>`, or only the command in the widget), or `auto`: the widget uses
    /// text, the other modes native until the endpoint shows otherwise (`llm::tool_mode`).
    #[serde(default)]
    pub tool_mode: ToolMode,
}

/// `llm.tool_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolMode {
    /// Text for the widget; native for the rest until a call comes back written as text, then
    /// text, remembered per endpoint and model.
    #[default]
    Auto,
    /// Always send the tool schemas and read structured calls.
    Native,
    /// Never send the schemas: calls and the widget's command come as text.
    Text,
}

// `validate` refuses non-finite numbers (JSON has none anyway), so equality is total.
impl Eq for LlmConfig {}

fn default_base_url() -> String {
    "http://localhost:11434/v1".to_owned()
}
fn default_model() -> String {
    "qwen2.5:7b".to_owned()
}
fn default_llm_timeout() -> u64 {
    60
}
fn default_local_first_byte_timeout() -> u64 {
    300
}
fn default_max_tokens() -> u32 {
    4096
}
fn default_widget_max_tokens() -> u32 {
    1024
}

/// Approval behaviour and the user's own policy rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SafetyConfig {
    /// Safe commands run without a prompt when a terminal is attached.
    #[serde(default = "yes")]
    pub auto_approve_safe: bool,
    /// User allow rules, kept as written; `crate::policy::PolicyConfig::from_json` reads them.
    #[serde(default)]
    pub allow: Vec<serde_json::Value>,
    /// User deny rules, kept as written.
    #[serde(default)]
    pub deny: Vec<serde_json::Value>,
    /// The OS sandbox for commands that run without a human yes (docs/sandbox.md).
    #[serde(default)]
    pub sandbox: SandboxSetting,
    /// What one sandboxed command, with everything it starts, may use.
    #[serde(default)]
    pub sandbox_limits: SandboxLimits,
}

/// `safety.sandbox_limits` (docs/sandbox.md): the resources of one sandboxed command; `0`
/// means no limit. Memory, CPU time and file size are per process (rlimits); processes count the
/// command's whole tree where a pids cgroup can be made, else the user's processes (RLIMIT_NPROC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxLimits {
    /// Processes and threads alive at once.
    #[serde(default = "default_limit_pids")]
    pub pids: u64,
    /// Memory one process may allocate (RLIMIT_DATA), in MiB.
    #[serde(default = "default_limit_memory_mb")]
    pub memory_mb: u64,
    /// CPU seconds one process may use (RLIMIT_CPU).
    #[serde(default = "default_limit_cpu_s")]
    pub cpu_s: u64,
    /// The largest file one process may write (RLIMIT_FSIZE), in MiB.
    #[serde(default = "default_limit_file_size_mb")]
    pub file_size_mb: u64,
}

fn default_limit_pids() -> u64 {
    256
}
fn default_limit_memory_mb() -> u64 {
    2048
}
fn default_limit_cpu_s() -> u64 {
    60
}
fn default_limit_file_size_mb() -> u64 {
    64
}

impl Default for SandboxLimits {
    fn default() -> Self {
        Self {
            pids: default_limit_pids(),
            memory_mb: default_limit_memory_mb(),
            cpu_s: default_limit_cpu_s(),
            file_size_mb: default_limit_file_size_mb(),
        }
    }
}

impl SandboxLimits {
    /// A shell and a pipeline need a few processes and some memory; below that nothing would run.
    pub(super) fn validate(&self) -> Result<(), Problem> {
        if self.pids != 0 {
            at_least("safety.sandbox_limits.pids", self.pids, 8)?;
        }
        if self.memory_mb != 0 {
            at_least("safety.sandbox_limits.memory_mb", self.memory_mb, 64)?;
        }
        Ok(())
    }
}

/// `safety.sandbox`: `"auto"` sandboxes every command that runs without asking (where no sandbox
/// can be applied, they ask); `"off"` runs them unsandboxed, with a warning in every process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxSetting {
    #[default]
    Auto,
    Off,
}

fn yes() -> bool {
    true
}

/// The append-only audit log (DESIGN §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditConfig {
    /// `null` means `$OPSAI_HOME/audit.log`; a leading `~/` is the user's home.
    #[serde(default, deserialize_with = "empty_is_none")]
    pub log_path: Option<String>,
    /// The log is rotated when it grows past this size.
    #[serde(default = "default_max_log_size_mb")]
    pub max_log_size_mb: u64,
    /// Rotated logs older than this are deleted.
    #[serde(default = "default_retain_days")]
    pub retain_days: u32,
}

fn default_max_log_size_mb() -> u64 {
    10
}
fn default_retain_days() -> u32 {
    90
}

/// The ReAct loop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentConfig {
    /// Model round trips per turn before it stops with a summary.
    #[serde(default = "default_max_iterations")]
    pub max_iterations: u32,
}

fn default_max_iterations() -> u32 {
    10
}

/// Command execution (DESIGN §7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecConfig {
    /// Seconds before a command gets SIGTERM (then SIGKILL 2 s later).
    #[serde(default = "default_exec_timeout")]
    pub timeout_s: u64,
    /// Characters kept from the start of a command's output for the model.
    #[serde(default = "default_capture")]
    pub capture_head: usize,
    /// Characters kept from the end of a command's output for the model.
    #[serde(default = "default_capture")]
    pub capture_tail: usize,
    /// Variables of opsai's own environment no command gets: set by `opsai serve --database` (its
    /// database password is the server's, not a command's), never read from a file.
    #[serde(skip)]
    pub hidden_env: Vec<String>,
}

fn default_exec_timeout() -> u64 {
    30
}
fn default_capture() -> usize {
    2000
}

/// The file tools (read/write/edit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilesConfig {
    /// Directories `write_file`/`edit_file` may change (`~/` allowed); empty means the home directory
    /// and the working directory.
    #[serde(default)]
    pub base_dirs: Vec<String>,
    /// Larger files are not read or written whole.
    #[serde(default = "default_max_size_mb")]
    pub max_size_mb: u64,
    /// Path prefixes no file tool touches, checked after symlinks are resolved.
    #[serde(default = "default_forbidden")]
    pub forbidden: Vec<String>,
    /// File name extensions `write_file`/`edit_file` may change (with the dot); empty allows any.
    #[serde(default = "default_write_extensions")]
    pub write_extensions: Vec<String>,
}

fn default_max_size_mb() -> u64 {
    10
}
/// `files.forbidden`'s defaults: system directories the file tools keep away from, which read-only
/// commands need to read (the sandbox keeps them read-only).
pub(super) fn default_forbidden() -> Vec<String> {
    ["/etc", "/sys", "/proc", "/dev", "/boot"].map(String::from).to_vec()
}
fn default_write_extensions() -> Vec<String> {
    // Seed 004 §安全考虑's allowlist.
    [".sh", ".py", ".js", ".txt", ".md", ".json", ".yaml", ".yml", ".conf", ".cfg"].map(String::from).to_vec()
}

/// `--ssh-host` (DESIGN §7): the system ssh client with a shared master connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshConfig {
    /// Seconds the master connection stays up after the last use (`ControlPersist`).
    #[serde(default = "default_control_persist")]
    pub control_persist_s: u64,
    /// Extra ssh options, appended to opsai's own (`["-F", "/path/ssh_config"]`, `["-J", "bastion"]`).
    #[serde(default)]
    pub options: Vec<String>,
}

fn default_control_persist() -> u64 {
    600
}

impl Default for SshConfig {
    fn default() -> Self {
        Self { control_persist_s: default_control_persist(), options: Vec::new() }
    }
}

/// The read-only Kubernetes tools (seed 002 §5): what they refuse before kubectl runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubeConfig {
    /// kubectl verbs never run (`scale`, `delete`, `exec`, …).
    #[serde(default = "default_kube_actions")]
    pub forbidden_actions: Vec<String>,
    /// Namespaces never looked into.
    #[serde(default = "default_kube_namespaces")]
    pub forbidden_namespaces: Vec<String>,
    /// Resource kinds never read (`secret`).
    #[serde(default = "default_kube_resources")]
    pub forbidden_resources: Vec<String>,
    /// The kube contexts (clusters) `opsai serve` offers and the tools may use; empty = no list
    /// (kubectl's current context, or whichever context a conversation names).
    #[serde(default)]
    pub contexts: Vec<String>,
}

fn default_kube_actions() -> Vec<String> {
    ["scale", "restart", "delete", "exec", "cordon", "uncordon", "drain", "set image"].map(String::from).to_vec()
}
fn default_kube_namespaces() -> Vec<String> {
    ["kube-system", "kube-public", "kube-node-lease"].map(String::from).to_vec()
}
fn default_kube_resources() -> Vec<String> {
    ["secret"].map(String::from).to_vec()
}

impl Default for KubeConfig {
    fn default() -> Self {
        Self {
            forbidden_actions: default_kube_actions(),
            forbidden_namespaces: default_kube_namespaces(),
            forbidden_resources: default_kube_resources(),
            contexts: Vec::new(),
        }
    }
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self {
            base_url: default_base_url(),
            model: default_model(),
            api_key: None,
            api_key_env: None,
            api_key_cmd: None,
            api_key_keyring: None,
            timeout: default_llm_timeout(),
            local_first_byte_timeout: default_local_first_byte_timeout(),
            max_tokens: default_max_tokens(),
            widget_max_tokens: default_widget_max_tokens(),
            ca_file: None,
            temperature: None,
            top_p: None,
            top_k: None,
            tool_mode: ToolMode::Auto,
        }
    }
}

impl Default for SafetyConfig {
    fn default() -> Self {
        Self {
            auto_approve_safe: yes(),
            allow: vec![],
            deny: vec![],
            sandbox: SandboxSetting::Auto,
            sandbox_limits: SandboxLimits::default(),
        }
    }
}

impl Default for AuditConfig {
    fn default() -> Self {
        Self { log_path: None, max_log_size_mb: default_max_log_size_mb(), retain_days: default_retain_days() }
    }
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self { max_iterations: default_max_iterations() }
    }
}

impl Default for ExecConfig {
    fn default() -> Self {
        Self {
            timeout_s: default_exec_timeout(),
            capture_head: default_capture(),
            capture_tail: default_capture(),
            hidden_env: Vec::new(),
        }
    }
}

impl Default for FilesConfig {
    fn default() -> Self {
        Self {
            base_dirs: Vec::new(),
            max_size_mb: default_max_size_mb(),
            forbidden: default_forbidden(),
            write_extensions: default_write_extensions(),
        }
    }
}

fn empty_is_none<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let value = Option::<String>::deserialize(deserializer)?;
    Ok(value.filter(|text| !text.trim().is_empty()))
}

/// A config-relative path: `~` and `~/…` are under `user_home`, relative paths under `opsai_home`.
pub fn expand_path(raw: &str, opsai_home: &Path, user_home: Option<&Path>) -> PathBuf {
    match (raw.strip_prefix('~'), user_home) {
        (Some(""), Some(home)) => home.to_owned(),
        (Some(rest), Some(home)) if rest.starts_with('/') => home.join(rest.trim_start_matches('/')),
        _ => opsai_home.join(raw),
    }
}

/// The first problem with a value, as (key, message).
pub(super) type Problem = (&'static str, String);

fn at_least(key: &'static str, value: u64, min: u64) -> Result<(), Problem> {
    if value < min { Err((key, format!("must be at least {min}, not {value}"))) } else { Ok(()) }
}

/// An optional number that must lie in `min..=max` when set.
fn within(key: &'static str, value: Option<f64>, min: f64, max: f64) -> Result<(), Problem> {
    match value {
        Some(value) if !(min..=max).contains(&value) => {
            let low = if min > 0.0 { "above 0".to_owned() } else { format!("from {min}") };
            Err((key, format!("must be {low} to {max}, or null for the endpoint's default; not {value}")))
        }
        _ => Ok(()),
    }
}

/// `http://` or `https://` followed by a host.
pub fn check_base_url(url: &str) -> Result<(), String> {
    const EXAMPLE: &str = "for example http://localhost:11434/v1";
    let not_http = || format!("`{url}` is not an http:// or https:// URL ({EXAMPLE})");
    let rest = url.strip_prefix("http://").or_else(|| url.strip_prefix("https://")).ok_or_else(not_http)?;
    if rest.is_empty() || rest.starts_with('/') || url.contains(char::is_whitespace) {
        return Err(not_http());
    }
    // Two URLs run together (typing after a pre-filled one) parse as one with a strange path.
    if rest.contains("://") {
        return Err(format!("`{url}` holds a second `://` after the host: type one URL ({EXAMPLE})"));
    }
    let parsed = reqwest::Url::parse(url).map_err(|err| format!("`{url}` is not a valid URL: {err} ({EXAMPLE})"))?;
    match parsed.host_str() {
        Some(host) if !host.is_empty() => Ok(()),
        _ => Err(format!("`{url}` names no host ({EXAMPLE})")),
    }
}

impl LlmConfig {
    pub(super) fn validate(&self) -> Result<(), Problem> {
        check_base_url(&self.base_url).map_err(|message| ("llm.base_url", message))?;
        if self.model.trim().is_empty() {
            return Err(("llm.model", "must name a model, such as qwen2.5:7b".to_owned()));
        }
        at_least("llm.timeout", self.timeout, 1)?;
        at_least("llm.local_first_byte_timeout", self.local_first_byte_timeout, 1)?;
        at_least("llm.max_tokens", self.max_tokens.into(), 1)?;
        at_least("llm.widget_max_tokens", self.widget_max_tokens.into(), 1)?;
        within("llm.temperature", self.temperature, 0.0, 2.0)?;
        within("llm.top_p", self.top_p, f64::MIN_POSITIVE, 1.0)?;
        if self.top_k == Some(0) {
            return Err(("llm.top_k", "must be at least 1, or null for the endpoint's default".to_owned()));
        }
        if let Some(path) = &self.ca_file
            && !path.starts_with('/')
            && !path.starts_with("~/")
        {
            return Err(("llm.ca_file", format!("must be an absolute path or start with ~/, not `{path}`")));
        }
        self.validate_key_sources()
    }

    /// One place for the key: two sources would leave the user guessing which one is sent.
    fn validate_key_sources(&self) -> Result<(), Problem> {
        if let Some(name) = &self.api_key_env
            && (name.starts_with(|c: char| c.is_ascii_digit())
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err((
                "llm.api_key_env",
                format!(
                    "must be the name of an environment variable (letters, digits, _), such as OPENAI_API_KEY, not `{name}`"
                ),
            ));
        }
        let set: Vec<&'static str> = [
            ("llm.api_key", self.api_key.is_some()),
            ("llm.api_key_env", self.api_key_env.is_some()),
            ("llm.api_key_cmd", self.api_key_cmd.is_some()),
            ("llm.api_key_keyring", self.api_key_keyring.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, is_set)| is_set.then_some(key))
        .collect();
        match set[..] {
            [first, second, ..] => Err((
                second,
                format!("is set together with `{first}`: the API key must come from one place; remove one of them"),
            )),
            _ => Ok(()),
        }
    }

    /// `llm.ca_file` with `~/` expanded (from `$HOME`).
    pub(crate) fn ca_path(&self) -> Option<PathBuf> {
        let raw = self.ca_file.as_deref()?;
        match (raw.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => Some(PathBuf::from(home).join(rest)),
            _ => Some(PathBuf::from(raw)),
        }
    }
}

pub(super) fn validate_sections(
    llm: &LlmConfig,
    audit: &AuditConfig,
    agent: &AgentConfig,
    exec: &ExecConfig,
    files: &FilesConfig,
) -> Result<(), Problem> {
    llm.validate()?;
    at_least("audit.max_log_size_mb", audit.max_log_size_mb, 1)?;
    at_least("audit.retain_days", audit.retain_days.into(), 1)?;
    at_least("agent.max_iterations", agent.max_iterations.into(), 1)?;
    at_least("exec.timeout_s", exec.timeout_s, 1)?;
    at_least("files.max_size_mb", files.max_size_mb, 1)
}
