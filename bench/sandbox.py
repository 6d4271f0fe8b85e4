#!/usr/bin/env python3
"""The sandbox's cost per command: `sh -c true` spawned plainly vs through the sandbox helper
(`opsai __opsai-sandbox strict -- sh -c true`, exactly what the PTY executor runs for a command that
runs without a human yes: re-exec of opsai, grant walk, Landlock, seccomp, exec of the shell).

    bench/sandbox.py [OPSAI_BINARY] [RUNS]     # default target/release/opsai, 200 runs each

Runs alternate (plain, sandboxed, plain, …) after 20 warm-up runs of each, so both see the same
machine state. Prints one `BENCH sandbox_spawn_ms …` line for bench/run.sh and a readable summary.
"""
import os
import statistics
import subprocess
import sys
import time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/opsai"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 200
plain = ["/bin/sh", "-c", "true"]
sandboxed = [binary, "__opsai-sandbox", "strict", "--", "/bin/sh", "-c", "true"]

def once(argv):
    started = time.perf_counter()
    code = subprocess.run(argv, stdin=subprocess.DEVNULL).returncode
    elapsed = (time.perf_counter() - started) * 1000
    if code != 0:
        sys.exit(f"bench/sandbox.py: {' '.join(argv)} exited {code}")
    return elapsed

for _ in range(20):
    once(plain)
    once(sandboxed)
a, b = [], []
for _ in range(runs):
    a.append(once(plain))
    b.append(once(sandboxed))
pm, sm = statistics.median(a), statistics.median(b)
print(
    f"BENCH sandbox_spawn_ms median={sm:.3f} min={min(b):.3f} max={max(b):.3f} "
    f"plain_median={pm:.3f} plain_min={min(a):.3f} plain_max={max(a):.3f} added={sm - pm:.3f} ratio={sm / pm:.2f}"
)
print(f"plain sh -c true: {pm:.3f} ms; sandboxed: {sm:.3f} ms; added {sm - pm:.3f} ms ({sm / pm:.2f}x), {runs} runs each",
      file=sys.stderr)
