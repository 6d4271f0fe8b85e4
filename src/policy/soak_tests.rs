//! The long fuzz of issue 21 (a stand-in for `cargo fuzz`, which needs a nightly toolchain):
//! random and shell-shaped input, and mutations of the bench lists, through `assess` and the
//! redactor for as long as `OPSAI_SOAK_SECS` says (60 s by default). Ignored in normal runs:
//!
//! ```sh
//! OPSAI_SOAK_SECS=1800 cargo test --release --lib policy::soak_tests -- --ignored --nocapture
//! ```
//!
//! A crash of the grammar's C code kills the test process, which fails the run; a panic inside
//! `assess` is caught there and turned into a High verdict, which this test also counts as a crash.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

use super::{PolicyConfig, assess, sanitize};
use crate::protocol::{Decision, Risk};
use crate::redact::Redactor;

const SEEDS: &[&str] = &[include_str!("../../bench/everyday.txt"), include_str!("../../bench/hostile.txt")];

/// Pieces of shell and of secrets, glued at random.
const PIECES: &[&str] = &[
    "`",
    "$(",
    ")",
    "${",
    "}",
    "${x:-",
    "${x/",
    "${x#",
    "${x@P}",
    "@Q",
    "<<EOF\n",
    "\nEOF",
    "<<'EOF'\n",
    "<<-EOF\n\t",
    "<<<",
    "case a in ",
    ") ;; esac",
    "for i in ",
    "; do ",
    "; done",
    "[[ ",
    " =~ ",
    " ]]",
    "$((",
    "))",
    "a[",
    "]",
    "<(",
    ">(",
    "|",
    "||",
    "&&",
    ";",
    "&",
    "\n",
    "\\",
    "'",
    "\"",
    "$'\\x72m'",
    "$\"x\"",
    "{a,b}",
    "{1..3}",
    "*",
    "?(",
    "!",
    "#",
    "~",
    " ",
    "rm -rf /",
    "curl ",
    "gopher://",
    "http://127.0.0.1/",
    "kubectl get secrets.v1.",
    "--server=",
    "docker inspect",
    "find . -exec ",
    "{} \\;",
    "xargs -I ",
    "git help ",
    "cargo tree",
    "AWS_SECRET_ACCESS_KEY=",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
    "password=hunter2",
    "Authorization: Bearer ",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
    "\u{202e}",
    "\u{200b}",
    "\x1b[8m",
    "\u{10ffff}",
    "\u{f0000}",
    "é",
    "\0",
];

fn mutate(rng: &mut TestRng, base: &str) -> String {
    let mut bytes: Vec<char> = base.chars().collect();
    for _ in 0..(1 + rng.next_u32() % 4) {
        let at = if bytes.is_empty() { 0 } else { rng.next_u32() as usize % (bytes.len() + 1) };
        match rng.next_u32() % 3 {
            0 => {
                let piece = PIECES[rng.next_u32() as usize % PIECES.len()];
                for (i, c) in piece.chars().enumerate() {
                    bytes.insert(at + i, c);
                }
            }
            1 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => {
                let c = char::from_u32(rng.next_u32() % 0x80).unwrap_or(' ');
                bytes.insert(at, c);
            }
        }
    }
    bytes.into_iter().collect()
}

fn check(input: &str, redactor: &Redactor) {
    let first = assess(input, &PolicyConfig::default());
    assert!(
        !first.reasons.iter().any(|r| r.contains("the policy failed on this command")),
        "assess panicked on {input:?}"
    );
    assert_eq!(first, assess(input, &PolicyConfig::default()), "assess is not deterministic on {input:?}");
    assert_eq!(first.risk == Risk::Safe, first.decision == Decision::Allow, "{input:?}");
    assert_eq!(first.sanitized, sanitize(input).text, "{input:?}");
    if first.changed_by_sanitizer {
        assert_ne!(first.risk, Risk::Safe, "{input:?}: the sanitizer changed it, yet Safe");
    }
    assert!(first.risk == Risk::Safe || !first.reasons.is_empty(), "{input:?}: not Safe without a reason");
    let once = redactor.redact(input);
    assert_eq!(redactor.redact(&once), once, "redacting twice changed {input:?}");
}

#[test]
// The count and the seed are the run's result: with the seed a failure can be replayed.
#[allow(clippy::print_stderr)]
#[ignore = "long-running: OPSAI_SOAK_SECS=1800 cargo test --release --lib policy::soak_tests -- --ignored"]
fn policy_and_redactor_survive_a_long_fuzz() {
    let secs = std::env::var("OPSAI_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let seed: u64 = std::env::var("OPSAI_SOAK_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let mut runner = TestRunner::deterministic();
    let redactor =
        Redactor::new([("GITHUB_TOKEN".to_owned(), "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB".to_owned())]);
    let seeds: Vec<&str> = SEEDS.iter().flat_map(|list| list.lines()).filter(|l| !l.starts_with('#')).collect();
    let any_string = any::<String>();
    let pieces = prop::collection::vec(prop::sample::select(PIECES), 0..24);
    let mut runs: u64 = 0;
    while Instant::now() < deadline {
        for _ in 0..64 {
            let input = match rng.next_u32() % 3 {
                0 => any_string.new_tree(&mut runner).map(|t| t.current()).unwrap_or_default(),
                1 => pieces.new_tree(&mut runner).map(|t| t.current().concat()).unwrap_or_default(),
                _ => {
                    let base = seeds[rng.next_u32() as usize % seeds.len()];
                    mutate(&mut rng, base)
                }
            };
            check(&input, &redactor);
            runs += 1;
        }
    }
    eprintln!("soak: {runs} inputs in {secs} s without a crash (OPSAI_SOAK_SEED={seed})");
}
