#!/usr/bin/env python3
"""`opsai -q TASK` against an instant mock, with and without `docker` on PATH, next to a curl of the
same chat request (issue 15: start-up work that is not the user's).

    bench/oneshot.py [OPSAI_BINARY] [RUNS]     # default target/release/opsai, 100 runs each

Variants, run in turn (curl, opsai …, curl, opsai …) after 5 warm-up runs each so all see the same
machine state; each process is reaped with wait4, so its peak RSS includes every descendant it
waited for (a `docker info` opsai waited for would show here):
- curl: the same streamed chat request, body from a file;
- docker on PATH: opsai with the caller's PATH (the docker probe's cache is warm after the first run);
- docker on PATH, cold cache: the probe's cache removed before each run, so each starts the probe;
- no docker on PATH: the caller's PATH without the directories holding `docker`.
Prints one `BENCH oneshot_docker …` line and a readable table.
"""
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/opsai")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 100
task = "list files by size"

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
sock.close()
mock = subprocess.Popen([sys.executable, os.path.join(here, "instant_llm.py"), str(port), "--text"])
work = tempfile.mkdtemp(prefix="opsai-oneshot-bench-")
try:
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    url = f"http://127.0.0.1:{port}/v1"
    body = os.path.join(work, "chat.json")
    with open(body, "w") as out:
        json.dump({"model": "qwen2.5:7b", "stream": True, "messages": [{"role": "user", "content": task}]}, out)
    home = os.path.join(work, "home")
    os.mkdir(home)
    cache = os.path.join(home, "cache", "context.json")
    path = os.environ.get("PATH", "")
    no_docker = ":".join(d for d in path.split(":") if d and not os.access(os.path.join(d, "docker"), os.X_OK))
    base = {"HOME": work, "OPSAI_HOME": home, "OPSAI_BASE_URL": url, "NO_COLOR": "1", "LANG": "C.UTF-8"}
    curl = ["curl", "-s", "-o", "/dev/null", "-X", "POST", "-H", "Content-Type: application/json",
            "--data-binary", f"@{body}", f"{url}/chat/completions"]
    opsai = [binary, "-q", task]
    variants = [
        ("curl of the same chat request", curl, {**base, "PATH": path}, None),
        ("opsai -q, docker on PATH", opsai, {**base, "PATH": path}, None),
        ("opsai -q, docker on PATH, cold probe cache", opsai, {**base, "PATH": path}, cache),
        ("opsai -q, no docker on PATH", opsai, {**base, "PATH": no_docker}, None),
    ]
    has_docker = shutil.which("docker", path=path) is not None

    def once(argv, env, remove):
        if remove and os.path.exists(remove):
            os.remove(remove)
        null = os.open(os.devnull, os.O_RDWR)
        started = time.perf_counter()
        pid = os.posix_spawn(argv[0] if "/" in argv[0] else shutil.which(argv[0]), argv, env,
                             file_actions=[(os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1),
                                           (os.POSIX_SPAWN_DUP2, null, 2)])
        _, status, usage = os.wait4(pid, 0)
        elapsed = (time.perf_counter() - started) * 1000
        os.close(null)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"bench/oneshot.py: {' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
        return elapsed, usage.ru_maxrss / 1024

    for _ in range(5):
        for _, argv, env, remove in variants:
            once(argv, env, remove)
    results = {name: [] for name, *_ in variants}
    for _ in range(runs):
        for name, argv, env, remove in variants:
            results[name].append(once(argv, env, remove))
finally:
    mock.kill()
    shutil.rmtree(work, ignore_errors=True)

curl_median = statistics.median(ms for ms, _ in results[variants[0][0]])
fields = []
print(f"{runs} runs each, interleaved; docker on PATH: {'yes' if has_docker else 'NO (no docker found)'}")
print(f"{'variant':45} {'median ms':>10} {'min':>8} {'max':>8} {'x curl':>7} {'peak RSS MB':>12}")
for (name, *_), key in zip(variants, ["curl", "docker", "docker_cold", "no_docker"]):
    times = [ms for ms, _ in results[name]]
    rss = max(mb for _, mb in results[name])
    median = statistics.median(times)
    print(f"{name:45} {median:10.2f} {min(times):8.2f} {max(times):8.2f} {median / curl_median:7.2f} {rss:12.1f}")
    fields.append(f"{key}_ms={median:.2f} {key}_ratio={median / curl_median:.2f} {key}_rss_mb={rss:.1f}")
print("BENCH oneshot_docker " + " ".join(fields))
