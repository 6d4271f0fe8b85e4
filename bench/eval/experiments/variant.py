"""Greedy one-shot with a given system prompt / user template, judged (paired runs on one sample)."""
import argparse, json, os, sys, tempfile, time, re
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__))); sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import proto, alfa, judge, run as runmod, tools
from proto import CACHE
from concurrent.futures import ThreadPoolExecutor

def extract(raw, mode):
    if mode == "last_fence":
        blocks = tools.FENCE.findall(raw)
        if blocks: return blocks[-1].strip()
        lines = [l for l in raw.strip().splitlines() if l.strip()]
        return lines[-1].strip().strip("`") if lines else ""
    return proto.clean(raw)

def sampled(sample, seed):
    """(scratch dir, testbed, deterministic tasks' runs, the seeded sample of tasks), as run.py picks them."""
    assets = alfa.assets_dir(os.path.join(CACHE, "alfa")); tasks = alfa.load(assets)
    work = tempfile.mkdtemp(prefix="proto-")
    testbed = judge.Testbed(work, assets, alfa.filesystems(assets), alfa.setup_script)
    det = runmod.deterministic(tasks, testbed, CACHE, alfa.fingerprint(assets), lambda m: None)
    class A: pass
    sa = A(); sa.all_tasks=False; sa.tasks=""; sa.sample=sample; sa.seed=seed; sa.limit=0
    return work, testbed, det, runmod.select(tasks, det, sa)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system", required=True); ap.add_argument("--user", default="{nl}")
    ap.add_argument("--sample", type=int, default=120); ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--extract", default="clean"); ap.add_argument("--max-tokens", type=int, default=300)
    ap.add_argument("--shots", default=""); ap.add_argument("--out", required=True)
    a = ap.parse_args()
    system = open(a.system).read()
    shots = json.load(open(a.shots)) if a.shots else []
    work, testbed, det, chosen = sampled(a.sample, a.seed)
    def gen(task):
        msgs = [{"role": "system", "content": system}] + shots + [{"role": "user", "content": a.user.format(nl=task.nl)}]
        t0 = time.time(); raw = proto.chat(msgs, max_tokens=a.max_tokens); return raw, time.time() - t0
    out = open(a.out, "w"); p = 0; secs = []
    with ThreadPoolExecutor(2) as ex:
        for task, (raw, s) in zip(chosen, ex.map(gen, chosen)):
            cmd = extract(raw, a.extract)
            ok = runmod.judge_task(task, det.get(task.id) or [0], tools.Result(cmd, raw, 0), testbed) if cmd else False
            p += ok; secs.append(s)
            out.write(json.dumps(dict(task=task.id, difficulty=task.difficulty, cmd=cmd, raw=raw, passed=ok, s=round(s, 2))) + "\n"); out.flush()
    secs.sort()
    print(f"{a.out}: {p}/{len(chosen)} median {secs[len(secs)//2]:.1f}s")
    judge.remove(work)

if __name__ == "__main__":
    main()
