//! The plain data types that cross module boundaries (DESIGN §2), defined once.
//!
//! This module imports nothing from the crate: every other module may depend on it, and it on none.

use serde::{Deserialize, Serialize};

/// How dangerous a command is. Ordered, so the risk of a compound command is the maximum of its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Known read-only program with read-only arguments: may run without asking.
    Safe,
    /// Changes state, but locally and recoverably; also every unknown program.
    /// The default, so anything unclassified fails closed.
    #[default]
    Medium,
    /// Destructive, irreversible, system-wide or exfiltrating.
    High,
}

impl Risk {
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Safe => "safe",
            Risk::Medium => "medium",
            Risk::High => "high",
        }
    }
}

impl std::fmt::Display for Risk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happens to a command before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Runs without a prompt (Safe, or allowed by a user rule).
    Allow,
    /// Needs an explicit human yes; High asks with a typed confirmation. The default: fail closed.
    #[default]
    Ask,
    /// Never runs: a user deny rule matched.
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The policy's verdict on one command line, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assessment {
    /// The maximum risk over every part of the command.
    pub risk: Risk,
    pub decision: Decision,
    /// One line per non-Safe part, naming it: `rm -rf ~: recursive delete`.
    pub reasons: Vec<String>,
    /// Exactly what would run: the input after sanitization.
    pub sanitized: String,
    /// True when sanitization removed anything (escape sequences, bidi or zero-width characters).
    pub changed_by_sanitizer: bool,
    /// The argv of every simple command found, after unquoting and unwrapping, in source order.
    pub commands: Vec<Vec<String>>,
}
