//! Sanitizing is idempotent: what it lets through, it lets through unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use opsai::policy::sanitize;

fuzz_target!(|s: &str| {
    let once = sanitize(s).text;
    let twice = sanitize(&once);
    assert_eq!(twice.text, once);
    assert!(!twice.changed(), "a second pass removed {:?}", twice.removed);
});
