"""Paired comparison of a tldr run with its baseline + leakage counts, recomputed from the rows.
usage: python3 analyze.py BASE.jsonl RUN.jsonl [-v]"""
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')); import alfa, tldr_index as T
tasks = {t.id: t for t in alfa.load(alfa.assets_dir(os.path.join(os.environ.get('OPSAI_EVAL_CACHE', os.path.expanduser('~/.cache/opsai-eval')), 'alfa')))}
allj = json.load(open('leakage-all.json'))
base = {json.loads(l)['task']: json.loads(l) for l in open(sys.argv[1])}
run = {json.loads(l)['task']: json.loads(l) for l in open(sys.argv[2])}
ids = [t for t in run if t in base]
def copy(t):  # a retrieved example equals gold/gold2, placeholders aside
    return any(T.same_command(r['cmd'], g) for r in run[t]['retrieved'] for g in tasks[t].refs)
def jac(t): return max((T.jaccard(tasks[t].nl, r['desc']) for r in run[t]['retrieved']), default=0)
won = [t for t in ids if run[t]['passed'] and not base[t]['passed']]
lost = [t for t in ids if base[t]['passed'] and not run[t]['passed']]
cp = [t for t in ids if copy(t)]
print(f"{sys.argv[2]}: n={len(ids)} base {sum(base[t]['passed'] for t in ids)} run {sum(run[t]['passed'] for t in ids)} "
      f"+{len(won)} -{len(lost)} | tasks with a retrieved gold copy {len(cp)} (passed {sum(run[t]['passed'] for t in cp)}, "
      f"base passed {sum(base[t]['passed'] for t in cp)}) | gained that are copies {sum(t in cp for t in won)}, lost that had a copy {sum(t in cp for t in lost)} | "
      f"request~retrieved desc J>=0.8: {sum(jac(t) >= 0.8 for t in ids)}, request~any tldr desc J>=0.8: {sum(allj[str(t)]['max_jaccard'] >= 0.8 for t in ids)} | "
      f"gained excluding copies: +{sum(t not in cp for t in won)} -{len(lost)}")
if '-v' in sys.argv:
    for t in won + lost:
        print(' WIN ' if t in won else ' LOSS', t, 'COPY' if t in cp else '    ', repr(tasks[t].nl[:70]), '|', repr(base[t]['cmd'][:50]), '->', repr(run[t]['cmd'][:50]),
              '| retrieved:', [T.render(r['cmd'], 'plain')[:40] for r in run[t]['retrieved']])
