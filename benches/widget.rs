//! The widget's cost (`cargo bench --bench widget`), against an instant model:
//!
//! 1. wall time of the real `opsai widget` process (spawn → exit, stdout read), answering a
//!    one-line request with history on stdin, against a mock HTTP server on 127.0.0.1 that replies
//!    at once with a `propose_command` tool call; and, in the same run, `curl -s` posting the very
//!    request body opsai sent to the same mock (target: opsai ≤ 1.5× curl; without curl the
//!    baseline is skipped with a note);
//! 2. peak RSS of `opsai widget` (target ≤ 12 MB), through `/usr/bin/time -f %M` (skipped with a
//!    note when it is missing);
//! 3. the same two figures for a one-shot run, `opsai -q TASK`, against a mock that answers with
//!    text at once (the whole turn: config, context, request, stream, answer, saved conversation);
//! 4. `OpenAiClient::new` in a fresh process for an `http://` and an `https://` endpoint: TLS
//!    roots must only be loaded for https.
//!
//! Medians of many runs (opsai and curl alternate, so drift hits both); the last line is
//! machine-readable for `bench/run.sh`. Without `--bench` (as `cargo test --all-targets` runs it) it
//! does one quick pass and exits.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod support;
use support::{median, spread};

/// The mock's reply: a streamed `propose_command` call.
const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\
\"type\":\"function\",\"function\":{\"name\":\"propose_command\",\"arguments\":\"{\\\"command\\\":\\\"ls -lS\\\"}\"}}]}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n\
data: [DONE]\n\n";

/// The one-shot mock's reply: a streamed plain answer.
const TEXT_ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Files listed.\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
data: [DONE]\n\n";

const HISTORY: &str = "\t cd ~/src/app\n\t git status\n\t cargo build --release\n\t ls -la target/release\n";

/// The first request's body, once it arrived.
type FirstBody = Arc<Mutex<Option<Vec<u8>>>>;

/// Runs on 127.0.0.1, answers every request at once, and keeps the first request's body.
fn start_mock(answer: &'static [u8]) -> Option<(String, FirstBody)> {
    let listener = TcpListener::bind("127.0.0.1:0").ok()?;
    let url = format!("http://{}/v1", listener.local_addr().ok()?);
    let first_body = Arc::new(Mutex::new(None));
    let keep = first_body.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let body = serve(stream, answer);
            if let (Some(body), Ok(mut slot)) = (body, keep.lock())
                && slot.is_none()
            {
                *slot = Some(body);
            }
        }
    });
    Some((url, first_body))
}

/// Reads one request (head and `content-length` body), answers, closes.
fn serve(stream: TcpStream, answer: &[u8]) -> Option<Vec<u8>> {
    let _ = stream.set_nodelay(true);
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    let mut stream = stream;
    stream.write_all(answer).ok()?;
    Some(body)
}

fn widget_command(url: &str, home: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_opsai"));
    cmd.arg("widget")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPSAI_HOME", home)
        .env("HOME", home)
        .env("OPSAI_BASE_URL", url)
        .env("OPSAI_BUFFER", "list files by size")
        .env("OPSAI_CURSOR", "18")
        .env("OPSAI_SHELL", "zsh")
        .env("OPSAI_SHELL_VERSION", "5.9")
        .env("OPSAI_LAST_STATUS", "0")
        .env("OPSAI_KEYMAP", "emacs")
        .current_dir(home);
    cmd
}

/// `opsai -q TASK` with no terminal, against `url`.
fn oneshot_command(url: &str, home: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_opsai"));
    cmd.args(["-q", "list files by size"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPSAI_HOME", home)
        .env("HOME", home)
        .env("OPSAI_BASE_URL", url)
        .env("NO_COLOR", "1")
        .current_dir(home);
    cmd
}

/// Milliseconds for one one-shot process, when it printed the answer.
fn oneshot_ms(url: &str, home: &std::path::Path) -> Option<f64> {
    let started = Instant::now();
    let output = oneshot_command(url, home).stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    (output.status.success() && output.stdout == b"Files listed.\n").then_some(elapsed)
}

/// Milliseconds for one `opsai widget` process, and whether it printed the proposal.
fn widget_ms(url: &str, home: &std::path::Path) -> Option<f64> {
    let started = Instant::now();
    let mut child =
        widget_command(url, home).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().ok()?;
    child.stdin.take()?.write_all(HISTORY.as_bytes()).ok()?;
    let mut out = String::new();
    child.stdout.take()?.read_to_string(&mut out).ok()?;
    let status = child.wait().ok()?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    (status.success() && out == "ls -lS").then_some(elapsed)
}

/// Milliseconds for one `curl -s` posting `body` to the same endpoint.
fn curl_ms(url: &str, body_file: &std::path::Path) -> Option<f64> {
    let started = Instant::now();
    let status = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "-X", "POST", "-H", "Content-Type: application/json"])
        .args(["-H", "Accept: text/event-stream", "-H", "Expect:", "--data-binary"])
        .arg(format!("@{}", body_file.display()))
        .arg(format!("{url}/chat/completions"))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    status.success().then_some(elapsed)
}

/// Peak RSS in MB of one run of `inner`, through `/usr/bin/time -f %M` (kilobytes).
fn peak_rss_mb(inner: Command, home: &std::path::Path) -> Option<f64> {
    let mut cmd = Command::new("/usr/bin/time");
    cmd.args(["-f", "%M"]).arg(inner.get_program()).args(inner.get_args()).env_clear().current_dir(home);
    for (key, value) in inner.get_envs() {
        if let Some(value) = value {
            cmd.env(key, value);
        }
    }
    let output = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).output().ok()?;
    let text = String::from_utf8_lossy(&output.stderr);
    let kb: f64 = text.lines().last()?.trim().parse().ok()?;
    Some(kb / 1024.0)
}

/// Microseconds of `OpenAiClient::new` in a fresh process (this bench, run again in a child).
fn client_setup_us(url: &str) -> Option<f64> {
    let output = Command::new(std::env::current_exe().ok()?).env("OPSAI_BENCH_CLIENT_URL", url).output().ok()?;
    String::from_utf8_lossy(&output.stdout).trim().parse().ok()
}

/// One-shot times, curl times for its first request, and its peak RSS; `None` when it failed.
fn measure_oneshot(runs: usize, rss_runs: usize) -> Option<(Vec<f64>, Vec<f64>, f64)> {
    let home = tempfile::tempdir().ok()?;
    let (url, first_body) = start_mock(TEXT_ANSWER)?;
    oneshot_ms(&url, home.path())?;
    let body = first_body.lock().ok().and_then(|slot| slot.clone())?;
    let body_file = home.path().join("request.json");
    std::fs::write(&body_file, &body).ok()?;
    let (mut times, mut curl) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        times.extend(oneshot_ms(&url, home.path()));
        curl.extend(curl_ms(&url, &body_file));
    }
    let rss = (0..rss_runs)
        .filter_map(|_| peak_rss_mb(oneshot_command(&url, home.path()), home.path()))
        .fold(f64::NAN, f64::max);
    Some((times, curl, rss))
}

fn main() {
    if let Ok(url) = std::env::var("OPSAI_BENCH_CLIENT_URL") {
        let started = Instant::now();
        let client = opsai::llm::OpenAiClient::new(url, None, Duration::from_secs(5));
        let elapsed = started.elapsed().as_secs_f64() * 1e6;
        if client.is_ok() {
            println!("{elapsed:.0}");
        }
        return;
    }
    let full = std::env::args().any(|a| a == "--bench");
    let runs = if full { 40 } else { 1 };
    let Ok(home) = tempfile::tempdir() else { return };
    let Some((url, first_body)) = start_mock(ANSWER) else { return };
    // The first run creates config.json and captures the request body for curl.
    if widget_ms(&url, home.path()).is_none() {
        println!("opsai widget failed against the mock; no figures");
        return;
    }
    let body = first_body.lock().ok().and_then(|slot| slot.clone()).unwrap_or_default();
    let body_file = home.path().join("request.json");
    let have_curl = std::fs::write(&body_file, &body).is_ok() && curl_ms(&url, &body_file).is_some();
    let mut widget = Vec::new();
    let mut curl = Vec::new();
    for _ in 0..runs {
        widget.extend(widget_ms(&url, home.path()));
        if have_curl {
            curl.extend(curl_ms(&url, &body_file));
        }
    }
    let rss_runs = if full { 5 } else { 1 };
    let rss = (0..rss_runs)
        .filter_map(|_| peak_rss_mb(widget_command(&url, home.path()), home.path()))
        .fold(f64::NAN, f64::max);
    let oneshot = measure_oneshot(runs, rss_runs);
    let (setup_http, setup_https) =
        (client_setup_us("http://127.0.0.1:9/v1"), client_setup_us("https://example.invalid/v1"));
    let (widget_min, widget_max) = spread(&widget);
    let widget_median = median(&mut widget);
    let curl_median = median(&mut curl);
    let ratio = widget_median / curl_median;
    println!(
        "opsai widget process: median {widget_median:.2} ms (min {widget_min:.2}, max {widget_max:.2}, {} runs, request body {} bytes)",
        widget.len(),
        body.len()
    );
    if have_curl {
        println!("curl -s of the same request: median {curl_median:.2} ms; ratio {ratio:.2} (target <= 1.5)");
    } else {
        println!("curl not found or failed: no baseline");
    }
    if rss.is_nan() {
        println!("peak RSS: /usr/bin/time not found, not measured");
    } else {
        println!("peak RSS: {rss:.1} MB (target <= 12)");
    }
    let show = |us: Option<f64>| us.map_or_else(|| "n/a".to_owned(), |us| format!("{us:.0}"));
    println!("OpenAiClient::new in a fresh process: http {} us, https {} us", show(setup_http), show(setup_https));
    if let Some((mut times, mut curl, rss)) = oneshot {
        let (min, max) = spread(&times);
        let (median_ms, curl_median) = (median(&mut times), median(&mut curl));
        println!(
            "opsai -q one-shot process: median {median_ms:.2} ms (min {min:.2}, max {max:.2}); curl of its request \
             {curl_median:.2} ms; ratio {:.2} (target <= 1.5); peak RSS {rss:.1} MB (target <= 12)",
            median_ms / curl_median
        );
        println!(
            "BENCH oneshot_ms median={median_ms:.2} min={min:.2} max={max:.2} curl_median={curl_median:.2} \
             ratio={:.2} peak_rss_mb={rss:.1}",
            median_ms / curl_median
        );
    }
    println!(
        "BENCH widget_ms median={widget_median:.2} min={widget_min:.2} max={widget_max:.2} curl_median={curl_median:.2} \
         ratio={ratio:.2} peak_rss_mb={rss:.1}"
    );
}
