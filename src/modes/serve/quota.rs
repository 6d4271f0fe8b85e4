//! How many conversations a user may keep and how fast they may make them, and the pages the
//! list comes in.

use std::sync::Mutex;
use std::time::Duration;

use axum::http::StatusCode;

use super::ApiError;
use super::throttle::Throttle;

/// Conversations one user may create per [`WINDOW`].
const CREATES: usize = 60;
const WINDOW: Duration = Duration::from_secs(60);
/// The list's page size when the request names none, and the largest it may name.
pub const PAGE: usize = 100;
pub const MAX_PAGE: usize = 500;

pub struct Quota {
    /// Conversations one user may keep (`--max-conversations`).
    pub max: u64,
    created: Throttle<String>,
    /// Held while a user's count is checked and their new conversation stored, so parallel
    /// creations cannot all pass the count.
    pub gate: Mutex<()>,
}

impl Quota {
    pub fn new(max: u64) -> Self {
        Self { max, created: Throttle::new(WINDOW), gate: Mutex::default() }
    }

    /// Counts a creation for `user`, or the 429 to answer when they made too many lately.
    pub fn admit(&self, user: &str) -> Result<(), ApiError> {
        match self.created.admit(&[(user.to_owned(), CREATES)]) {
            None => Ok(()),
            Some(wait) => Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "too many new conversations ({CREATES} a minute at most): try again in {} s, or continue one \
                     you have",
                    wait.as_secs().max(1)
                ),
            )
            .retry_after(wait)),
        }
    }

    /// The 409 for a user who has `max` conversations already.
    pub fn full(&self) -> ApiError {
        ApiError::new(
            StatusCode::CONFLICT,
            format!(
                "you have {} conversations, the most this server keeps per user (--max-conversations): delete \
                 some (DELETE /api/v2/ai/conversations/ID) to start new ones",
                self.max
            ),
        )
    }
}
