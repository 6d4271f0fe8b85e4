#!/usr/bin/env python3
"""The sandbox's cost per command, two ways, each against `sh -c true` spawned plainly in the same run:

1. as the agent pays it (the figure of issue 21): `opsai sandbox --bench RUNS -- /bin/sh -c true`, one
   opsai process spawning the command plainly and through the sandbox helper, alternating; the
   helper gets the Landlock ruleset opsai prepared for the view (src/sandbox/broker.rs);
2. the helper alone (`opsai-sandbox-helper __opsai-sandbox strict -- sh -c true` from here, no
   opsai process to prepare anything): the view from its cache file, every Landlock rule added,
   seccomp, exec of the shell.

    bench/sandbox.py [OPSAI_BINARY] [RUNS]     # default target/release/opsai, 200 runs each

Runs alternate (plain, sandboxed, plain, …) after 20 warm-up runs of each, so both see the same
machine state. Prints `BENCH sandbox_spawn_ms …` (the agent's path, for bench/run.sh) and
`BENCH sandbox_helper_alone_ms …` lines and a readable summary.
"""
import os
import statistics
import subprocess
import sys
import time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/opsai"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 200
plain = ["/bin/sh", "-c", "true"]
# The small helper beside opsai when it is there (what opsai starts), else opsai itself.
helper = os.path.join(os.path.dirname(binary) or ".", "opsai-sandbox-helper")
helper = helper if os.access(helper, os.X_OK) else binary
sandboxed = [helper, "__opsai-sandbox", "strict", "--", "/bin/sh", "-c", "true"]

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
agent = subprocess.run([binary, "sandbox", "--bench", str(runs), "--", "/bin/sh", "-c", "true"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True)
if agent.returncode != 0:
    sys.exit(f"bench/sandbox.py: opsai sandbox --bench failed: {agent.stderr.strip()}")
print(agent.stdout.strip())
fields = dict(f.split("=", 1) for f in agent.stdout.split() if "=" in f)
print(f"as the agent pays it: plain {fields['plain_median']} ms; sandboxed {fields['median']} ms; added "
      f"{fields['added']} ms ({fields['ratio']}x); CPU time plain {fields['plain_cpu_median']} ms, sandboxed "
      f"{fields['cpu_median']} ms, added {fields['cpu_added']} ms; {runs} runs each", file=sys.stderr)
print(
    f"BENCH sandbox_helper_alone_ms median={sm:.3f} min={min(b):.3f} max={max(b):.3f} "
    f"plain_median={pm:.3f} plain_min={min(a):.3f} plain_max={max(a):.3f} added={sm - pm:.3f} ratio={sm / pm:.2f}"
)
print(f"the helper alone: plain sh -c true {pm:.3f} ms; sandboxed {sm:.3f} ms; added {sm - pm:.3f} ms ({sm / pm:.2f}x), {runs} runs each",
      file=sys.stderr)
