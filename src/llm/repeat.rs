//! A model stuck in a loop: the same short chunk (`# ` again and again) or the same few chunks (one
//! line over and over) streamed back to back. Stopping it early saves minutes on a CPU and a reply
//! nobody can use (pure).
//!
//! The rule works on the deltas as they stream, not on the text, so that legitimately repetitive
//! text in large deltas (a 10 MB answer sent 64 KiB at a time) is never mistaken for a loop. A loop
//! is `copies` back-to-back repeats of the same `k` consecutive deltas (1 ≤ k ≤ 16) whose text is at
//! most 200 characters, where `copies` reaches 128 / k but at least 32: a single repeated token
//! stops after 128 copies, a repeated line of four or more tokens after 32. A Markdown table (rows
//! differ), a rule of dashes (a few tokens), or a list of similar lines stays far below that.

use std::collections::VecDeque;

/// The longest repeated unit, in deltas.
const MAX_PERIOD: usize = 16;
/// A unit longer than this (in characters) is not a "short chunk".
const MAX_UNIT_CHARS: usize = 200;
/// Copies of a single-delta unit that count as a loop; longer units need proportionally fewer…
const SINGLE_DELTA_COPIES: usize = 128;
/// …but never fewer than this.
const MIN_COPIES: usize = 32;

/// A loop that was found: the repeated text and how many times it came in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    pub unit: String,
    pub copies: usize,
}

/// Watches one stream of deltas (content, or reasoning).
#[derive(Debug, Default)]
pub(crate) struct RepeatGuard {
    /// The latest `MAX_PERIOD` deltas, newest last.
    recent: VecDeque<String>,
    /// `matched[k]`: how many of the latest deltas in a row equal the delta `k` before them.
    matched: [usize; MAX_PERIOD + 1],
}

impl RepeatGuard {
    /// Takes the next delta; returns the loop once it is long enough to stop.
    pub(crate) fn push(&mut self, delta: &str) -> Option<Loop> {
        for k in 1..=MAX_PERIOD {
            let same = self.recent.len() >= k && self.recent[self.recent.len() - k] == delta;
            self.matched[k] = if same { self.matched[k] + 1 } else { 0 };
        }
        self.recent.push_back(delta.to_owned());
        if self.recent.len() > MAX_PERIOD {
            self.recent.pop_front();
        }
        (1..=MAX_PERIOD).find_map(|k| self.loop_of(k))
    }

    fn loop_of(&self, k: usize) -> Option<Loop> {
        let copies = (self.matched[k] + k) / k;
        if copies < required_copies(k) || self.recent.len() < k {
            return None;
        }
        let unit: String = self.recent.iter().skip(self.recent.len() - k).map(String::as_str).collect();
        (unit.chars().count() <= MAX_UNIT_CHARS).then_some(Loop { unit, copies })
    }
}

fn required_copies(k: usize) -> usize {
    SINGLE_DELTA_COPIES.div_ceil(k).max(MIN_COPIES)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// The first loop found while pushing `deltas`, and after how many deltas.
    fn first_loop(deltas: &[String]) -> Option<(usize, Loop)> {
        let mut guard = RepeatGuard::default();
        deltas.iter().enumerate().find_map(|(n, delta)| guard.push(delta).map(|found| (n + 1, found)))
    }

    fn tokens(parts: &[&str], times: usize) -> Vec<String> {
        (0..times).flat_map(|_| parts.iter().map(|part| (*part).to_owned())).collect()
    }

    #[test]
    fn the_same_short_chunk_200_times_stops_at_128() {
        let mut deltas = vec!["Here is the fix:\n".to_owned()];
        deltas.extend(tokens(&["# "], 200));
        assert_eq!(first_loop(&deltas), Some((129, Loop { unit: "# ".into(), copies: 128 })));
    }

    #[test]
    fn the_same_line_over_and_over_stops_after_32_copies() {
        let line = ["Check", " the", " logs", " again", ".\n"];
        let (after, found) = first_loop(&tokens(&line, 100)).unwrap();
        assert_eq!(found, Loop { unit: "Check the logs again.\n".into(), copies: 32 });
        assert_eq!(after, 32 * line.len());
        // Two alternating tokens: a period of 2 needs 64 copies.
        assert_eq!(first_loop(&tokens(&["ab", "cd"], 70)).map(|(_, found)| found.copies), Some(64));
    }

    #[test]
    fn a_markdown_table_and_a_rule_of_dashes_are_not_loops() {
        let mut table = tokens(&["|", " Name", " |", " Size", " |\n", "|", "------", "|", "------", "|\n"], 1);
        for n in 0..300 {
            table.extend(["|".to_owned(), format!(" file{n}"), " |".into(), format!(" {n}K"), " |\n".into()]);
        }
        assert_eq!(first_loop(&table), None);
        // A wide separator row and a long rule: well under 128 copies of one token.
        assert_eq!(first_loop(&tokens(&["|", "---"], 40)), None);
        assert_eq!(first_loop(&tokens(&["----------------"], 20)), None);
        // Rows that are all dashes, but fewer than 32 in a row.
        assert_eq!(first_loop(&tokens(&["|", " -", " |", " -", " |\n"], 31)), None);
    }

    #[test]
    fn repeated_large_deltas_are_not_short_chunks() {
        let piece = "0123456789abcdef".repeat(4096);
        assert_eq!(first_loop(&vec![piece; 200]), None);
        assert_eq!(first_loop(&tokens(&[&"x".repeat(201)], 200)), None);
    }

    #[test]
    fn a_break_in_the_run_starts_the_count_again() {
        let mut deltas = tokens(&["# "], 127);
        deltas.push("## ".into());
        deltas.extend(tokens(&["# "], 127));
        assert_eq!(first_loop(&deltas), None);
    }
}
