#!/usr/bin/env python3
"""`opsai serve` (issue 16): how fast a chat answers and how much memory the server holds.

    python3 bench/serve.py [OPSAI_BINARY] [RUNS]     # default target/release/opsai, 50 runs

A streaming mock model (bench/stream_llm.py, a process of its own as in bench/oneshot.py) and
`opsai serve --listen 127.0.0.1:0` (token mode, OPSAI_SERVE_TOKEN fixed) are started once. Then:
- first byte: RUNS times, interleaved, the time from sending `POST /api/v2/ai/chat` (a fresh
  conversation each time, created untimed) to the first byte of the SSE body, next to the time from
  sending the same kind of chat request straight to the mock's `/v1/chat/completions` to its first
  body byte; both with Python's http.client on new connections, so the client's cost is the same.
  Also the time to the first event carrying the model's text (`answer_delta`), which includes the
  server's whole way to the model and back. Every stream is read to its `done` event.
- idle RSS: VmRSS of the server's own process (/proc/PID/status) after start, and again idle after
  the runs. Not the spawning process's rusage: that measures Python, not opsai.
- 20 streams: 20 conversations chat at once while the mock streams 50 tokens 20 ms apart; the
  server's VmRSS sampled every 5 ms (the largest sample) and its VmHWM (peak) afterwards. Every
  stream must end with `done` and hold the whole answer.
Prints one `BENCH serve …` line and a readable table; exits 1 when a stream lost its answer.
"""
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from serve_http import answer_of, free_port, request, status_kb, wait_for  # noqa: E402
binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/opsai")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 50
token = "bench-serve-token-0123456789abcdef"
streams = 20
slow = {"tokens": 50, "delay_ms": 20}










AUTH = {"Authorization": f"Bearer {token}"}


def new_conversation(port, title):
    return request(port, "POST", "/api/v2/ai/conversations", {"title": title}, AUTH)["id"]


def timed_stream(port, path, body, headers):
    """(ms to the first body byte, ms to the first model text, the events' data as JSON, raw text)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    data = json.dumps(body).encode()
    started = time.perf_counter()
    conn.request("POST", path, body=data, headers={"Content-Type": "application/json", **headers})
    resp = conn.getresponse()
    first = resp.read(1)
    first_ms = (time.perf_counter() - started) * 1000
    if resp.status != 200 or not first:
        sys.exit(f"bench/serve.py: POST {path} answered {resp.status}: {first + resp.read(300)!r}")
    buffer, events, text_ms = first, [], None
    while True:
        # Whole events are separated by a blank line; keep-alive comments start with ':'.
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            for line in block.decode().splitlines():
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    events.append({"type": "done"})
                    continue
                event = json.loads(payload)
                events.append(event)
                is_text = event.get("kind") == "answer_delta" or "choices" in event
                if text_ms is None and is_text:
                    text_ms = (time.perf_counter() - started) * 1000
        if events and events[-1].get("type") == "done":
            break
        chunk = resp.read1(65536)
        if not chunk:
            break
        buffer += chunk
    conn.close()
    return first_ms, text_ms, events




mock_port = free_port()
mock = subprocess.Popen([sys.executable, os.path.join(here, "stream_llm.py"), str(mock_port), "3", "0"])
work = tempfile.mkdtemp(prefix="opsai-serve-bench-")
server = None
try:
    wait_for(mock_port)
    home = os.path.join(work, "home")
    os.mkdir(home)
    env = {"HOME": work, "OPSAI_HOME": home, "OPSAI_BASE_URL": f"http://127.0.0.1:{mock_port}/v1",
           "OPSAI_SERVE_TOKEN": token, "NO_COLOR": "1", "LANG": "C.UTF-8", "PATH": os.environ.get("PATH", "")}
    server = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline().strip()
    if not line.startswith("opsai serve: open http://127.0.0.1:"):
        sys.exit(f"bench/serve.py: unexpected first line from opsai serve: {line!r}")
    port = int(line.split("127.0.0.1:", 1)[1].split("/", 1)[0])
    time.sleep(0.2)
    idle_start_kb = status_kb(server.pid, "VmRSS")

    chat = {"model": "bench-model", "stream": True, "messages": [{"role": "user", "content": "list files"}]}

    def serve_once(n):
        conversation = new_conversation(port, f"bench {n}")
        body = {"conversation_id": conversation, "message": "list files"}
        first_ms, text_ms, events = timed_stream(port, "/api/v2/ai/chat", body, AUTH)
        if not events or events[-1].get("type") != "done" or not answer_of(events).startswith("Files"):
            sys.exit(f"bench/serve.py: a chat stream lost its answer: {events}")
        return first_ms, text_ms

    def mock_once():
        first_ms, _, _ = timed_stream(mock_port, "/v1/chat/completions", chat, {})
        return first_ms

    for n in range(5):
        serve_once(f"warm-up {n}")
        mock_once()
    serve_first, serve_text, mock_first = [], [], []
    for n in range(runs):
        mock_first.append(mock_once())
        first_ms, text_ms = serve_once(n)
        serve_first.append(first_ms)
        serve_text.append(text_ms)
    time.sleep(0.5)
    idle_after_kb = status_kb(server.pid, "VmRSS")

    request(mock_port, "POST", "/control", slow)
    conversations = [new_conversation(port, f"load {n}") for n in range(streams)]
    results = [None] * streams

    def stream(index):
        body = {"conversation_id": conversations[index], "message": f"stream {index}"}
        results[index] = timed_stream(port, "/api/v2/ai/chat", body, AUTH)[2]

    threads = [threading.Thread(target=stream, args=(n,)) for n in range(streams)]
    peak_sample_kb = 0
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        peak_sample_kb = max(peak_sample_kb, status_kb(server.pid, "VmRSS"))
        time.sleep(0.005)
    for thread in threads:
        thread.join()
    hwm_kb = status_kb(server.pid, "VmHWM")
    expected = "Files " + "".join(f"w{n} " for n in range(1, slow["tokens"]))
    lost = [n for n, events in enumerate(results)
            if not events or events[-1].get("type") != "done" or answer_of(events).strip() != expected.strip()]
finally:
    if server is not None:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    mock.kill()
    shutil.rmtree(work, ignore_errors=True)

mock_median = statistics.median(mock_first)
first_median = statistics.median(serve_first)
text_median = statistics.median(serve_text)
ratio = first_median / mock_median
mb = lambda kb: kb / 1024  # noqa: E731
print(f"{runs} runs each, interleaved, new connection per request; {os.path.basename(binary)}")
print(f"{'measure':58} {'median':>9} {'min':>8} {'max':>8}")
print(f"{'POST /api/v2/ai/chat -> first SSE byte (ms)':58} {first_median:9.2f} {min(serve_first):8.2f} "
      f"{max(serve_first):8.2f}")
print(f"{'POST /api/v2/ai/chat -> first model text event (ms)':58} {text_median:9.2f} {min(serve_text):8.2f} "
      f"{max(serve_text):8.2f}")
print(f"{'mock /v1/chat/completions -> first byte (ms)':58} {mock_median:9.2f} {min(mock_first):8.2f} "
      f"{max(mock_first):8.2f}")
print(f"first SSE byte / mock first byte: {ratio:.2f}x (target <= 1.5x); "
      f"first model text / mock: {text_median / mock_median:.2f}x")
print(f"server VmRSS idle after start: {mb(idle_start_kb):.1f} MB; idle after {runs + 5} turns: "
      f"{mb(idle_after_kb):.1f} MB (target <= 20 MB)")
print(f"server with {streams} concurrent streams: largest VmRSS sample {mb(peak_sample_kb):.1f} MB, "
      f"VmHWM {mb(hwm_kb):.1f} MB")
print(f"streams that lost their answer: {len(lost)} of {streams}")
print(f"BENCH serve first_byte_ms={first_median:.2f} mock_first_byte_ms={mock_median:.2f} ratio={ratio:.2f} "
      f"first_text_ms={text_median:.2f} idle_rss_mb={mb(idle_start_kb):.1f} idle_after_rss_mb={mb(idle_after_kb):.1f} "
      f"streams={streams} streams_rss_mb={mb(peak_sample_kb):.1f} hwm_mb={mb(hwm_kb):.1f} lost={len(lost)}")
sys.exit(1 if lost else 0)
