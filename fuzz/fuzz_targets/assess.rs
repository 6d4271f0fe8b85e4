//! `assess` never panics, on any UTF-8 input, and always names what would run.

#![no_main]

use libfuzzer_sys::fuzz_target;
use opsai::policy::{PolicyConfig, assess, sanitize};

fuzz_target!(|s: &str| {
    let assessment = assess(s, &PolicyConfig::default());
    assert_eq!(assessment.sanitized, sanitize(s).text);
});
