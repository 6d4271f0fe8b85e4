"""Whole-corpus leakage: per ALFA task, does ANY tldr example (common+linux) equal gold/gold2
(placeholders aside), and how close is the request to the nearest tldr description (token Jaccard)."""
import sys, json, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')); import alfa, tldr_index as T
tasks = alfa.load(alfa.assets_dir(os.path.join(os.environ.get('OPSAI_EVAL_CACHE', os.path.expanduser('~/.cache/opsai-eval')), 'alfa')))
ex = T.load_examples()
descs = [(set(T.re.findall(r"[a-z0-9]+", e.desc.lower())), e) for e in ex]
rows = {}
for t in tasks:
    q = set(T.re.findall(r"[a-z0-9]+", t.nl.lower()))
    best, be = 0.0, None
    for d, e in descs:
        u = len(q | d)
        j = len(q & d) / u if u else 0
        if j > best: best, be = j, e
    copies = [e for e in ex if any(T.same_command(e.cmd, g) for g in t.refs)]
    rows[t.id] = dict(any_copy=[(e.page, e.cmd) for e in copies][:5], max_jaccard=round(best, 3),
                      nearest=(be.page, be.desc, be.cmd) if be else None)
json.dump(rows, open('leakage-all.json', 'w'), indent=0)
print('tasks', len(tasks), 'with some tldr example equal to gold/gold2:', sum(bool(r['any_copy']) for r in rows.values()),
      '| request Jaccard>=0.8 with a tldr description:', sum(r['max_jaccard'] >= 0.8 for r in rows.values()),
      '| >=0.6:', sum(r['max_jaccard'] >= 0.6 for r in rows.values()))
for i, r in rows.items():
    if r['max_jaccard'] >= 0.8: print(' J', i, tasks[i].nl, '~', r['nearest'])
