//! Sliding-window counters: failed logins per IP and per name, wrong tokens per IP.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// At most `limit` counted events per key within `window`.
pub struct Throttle<K> {
    limit: usize,
    window: Duration,
    seen: Mutex<HashMap<K, VecDeque<Instant>>>,
}

impl<K: Hash + Eq + Clone> Throttle<K> {
    pub fn new(limit: usize, window: Duration) -> Self {
        Self { limit, window, seen: Mutex::default() }
    }

    /// How long until one of `keys` may be counted again, when one is at its limit.
    pub fn wait(&self, keys: &[K]) -> Option<Duration> {
        let Ok(mut seen) = self.seen.lock() else { return Some(self.window) };
        self.wait_in(&mut seen, keys)
    }

    /// Counts an event for each of `keys`, unless one is at its limit: then how long until it is
    /// not (and nothing is counted). Checked and counted under one lock, so parallel attempts
    /// cannot all pass before any is counted.
    pub fn admit(&self, keys: &[K]) -> Option<Duration> {
        let Ok(mut seen) = self.seen.lock() else { return Some(self.window) };
        let wait = self.wait_in(&mut seen, keys);
        if wait.is_none() {
            let window = self.window;
            seen.retain(|_, times| times.back().is_some_and(|t| t.elapsed() < window));
            for key in keys {
                seen.entry(key.clone()).or_default().push_back(Instant::now());
            }
        }
        wait
    }

    /// Takes back the last event counted for each of `keys` (it was not a failure after all).
    pub fn forgive(&self, keys: &[K]) {
        if let Ok(mut seen) = self.seen.lock() {
            for key in keys {
                if let Some(times) = seen.get_mut(key) {
                    times.pop_back();
                }
            }
        }
    }

    fn wait_in(&self, seen: &mut HashMap<K, VecDeque<Instant>>, keys: &[K]) -> Option<Duration> {
        keys.iter()
            .filter_map(|key| {
                let times = seen.get_mut(key)?;
                while times.front().is_some_and(|t| t.elapsed() >= self.window) {
                    times.pop_front();
                }
                let oldest = times.front().filter(|_| times.len() >= self.limit)?;
                Some(self.window.saturating_sub(oldest.elapsed()))
            })
            .max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_failures_limit_the_name_and_the_ip() {
        let throttle = Throttle::new(5, Duration::from_secs(60));
        let keys = ["ip 1.2.3.4".to_owned(), "name bob".to_owned()];
        for _ in 0..5 {
            assert!(throttle.admit(&keys).is_none());
        }
        assert!(throttle.admit(&keys[..1]).is_some());
        assert!(throttle.wait(&keys[1..]).is_some());
        let alice = ["name alice".to_owned()];
        assert!(throttle.admit(&alice).is_none());
        throttle.forgive(&alice);
        for _ in 0..4 {
            assert!(throttle.admit(&alice).is_none(), "a forgiven event is not counted");
        }
    }
}
