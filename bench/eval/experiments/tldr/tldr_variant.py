"""variant.py + tldr retrieval: per task, the k most relevant tldr examples (BM25 over the request
alone) go into the user message, the system message, or few-shot turns. Judged like variant.py.
Each output row also records what was retrieved and whether a retrieved command equals gold/gold2
(placeholders aside): the leakage check."""
import argparse, json, os, sys, tempfile, time
_here = os.path.dirname(os.path.abspath(__file__)); sys.path.insert(0, os.path.join(_here, "..")); sys.path.insert(0, os.path.join(_here, "..", ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import proto, alfa, judge, run as runmod, tools
import tldr_index as T
from variant import extract, sampled  # the answer's command, as variant.py takes it
from proto import CACHE
from concurrent.futures import ThreadPoolExecutor

def chat(messages, max_tokens):
    """proto.chat with a longer timeout: on the shared 2 cores a 300-token answer can take > 300 s."""
    import urllib.request
    body = {"model": "m", "messages": messages, "max_tokens": max_tokens}
    req = urllib.request.Request(proto.URL, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=1500) as r:
        return json.loads(r.read())["choices"][0]["message"]["content"] or ""

def block(exs, ph, summary):
    lines = []
    for e in exs:
        head = f"{e.page} ({e.summary.rstrip('.')}): " if summary and e.summary else ""
        lines.append(f"- {head}{e.desc}: `{T.render(e.cmd, ph)}`")
    return "\n".join(lines)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--system", required=True)
    ap.add_argument("--sample", type=int, default=120); ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--extract", default="last_fence"); ap.add_argument("--max-tokens", type=int, default=300)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--where", choices=["user", "system", "shots"], default="user")
    ap.add_argument("--ph", choices=["raw", "plain", "upper"], default="plain")
    ap.add_argument("--show-summary", action="store_true")
    ap.add_argument("--all-pages", action="store_true", help="do not restrict to programs on PATH")
    ap.add_argument("--per-page", type=int, default=0)
    ap.add_argument("--out", required=True); ap.add_argument("--resume", action="store_true")
    a = ap.parse_args()
    system = open(a.system).read()
    ix = T.Index(with_summary=True, installed=not a.all_pages)
    work, testbed, det, chosen = sampled(a.sample, a.seed)
    done = set()
    if a.resume and os.path.exists(a.out):  # append the tasks a crashed run did not reach
        done = {json.loads(l)["task"] for l in open(a.out)}
    chosen = [t for t in chosen if t.id not in done]

    def messages(task, exs):
        # Only the task's own request goes in: retrieval reads task.nl, nothing else of the task.
        if a.where == "user":
            u = "Examples of commands that may help:\n" + block(exs, a.ph, a.show_summary) + "\n\n" + task.nl
            return [{"role": "system", "content": system}, {"role": "user", "content": u}]
        if a.where == "system":
            s = system.rstrip() + "\n\n# Examples of commands that may help\n" + block(exs, a.ph, a.show_summary) + "\n"
            return [{"role": "system", "content": s}, {"role": "user", "content": task.nl}]
        shots = []
        for e in reversed(exs):  # most relevant last, nearest the request
            shots += [{"role": "user", "content": e.desc},
                      {"role": "assistant", "content": "```sh\n" + T.render(e.cmd, a.ph) + "\n```"}]
        return [{"role": "system", "content": system}] + shots + [{"role": "user", "content": task.nl}]

    def gen(task):
        exs = ix.retrieve(task.nl, a.k, per_page=a.per_page or None)
        t0 = time.time(); raw = chat(messages(task, exs), max_tokens=a.max_tokens)
        return exs, raw, time.time() - t0
    out = open(a.out, "a" if a.resume else "w"); p = 0; secs = []; leaks = 0
    with ThreadPoolExecutor(2) as ex:
        for task, (exs, raw, s) in zip(chosen, ex.map(gen, chosen)):
            cmd = extract(raw, a.extract)
            ok = runmod.judge_task(task, det.get(task.id) or [0], tools.Result(cmd, raw, 0), testbed) if cmd else False
            p += ok; secs.append(s)
            copy = [i for i, e in enumerate(exs) if any(T.same_command(e.cmd, g) for g in task.refs)]
            jac = max((T.jaccard(task.nl, e.desc) for e in exs), default=0.0)
            leaks += bool(copy)
            out.write(json.dumps(dict(task=task.id, difficulty=task.difficulty, cmd=cmd, raw=raw, passed=ok, s=round(s, 2),
                                      retrieved=[dict(page=e.page, desc=e.desc, cmd=e.cmd) for e in exs],
                                      gold_copy=copy, max_jaccard=round(jac, 3))) + "\n"); out.flush()
    secs.sort()
    print(f"{a.out}: {p}/{len(chosen)} median {secs[len(secs)//2]:.1f}s; tasks with a retrieved gold copy: {leaks}")
    judge.remove(work)

main()
