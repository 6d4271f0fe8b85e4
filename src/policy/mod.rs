//! The command risk policy (DESIGN §6): `assess(command, &PolicyConfig) -> Assessment`.
//!
//! 1. `sanitize` removes escape sequences, controls, bidi and zero-width characters.
//! 2. `parse` reads the result with tree-sitter's bash grammar into simple commands.
//! 3. `engine` classifies each one through the rule table in `rules` (looking through wrappers
//!    and into nested code) and applies the user's rules from `user_rules`.
//!
//! Pure and deterministic: no I/O, no environment, no printing. Fails closed: anything not known
//! to be read-only is at least Medium; anything that cannot be parsed is High.

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod engine;
mod invocation;
pub(crate) mod parse;
mod paths;
mod programs;

/// kubectl's options that send a request elsewhere or as someone else (the daemon routing reuses them).
pub(crate) use programs::cluster::KUBE_ELSEWHERE;
mod rules;
mod sanitize;
mod structure;
mod user_rules;
mod verdict;
mod word;

pub use word::quote as quote_word;

#[cfg(test)]
mod class_tests;
#[cfg(test)]
mod construct_tests;
#[cfg(test)]
mod list_tests;
#[cfg(test)]
mod option_tests;
#[cfg(test)]
mod soak_tests;
#[cfg(test)]
mod structure_tests;
#[cfg(test)]
mod table_tests;
#[cfg(test)]
mod tests;

pub(crate) use rules::PROGRAMS;
pub use sanitize::{Sanitized, is_invisible, sanitize, settled_len};
pub use user_rules::{PolicyConfig, RuleError, UserRule};

use crate::protocol::{Assessment, Decision, Risk};

/// Longer input is not parsed: nobody reviews a 64 KiB one-liner.
const MAX_COMMAND_BYTES: usize = 64 * 1024;

pub fn assess(command: &str, config: &PolicyConfig) -> Assessment {
    let clean = sanitize(command);
    // Invariant 8: a failure inside the policy is a High verdict with a reason, never a dead agent.
    let classified = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| classify(&clean, config)));
    let (findings, denied, commands) = match classified {
        Ok(engine) => (engine.findings, engine.denied, engine.commands),
        Err(_) => {
            let finding = engine::Finding {
                risk: Risk::High,
                text: "the policy failed on this command (an internal error); it is rated High".into(),
            };
            (vec![finding], false, Vec::new())
        }
    };
    let risk = findings.iter().map(|f| f.risk).max().unwrap_or(Risk::Safe);
    let decision = if denied {
        Decision::Deny
    } else if risk == Risk::Safe {
        Decision::Allow
    } else {
        Decision::Ask
    };
    Assessment {
        risk,
        decision,
        reasons: findings.into_iter().map(|f| f.text).collect(),
        changed_by_sanitizer: clean.changed(),
        sanitized: clean.text,
        commands,
    }
}

fn classify<'c>(clean: &Sanitized, config: &'c PolicyConfig) -> engine::Engine<'c> {
    let mut engine = engine::Engine::new(config);
    if clean.changed() {
        engine.findings.push(engine::Finding {
            risk: Risk::Medium,
            text: format!("input changed by the sanitizer: removed {}", clean.removed.join(", ")),
        });
    }
    if clean.text.len() > MAX_COMMAND_BYTES {
        engine.findings.push(engine::Finding {
            risk: Risk::High,
            text: format!("command of {} bytes: too long to assess", clean.text.len()),
        });
    } else {
        engine.script(&parse::parse(&clean.text), 0);
    }
    engine
}
