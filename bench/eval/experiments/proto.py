"""Issue 22's method experiments: a widget request sent straight to the eval's llama-server (no
opsai in between, so a prompt or decoding change is measured in minutes), judged by bench/eval's
judge. `system.txt` is the widget's system prompt as opsai sends it (capture it with a logging
proxy, or copy it from a widget log); see bench/BENCHMARKS.md for the rows these scripts wrote.

    python3 proto.py --sample 80 --seed 22 --out sc80.jsonl     # greedy + 4 samples per task
    python3 analyze.py sc80.jsonl                               # voting rules vs greedy vs oracle
    python3 helpground.py sc80.jsonl hg80.jsonl                  # revise with the man page's options
    python3 variant.py --system v11.txt --extract last_fence --out v11.jsonl   # one prompt variant
    python3 pair.py v0.jsonl v11.jsonl x                         # paired wins and losses
"""
import argparse, json, os, random, subprocess, sys, tempfile, time, re, collections
from concurrent.futures import ThreadPoolExecutor
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import alfa, judge, run as runmod, tools

CACHE = os.environ.get("OPSAI_EVAL_CACHE", os.path.expanduser("~/.cache/opsai-eval"))
URL = os.environ.get("OPSAI_EVAL_BASE_URL", "http://127.0.0.1:8081/v1") + "/chat/completions"
SYSTEM = open(os.environ.get("OPSAI_EVAL_SYSTEM", "system.txt")).read()
OPSAI = os.environ.get("OPSAI_BIN", "target/release/opsai")

def chat(messages, temperature=None, max_tokens=256, seed=None, extra=None):
    """The reply's text, with any command the server parsed into `tool_calls` (a model shown calls
    may answer with one) appended as a ```sh block, so it is judged like a written one."""
    body = {"model": "m", "messages": messages, "max_tokens": max_tokens}
    if temperature is not None: body["temperature"] = temperature
    if seed is not None: body["seed"] = seed
    body.update(extra or {})
    req = urllib.request.Request(URL, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        message = json.loads(r.read())["choices"][0]["message"]
    text = message.get("content") or ""
    for call in message.get("tool_calls") or []:
        try:
            command = json.loads(call["function"]["arguments"]).get("command", "")
        except (ValueError, AttributeError, KeyError):
            command = ""
        if command:
            text += "\n```sh\n" + command + "\n```"
    return text

def clean(text):
    t = text.strip()
    m = tools.FENCE.search(t)
    if m: t = m.group(1).strip()
    if len(t) > 1 and t[0] == t[-1] == "`": t = t.strip("`")
    return t.strip()

def risk(cmd):
    p = subprocess.run([OPSAI, "policy", "check", "--json", "--", cmd], capture_output=True, text=True)
    try: return json.loads(p.stdout).get("risk", "high")
    except Exception: return "high"

def try_run(testbed, fs, cmd):
    """Read-only run in the template (what a sandboxed Safe trial sees): (code, stdout+stderr)."""
    argv = ["timeout", "-k", "1", "3"] + judge.bwrap(testbed.templates[fs], [alfa.shell_for(fs), "-c", cmd], writable=False, env=judge.IMAGE_ENV.get(fs))
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=8)
        return p.returncode, p.stdout.decode("utf-8","replace")[:20000], p.stderr.decode("utf-8","replace")[:2000]
    except subprocess.TimeoutExpired:
        return 124, "", ""

def user_msg(task):
    return task.nl

def gen_candidates(task, k, temp):
    msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user_msg(task)}]
    greedy = chat(msgs)
    with ThreadPoolExecutor(4) as ex:
        samples = list(ex.map(lambda s: chat(msgs, temperature=temp, seed=1000 + s, extra={"top_k": 40, "top_p": 0.95}), range(k)))
    return [greedy] + samples

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=80); ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--k", type=int, default=4); ap.add_argument("--temp", type=float, default=0.8)
    ap.add_argument("--out", required=True); ap.add_argument("--tasks", default="")
    a = ap.parse_args()
    assets = alfa.assets_dir(os.path.join(CACHE, "alfa")); tasks = alfa.load(assets)
    work = tempfile.mkdtemp(prefix="proto-")
    testbed = judge.Testbed(work, assets, alfa.filesystems(assets), alfa.setup_script)
    det = runmod.deterministic(tasks, testbed, CACHE, alfa.fingerprint(assets), print)
    class A: pass
    sa = A(); sa.all_tasks=False; sa.tasks=a.tasks; sa.sample=a.sample; sa.seed=a.seed; sa.limit=0
    chosen = runmod.select(tasks, det, sa)
    out = open(a.out, "w")
    for n, task in enumerate(chosen, 1):
        t0 = time.time()
        raws = gen_candidates(task, a.k, a.temp)
        gen_s = time.time() - t0
        cands = []
        seen = {}
        for raw in raws:
            c = clean(raw)
            if c not in seen:
                res = tools.Result(c, raw, 0)
                passed = runmod.judge_task(task, det.get(task.id) or [0], res, testbed) if c else False
                r = risk(c) if c else "high"
                code, so, se = try_run(testbed, task.fs, c) if (c and r == "safe") else (None, "", "")
                seen[c] = dict(cmd=c, passed=passed, risk=r, code=code, stdout=so, stderr=se[:500])
            cands.append(seen[c])
        row = dict(task=task.id, difficulty=task.difficulty, nl=task.nl, gen_s=round(gen_s, 2), cands=cands)
        out.write(json.dumps(row) + "\n"); out.flush()
        g = cands[0]["passed"]; any_ = any(c["passed"] for c in cands)
        print(f"{n}/{len(chosen)} #{task.id} greedy={'P' if g else '-'} any={'P' if any_ else '-'} {gen_s:.1f}s {cands[0]['cmd'][:80]!r}", flush=True)
    judge.remove(work)

if __name__ == "__main__":
    main()
