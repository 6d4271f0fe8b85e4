//! The user's own rules from the `safety` section of config.json: `allow` and `deny` lists of
//! argv-prefix patterns, each with a risk and a reason.
//!
//! ```json
//! "safety": {
//!   "allow": [{ "pattern": "make test", "risk": "safe", "reason": "our test suite is read-only" }],
//!   "deny":  [{ "pattern": "terraform apply *", "reason": "infrastructure changes go through CI" }]
//! }
//! ```
//! A pattern is a string of words (split on whitespace) or an array of words; `*` matches any one
//! word, and the pattern matches every argv that starts with it. Deny always wins. An allow rule
//! replaces the built-in verdict of the program it matches, but never lowers a High one unless it
//! names that command exactly (no `*`, same number of words).

use serde::Deserialize;
use thiserror::Error;

use crate::protocol::Risk;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRule {
    pub pattern: Vec<String>,
    pub risk: Risk,
    pub reason: String,
}

/// The user-rule part of the policy. `Default` is "no rules": the built-in table alone decides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyConfig {
    pub allow: Vec<UserRule>,
    pub deny: Vec<UserRule>,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum RuleError {
    #[error("`safety` must be an object with `allow` and `deny` lists")]
    NotAnObject,
    #[error("`safety.{list}` must be a list of rules")]
    NotAList { list: &'static str },
    #[error("rule safety.{list}[{index}] is invalid: {message}")]
    Invalid { list: &'static str, index: usize, message: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    pattern: RawPattern,
    risk: Option<Risk>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawPattern {
    Words(Vec<String>),
    Line(String),
}

impl PolicyConfig {
    /// Builds the rules from the `safety` JSON value (`null` → no rules). Other keys of `safety`
    /// (such as `auto_approve_safe`) belong to other modules and are ignored here.
    pub(crate) fn from_json(safety: &serde_json::Value) -> Result<Self, RuleError> {
        let object = match safety {
            serde_json::Value::Null => return Ok(Self::default()),
            serde_json::Value::Object(object) => object,
            _ => return Err(RuleError::NotAnObject),
        };
        Ok(Self {
            allow: rules_from(object.get("allow"), "allow", Risk::Safe)?,
            deny: rules_from(object.get("deny"), "deny", Risk::High)?,
        })
    }

    /// The first deny rule matching `argv`.
    pub fn denied(&self, argv: &[String]) -> Option<&UserRule> {
        self.deny.iter().find(|rule| rule.matches(argv))
    }

    /// The strictest allow rule matching `argv`.
    pub fn allowed(&self, argv: &[String]) -> Option<&UserRule> {
        self.allow.iter().filter(|rule| rule.matches(argv)).max_by_key(|rule| rule.risk)
    }
}

impl UserRule {
    pub fn matches(&self, argv: &[String]) -> bool {
        self.pattern.len() <= argv.len()
            && self.pattern.iter().zip(argv).all(|(want, word)| want == "*" || want == word)
    }

    /// True when the rule names `argv` exactly: same words, no wildcard.
    pub(crate) fn names_exactly(&self, argv: &[String]) -> bool {
        self.pattern.len() == argv.len() && self.pattern.iter().zip(argv).all(|(want, word)| want == word)
    }

    pub(crate) fn pattern_text(&self) -> String {
        self.pattern.join(" ")
    }
}

fn rules_from(
    value: Option<&serde_json::Value>,
    list: &'static str,
    default_risk: Risk,
) -> Result<Vec<UserRule>, RuleError> {
    let items = match value {
        None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
        Some(serde_json::Value::Array(items)) => items,
        Some(_) => return Err(RuleError::NotAList { list }),
    };
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let invalid = |message: String| RuleError::Invalid { list, index, message };
            let raw: RawRule = serde_json::from_value(item.clone()).map_err(|err| invalid(err.to_string()))?;
            let pattern: Vec<String> = match raw.pattern {
                RawPattern::Words(words) => words,
                RawPattern::Line(line) => line.split_whitespace().map(str::to_owned).collect(),
            };
            if pattern.is_empty() || pattern.iter().any(|word| word.trim().is_empty()) {
                return Err(invalid("`pattern` needs at least one non-empty word".into()));
            }
            if pattern[0] == "*" {
                return Err(invalid("`pattern` must start with a program name, not `*`".into()));
            }
            let reason = raw.reason.unwrap_or_default();
            if reason.trim().is_empty() {
                return Err(invalid("`reason` is required: say why the rule exists".into()));
            }
            Ok(UserRule { pattern, risk: raw.risk.unwrap_or(default_risk), reason })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn argv(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn string_and_array_patterns_match_argv_prefixes() {
        let config = PolicyConfig::from_json(&json!({
            "allow": [{"pattern": "make test", "reason": "ours"}],
            "deny": [{"pattern": ["terraform", "*", "prod"], "reason": "CI only"}]
        }))
        .unwrap();
        assert!(config.allowed(&argv("make test -j4")).is_some());
        assert!(config.allowed(&argv("make install")).is_none());
        assert!(config.denied(&argv("terraform apply prod -auto-approve")).is_some());
        assert!(config.denied(&argv("terraform apply")).is_none());
        assert_eq!(config.allow[0].risk, Risk::Safe);
        assert_eq!(config.deny[0].risk, Risk::High);
    }

    #[test]
    fn invalid_rules_name_the_rule() {
        let cases = [
            json!({"deny": [{"pattern": "", "reason": "x"}]}),
            json!({"deny": [{"pattern": "rm", "reason": "x", "risk": "extreme"}]}),
            json!({"allow": [{"pattern": "ls"}]}),
            json!({"allow": [{"pattern": "* foo", "reason": "x"}]}),
            json!({"allow": [{"pattern": "ls", "reason": "x", "riks": "safe"}]}),
        ];
        for case in cases {
            let err = PolicyConfig::from_json(&case).unwrap_err();
            assert!(matches!(err, RuleError::Invalid { index: 0, .. }), "{case}: {err}");
        }
        assert_eq!(PolicyConfig::from_json(&json!({"allow": 3})), Err(RuleError::NotAList { list: "allow" }));
        assert_eq!(PolicyConfig::from_json(&json!([1])), Err(RuleError::NotAnObject));
    }

    #[test]
    fn exact_naming_is_word_for_word() {
        let rule = UserRule { pattern: argv("rm -rf build"), risk: Risk::Medium, reason: "x".into() };
        assert!(rule.names_exactly(&argv("rm -rf build")));
        assert!(!rule.names_exactly(&argv("rm -rf build /")));
    }
}
