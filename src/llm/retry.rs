//! Which failures are retried and how long to wait between attempts.
//!
//! Retried: 429 (honouring `Retry-After` / `retry-after-ms`, capped), 500/502/503/504 and
//! connections that broke before the reply started. Never retried: anything after a delta was
//! passed to the caller (the user has seen it), timeouts (waiting again would double the wait),
//! refused connections (nothing is listening), a 5xx whose body says the request itself is invalid
//! (llama.cpp's 500 "Failed to parse tool call arguments": the same request fails the same way;
//! `classify::rejection`), and every other status. Each retry is announced
//! ([`reason`] says what happened) before its wait.

use std::time::Duration;

/// How many attempts and how long to wait between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The wait before the second attempt; doubled for each further one.
    pub initial_backoff: Duration,
    /// The longest computed backoff.
    pub max_backoff: Duration,
    /// The longest wait a server's `Retry-After` can impose.
    pub retry_after_cap: Duration,
}

/// The shortest wait before a retry, whatever the server asked for.
const MIN_WAIT: Duration = Duration::from_millis(100);

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            retry_after_cap: Duration::from_secs(20),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt `attempt` (1-based), with random jitter.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        self.delay_with_jitter(attempt, retry_after, rand::random_range(0.0..=1.0))
    }

    /// The wait after failed attempt `attempt`: the server's `retry_after` when it sent one (at
    /// most `retry_after_cap`), else exponential backoff with "equal jitter": half of the
    /// backoff plus `jitter` (0.0–1.0) times the other half, so concurrent clients spread out.
    pub(crate) fn delay_with_jitter(&self, attempt: u32, retry_after: Option<Duration>, jitter: f64) -> Duration {
        if let Some(wait) = retry_after {
            // `Retry-After: 0` from a busy server is not a reason to hammer it (and a wait of 0
            // is the agent's own "asking again", as the notice reads it).
            return wait.min(self.retry_after_cap).max(MIN_WAIT);
        }
        let doublings = attempt.saturating_sub(1).min(16);
        let backoff = self.initial_backoff.saturating_mul(1 << doublings).min(self.max_backoff);
        let half = backoff / 2;
        half + half.mul_f64(jitter.clamp(0.0, 1.0))
    }
}

/// What the endpoint did, for the retry notice ("the model endpoint {reason}"): `is busy (429)`,
/// `failed with HTTP 503`, `dropped the connection`, `sent an empty reply`.
pub(crate) fn reason(error: &super::LlmError) -> String {
    match error {
        super::LlmError::RateLimited { .. } => "is busy (429)".to_owned(),
        super::LlmError::Http { status, .. } => format!("failed with HTTP {status}"),
        super::LlmError::Protocol(message) if message.contains("closed the stream") => "sent an empty reply".to_owned(),
        super::LlmError::Protocol(_) => "dropped the connection".to_owned(),
        other => format!("failed: {other}"),
    }
}

/// The server's requested wait: `retry-after-ms` (OpenAI) or `Retry-After` in seconds. An HTTP
/// date is not honoured (the backoff applies instead).
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = |name: &str| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    if let Some(ms) = value("retry-after-ms").and_then(|text| text.parse::<f64>().ok()) {
        return seconds(ms / 1000.0);
    }
    value("retry-after").and_then(|text| text.parse::<f64>().ok()).and_then(seconds)
}

fn seconds(value: f64) -> Option<Duration> {
    (value.is_finite() && value >= 0.0).then(|| Duration::from_secs_f64(value.min(86_400.0)))
}

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderMap, HeaderValue};

    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(400),
            max_backoff: Duration::from_secs(1),
            retry_after_cap: Duration::from_secs(5),
        }
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = policy();
        assert_eq!(p.delay_with_jitter(1, None, 1.0), Duration::from_millis(400));
        assert_eq!(p.delay_with_jitter(2, None, 1.0), Duration::from_millis(800));
        assert_eq!(p.delay_with_jitter(3, None, 1.0), Duration::from_secs(1));
        assert_eq!(p.delay_with_jitter(40, None, 1.0), Duration::from_secs(1));
    }

    #[test]
    fn jitter_keeps_at_least_half() {
        let p = policy();
        assert_eq!(p.delay_with_jitter(1, None, 0.0), Duration::from_millis(200));
        assert_eq!(p.delay_with_jitter(1, None, 0.5), Duration::from_millis(300));
        for _ in 0..100 {
            let wait = p.delay(1, None);
            assert!(wait >= Duration::from_millis(200) && wait <= Duration::from_millis(400), "{wait:?}");
        }
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let p = policy();
        assert_eq!(p.delay_with_jitter(1, Some(Duration::from_secs(2)), 0.3), Duration::from_secs(2));
        assert_eq!(p.delay_with_jitter(1, Some(Duration::from_secs(600)), 0.3), Duration::from_secs(5));
        assert_eq!(p.delay_with_jitter(1, Some(Duration::ZERO), 0.3), MIN_WAIT, "Retry-After: 0");
    }

    #[test]
    fn reasons_are_short() {
        use super::super::LlmError;
        assert_eq!(reason(&LlmError::RateLimited { attempts: 1 }), "is busy (429)");
        assert_eq!(reason(&LlmError::Http { status: 503, body: "loading".into() }), "failed with HTTP 503");
        let dropped = LlmError::Protocol("the connection was dropped: reset".into());
        assert_eq!(reason(&dropped), "dropped the connection");
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
        let mut date = HeaderMap::new();
        date.insert("retry-after", HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        assert_eq!(retry_after(&date), None);
        let mut negative = HeaderMap::new();
        negative.insert("retry-after", HeaderValue::from_static("-3"));
        assert_eq!(retry_after(&negative), None);
    }
}
