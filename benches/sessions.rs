//! What `opsai sessions list` costs in process over a store of 1,000 conversations of 10 messages
//! (`cargo bench --bench sessions`): open the store (connection, pragmas, schema check), `list(50)`,
//! and `write_list` into a buffer, then close it, as one run of the command does after start-up.
//!
//! No framework: a few warm-up runs, then `RUNS` timed runs, and the median, minimum and maximum in
//! milliseconds. The store is built once through the public API (every message its own transaction,
//! as the REPL writes them). The last line is machine-readable for `bench/run.sh`. Run without
//! `--bench` (as `cargo test --all-targets` does) it builds a small store, lists it once and exits.

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use opsai::protocol::{ChatMessage, ToolCall};
use opsai::redact::Redactor;
use opsai::store::sessions::{NewConversation, SessionStore};
use opsai::ui::sessions_view::write_list;

const CONVERSATIONS: usize = 1_000;
const MESSAGES_EACH: usize = 10;
const LISTED: usize = 50;
const WARMUP: usize = 10;
const RUNS: usize = 200;
const TARGET_MS: f64 = 20.0;

const DIRECTORIES: &[&str] = &["/srv/api", "/home/me/src/opsai", "/var/log", "/etc/nginx", "/tmp"];
const REQUESTS: &[&str] = &[
    "find the biggest log files under /var/log and tell me which are safe to delete",
    "why is nginx returning 502 for /api since this morning?",
    "show the ten processes using the most memory",
    "which ports are listening and which program owns each",
    "compress last week's logs into one archive in /tmp",
];

/// Ten messages as a turn with two commands writes them: request, call, result, call, result, answer…
fn conversation_messages(n: usize) -> Vec<ChatMessage> {
    let call = |id: String, command: &str| ToolCall {
        id,
        name: "run_command".into(),
        arguments: serde_json::json!({"command": command, "why": "look before answering"}),
    };
    let output: String = (0..20).map(|line| format!("{line:>4}  1.2G  /var/log/service-{n}-{line}.log\n")).collect();
    let mut messages = vec![ChatMessage::user(REQUESTS[n % REQUESTS.len()])];
    while messages.len() < MESSAGES_EACH - 1 {
        let id = format!("call_{n}_{}", messages.len());
        messages
            .push(ChatMessage::assistant("Let me look.", vec![call(id.clone(), "du -ah /var/log | sort -h | tail")]));
        messages.push(ChatMessage::tool(id, output.clone()));
    }
    messages
        .push(ChatMessage::assistant("The biggest are the service logs; the rotated ones are safe to delete.", vec![]));
    messages
}

fn fill(path: &Path, conversations: usize) -> Result<(), Box<dyn std::error::Error>> {
    let store = SessionStore::open(path, Arc::new(Redactor::default()))?;
    for n in 0..conversations {
        let messages = conversation_messages(n);
        let id = store.create(&NewConversation {
            first_request: &messages[0].content,
            cwd: DIRECTORIES[n % DIRECTORIES.len()],
            host: "localhost",
            model: "gpt-4o-mini",
            user: None,
            cluster: None,
            hosts: None,
        })?;
        for message in &messages {
            store.append(id, message)?;
        }
    }
    Ok(())
}

/// One `opsai sessions list`, minus process start-up: milliseconds and the bytes it would print.
fn list_once(path: &Path, redactor: &Arc<Redactor>) -> Result<(f64, usize), Box<dyn std::error::Error>> {
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis() as i64;
    let started = Instant::now();
    let store = SessionStore::open(path, Arc::clone(redactor))?;
    let sessions = store.list(LISTED)?;
    let mut out = Vec::with_capacity(8 * 1024);
    write_list(&mut out, &sessions, now_ms, false)?;
    drop(store);
    let took = started.elapsed().as_secs_f64() * 1000.0;
    Ok((took, black_box(out).len()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let full = std::env::args().any(|arg| arg == "--bench");
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("sessions.db");
    let redactor = Arc::new(Redactor::default());
    if !full {
        fill(&path, 20)?;
        let (_, bytes) = list_once(&path, &redactor)?;
        println!("sessions bench: smoke list of 20 conversations ok ({bytes} bytes)");
        return Ok(());
    }

    let filling = Instant::now();
    fill(&path, CONVERSATIONS)?;
    let fill_s = filling.elapsed().as_secs_f64();
    let db_mb = std::fs::metadata(&path)?.len() as f64 / 1e6;
    for _ in 0..WARMUP {
        list_once(&path, &redactor)?;
    }
    let mut runs = Vec::with_capacity(RUNS);
    let mut bytes = 0;
    for _ in 0..RUNS {
        let (took, printed) = list_once(&path, &redactor)?;
        runs.push(took);
        bytes = printed;
    }
    runs.sort_by(f64::total_cmp);
    let median = runs[runs.len() / 2];
    let (min, max) = (runs[0], runs[runs.len() - 1]);

    println!(
        "sessions: {CONVERSATIONS} conversations x {MESSAGES_EACH} messages ({db_mb:.1} MB, filled in {fill_s:.1} s, \
         one transaction per message); open + list({LISTED}) + write_list ({bytes} bytes), {RUNS} runs"
    );
    println!(
        "sessions list: median {median:.3} ms (min {min:.3}, max {max:.3}); target <= {TARGET_MS:.0} ms: {}",
        if median <= TARGET_MS { "met" } else { "NOT MET" }
    );
    println!("BENCH sessions_list_ms median={median:.3} min={min:.3} max={max:.3}");
    // bench/run.sh times the whole `opsai sessions list` process over this same database.
    if let Some(keep) = std::env::var_os("SESSIONS_BENCH_KEEP") {
        std::fs::copy(&path, keep)?;
    }
    Ok(())
}
