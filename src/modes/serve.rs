//! `opsai serve`: the web chat of seed 002 (issue 16) as one more entry mode. One [`Parts`] is built
//! at start and shared; each turn gets its own services (a browser approver, the user, the
//! conversation's session label and kube context) and runs as a task owned by the server, not by
//! the HTTP connection. The routes, JSON shapes, auth and SSE events are docs/serve.md.
//!
//! - [`auth`]: token and users modes, cookie sessions, CSRF, the login rate limit ([`throttle`]);
//!   [`headers`]: what a request's headers say (cookie, bearer, https, cross-site, origin);
//!   [`hosts`]: the Host header check; [`passwords`]: argon2 checks in kept memory.
//! - [`listen`]: connections under bounds (timeouts, caps); [`lock`]: one server per home;
//!   [`errors`]: the JSON error shape, for the router's own answers too.
//! - [`login`]: the `/api/v2/auth/*` routes; [`sso`]: single sign-on with OpenID Connect.
//! - [`api`]: conversations and approvals ([`quota`]: per user, and the list's pages); [`chat`]: a
//!   turn and its SSE stream.
//! - [`turn`]: a running turn's event log; [`events`]: `AgentEvent` → SSE data; [`screen`]: what
//!   the browser may see of it (redacted, hidden characters visible, output by lines).
//! - [`approvals`]: the browser approver and the operators' queue; [`users`]: the users file and
//!   `serve user …`.
//! - [`host_sets`]: the fleets conversations may run on (`--hosts`); [`telemetry`]: OpenTelemetry.
//! - [`page`]: the embedded page; [`routes`]: every route and the layers each response passes.
//! - [`replicas`]: several servers on one PostgreSQL database (`--database`) serving one team.

mod api;
mod approvals;
mod auth;
mod chat;
mod errors;
mod events;
mod grants;
mod headers;
mod host_sets;
mod hosts;
mod listen;
mod lock;
mod login;
mod page;
mod passwords;
mod quota;
mod replicas;
mod routes;
mod screen;
mod sso;
mod state;
mod telemetry;
mod throttle;
mod turn;
mod users;

use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::cli::{ServeArgs, ServeCommand};
use crate::config::Config;
use crate::context::{EnvContext, PendingContext};
use crate::home::Paths;
use crate::runner::{self, Approvals, LlmOverrides, Parts};
use crate::store::audit::{TableCopy, machine_name};
use crate::store::database::DatabaseUrl;
use crate::store::sessions::SessionStore;
use crate::tools::Offer;

use super::common;
use auth::{Auth, Mode};
pub use errors::{ApiError, Body};
use state::AppState;

/// Request bodies larger than this are refused (413): a chat message is text.
pub(super) const BODY_LIMIT: usize = 64 * 1024;
/// How long running turns get to end after SIGINT/SIGTERM before the server exits anyway.
const GRACE: Duration = Duration::from_secs(10);
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; frame-ancestors 'none'";

pub fn run(paths: &Paths, args: &ServeArgs) -> anyhow::Result<u8> {
    if let Some(ServeCommand::User(command)) = &args.command {
        return users::run(paths, command);
    }
    let Some(addr) = args.listen.to_socket_addrs().ok().and_then(|mut addrs| addrs.next()) else {
        common::warn(&format!("--listen {}: not an address such as 127.0.0.1:8765", args.listen));
        return Ok(2);
    };
    let database = match args.database.as_deref().map(DatabaseUrl::parse).transpose() {
        Ok(database) => database,
        Err(err) => {
            common::warn(&format!("--database: {err}"));
            return Ok(2);
        }
    };
    let users = match users::for_server(args.users.as_deref(), database.as_ref()) {
        Ok(users) => users,
        Err(code) => return Ok(code),
    };
    if !addr.ip().is_loopback() && users.is_none() && args.sso.oidc_issuer.is_none() && !args.allow_remote {
        common::warn(&format!(
            "--listen {addr} is reachable from other machines: log in with users (--users FILE, see \
             `opsai serve user add`, or users in --database) or single sign-on (--oidc-issuer), or pass \
             --allow-remote to use the access token there (put a TLS reverse proxy in front either way)"
        ));
        return Ok(2);
    }
    let mode = match users {
        Some(source) => Mode::Users(source),
        None => match std::env::var("OPSAI_SERVE_TOKEN") {
            Ok(token) if token.len() >= auth::MIN_TOKEN => Mode::Token(token),
            Ok(_) => {
                crate::modes::common::warn(&format!(
                    "OPSAI_SERVE_TOKEN is too short: use at least {} characters, or unset it",
                    auth::MIN_TOKEN
                ));
                return Ok(2);
            }
            Err(_) => Mode::Token(auth::random_token()),
        },
    };
    // Every audit line also goes to the database: checked now, so a wrong URL fails at start.
    let audit_copy = match &database {
        Some(url) => match TableCopy::start(url, machine_name(), Arc::new(log)) {
            Ok(copy) => Some(copy),
            Err(err) => {
                common::warn(&err.to_string());
                return Ok(1);
            }
        },
        None => None,
    };
    if args.host_sets.is_empty() && args.fleet.only_for_a_fleet() {
        common::warn("--inventory, --hosts-file and --serial describe host sets; give --hosts PATTERN too");
        return Ok(2);
    }
    let context = EnvContext::start(&common::context_input(paths.cache_dir()));
    let config = runner::load_config(paths, &LlmOverrides::default())?;
    // Read before the port opens: a pattern that selects nothing is the admin's to fix now.
    let host_sets = match host_sets::HostSets::load(paths, &config, &args.host_sets, &args.fleet) {
        Ok(sets) => sets,
        Err(message) => {
            common::warn(&message);
            return Ok(2);
        }
    };
    // Before the runtime: the exporters' blocking client is made and dropped outside it.
    let telemetry = Arc::new(telemetry::Telemetry::from_env(log));
    if telemetry.is_on() {
        log("telemetry: sending traces and metrics over OTLP (OTEL_EXPORTER_OTLP_*)");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let limits = listen::Limits::new(&args.limits);
    let setup = Setup {
        config,
        context,
        mode,
        addr,
        host_sets,
        telemetry: telemetry.clone(),
        limits,
        audit_copy: audit_copy.clone(),
    };
    let ended = runtime.block_on(serve(paths, args, setup));
    drop(runtime);
    if let Some(copy) = audit_copy
        && !copy.flush(GRACE)
    {
        log("audit: some lines were not copied to the database before the end (the audit file has them)");
    }
    // What the last turns recorded is sent before the process ends.
    telemetry.shutdown();
    ended
}

/// What `run` read and checked before the server starts.
struct Setup {
    config: Config,
    context: PendingContext,
    mode: Mode,
    addr: SocketAddr,
    host_sets: host_sets::HostSets,
    telemetry: Arc<telemetry::Telemetry>,
    limits: listen::Limits,
    /// `--database`: where the audit lines are copied.
    audit_copy: Option<Arc<TableCopy>>,
}

async fn serve(paths: &Paths, args: &ServeArgs, setup: Setup) -> anyhow::Result<u8> {
    let Setup { mut config, context, mode, addr, host_sets, telemetry, limits, audit_copy } = setup;
    if args.database.is_some() {
        // How the server itself reaches its database (crate::store::database reads them).
        config.exec.hidden_env = vec!["PGPASSWORD".into(), "PGPASSFILE".into()];
    }
    // Approved commands run as the server's user: without this they could read its environment
    // (the database password, the access token) in /proc/PID/environ.
    #[cfg(target_os = "linux")]
    if let Err(err) = nix::sys::prctl::set_dumpable(false) {
        log(&format!("cannot keep this process's environment from its commands: {err}"));
    }
    let mut home_lock = match lock::HomeLock::take(&paths.sessions_db().with_file_name("serve.lock")) {
        Ok(lock) => lock,
        Err(err) => {
            crate::modes::common::warn(&err.to_string());
            return Ok(1);
        }
    };
    let mut parts = Parts::build(paths, config, Approvals::Nobody)?;
    if let Some(copy) = audit_copy {
        parts.audit.copy_to(copy);
    }
    let store = match open_store(paths, args.database.as_deref(), parts.redactor.clone()).await {
        Ok(store) => store,
        Err((code, message)) => {
            crate::modes::common::warn(&message);
            return Ok(code);
        }
    };
    let context = context.finish();
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(err) => {
            crate::modes::common::warn(&format!(
                "cannot listen on {addr}: {err}; choose another --listen address or port"
            ));
            return Ok(1);
        }
    };
    let local = listener.local_addr()?;
    home_lock.record(&local.to_string());
    // 0.0.0.0 or :: is no address to open: the first --public-host (what a browser sends as
    // Host) or, without one, this machine's loopback, with a word on how others reach it.
    let shown = match args.public_host.first() {
        _ if !local.ip().is_unspecified() => local.to_string(),
        Some(name) => name.clone(),
        None => {
            crate::modes::common::warn(&format!(
                "listening on every address: others open http://THIS-MACHINE'S-IP:{port}/, or a name given with \
                 --public-host NAME:{port} (a request naming any other host is refused with 421)",
                port = local.port()
            ));
            format!("127.0.0.1:{}", local.port())
        }
    };
    let url = match &mode {
        Mode::Token(token) => format!("http://{shown}/?token={token}"),
        Mode::Users(_) => format!("http://{shown}/"),
    };
    let replicas = match &args.database {
        None => None,
        Some(url) => match start_replicas(url).await {
            Ok(replicas) => Some(replicas),
            Err(err) => {
                crate::modes::common::warn(&err);
                return Ok(2);
            }
        },
    };
    let sso = match sso_setup(&args.sso, &shown).await {
        Ok(sso) => sso,
        Err(err) => {
            crate::modes::common::warn(&err.to_string());
            return Ok(2);
        }
    };
    let state = Arc::new(AppState {
        environment: context.render(),
        offer: Offer::for_context(&context),
        cwd: std::env::current_dir()?,
        parts,
        store,
        auth: Auth::new(mode),
        turns: Mutex::default(),
        pendings: Arc::default(),
        grants: Mutex::default(),
        approval_timeout: Duration::from_secs(args.approval_timeout),
        hosts: hosts::Hosts::new(local.port(), &args.public_host),
        host_sets,
        telemetry,
        sso,
        quota: quota::Quota::new(args.limits.max_conversations),
        max_turns: usize::try_from(args.limits.max_turns).unwrap_or(usize::MAX),
        secure_cookies: args.limits.secure_cookies,
        proxies: args.limits.trusted_proxy.clone(),
        shutdown: CancellationToken::new(),
        replicas: replicas.clone(),
    });
    if let Some(replicas) = &replicas {
        replicas.attach(&state);
        let _ = state.auth.shared.set(replicas.clone());
        let _ = state.pendings.mirror.set(replicas.clone());
        if let Some(sso) = &state.sso {
            let _ = sso.shared.set(replicas.clone());
        }
        log(&format!("replica {} on {}", replicas.id, replicas.url()));
    }
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    {
        // The one place the token is shown: the URL to open.
        let mut out = std::io::stdout().lock();
        writeln!(out, "opsai serve: open {url}")?;
        out.flush()?;
    }
    for set in state.host_sets.offered() {
        log(&format!("host set `{}`: {}", set.pattern, set.label));
    }
    let signalled = state.shutdown.clone();
    let watcher = state.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        log("stopping: no new turns; running turns are stopped and stored");
        watcher.shutdown.cancel();
        watcher.stop_all();
    });
    let server = listen::serve(listener, routes::router(state.clone(), limits.body), limits, signalled.clone());
    let grace = async {
        signalled.cancelled().await;
        tokio::time::sleep(GRACE).await;
    };
    tokio::select! {
        () = server => {}
        () = grace => log("connections still open after the grace period: exiting anyway"),
    }
    // Every running turn ends (and is stored) before the process does.
    let turns: Vec<_> = state.turns.lock().map(|t| t.values().cloned().collect()).unwrap_or_default();
    let _ = tokio::time::timeout(GRACE, async {
        for turn in turns {
            turn.finished().await;
        }
    })
    .await;
    if let Some(replicas) = &replicas {
        replicas.leave().await;
    }
    Ok(0)
}

/// `--database`: this server joins the replicas on that database.
async fn start_replicas(url: &str) -> Result<Arc<replicas::Replicas>, String> {
    let url = crate::store::database::DatabaseUrl::parse(url).map_err(|err| err.to_string())?;
    replicas::Replicas::start(url).await.map_err(|err| err.to_string())
}

/// `--oidc-issuer`: the identity provider read and checked before anyone can log in with it.
async fn sso_setup(args: &crate::cli::SsoArgs, shown: &str) -> Result<Option<Arc<sso::Sso>>, sso::SsoError> {
    let (Some(issuer), Some(client_id)) = (&args.oidc_issuer, &args.oidc_client_id) else { return Ok(None) };
    if args.oidc_operator.is_empty() && args.oidc_viewer.is_empty() {
        return Err(sso::SsoError::NobodyAllowed);
    }
    let config = sso::SsoConfig {
        issuer: issuer.clone(),
        client_id: client_id.clone(),
        client_secret: std::env::var("OPSAI_OIDC_CLIENT_SECRET").ok().filter(|secret| !secret.is_empty()),
        redirect_url: args
            .oidc_redirect_url
            .clone()
            .unwrap_or_else(|| format!("http://{shown}/api/v2/auth/sso/callback")),
        role_claim: args.oidc_role_claim.clone(),
        operators: args.oidc_operator.clone(),
        viewers: args.oidc_viewer.clone(),
        scopes: args.oidc_scope.clone(),
    };
    let redirect = config.redirect_url.clone();
    let sso = sso::Sso::discover(config).await?;
    log(&format!("single sign-on with {issuer} (redirect URL {redirect})"));
    Ok(Some(Arc::new(sso)))
}

/// The conversations: in the Postgres database `--database` names (connected and migrated now, so
/// a wrong URL or an unreachable server stops the start before the port opens), else in
/// `$OPSAI_HOME/sessions.db`. The error is the exit code and what to tell the admin.
async fn open_store(
    paths: &Paths,
    database: Option<&str>,
    redactor: Arc<crate::redact::Redactor>,
) -> Result<SessionStore, (u8, String)> {
    let Some(text) = database else {
        return runner::session_store(paths, redactor)
            .map_err(|err| (1, format!("cannot serve without the sessions database: {err}")));
    };
    let url = DatabaseUrl::parse(text).map_err(|err| (2, format!("--database: {err}")))?;
    // The client blocks (it drives its own runtime): not on this async thread.
    let opened = tokio::task::spawn_blocking(move || SessionStore::open_database(&url, redactor)).await;
    match opened {
        Ok(Ok(store)) => {
            log(&format!("conversations are kept in {}", store.location()));
            Ok(store)
        }
        Ok(Err(err)) => Err((1, format!("cannot serve without the conversations' database: {err}"))),
        Err(err) => Err((1, format!("cannot serve: opening the database stopped: {err}"))),
    }
}

/// A line on the server's stderr.
pub(super) fn log(text: &str) {
    common::warn(&format!("serve: {text}"));
}

/// Runs a blocking store call off the async threads.
pub(super) async fn blocking<T: Send + 'static>(
    state: &Arc<AppState>,
    call: impl FnOnce(&AppState) -> T + Send + 'static,
) -> Result<T, ApiError> {
    let state = state.clone();
    tokio::task::spawn_blocking(move || call(&state)).await.map_err(|err| ApiError::internal(&err))
}
