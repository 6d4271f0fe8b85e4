//! What every request handler shares: the one [`Parts`] every turn is built on, the session
//! store, who is logged in, and the turns running now.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::approvals::Pendings;
use super::auth::Auth;
use super::turn::Turn;
use crate::runner::Parts;
use crate::store::sessions::SessionStore;
use crate::tools::Offer;

pub struct AppState {
    pub parts: Parts,
    pub store: SessionStore,
    pub auth: Auth,
    /// The running turn of each conversation (at most one).
    pub turns: Mutex<HashMap<i64, Arc<Turn>>>,
    pub pendings: Arc<Pendings>,
    /// "Always this session" grants, per conversation and the operator who gave them, kept between
    /// its turns.
    pub grants: Mutex<HashMap<(i64, String), HashSet<String>>>,
    /// The prompt's environment layer (this machine).
    pub environment: String,
    pub offer: Offer,
    /// Where commands run (the server's working directory).
    pub cwd: PathBuf,
    pub approval_timeout: Duration,
    /// The `Host` values requests may name.
    pub hosts: super::hosts::Hosts,
    /// `--hosts PATTERN`: the host sets a conversation may run its commands on.
    pub host_sets: super::host_sets::HostSets,
    /// `--oidc-issuer`: single sign-on.
    pub sso: Option<Arc<super::sso::Sso>>,
    /// OpenTelemetry (off unless OTEL_* names a receiver).
    pub telemetry: Arc<super::telemetry::Telemetry>,
    /// SIGINT/SIGTERM: no new turn starts.
    pub shutdown: CancellationToken,
    /// Conversations per user, and how fast they are made.
    pub quota: super::quota::Quota,
    /// `--max-turns`: turns running at once here, all users together.
    pub max_turns: usize,
    /// `--secure-cookies`: the session cookie is `Secure` on every response.
    pub secure_cookies: bool,
    /// `--trusted-proxy`: peers whose `X-Forwarded-For` is believed.
    pub proxies: Vec<std::net::IpAddr>,
    /// `--database`: the other replicas serving the same team.
    pub replicas: Option<Arc<super::replicas::Replicas>>,
}

impl AppState {
    /// The running turn of `conversation`.
    pub fn turn(&self, conversation: i64) -> Option<Arc<Turn>> {
        self.turns.lock().ok()?.get(&conversation).cloned()
    }

    /// `kube.contexts`: the clusters a conversation may name (empty: kubectl's current context only).
    pub fn clusters(&self) -> Vec<String> {
        self.parts.config.kube.contexts.clone()
    }

    /// Stops every running turn (shutdown).
    pub fn stop_all(&self) {
        let turns: Vec<Arc<Turn>> = self.turns.lock().map(|t| t.values().cloned().collect()).unwrap_or_default();
        for turn in turns {
            turn.stop();
            self.pendings.abort(turn.conversation);
        }
    }
}
