"""Method: ground the greedy candidate's options in its programs' --help (prototype)."""
import json, os, re, sys, subprocess, time, argparse, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__))); sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import proto, alfa, judge, run as runmod, tools
from proto import CACHE

STOP = set("""a an the and or of to in on at by for with from into as is are be it its this that these those all any each
every file files directory directories dir folder current print display show list find get set use using named name names
under over than then only not do does make sure one two three which what whose who their there here your my me you""".split())
SKIP = {"sudo", "env", "xargs", "nohup", "time", "command", "exec", "nice", "timeout", "then", "do", "if", "for", "while", "echo", "printf", "cd", "true", "false", "test", "["}

def request_words(nl):
    nl = re.sub(r"'[^']*'|\"[^\"]*\"", " ", nl)
    nl = " ".join(t for t in nl.split() if "/" not in t and not re.search(r"\w\.\w", t))
    return words(nl)

def words(text):
    return [w for w in re.findall(r"[a-z][a-z0-9]+", text.lower()) if w not in STOP and len(w) > 2]

def match(a, b):
    if a == b: return True
    n = min(len(a), len(b))
    return n >= 4 and a[:max(4, n - 1)] == b[:max(4, n - 1)] if n >= 4 else False

def programs(cmd):
    progs = []
    for part in re.split(r"\|\||&&|[|;&\n]|\$\(|`|-exec\s|-execdir\s", cmd):
        toks = part.strip().split()
        while toks and (toks[0] in SKIP or "=" in toks[0] or toks[0].startswith("-") or toks[0] in ("(", "{", "!")):
            toks = toks[1:]
        if toks:
            p = toks[0].strip("'\"(){}")
            if re.fullmatch(r"[a-z][a-z0-9_.+-]*", p) and p not in progs and p not in SKIP:
                progs.append(p)
    return progs[:3]

def option_entries(help_text):
    """(first line, full text) of each option entry: a line starting with spaces then '-'."""
    entries, cur = [], None
    for line in help_text.splitlines():
        if re.match(r"^\s{1,8}-{1,2}[A-Za-z0-9]", line):
            if cur: entries.append(cur)
            cur = [line.rstrip()]
        elif cur and line.startswith(" " * 8) and line.strip():
            cur.append(line.rstrip())
        else:
            if cur: entries.append(cur); cur = None
    if cur: entries.append(cur)
    return entries

def get_help(testbed, fs, prog):
    code, out, err = proto.try_run(testbed, fs, f"MANWIDTH=100 man -P cat {prog} 2>/dev/null | col -bx | head -c 60000")
    if len(option_entries(out)) < 2:
        code, out, err = proto.try_run(testbed, fs, f"{prog} --help 2>&1 | head -c 20000")
    return out

def relevant(nl, prog, help_text, cmd, limit=3):
    import math
    ws = set(w for w in request_words(nl) if not match(w, prog))
    ents = []
    for e in option_entries(help_text):
        text = " ".join(x.strip() for x in e)
        desc = re.sub(r"^(-[^ ]*(, -[^ ]*)*( [A-Za-z=\[\]<>._]+)?)\s+", "", text)
        ents.append((e, [x for x in words(desc)][:40]))
    if not ents: return []
    n = len(ents)
    df = {w: sum(1 for _, ew in ents if any(match(w, x) for x in ew)) for w in ws}
    scored = []
    for e, ew in ents:
        hit = [w for w in ws if df[w] and any(match(w, x) for x in ew)]
        if not hit: continue
        s = sum(math.log(1 + n / df[w]) for w in hit) / (1 + len(ew) / 25)
        scored.append((s, e))
    scored.sort(key=lambda x: -x[0])
    return [e[:3] for s, e in scored[:limit]]

def main():
    ap = argparse.ArgumentParser(); ap.add_argument("src"); ap.add_argument("out"); a = ap.parse_args()
    assets = alfa.assets_dir(os.path.join(CACHE, "alfa")); tasks = {t.id: t for t in alfa.load(assets)}
    work = tempfile.mkdtemp(prefix="proto-")
    testbed = judge.Testbed(work, assets, alfa.filesystems(assets), alfa.setup_script)
    det = runmod.deterministic(list(tasks.values()), testbed, CACHE, alfa.fingerprint(assets), print)
    out = open(a.out, "w")
    for line in open(a.src):
        r = json.loads(line); task = tasks[r["task"]]; g = r["cands"][0]
        cmd = g["cmd"]
        lines = []
        for p in programs(cmd):
            ent = relevant(task.nl, p, get_help(testbed, task.fs, p), cmd)
            if ent:
                lines.append(f"`{p} --help` says:\n" + "\n".join("\n".join(e) for e in ent))
        new, passed = cmd, g["passed"]
        t0 = time.time()
        if lines:
            msgs = [{"role": "system", "content": proto.SYSTEM}, {"role": "user", "content": task.nl},
                    {"role": "assistant", "content": cmd},
                    {"role": "user", "content": "\n".join(lines) + "\nIf one of these options does what I asked better, use it; keep the command otherwise. Reply with the command line only."}]
            new = proto.clean(proto.chat(msgs))
            if new != cmd:
                passed = runmod.judge_task(task, det.get(task.id) or [0], tools.Result(new, new, 0), testbed)
        row = dict(task=task.id, difficulty=task.difficulty, greedy=cmd, greedy_pass=g["passed"], help="\n".join(lines), new=new, passed=passed, s=round(time.time()-t0,2))
        out.write(json.dumps(row) + "\n"); out.flush()
        mark = "same" if new == cmd else ("WIN " if passed and not g["passed"] else ("LOSS" if g["passed"] and not passed else "chg "))
        print(f"#{task.id} {mark} {cmd[:60]!r} -> {new[:60]!r} ({len(lines)} progs)", flush=True)
    judge.remove(work)

if __name__ == "__main__":
    main()
