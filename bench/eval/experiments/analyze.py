import json, sys, collections
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
rows = [json.loads(l) for l in open(sys.argv[1])]
K = int(sys.argv[2]) if len(sys.argv) > 2 else 99
def norm(c): return " ".join(c.split())
def ok(c): return c["risk"] == "safe" and c["code"] == 0
def key_exec(c):
    if c["risk"] == "safe":
        if c["code"] == 0: return ("out", c["stdout"].rstrip())
        return ("fail", norm(c["cmd"]))
    return ("cmd", norm(c["cmd"]))
def vote(cands, keyf, exclude_fail=True):
    votes = collections.Counter()
    for c in cands:
        k = keyf(c)
        if exclude_fail and k[0] == "fail": continue
        votes[k] += 1
    if not votes: return cands[0]
    best = max(votes.values())
    gk = keyf(cands[0])
    if votes.get(gk) == best: return cands[0]
    for c in cands:
        if votes.get(keyf(c)) == best: return c
rules = {
 "greedy": lambda cs: cs[0],
 "text_vote": lambda cs: vote(cs, lambda c: ("cmd", norm(c["cmd"])), False),
 "exec_vote": lambda cs: vote(cs, key_exec),
 "greedy_unless_fail": lambda cs: cs[0] if not (cs[0]["risk"]=="safe" and cs[0]["code"] not in (0,None)) else vote(cs[1:], key_exec),
 "oracle": lambda cs: next((c for c in cs if c["passed"]), cs[0]),
}
for name, f in rules.items():
    tot = collections.Counter(); p = collections.Counter()
    for r in rows:
        cs = r["cands"][:K+1]
        ch = f(cs)
        tot[r["difficulty"]] += 1; p[r["difficulty"]] += ch["passed"]
    print(f"{name:20s} {sum(p.values())}/{len(rows)}  " + " ".join(f"{d}:{p[d]}/{tot[d]}" for d in ("easy","medium","hard")))
