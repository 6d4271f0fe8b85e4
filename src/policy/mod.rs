//! The command risk policy (DESIGN §6): `assess(command, &PolicyConfig) -> Assessment`.
//!
//! Pure and deterministic: no I/O, no environment, no printing. Fails closed: anything not known
//! to be read-only is at least Medium, anything that cannot be parsed is High.

mod sanitize;
mod user_rules;

pub use sanitize::{Sanitized, sanitize};
pub use user_rules::{PolicyConfig, RuleError, UserRule};

use crate::protocol::{Assessment, Decision, Risk};

pub fn assess(command: &str, config: &PolicyConfig) -> Assessment {
    let clean = sanitize(command);
    let _ = config;
    Assessment {
        risk: Risk::Medium,
        decision: Decision::Ask,
        reasons: Vec::new(),
        changed_by_sanitizer: clean.changed(),
        sanitized: clean.text,
        commands: Vec::new(),
    }
}
