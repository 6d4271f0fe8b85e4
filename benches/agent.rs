//! The agent's own costs (`cargo bench --bench agent`), against an instant model:
//!
//! 1. process start → first request byte at the model endpoint, for the real `opsai` binary and a
//!    one-line HTTP server on 127.0.0.1 that answers at once (target: median ≤ 10 ms);
//! 2. agent overhead per step (policy, approval, redaction, audit line, events, history), with an
//!    instant in-process model and an executor that runs nothing (target: ≤ 2 ms).
//!
//! Medians of many runs; the last lines are machine-readable for `bench/run.sh`. Without `--bench`
//! (as `cargo test --all-targets` runs it) it does one quick pass of each and exits.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use opsai::agent::{Agent, LoopSettings};
use opsai::approval::NoApprover;
use opsai::policy::PolicyConfig;
use opsai::redact::Redactor;
use opsai::store::audit::AuditLog;
use opsai::testing::{ScriptedExecutor, ScriptedModel, answer, tool_call};
use opsai::tools::Interrupts;
use opsai::tools::{Registry, RunMode, RunState, Services};

mod support;
use support::{median, spread};

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n";

/// Milliseconds from spawning `opsai` to the first byte of its request arriving.
fn first_request_ms(home: &std::path::Path) -> Option<f64> {
    let listener = TcpListener::bind("127.0.0.1:0").ok()?;
    let url = format!("http://{}/v1", listener.local_addr().ok()?);
    let started = Instant::now();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_opsai"))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPSAI_HOME", home)
        .env("HOME", home)
        .env("OPSAI_BASE_URL", &url)
        .env("OPSAI_NONINTERACTIVE", "1")
        .args(["-q", "hello"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let (mut stream, _) = listener.accept().ok()?;
    let mut first = [0u8; 1];
    stream.read_exact(&mut first).ok()?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    let mut rest = [0u8; 65536];
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let _ = stream.read(&mut rest);
    let _ = stream.write_all(ANSWER);
    drop(stream);
    let _ = child.wait();
    Some(elapsed)
}

/// Milliseconds of agent work per step over a turn of `steps` tool calls.
fn overhead_per_step_ms(dir: &std::path::Path, steps: usize) -> f64 {
    let redactor = Arc::new(Redactor::new(vec![("API_TOKEN".to_owned(), "tok-1234567890".to_owned())]));
    let audit = AuditLog::new(dir.join("audit.log"), 10, 90, redactor.clone());
    let policy = PolicyConfig::default();
    let interrupts = Interrupts::default();
    let command = json!({"command": "git log --oneline -n 20 | grep -i fix", "why": "bench"});
    let calls = (0..steps).map(|n| Ok(tool_call(&format!("call_{n}"), "run_command", command.clone())));
    let model = ScriptedModel::new(calls.chain([Ok(answer("done"))])).unrecorded();
    let executor = ScriptedExecutor::printing(|_| (0, "a1b2c3d fix: handle empty input\n".repeat(20)));
    let tools = opsai::tools::ToolsConfig {
        files: opsai::config::FilesConfig::default(),
        backups: opsai::store::backups::Backups::new(dir.join("backups")),
        kube: opsai::config::KubeConfig::default(),
        kube_context: None,
        kube_contexts: Vec::new(),
        offer: opsai::tools::Offer::ALL,
    };
    let mut agent = Agent {
        model: &model,
        recorder: None,
        services: Services {
            executor: &executor,
            approver: &NoApprover,
            audit: &audit,
            redactor: &redactor,
            policy: &policy,
            mode: RunMode { auto_approve_safe: true, approve_medium: false, dry_run: false, probe_limit: None },
            session: "bench".into(),
            exec_timeout: Duration::from_secs(5),
            interrupts: &interrupts,
            files: &opsai::exec::fs::LocalFs,
            host: None,
            user: None,
            fleet: None,
        },
        tools: Registry::agent(tools),
        settings: LoopSettings {
            model: "m".into(),
            max_iterations: steps as u32 + 1,
            max_tokens: None,
            environment: "os: bench".into(),
            prompt: Default::default(),
            outputs_shown: true,
        },
        state: RunState { cwd: dir.to_owned(), ..RunState::default() },
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return f64::NAN;
    };
    let mut history = Vec::new();
    let started = Instant::now();
    let _ = runtime.block_on(agent.run_turn(&mut history, "bench", &mut |_| {}));
    started.elapsed().as_secs_f64() * 1000.0 / (steps as f64 + 1.0)
}

fn main() -> std::process::ExitCode {
    // The turn's Safe commands probe the sandbox by re-executing this binary as its helper;
    // without this, each probe would run the whole bench again, and its probes again, unbounded.
    if let Some(code) = opsai::sandbox::entry_from_args() {
        return code;
    }
    let full = std::env::args().any(|a| a == "--bench");
    let Ok(dir) = tempfile::tempdir() else { return std::process::ExitCode::FAILURE };
    let (spawns, turns) = if full { (40, 30) } else { (1, 1) };
    let mut first: Vec<f64> = (0..spawns).filter_map(|_| first_request_ms(dir.path())).collect();
    let mut steps: Vec<f64> = (0..turns).map(|_| overhead_per_step_ms(dir.path(), 10)).collect();
    let (first_min, first_max) = spread(&first);
    let (step_min, step_max) = spread(&steps);
    let first_median = median(&mut first);
    let step_median = median(&mut steps);
    println!(
        "process start -> first request byte: median {first_median:.2} ms (min {first_min:.2}, max {first_max:.2}, {spawns} runs)"
    );
    println!(
        "agent overhead per step: median {step_median:.3} ms (min {step_min:.3}, max {step_max:.3}, {turns} turns of 10 steps)"
    );
    println!("BENCH first_request_ms median={first_median:.2} min={first_min:.2} max={first_max:.2}");
    println!("BENCH step_overhead_ms median={step_median:.3} min={step_min:.3} max={step_max:.3}");
    std::process::ExitCode::SUCCESS
}
