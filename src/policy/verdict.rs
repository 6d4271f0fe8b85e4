//! What a rule says about one invocation: a risk with its reason, and anything the invocation
//! runs in turn (the command behind `sudo`, `find -exec`, `bash -c`), which is assessed too.

use std::borrow::Cow;

use super::word::Word;
use crate::protocol::Risk;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub risk: Risk,
    /// Empty for Safe, except from the user's allow rule (its reason is shown).
    pub reason: Cow<'static, str>,
}

impl Verdict {
    pub const SAFE: Verdict = Verdict { risk: Risk::Safe, reason: Cow::Borrowed("") };

    pub fn medium(reason: impl Into<Cow<'static, str>>) -> Self {
        Self { risk: Risk::Medium, reason: reason.into() }
    }

    pub fn high(reason: impl Into<Cow<'static, str>>) -> Self {
        Self { risk: Risk::High, reason: reason.into() }
    }

    /// The stricter of two verdicts (the first wins a tie, so earlier reasons stay).
    pub fn max(self, other: Verdict) -> Verdict {
        if other.risk > self.risk { other } else { self }
    }
}

/// Something an invocation runs in turn.
#[derive(Debug, Clone)]
pub(crate) enum Nested<'a> {
    /// Another program with these words (`sudo CMD…`, `find -exec CMD… ;`); `bulk` when it runs
    /// once per input (`xargs`, `find -exec`).
    Exec { words: &'a [Word], bulk: bool },
    /// Shell code in a string (`bash -c STR`, `eval …`, `ssh host CMD…`, a here-document fed to a shell).
    Code(Word),
}

#[derive(Debug, Clone)]
pub struct Outcome<'a> {
    pub verdict: Verdict,
    pub nested: Vec<Nested<'a>>,
}

impl<'a> Outcome<'a> {
    pub fn then(mut self, nested: Nested<'a>) -> Self {
        self.nested.push(nested);
        self
    }
}

impl From<Verdict> for Outcome<'_> {
    fn from(verdict: Verdict) -> Self {
        Self { verdict, nested: Vec::new() }
    }
}
