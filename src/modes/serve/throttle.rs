//! Sliding-window counters: failed logins per address and name, per address and per name, wrong
//! tokens per address. Each key is checked against the limit its caller gives it.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// At most a given number of counted events per key within `window`.
pub struct Throttle<K> {
    window: Duration,
    seen: Mutex<HashMap<K, VecDeque<Instant>>>,
}

impl<K: Hash + Eq + Clone> Throttle<K> {
    pub fn new(window: Duration) -> Self {
        Self { window, seen: Mutex::default() }
    }

    /// Events counted for `key` within the window.
    pub fn count(&self, key: &K) -> usize {
        let Ok(seen) = self.seen.lock() else { return 0 };
        seen.get(key).map_or(0, |times| times.iter().filter(|t| t.elapsed() < self.window).count())
    }

    /// How long until one of `keys` may be counted again, when one is at its limit.
    pub fn wait(&self, keys: &[(K, usize)]) -> Option<Duration> {
        let Ok(mut seen) = self.seen.lock() else { return Some(self.window) };
        self.wait_in(&mut seen, keys)
    }

    /// Counts an event for each of `keys`, unless one is at its limit: then how long until it is
    /// not (and nothing is counted). Checked and counted under one lock, so parallel attempts
    /// cannot all pass before any is counted.
    pub fn admit(&self, keys: &[(K, usize)]) -> Option<Duration> {
        let Ok(mut seen) = self.seen.lock() else { return Some(self.window) };
        let wait = self.wait_in(&mut seen, keys);
        if wait.is_none() {
            let window = self.window;
            seen.retain(|_, times| times.back().is_some_and(|t| t.elapsed() < window));
            for (key, _) in keys {
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

    fn wait_in(&self, seen: &mut HashMap<K, VecDeque<Instant>>, keys: &[(K, usize)]) -> Option<Duration> {
        keys.iter()
            .filter_map(|(key, limit)| {
                let times = seen.get_mut(key)?;
                while times.front().is_some_and(|t| t.elapsed() >= self.window) {
                    times.pop_front();
                }
                let oldest = times.front().filter(|_| times.len() >= *limit)?;
                Some(self.window.saturating_sub(oldest.elapsed()))
            })
            .max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_key_has_its_own_limit_and_a_forgiven_event_is_not_counted() {
        let throttle = Throttle::new(Duration::from_secs(60));
        let keys = [("pair".to_owned(), 5), ("ip".to_owned(), 20)];
        for _ in 0..5 {
            assert!(throttle.admit(&keys).is_none());
        }
        assert!(throttle.admit(&keys).is_some(), "the pair is at its limit");
        assert!(throttle.wait(&keys[1..]).is_none(), "the address is not");
        assert_eq!(throttle.count(&"ip".to_owned()), 5);
        let alice = [("name alice".to_owned(), 5)];
        assert!(throttle.admit(&alice).is_none());
        throttle.forgive(&["name alice".to_owned()]);
        for _ in 0..5 {
            assert!(throttle.admit(&alice).is_none(), "a forgiven event is not counted");
        }
    }
}
