//! Reading piped input (`cargo bench --bench explain`): `head -c 1G /dev/urandom | base64 | opsai explain`
//! against an instant model (a one-line HTTP server on 127.0.0.1 that answers at once).
//!
//! - read throughput: input bytes / (spawn → first byte of the request at the model), target ≥ 500 MB/s;
//! - peak RSS of `opsai explain` (its `VmHWM` when the request arrives, after the whole input was
//!   read), target ≤ 30 MB.
//!
//! The input is the base64 of 1 GiB of random bytes, in 76-column lines as `base64` writes them. On
//! this kind of machine `/dev/urandom | base64` itself makes only ~100 MB/s, so the bench writes it
//! from memory (the base64 of one random MiB, repeated) to measure opsai rather than the producer;
//! with `--bench` the literal pipeline is also run once, for reference. Medians of several runs; the
//! last line is machine-readable. Without `--bench` (as `cargo test --all-targets` runs it) it does
//! one quick pass of 16 MiB and exits.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod support;
use support::{median, spread};

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n";

/// Random bytes per block before encoding.
const BLOCK: usize = 1 << 20;

/// The base64 of one random MiB, wrapped at 76 columns like coreutils `base64`.
fn random_block() -> Vec<u8> {
    let mut raw = vec![0u8; BLOCK];
    if let Ok(mut urandom) = std::fs::File::open("/dev/urandom") {
        let _ = urandom.read_exact(&mut raw);
    }
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(BLOCK * 4 / 3 + BLOCK / 57 + 4);
    let mut column = 0;
    for chunk in raw.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        let digits = [n >> 18, n >> 12, n >> 6, n].map(|d| ALPHABET[(d & 63) as usize]);
        let take = chunk.len() + 1;
        for (index, &digit) in digits.iter().enumerate() {
            out.push(if index < take { digit } else { b'=' });
            column += 1;
            if column == 76 {
                out.push(b'\n');
                column = 0;
            }
        }
    }
    if column > 0 {
        out.push(b'\n');
    }
    out
}

/// Where the input comes from.
enum Source<'a> {
    /// `blocks` copies of `block`, written from this process.
    Memory { block: &'a [u8], blocks: usize },
    /// The literal pipeline: `head -c {mib}M /dev/urandom | base64`.
    Pipeline { mib: usize },
}

struct Run {
    input_bytes: u64,
    read_s: f64,
    peak_rss_kb: Option<u64>,
}

/// The peak resident set of `pid` so far, in kB (Linux).
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn run_once(home: &std::path::Path, source: &Source<'_>) -> Option<Run> {
    let listener = TcpListener::bind("127.0.0.1:0").ok()?;
    let url = format!("http://{}/v1", listener.local_addr().ok()?);
    let mut command = match source {
        Source::Memory { .. } => {
            let mut opsai = Command::new(env!("CARGO_BIN_EXE_opsai"));
            opsai.arg("explain");
            opsai
        }
        Source::Pipeline { mib } => {
            let mut sh = Command::new("sh");
            sh.arg("-c")
                .arg(format!("head -c {mib}M /dev/urandom | base64 | '{}' explain", env!("CARGO_BIN_EXE_opsai")));
            sh
        }
    };
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPSAI_HOME", home)
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .env("OPSAI_BASE_URL", &url)
        .env("OPSAI_NONINTERACTIVE", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let started = Instant::now();
    let (mut child, writer) = match source {
        Source::Memory { block, blocks } => {
            let mut child = command.stdin(Stdio::piped()).spawn().ok()?;
            let mut stdin = child.stdin.take()?;
            let (block, blocks) = (block.to_vec(), *blocks);
            let writer = std::thread::spawn(move || {
                let mut written = 0u64;
                for _ in 0..blocks {
                    if stdin.write_all(&block).is_err() {
                        break;
                    }
                    written += block.len() as u64;
                }
                written
            });
            (child, Some(writer))
        }
        Source::Pipeline { .. } => (command.stdin(Stdio::null()).spawn().ok()?, None),
    };
    let Some(mut stream) = accept_within(&listener, &mut child, Duration::from_secs(120)) else {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    };
    let mut first = [0u8; 1];
    stream.read_exact(&mut first).ok()?;
    let read_s = started.elapsed().as_secs_f64();
    // In the pipeline the shell is the child; opsai is its last process.
    let opsai_pid = match source {
        Source::Memory { .. } => Some(child.id()),
        Source::Pipeline { .. } => find_child_named(child.id(), "opsai"),
    };
    let peak = opsai_pid.and_then(peak_rss_kb);
    let mut rest = [0u8; 65536];
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let _ = stream.read(&mut rest);
    let _ = stream.write_all(ANSWER);
    drop(stream);
    let input_bytes = match (writer, source) {
        (Some(writer), _) => writer.join().ok()?,
        (None, Source::Pipeline { mib }) => base64_len(*mib as u64 * 1024 * 1024),
        (None, Source::Memory { .. }) => 0,
    };
    let _ = child.wait();
    Some(Run { input_bytes, read_s, peak_rss_kb: peak })
}

/// The model's connection, unless opsai exits first or `limit` passes (a broken build must not hang the bench).
fn accept_within(listener: &TcpListener, child: &mut std::process::Child, limit: Duration) -> Option<TcpStream> {
    listener.set_nonblocking(true).ok()?;
    let deadline = Instant::now() + limit;
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                stream.set_nonblocking(false).ok()?;
                return Some(stream);
            }
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return None,
        }
        if Instant::now() > deadline || child.try_wait().ok().flatten().is_some() {
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Bytes `base64` writes for `n` input bytes: 4 per 3, in lines of 76 columns.
fn base64_len(n: u64) -> u64 {
    let encoded = n.div_ceil(3) * 4;
    encoded + encoded.div_ceil(76)
}

/// A direct child of `parent` whose command name is `name` (Linux).
fn find_child_named(parent: u32, name: &str) -> Option<u32> {
    let children = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).ok()?;
    children
        .split_whitespace()
        .filter_map(|pid| pid.parse::<u32>().ok())
        .find(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|comm| comm.trim() == name))
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let Ok(dir) = tempfile::tempdir() else { return };
    let block = random_block();
    let (runs, blocks) = if full { (5, 1024) } else { (1, 16) };
    let results: Vec<Run> =
        (0..runs).filter_map(|_| run_once(dir.path(), &Source::Memory { block: &block, blocks })).collect();
    let mut rates: Vec<f64> = results.iter().map(|r| r.input_bytes as f64 / 1e6 / r.read_s).collect();
    let mut peaks: Vec<f64> = results.iter().filter_map(|r| r.peak_rss_kb).map(|kb| kb as f64 / 1024.0).collect();
    let input_mb = results.first().map_or(0.0, |r| r.input_bytes as f64 / 1e6);
    let (rate_min, rate_max) = spread(&rates);
    let peak_max = peaks.iter().copied().fold(0.0, f64::max);
    let rate = median(&mut rates);
    let peak = median(&mut peaks);
    println!(
        "opsai explain read of {input_mb:.0} MB (base64 of random bytes, from memory): median {rate:.0} MB/s \
         (min {rate_min:.0}, max {rate_max:.0}, {} runs); peak RSS median {peak:.1} MB (max {peak_max:.1})",
        results.len()
    );
    let (mut pipeline_rate, mut pipeline_rss) = ("n/a".to_owned(), "n/a".to_owned());
    if full && let Some(run) = run_once(dir.path(), &Source::Pipeline { mib: 1024 }) {
        pipeline_rate = format!("{:.0}", run.input_bytes as f64 / 1e6 / run.read_s);
        pipeline_rss = run.peak_rss_kb.map_or("n/a".to_owned(), |kb| format!("{:.1}", kb as f64 / 1024.0));
        println!(
            "reference, literal `head -c 1G /dev/urandom | base64 | opsai explain`: {:.0} MB in {:.2} s = {:.0} MB/s \
             (bounded by the producer); opsai peak RSS {}",
            run.input_bytes as f64 / 1e6,
            run.read_s,
            run.input_bytes as f64 / 1e6 / run.read_s,
            run.peak_rss_kb.map_or("n/a".to_owned(), |kb| format!("{:.1} MB", kb as f64 / 1024.0))
        );
    }
    println!(
        "BENCH explain_read_mb_s={rate:.0} min={rate_min:.0} max={rate_max:.0} peak_rss_mb={peak:.1} \
         input_mb={input_mb:.0} pipeline_mb_s={pipeline_rate} pipeline_rss_mb={pipeline_rss}"
    );
}
