//! The command-line contract (DESIGN §3), as clap derive types. Parsing only: no behaviour here.

use clap::{Args, Parser, Subcommand};

/// opsai — turns intent into the right shell command, safely.
///
/// `opsai "find log files over 100 MB under /var/log"` plans, shows each command with its risk,
/// asks before anything that is not read-only, runs it, and answers.
#[derive(Debug, Parser)]
#[command(name = "opsai", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

/// Options of a one-shot agent run.
#[derive(Debug, Args, Default, Clone)]
pub struct RunArgs {
    /// The task, in plain language (quote it, or give it as several words).
    #[arg(value_name = "TASK", trailing_var_arg = true)]
    pub task: Vec<String>,
    /// Approve medium-risk commands without asking (high always asks; refused with no terminal).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Plan only: print each action and its risk, execute nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print only the final answer.
    #[arg(short, long, conflicts_with = "json")]
    pub quiet: bool,
    /// Print agent events as JSON lines on stdout.
    #[arg(long)]
    pub json: bool,
    /// The model to use (overrides the config and OPSAI_MODEL).
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// The OpenAI-compatible endpoint (overrides the config and OPSAI_BASE_URL).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Continue the last conversation in this directory (else the last one).
    #[arg(short = 'c', long = "continue", conflicts_with = "session")]
    pub continue_last: bool,
    /// Continue the saved conversation with this id (`c12` or `12`; see `opsai sessions list`).
    #[arg(long, value_name = "ID", value_parser = crate::store::sessions::parse_id)]
    pub session: Option<i64>,
    /// Run commands and file tools on this host through the system ssh (`~/.ssh/config` applies).
    #[arg(long, value_name = "HOST", conflicts_with = "hosts")]
    pub ssh_host: Option<String>,
    #[command(flatten)]
    pub fleet: FleetArgs,
}

/// A fleet run (docs/fleet.md): every command on the hosts a pattern selects, in parallel. The
/// options other than `--hosts` also serve the REPL's `/hosts`, so they do not require it.
#[derive(Debug, Args, Clone, Default)]
pub struct FleetArgs {
    /// Run every command on the hosts this Ansible pattern selects (`web-*`, `@prod`, `db:&eu`).
    #[arg(long, value_name = "PATTERN")]
    pub hosts: Option<String>,
    #[command(flatten)]
    pub options: FleetOptions,
    /// Run the Kubernetes tools on every kubeconfig context these globs select (`prod-*`, `a,b`).
    #[arg(long, value_name = "PATTERN")]
    pub contexts: Option<String>,
}

/// Where a fleet's hosts are read from and how a command rolls out on them: the same for
/// `--hosts`, the REPL's `/hosts` and `opsai serve`'s host sets.
#[derive(Debug, Args, Clone)]
pub struct FleetOptions {
    /// An Ansible inventory file or directory (default: ANSIBLE_INVENTORY).
    #[arg(long, value_name = "FILE|DIR")]
    pub inventory: Option<String>,
    /// A file of host names, one per line, after the inventory and ~/.ssh/config.
    #[arg(long, value_name = "FILE")]
    pub hosts_file: Option<std::path::PathBuf>,
    /// Hosts running at once (1-1024).
    #[arg(long, value_name = "N", default_value_t = crate::fleet::fanout::DEFAULT_FORKS,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new()
              .range(1..=crate::fleet::fanout::MAX_FORKS as u64))]
    pub forks: usize,
    /// A change goes on after its canary in batches of N hosts (default: the rest at once).
    #[arg(long, value_name = "N")]
    pub serial: Option<usize>,
    /// Stop a change once more than N hosts (or N% of them) have failed.
    #[arg(long, value_name = "N|N%", default_value = "0",
          value_parser = parse_max_fail)]
    pub max_fail: crate::fleet::fanout::MaxFail,
}

impl FleetOptions {
    /// Whether an option was given that only means something with a host pattern.
    pub fn only_for_a_fleet(&self) -> bool {
        self.inventory.is_some() || self.hosts_file.is_some() || self.serial.is_some()
    }
}

impl Default for FleetOptions {
    fn default() -> Self {
        Self {
            inventory: None,
            hosts_file: None,
            forks: crate::fleet::fanout::DEFAULT_FORKS,
            serial: None,
            max_fail: crate::fleet::fanout::MaxFail::Count(0),
        }
    }
}

fn parse_max_fail(text: &str) -> Result<crate::fleet::fanout::MaxFail, String> {
    crate::fleet::fanout::MaxFail::parse(text)
        .ok_or_else(|| format!("`{text}` is not a count or a percentage (0-100%)"))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect the command risk policy; nothing runs.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Show or change the configuration (`opsai config path` says where it is).
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Read the audit log: one line per action, approved or refused.
    Audit(AuditArgs),
    /// List, show or delete saved conversations.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// Print the Ctrl-G widget for a shell: `eval "$(opsai init zsh)"`, `opsai init fish | source`.
    Init(InitArgs),
    /// One widget request: print the replacement for the shell's line (the shell scripts call this).
    Widget(WidgetArgs),
    /// Print shell completions for opsai.
    Completions(CompletionsArgs),
    /// Print the man page, or write every page into a directory (packaging runs this).
    #[command(hide = true)]
    Man(ManArgs),
    /// Explain piped output (`cmd | opsai explain [QUESTION]`), a command, or an ops object.
    Explain(ExplainArgs),
    /// The cache of generated analyze templates ($OPSAI_HOME/cache/analyze_templates.json).
    #[command(subcommand)]
    Cache(CacheCommand),
    /// Restore the file the last write_file/edit_file changed, from its backup.
    Undo(UndoArgs),
    /// Run one command in the sandbox that commands running without a human yes get (read-only
    /// filesystem without secrets, no network), or show whether it works here (`--status`).
    Sandbox(SandboxArgs),
    /// Check the model endpoint step by step (DNS, TCP, TLS, proxy, HTTP, the model list, a streamed
    /// chat, a tool call, speed) and say what to fix; exit 1 when a step fails.
    Doctor(DoctorArgs),
    /// The web chat for a team: serve the page and its API (`opsai serve`), or manage its users
    /// (`opsai serve user add NAME --role viewer|operator`).
    Serve(Box<ServeArgs>),
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    pub command: Option<ServeCommand>,
    /// The address to listen on (port 0: any free port). Anything but loopback needs users
    /// (--users, or users in --database), single sign-on or --allow-remote.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8765")]
    pub listen: String,
    /// Log in with the users of this file (`opsai serve user add`) instead of one access token.
    #[arg(long, value_name = "FILE")]
    pub users: Option<std::path::PathBuf>,
    /// Listen on a non-loopback address in token mode (put a TLS reverse proxy in front).
    #[arg(long)]
    pub allow_remote: bool,
    /// Seconds an approval waits for an operator in the browser before it counts as a refusal.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub approval_timeout: u64,
    /// The name browsers reach this server by through a reverse proxy (`Host` header, NAME or
    /// NAME:PORT); repeatable. Without it only IP addresses and localhost are accepted.
    #[arg(long, value_name = "NAME[:PORT]")]
    pub public_host: Vec<String>,
    /// Offer this host set (an Ansible pattern: `web-*`, `@prod`) to new conversations, whose
    /// commands then run on every host it selects; repeatable (docs/serve.md, "Host sets").
    #[arg(long = "hosts", value_name = "PATTERN")]
    pub host_sets: Vec<String>,
    /// Keep conversations, users and audit in this PostgreSQL database instead of
    /// `$OPSAI_HOME/sessions.db`, so several replicas behind one address serve the same team
    /// (docs/serve.md, "Postgres and replicas"). Best given in OPSAI_DATABASE_URL, with the password
    /// in PGPASSWORD or ~/.pgpass: the command line is visible to other users.
    #[arg(long, value_name = "URL", env = "OPSAI_DATABASE_URL", hide_env_values = true)]
    pub database: Option<String>,
    #[command(flatten)]
    pub fleet: FleetOptions,
    #[command(flatten)]
    pub limits: ServeLimits,
    #[command(flatten)]
    pub sso: SsoArgs,
}

/// Single sign-on with OpenID Connect (docs/serve.md "Single sign-on"), beside the password users.
/// The client secret, when the client has one, comes from OPSAI_OIDC_CLIENT_SECRET.
#[derive(Debug, Clone, Args)]
pub struct SsoArgs {
    /// Log in with this OpenID Connect issuer (its discovery document is read at start).
    #[arg(long, value_name = "URL", requires = "oidc_client_id")]
    pub oidc_issuer: Option<String>,
    /// The client id registered at the issuer for this server.
    #[arg(long, value_name = "ID", requires = "oidc_issuer")]
    pub oidc_client_id: Option<String>,
    /// The redirect URL registered at the issuer [default: http://ADDRESS/api/v2/auth/sso/callback,
    /// ADDRESS the printed one; behind a TLS proxy give the https one].
    #[arg(long, value_name = "URL", requires = "oidc_issuer")]
    pub oidc_redirect_url: Option<String>,
    /// The ID token claim holding the user's groups or roles.
    #[arg(long, value_name = "CLAIM", default_value = "groups")]
    pub oidc_role_claim: String,
    /// A claim value that makes an operator; repeatable.
    #[arg(long, value_name = "VALUE")]
    pub oidc_operator: Vec<String>,
    /// A claim value that makes a viewer; repeatable; `*` lets in as a viewer everyone the issuer
    /// lets in. One of --oidc-operator or --oidc-viewer is required: nobody gets in by default.
    #[arg(long, value_name = "VALUE")]
    pub oidc_viewer: Vec<String>,
    /// A scope to ask for beyond `openid profile email` (`groups` for a provider that puts the
    /// groups claim behind one); repeatable.
    #[arg(long, value_name = "SCOPE")]
    pub oidc_scope: Vec<String>,
}

/// What bounds `opsai serve` under hostile traffic (docs/serve.md "Limits").
#[derive(Debug, Clone, Args)]
pub struct ServeLimits {
    /// Seconds a connection gets to send a request's headers (also how long an idle keep-alive
    /// connection is kept).
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Seconds a request gets to send its whole body.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout: u64,
    /// Seconds a connection may go without a byte either way while a request is served (event
    /// streams send a keep-alive every 15 s).
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(16..=86400))]
    pub idle_timeout: u64,
    /// Connections open at once, in all (fewer when the open-files limit is lower).
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub max_connections: u64,
    /// Connections open at once from one client address [default: 256, and at most half of
    /// --max-connections]. Behind a reverse proxy every client has the proxy's address: set it to
    /// --max-connections there.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub max_connections_per_ip: Option<u64>,
    /// Turns running at once on this server, for all users together (each user has at most 4).
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_turns: u64,
    /// Conversations one user may keep (then creating one is refused until some are deleted).
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1000000))]
    pub max_conversations: u64,
    /// A reverse proxy whose `X-Forwarded-For` names the client (repeatable): the login and token
    /// limits then count each client's own address, not the proxy's.
    #[arg(long, value_name = "IP")]
    pub trusted_proxy: Vec<std::net::IpAddr>,
    /// Mark the session cookie `Secure` always (it is anyway on a request that came over https
    /// through a --public-host proxy, `X-Forwarded-Proto: https`).
    #[arg(long)]
    pub secure_cookies: bool,
}

#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// Add, remove or list the users who may log in to `opsai serve --users FILE` (or, with
    /// --database URL, to every `opsai serve --database URL`), or import a users file there.
    #[command(subcommand)]
    User(UserCommand),
}

/// What a user of `opsai serve` may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServeRole {
    /// Read-only tools run; anything above Safe waits for an operator's approval.
    Viewer,
    /// May also approve Medium and High commands in the browser, anyone's.
    Operator,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a user, or change an existing user's password and role. The password is asked twice on
    /// a terminal, or read from the first line of standard input.
    Add {
        /// Letters, digits, `.`, `_` and `-`, at most 64.
        name: String,
        #[arg(long, value_enum)]
        role: ServeRole,
        /// The users file (default `$OPSAI_HOME/serve-users.json`); wins over --database.
        #[arg(long, value_name = "FILE")]
        users: Option<std::path::PathBuf>,
        #[command(flatten)]
        database: UsersDatabase,
    },
    /// Remove a user.
    Remove {
        name: String,
        /// The users file (default `$OPSAI_HOME/serve-users.json`); wins over --database.
        #[arg(long, value_name = "FILE")]
        users: Option<std::path::PathBuf>,
        #[command(flatten)]
        database: UsersDatabase,
    },
    /// List the users and their roles.
    List {
        /// The users file (default `$OPSAI_HOME/serve-users.json`); wins over --database.
        #[arg(long, value_name = "FILE")]
        users: Option<std::path::PathBuf>,
        #[command(flatten)]
        database: UsersDatabase,
    },
    /// Copy the users of a users file (names, roles, password hashes) into the database's users
    /// table: a user already there gets the file's role and password.
    Import {
        /// The users file to copy (default `$OPSAI_HOME/serve-users.json`).
        #[arg(long, value_name = "FILE")]
        users: Option<std::path::PathBuf>,
        #[command(flatten)]
        database: UsersDatabase,
    },
}

/// `--database URL` of `opsai serve user …`: the users table of that PostgreSQL database instead
/// of a users file.
#[derive(Debug, Clone, Args)]
pub struct UsersDatabase {
    /// Manage the users in this PostgreSQL database (the ones `opsai serve --database URL` logs
    /// in). Best given in OPSAI_DATABASE_URL, the password in PGPASSWORD or ~/.pgpass.
    #[arg(long = "database", value_name = "URL", env = "OPSAI_DATABASE_URL", hide_env_values = true)]
    pub url: Option<String>,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The model to check (overrides the config and OPSAI_MODEL).
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// The OpenAI-compatible endpoint to check (overrides the config and OPSAI_BASE_URL).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}

#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// Print whether the sandbox can be applied on this machine, and why not; exit 1 when it cannot.
    #[arg(long, conflicts_with = "command")]
    pub status: bool,
    /// With --status: say which sandbox applies on this SSH host (opsai's own, bubblewrap, or none).
    #[arg(long, value_name = "HOST", requires = "status", conflicts_with = "command")]
    pub ssh_host: Option<String>,
    /// Benchmark: run CMD RUNS times plainly and RUNS times in the sandbox, alternating, from this
    /// one process (as the agent runs its commands), and print the medians (bench/sandbox.py).
    #[arg(long, value_name = "RUNS", hide = true, conflicts_with = "status")]
    pub bench: Option<u32>,
    /// The command and its arguments, run directly (no shell: use `sh -c '…'` for a command line);
    /// its exit code is opsai's.
    #[arg(value_name = "CMD", trailing_var_arg = true, allow_hyphen_values = true, required_unless_present = "status")]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
pub struct UndoArgs {
    /// Undo the last change of this session (the SESSION field of the audit log: `c12`, or `12`)
    /// instead of the most recent change of any session.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Restore even when the file changed after opsai wrote it (those later changes are lost).
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// The cached templates: type, commands, when created, how often used.
    List,
    /// Delete the cached templates (built-in templates are not affected).
    Clear,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// With input piped in: a question that steers the explanation. Otherwise: the command or the
    /// object (container, port, pid, file, service) to explain.
    #[arg(value_name = "TEXT", trailing_var_arg = true, allow_hyphen_values = true)]
    pub text: Vec<String>,
    /// Print only the explanation.
    #[arg(short, long)]
    pub quiet: bool,
    /// The model to use (overrides the config and OPSAI_MODEL).
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
}

/// The shells with a Ctrl-G widget and completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Zsh,
    Bash,
    Fish,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The shell to print the widget for.
    pub shell: Shell,
    /// The key to bind (default Ctrl-G). Caret notation works in every shell (`^X^G`); the shell's
    /// own notation works too (bash `\C-x\C-g`, fish `\cx\cg`).
    #[arg(long, env = "OPSAI_WIDGET_KEY", value_name = "KEY")]
    pub key: Option<String>,
    /// Define the widget without binding a key (bind `opsai-widget` / `__opsai_widget` yourself).
    #[arg(long)]
    pub no_bind: bool,
    /// The opsai the widget runs (default: this binary's absolute path). Packages write the scripts
    /// once with the installed path (`--bin /usr/bin/opsai`); `--bin opsai` looks it up in PATH.
    #[arg(long, value_name = "PATH")]
    pub bin: Option<String>,
}

/// What the widget sends; each also comes from its `OPSAI_*` variable (argv is visible in `ps`).
#[derive(Debug, Args)]
pub struct WidgetArgs {
    /// The shell that called: zsh, bash or fish.
    #[arg(long, env = "OPSAI_SHELL")]
    pub shell: Option<String>,
    /// The line being edited (prefer the OPSAI_BUFFER variable: argv is world-readable).
    #[arg(long, env = "OPSAI_BUFFER", hide_env_values = true, allow_hyphen_values = true)]
    pub buffer: Option<String>,
    /// The cursor position in characters.
    #[arg(long, env = "OPSAI_CURSOR")]
    pub cursor: Option<usize>,
    /// The exit status of the last command the shell ran.
    #[arg(long, env = "OPSAI_LAST_STATUS")]
    pub status: Option<i32>,
    /// The shell's version (`5.9`).
    #[arg(long, env = "OPSAI_SHELL_VERSION")]
    pub shell_version: Option<String>,
    /// The line editor's keymap: zsh `emacs`/`viins`/`vicmd`, bash `emacs`/`vi`, fish
    /// `emacs`/`default`/`insert`/`visual`.
    #[arg(long, env = "OPSAI_KEYMAP")]
    pub keymap: Option<String>,
    /// The model to use (overrides the config and OPSAI_MODEL).
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write opsai.1 and one page per subcommand (opsai-config.1, …) here, and print their paths;
    /// without it, print opsai.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to print completions for.
    pub shell: Shell,
}

#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// The saved conversations, newest first.
    List {
        /// How many to show.
        #[arg(short = 'n', long, default_value_t = 50)]
        limit: usize,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// A conversation's messages.
    Show {
        /// The id from `opsai sessions list` (`c12` or `12`).
        #[arg(value_parser = crate::store::sessions::parse_id)]
        id: i64,
    },
    /// Delete a conversation and its messages.
    Delete {
        /// The id from `opsai sessions list` (`c12` or `12`).
        #[arg(value_parser = crate::store::sessions::parse_id)]
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Show how risky a shell command is and why (a command starting with `-` goes after `--`).
    Check(PolicyCheckArgs),
}

#[derive(Debug, Args)]
pub struct PolicyCheckArgs {
    /// Print the assessment as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// The command line to assess, exactly as it would be typed (quote it). Words after the first
    /// are taken as part of it, so `opsai policy check rm -rf /` works unquoted.
    #[arg(required = true, num_args = 1.., value_name = "COMMAND", trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the configuration (the API key masked) and which values come from the environment.
    Show,
    /// Print the path of the configuration file (`--all`: every directory opsai uses).
    Path(ConfigPathArgs),
    /// Choose a model provider interactively, test the connection, and save; with flags, set it
    /// without asking anything (`--base-url URL --model M --api-key-env VAR`).
    SetLlm(SetLlmArgs),
    /// Set one key (`opsai config set exec.timeout_s 60`), checked as the file would be.
    Set(ConfigSetArgs),
    /// Print one key's effective value on stdout, and on stderr where it comes from.
    Get(ConfigKeyArgs),
    /// Remove one key from the file, so its default applies again.
    Unset(ConfigKeyArgs),
}

#[derive(Debug, Args)]
pub struct ConfigPathArgs {
    /// Print the layout: the config, data, state and cache directories and how they were chosen.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct ConfigSetArgs {
    /// A dotted key, such as `llm.model` or `safety.sandbox_limits.memory_mb`.
    #[arg(value_name = "KEY", value_parser = crate::config::keys::KeyParser, hide_possible_values = true)]
    pub key: String,
    /// The value: text for names, URLs and commands; JSON for numbers, true/false, null and lists.
    #[arg(value_name = "VALUE", allow_hyphen_values = true)]
    pub value: String,
}

#[derive(Debug, Args)]
pub struct ConfigKeyArgs {
    /// A dotted key, such as `llm.model`.
    #[arg(value_name = "KEY", value_parser = crate::config::keys::KeyParser, hide_possible_values = true)]
    pub key: String,
}

/// `config set-llm` flags: any of them makes it scripted (nothing asked, no terminal needed).
#[derive(Debug, Args, Default, Clone)]
pub struct SetLlmArgs {
    /// The OpenAI-compatible endpoint, such as https://api.openai.com/v1.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The model name.
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Take the API key from this environment variable at start (saved as llm.api_key_env).
    #[arg(long, value_name = "VAR", group = "key_source")]
    pub api_key_env: Option<String>,
    /// Take the API key from this command's first line of output, run through `sh -c` at start
    /// (saved as llm.api_key_cmd), such as 'pass show openai'.
    #[arg(long, value_name = "CMD", group = "key_source")]
    pub api_key_cmd: Option<String>,
    /// Store the API key read from stdin in the OS keyring (service opsai, account the endpoint's
    /// host) and take it from there at start.
    #[arg(long, group = "key_source")]
    pub api_key_keyring: bool,
    /// Use no API key (a local server).
    #[arg(long, group = "key_source")]
    pub no_api_key: bool,
    /// Test the connection (a one-token chat) before saving; nothing is saved when it fails.
    #[arg(long)]
    pub check: bool,
}

impl SetLlmArgs {
    /// Whether any flag was given, so nothing is asked.
    pub fn scripted(&self) -> bool {
        self.base_url.is_some()
            || self.model.is_some()
            || self.api_key_env.is_some()
            || self.api_key_cmd.is_some()
            || self.api_key_keyring
            || self.no_api_key
            || self.check
    }
}

/// Audit lines `opsai audit` and the REPL's `/audit` show when not told how many: one default, so
/// both show the same.
pub(crate) const AUDIT_TAIL: usize = 20;

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Show the last N lines.
    #[arg(long, value_name = "N", default_value_t = AUDIT_TAIL)]
    pub tail: usize,
    /// Show only lines containing PAT (searches rotated logs too).
    #[arg(long, value_name = "PAT")]
    pub grep: Option<String>,
    /// Read the audit table `opsai serve --database URL` copies its lines to (every replica's),
    /// not this machine's audit file. Not read from OPSAI_DATABASE_URL: the terminal's own
    /// actions are only in the file.
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
}
