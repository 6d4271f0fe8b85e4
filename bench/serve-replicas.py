#!/usr/bin/env python3
"""`opsai serve` replicas (issue 25): 200 concurrent chat streams across two replicas on one
PostgreSQL behind nginx, none lost, the first SSE byte against the model's, RSS per replica.

    python3 bench/serve-replicas.py [OPSAI_BINARY] [STREAMS] [RUNS] [--parts]   # target/release/opsai, 200, 30

Started once, each a process of its own: a throwaway PostgreSQL cluster (initdb in a temp dir; as
the `postgres` user under root), the streaming mock model (bench/stream_llm.py), two replicas
(`opsai serve --database …`, each its own OPSAI_HOME, one users file: STREAMS/4 users, since one
user runs at most 4 turns and makes at most 60 conversations a minute) and nginx round robin in
front (buffering off, as docs/serve.md shows). Every user logs in through nginx. Then:
- quiet: RUNS times, interleaved, the first body byte of `POST /api/v2/ai/chat` through nginx and of
  a chat request straight to the mock (new connections, Python's http.client for both);
- load: the model alone first, STREAMS chat requests at once straight to the mock (50 tokens 20 ms
  apart), for its first byte at that concurrency with this same client; then STREAMS conversations
  (created untimed) chat at once through nginx, each first byte also as nginx saw it from the replica
  (`$upstream_header_time`: the server's own part, without this client's thread scheduling). Every stream must end with `done` holding the whole answer (nginx
  sends them to the two replicas in turn). VmRSS of each replica is sampled every 5 ms, and VmHWM
  read after.
Prints one `BENCH serve-replicas …` line and a table; exits 1 when a stream lost its answer.

`--parts` first times STREAMS-at-once bursts of the pieces, for where the first byte's time goes:
a static asset (no database, no turn) through nginx and straight to the replicas, and chats
straight to the replicas (no nginx); for each, the CPU seconds the replicas, nginx, the mock,
PostgreSQL and this client spent on it.
"""
import glob
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
parts = "--parts" in sys.argv
argv = [arg for arg in sys.argv if arg != "--parts"]
binary = os.path.abspath(argv[1] if len(argv) > 1 else "target/release/opsai")
streams = int(argv[2]) if len(argv) > 2 else 200
runs = int(argv[3]) if len(argv) > 3 else 30
users = max(1, (streams + 3) // 4)
slow = {"tokens": 50, "delay_ms": 20}


def timed_stream(port, path, body, headers):
    """(ms to the first body byte, the events' data as JSON)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    started = time.perf_counter()
    conn.request("POST", path, body=json.dumps(body).encode(), headers={"Content-Type": "application/json", **headers})
    resp = conn.getresponse()
    first = resp.read(1)
    first_ms = (time.perf_counter() - started) * 1000
    if resp.status != 200 or not first:
        return first_ms, [{"type": "http", "status": resp.status, "body": (first + resp.read(300)).decode("utf8", "replace")}]
    # Read whole, parsed after: while the other streams are still timed, this client's own
    # work per event (its GIL, its CPU) stays out of their figures, the model's and opsai's alike.
    chunks = [first]
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            break
        chunks.append(chunk)
    events = []
    for block in b"".join(chunks).split(b"\n\n"):
        for line in block.decode().splitlines():
            if line.startswith("data:"):
                payload = line[5:].strip()
                events.append({"type": "done"} if payload == "[DONE]" else json.loads(payload))
    conn.close()
    return first_ms, events


def timed_get(port, path):
    """ms to the first body byte of a GET on a new connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    started = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()
    resp.read(1)
    first_ms = (time.perf_counter() - started) * 1000
    resp.read()
    conn.close()
    if resp.status != 200:
        sys.exit(f"bench/serve-replicas.py: GET {path} answered {resp.status}")
    return first_ms


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def add_users(work, users_file):
    env = {"HOME": work, "OPSAI_HOME": os.path.join(work, "admin"), "PATH": os.environ.get("PATH", "")}
    for n in range(users + 1):
        subprocess.run([binary, "serve", "user", "add", f"u{n}", "--role", "operator", "--users", users_file],
                       input=f"password-{n}\n", text=True, env=env, check=True, stdout=subprocess.DEVNULL)


def login(port, n):
    """The headers of user n's session, logged in through nginx."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = json.dumps({"username": f"u{n}", "password": f"password-{n}"}).encode()
    conn.request("POST", "/api/v2/auth/login", body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    if resp.status != 200:
        sys.exit(f"bench/serve-replicas.py: login u{n} answered {resp.status}: {raw[:200]!r}")
    cookie = resp.getheader("Set-Cookie").split(";", 1)[0]
    return {"Cookie": cookie, "X-CSRF-Token": json.loads(raw)["csrf_token"]}


def start_postgres(work):
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if not bins:
        sys.exit("bench/serve-replicas.py: PostgreSQL is not installed (apt-get install postgresql)")
    bin_dir = os.path.dirname(bins[-1])
    owner = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] if os.geteuid() == 0 else []
    data = os.path.join(work, "pg")
    os.mkdir(data)
    if owner:
        shutil.chown(data, "postgres", "postgres")
    subprocess.run(owner + [f"{bin_dir}/initdb", "--auth=trust", "--username=opsai", "--no-sync", "-D", data],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = free_port()
    server = subprocess.Popen(owner + [f"{bin_dir}/postgres", "-D", data, "-p", str(port), "-c",
                                       "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={data}",
                                       "-c", "max_connections=200"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port, "postgres")
    for _ in range(100):
        if subprocess.run([f"{bin_dir}/pg_isready", "-h", "127.0.0.1", "-p", str(port), "-q"]).returncode == 0:
            break
        time.sleep(0.1)
    return server, f"postgres://opsai@127.0.0.1:{port}/postgres"


def start_nginx(work, port, upstreams):
    config = os.path.join(work, "nginx.conf")
    servers = "".join(f"    server {u} max_fails=0;\n" for u in upstreams)
    with open(config, "w") as out:
        out.write(f"""daemon off;
master_process off;
error_log {work}/nginx-error.log warn;
pid {work}/nginx.pid;
worker_rlimit_nofile 8192;
events {{ worker_connections 4096; }}
http {{
  log_format timed "$request_method $uri $status $upstream_header_time";
  access_log {work}/access.log timed;
  client_body_temp_path {work}/body; proxy_temp_path {work}/proxy; fastcgi_temp_path {work}/fcgi;
  uwsgi_temp_path {work}/uwsgi; scgi_temp_path {work}/scgi;
  upstream opsai {{
{servers}    keepalive 64;
  }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://opsai; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_set_header Host $http_host; proxy_buffering off; proxy_read_timeout 300s;
    }}
  }}
}}
""")
    nginx = subprocess.Popen(["nginx", "-c", config, "-p", work], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(port, "nginx")
    return nginx


work = tempfile.mkdtemp(prefix="opsai-replicas-bench-")
os.chmod(work, 0o755)
processes = []
try:
    pg, url = start_postgres(work)
    processes.append(pg)
    mock_port = free_port()
    mock = subprocess.Popen([sys.executable, os.path.join(here, "stream_llm.py"), str(mock_port), "3", "0"])
    processes.append(mock)
    wait_for(mock_port, "the mock model")
    front = free_port()
    users_file = os.path.join(work, "users.json")
    add_users(work, users_file)
    replicas, ports = [], []
    for n in range(2):
        home = os.path.join(work, f"home{n}")
        os.mkdir(home)
        env = {"HOME": work, "OPSAI_HOME": home, "OPSAI_BASE_URL": f"http://127.0.0.1:{mock_port}/v1",
               "OPSAI_DATABASE_URL": url, "NO_COLOR": "1", "LANG": "C.UTF-8",
               "PATH": os.environ.get("PATH", "")}
        replica = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:0", "--public-host", f"127.0.0.1:{front}",
                                    "--users", users_file,
                                    "--max-turns", str(streams), "--max-connections", "2048",
                                    "--max-connections-per-ip", "2048"],
                                   env=env, stdout=subprocess.PIPE, stderr=open(os.path.join(work, f"serve{n}.log"), "w"),
                                   text=True)
        processes.append(replica)
        line = replica.stdout.readline().strip()
        if not line.startswith("opsai serve: open http://127.0.0.1:"):
            sys.exit(f"bench/serve-replicas.py: unexpected first line from replica {n}: {line!r}")
        ports.append(int(line.split("127.0.0.1:", 1)[1].split("/", 1)[0]))
        replicas.append(replica)
    nginx = start_nginx(work, front, [f"127.0.0.1:{p}" for p in ports])
    processes.append(nginx)
    time.sleep(0.3)

    sessions = [login(front, n) for n in range(users + 1)]

    def new_conversation(title, user=users):
        return request(front, "POST", "/api/v2/ai/conversations", {"title": title}, sessions[user])["id"]

    chat_body = {"model": "bench-model", "stream": True, "messages": [{"role": "user", "content": "list files"}]}

    def mock_once():
        return timed_stream(mock_port, "/v1/chat/completions", chat_body, {})[0]

    def serve_once(title):
        body = {"conversation_id": new_conversation(title), "message": "list files"}
        first_ms, events = timed_stream(front, "/api/v2/ai/chat", body, sessions[users])
        if not events or events[-1].get("type") != "done" or not answer_of(events).startswith("Files"):
            sys.exit(f"bench/serve-replicas.py: a quiet chat lost its answer: {events}")
        return first_ms

    for n in range(4):
        serve_once(f"warm-up {n}")
        mock_once()
    quiet_serve, quiet_mock = [], []
    for n in range(runs):
        quiet_mock.append(mock_once())
        quiet_serve.append(serve_once(f"quiet {n}"))

    request(mock_port, "POST", "/control", slow)
    conversations = [new_conversation(f"load {n}", n // 4) for n in range(streams)]
    results = [None] * streams
    go = threading.Event()

    def concurrently(target):
        threads = [threading.Thread(target=target, args=(n,)) for n in range(streams)]
        for thread in threads:
            thread.start()
        return threads

    mock_results = [None] * streams

    def mock_stream(index):
        go.wait()
        mock_results[index] = timed_stream(mock_port, "/v1/chat/completions", chat_body, {})[0]

    mock_threads = concurrently(mock_stream)
    go.set()
    for thread in mock_threads:
        thread.join()
    load_mock = mock_results
    go.clear()

    part_rows = []
    if parts:
        def cpu_now():
            postgres = subprocess.run(["pgrep", "-P", str(pg.pid)], capture_output=True, text=True).stdout.split()
            return {"replicas": sum(cpu_seconds(r.pid) for r in replicas), "nginx": cpu_seconds(nginx.pid),
                    "mock": cpu_seconds(mock.pid),
                    "postgres": cpu_seconds(pg.pid) + sum(cpu_seconds(p) for p in postgres),
                    "client": cpu_seconds(os.getpid())}

        def burst(name, timed):
            firsts = [None] * streams

            def one(index):
                go.wait()
                firsts[index] = timed(index)
            threads = concurrently(one)
            before = cpu_now()
            go.set()
            for thread in threads:
                thread.join()
            go.clear()
            after = cpu_now()
            part_rows.append((name, statistics.median(firsts), {k: after[k] - before[k] for k in after}))

        burst("a static asset through nginx", lambda n: timed_get(front, "/assets/app.css"))
        burst("a static asset straight to the replicas", lambda n: timed_get(ports[n % 2], "/assets/app.css"))
        burst("the model alone", lambda n: timed_stream(mock_port, "/v1/chat/completions", chat_body, {})[0])
        direct = [new_conversation(f"direct {n}", n // 4) for n in range(streams)]
        def direct_chat(n):
            first_ms, events = timed_stream(
                ports[n % 2], "/api/v2/ai/chat", {"conversation_id": direct[n], "message": "x"}, sessions[n // 4])
            if not events or events[-1].get("type") != "done":
                sys.exit(f"bench/serve-replicas.py: a chat straight to a replica lost its answer: {events[-3:]}")
            return first_ms
        burst("chats straight to the replicas (whole streams)", direct_chat)

    def stream(index):
        go.wait()
        body = {"conversation_id": conversations[index], "message": f"stream {index}"}
        results[index] = timed_stream(front, "/api/v2/ai/chat", body, sessions[index // 4])

    threads = concurrently(stream)
    access_log = os.path.join(work, "access.log")
    log_start = os.path.getsize(access_log)
    peaks = [0, 0]
    go.set()
    while any(thread.is_alive() for thread in threads):
        for n, replica in enumerate(replicas):
            peaks[n] = max(peaks[n], status_kb(replica.pid, "VmRSS"))
        time.sleep(0.005)
    hwm = [status_kb(replica.pid, "VmHWM") for replica in replicas]
    expected = ("Files " + "".join(f"w{n} " for n in range(1, slow["tokens"]))).strip()
    lost = [n for n, (_, events) in enumerate(results)
            if not events or events[-1].get("type") != "done" or answer_of(events).strip() != expected]
    load_first = [first for first, _ in results]
    # The server's part of each first byte, as nginx saw it (the request sent to a replica until
    # its headers, which go with the `start` event): without this client's own scheduling of
    # STREAMS threads, the noisiest part of the figure above on a small machine.
    # nginx writes a request's line when it ends, and names every upstream it tried ("0.000, 0.004",
    # or "-" for none): the last try is the one that answered. Read again briefly until every
    # chat's line is there.
    def server_firsts():
        with open(access_log) as log:
            log.seek(log_start)
            times = []
            for line in log:
                method, path, status, upstream = (line.rstrip("\n").split(" ", 3) + ["", "", "", ""])[:4]
                last = upstream.replace(" : ", ", ").split(", ")[-1].strip()
                if method == "POST" and path == "/api/v2/ai/chat" and status == "200" and last not in ("", "-"):
                    times.append(float(last) * 1000)
            return times
    server_first = server_firsts()
    for _ in range(20):
        if len(server_first) >= streams:
            break
        time.sleep(0.05)
        server_first = server_firsts()
finally:
    for process in reversed(processes):
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
    shutil.rmtree(work, ignore_errors=True)

mb = lambda kb: kb / 1024  # noqa: E731
q_serve, q_mock = statistics.median(quiet_serve), statistics.median(quiet_mock)
l_serve, l_mock = statistics.median(load_first), statistics.median(load_mock)
p95 = sorted(load_first)[int(0.95 * (len(load_first) - 1))]
print(f"{os.path.basename(binary)}: 2 replicas on PostgreSQL behind nginx; {runs} quiet runs, {streams} concurrent streams")
print(f"quiet: first SSE byte through nginx {q_serve:.2f} ms, model first byte {q_mock:.2f} ms: {q_serve / q_mock:.2f}x")
print(f"{streams} at once: first SSE byte median {l_serve:.1f} ms (p95 {p95:.1f}); the model's first byte, {streams} "
      f"at once: {l_mock:.1f} ms: {l_serve / l_mock:.2f}x (target <= 1.5x)")
s_first = statistics.median(server_first) if server_first else float("nan")
print(f"{streams} at once, the replicas' own part (nginx's upstream header time): median {s_first:.1f} ms "
      f"of {len(server_first)} chats")
print(f"replica RSS: largest samples {mb(peaks[0]):.1f} / {mb(peaks[1]):.1f} MB, VmHWM {mb(hwm[0]):.1f} / {mb(hwm[1]):.1f} MB")
print(f"streams that lost their answer: {len(lost)} of {streams}")
for name, first, cpu in part_rows:
    spent = ", ".join(f"{k} {v:.2f}" for k, v in cpu.items())
    print(f"{streams} at once, {name}: first byte median {first:.1f} ms; CPU seconds: {spent}")
print(f"BENCH serve-replicas streams={streams} parts={int(parts)} lost={len(lost)} quiet_first_ms={q_serve:.2f} quiet_mock_ms={q_mock:.2f} "
      f"load_first_ms={l_serve:.1f} load_p95_ms={p95:.1f} load_mock_ms={l_mock:.1f} ratio={l_serve / l_mock:.2f} "
      f"server_first_ms={s_first:.1f} "
      f"rss_mb={mb(peaks[0]):.1f},{mb(peaks[1]):.1f} hwm_mb={mb(hwm[0]):.1f},{mb(hwm[1]):.1f}")
sys.exit(1 if lost else 0)
