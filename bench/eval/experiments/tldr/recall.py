"""Offline proxy: does a retrieved example use the gold command's program(s)? (no model calls)"""
import sys, re, collections, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')); import alfa, tldr_index as T
tasks = alfa.load(alfa.assets_dir(os.path.join(os.environ.get('OPSAI_EVAL_CACHE', os.path.expanduser('~/.cache/opsai-eval')), 'alfa')))
def progs(c):
    return {seg.split()[0] for seg in re.split(r"\||&&|;|\$\(|`", c) if seg.split()}
for cfg in [dict(with_summary=True, installed=False), dict(with_summary=True, installed=True), dict(with_summary=False, installed=True)]:
    ix = T.Index(**cfg)
    for k in (3, 6):
        hit = first = 0
        for t in tasks:
            g = progs(t.refs[0]) | (progs(t.refs[1]) if len(t.refs) > 1 else set())
            r = ix.retrieve(t.nl, k)
            rp = {e.cmd.split()[0] for e in r if e.cmd.split()}
            hit += bool(rp & g)
        print(cfg, 'examples', len(ix.examples), 'k', k, 'gold program among retrieved:', hit, '/', len(tasks))
