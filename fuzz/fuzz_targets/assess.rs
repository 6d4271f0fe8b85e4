//! `assess` never panics, on any UTF-8 input; it always names what would run (the sanitized
//! text), and input the sanitizer had to change is never Safe and never allowed without asking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use opsai::policy::{PolicyConfig, assess, sanitize};
use opsai::protocol::{Decision, Risk};

fuzz_target!(|s: &str| {
    let assessment = assess(s, &PolicyConfig::default());
    let clean = sanitize(s);
    assert_eq!(assessment.sanitized, clean.text);
    assert_eq!(assessment.changed_by_sanitizer, clean.changed());
    if clean.changed() {
        assert_ne!(assessment.risk, Risk::Safe, "sanitizer removed {:?}, yet rated Safe", clean.removed);
        assert_ne!(assessment.decision, Decision::Allow);
    }
    // Only Safe runs without asking (no user rules here, so nothing is denied either).
    assert_eq!(assessment.decision == Decision::Allow, assessment.risk == Risk::Safe);
    assert_ne!(assessment.decision, Decision::Deny);
});
