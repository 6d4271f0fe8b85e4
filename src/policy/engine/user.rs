//! The user's allow and deny rules, applied to each program of a command after the built-in
//! verdicts: deny wins; allow never lowers a High verdict unless it names the command exactly.

use super::{Engine, Entry, display};
use crate::policy::parse::SimpleCommand;
use crate::policy::user_rules::UserRule;
use crate::policy::verdict::Verdict;
use crate::protocol::Risk;

impl Engine<'_> {
    pub(super) fn apply_user_rules(&mut self, cmd: &SimpleCommand, entries: &mut [Entry]) {
        let config = self.config;
        let full: Vec<String> = cmd.words.iter().map(|w| w.text.clone()).collect();
        let deny = config.denied(&full).or_else(|| entries.iter().find_map(|e| config.denied(&e.argv)));
        if let Some(rule) = deny {
            self.denied = true;
            let verdict = Verdict {
                risk: rule.risk.max(Risk::Medium),
                reason: format!("denied by your rule `{}`: {}", rule.pattern_text(), rule.reason).into(),
            };
            self.add(&display(&full), &verdict);
            return;
        }
        if let Some(rule) = config.allowed(&full) {
            let exact = rule.names_exactly(&full);
            for entry in entries.iter_mut() {
                if entry.verdict.risk < Risk::High || exact {
                    entry.verdict = allowed_verdict(rule);
                }
            }
            return;
        }
        for entry in entries.iter_mut() {
            if let Some(rule) = config.allowed(&entry.argv)
                && (entry.verdict.risk < Risk::High || rule.names_exactly(&entry.argv))
            {
                entry.verdict = allowed_verdict(rule);
            }
        }
    }
}

fn allowed_verdict(rule: &UserRule) -> Verdict {
    Verdict {
        risk: rule.risk,
        reason: format!("allowed by your rule `{}`: {}", rule.pattern_text(), rule.reason).into(),
    }
}
