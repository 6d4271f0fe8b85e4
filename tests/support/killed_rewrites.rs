//! A large file rewritten by opsai while opsai is killed with SIGKILL, round after round: after
//! each kill the file must hold the old content or the new one, never a mix.

use std::fmt::Display;
use std::path::Path;

/// The two contents, and how often each was found after a kill.
pub struct KilledRewrites {
    pub old: String,
    pub new: String,
    pub kept_old: u32,
    pub got_new: u32,
}

impl KilledRewrites {
    /// ~2.5 MB each, in lines, so a torn file would show a mix of a- and b-lines (or a short file).
    pub fn of_big_files() -> Self {
        let line = |tag: char, i: usize| format!("{tag}-line {i:06} {}\n", tag.to_string().repeat(56));
        Self {
            old: (0..35_000).map(|i| line('a', i)).collect(),
            new: (0..35_000).map(|i| line('b', i)).collect(),
            kept_old: 0,
            got_new: 0,
        }
    }

    /// Checks `path` after the kill of round `round`: the old or the new content, counted.
    pub fn check(&mut self, round: impl Display, path: &Path) {
        let now = std::fs::read(path).unwrap();
        assert!(
            now == self.old.as_bytes() || now == self.new.as_bytes(),
            "round {round}: a mix of {} bytes",
            now.len()
        );
        if now == self.old.as_bytes() {
            self.kept_old += 1;
        } else {
            self.got_new += 1;
        }
    }

    /// Prints where the kills landed.
    pub fn report(&self) {
        eprintln!("killed with the old content kept {} times, after the rename {} times", self.kept_old, self.got_new);
    }
}
