"""tldr pages (common + linux) as a BM25 index over examples, plus leakage checks (issue 22 experiment).

Each example is one document: its description, optionally the page name and the page's summary line.
"""
import math, os, re, collections

HERE = os.path.dirname(os.path.abspath(__file__))
PAGES = [os.path.join(HERE, "pages", "common"), os.path.join(HERE, "pages", "linux")]

STOP = set("""a an the of to in on at for from by with and or is are be this that it its as into
all any each every some my me i you your we our do does can how what which who whose
using use used current given named called them their there then than
""".split())

def stem(w):
    for suf in ("ing", "ies", "es", "ed", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)] + ("y" if suf == "ies" else "")
    return w

def tokens(text):
    out = []
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in STOP: continue
        out.append(stem(w))
    return out


def query_text(nl):
    """The request's words without its literals: paths, file names, quoted strings and numbers name
    the user's objects, not what to do, and only pull in pages that happen to share them."""
    t = re.sub(r"(['\"`]).*?\1", " ", nl)
    t = re.sub(r"\S*[/.]\S*", " ", t)
    t = re.sub(r"\b\d+\b", " ", t)
    return t


class Example:
    __slots__ = ("page", "summary", "desc", "cmd", "platform")
    def __init__(self, page, summary, desc, cmd, platform):
        self.page, self.summary, self.desc, self.cmd, self.platform = page, summary, desc, cmd, platform


def parse_page(path, platform):
    name = os.path.basename(path)[:-3]
    summary, desc, out = [], None, []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("> "):
            if "More information" not in line and "See also" not in line and "This command is an alias" not in line:
                summary.append(line[2:].strip())
        elif line.startswith("- "):
            desc = line[2:].strip().rstrip(":")
        elif line.startswith("`") and line.endswith("`") and desc is not None:
            out.append(Example(name, " ".join(summary), desc, line[1:-1], platform))
            desc = None
    return out


def load_examples():
    ex = []
    for d in PAGES:
        plat = os.path.basename(d)
        for f in sorted(os.listdir(d)):
            if f.endswith(".md"):
                ex.extend(parse_page(os.path.join(d, f), plat))
    return ex


class BM25:
    def __init__(self, docs, k1=1.2, b=0.75):
        self.docs = docs; self.k1, self.b = k1, b
        self.tf = [collections.Counter(d) for d in docs]
        self.len = [len(d) for d in docs]
        self.avg = sum(self.len) / max(1, len(docs))
        df = collections.Counter()
        for d in docs: df.update(set(d))
        n = len(docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.post = collections.defaultdict(list)
        for i, tf in enumerate(self.tf):
            for t in tf: self.post[t].append(i)

    def top(self, query, k):
        score = collections.defaultdict(float)
        for t in set(query):
            idf = self.idf.get(t)
            if idf is None: continue
            for i in self.post[t]:
                f = self.tf[i][t]
                score[i] += idf * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg))
        return sorted(score.items(), key=lambda x: -x[1])[:k]


class Index:
    def __init__(self, with_summary=True, name_weight=2, installed=False):
        self.examples = load_examples()
        if installed:  # only programs this machine has: opsai knows its PATH
            import shutil
            ok = {}
            def have(e):
                w = e.cmd.split()[0] if e.cmd.split() else ""
                if w not in ok: ok[w] = shutil.which(w) is not None
                return ok[w]
            self.examples = [e for e in self.examples if have(e)]
        docs = []
        for e in self.examples:
            name_toks = tokens(e.page.replace("-", " ")) + [e.page.lower()]
            d = tokens(e.desc) + name_toks * name_weight
            if with_summary: d += tokens(e.summary)
            docs.append(d)
        self.bm = BM25(docs)

    def retrieve(self, nl, k, per_page=None):
        hits = self.bm.top(tokens(query_text(nl)), k * 6)
        out, seen = [], collections.Counter()
        for i, _s in hits:
            e = self.examples[i]
            if per_page and seen[e.page] >= per_page: continue
            seen[e.page] += 1; out.append(e)
            if len(out) == k: break
        return out


# ---- placeholder rendering -------------------------------------------------------------------
ALT = re.compile(r"\{\{\[([^\]|]*)\|([^\]]*)\]\}\}")  # {{[-C|--directory]}}: short|long option spelling
PH = re.compile(r"\{\{(.*?)\}\}")

def render(cmd, mode):
    """raw: as in tldr; plain: option alternatives -> short form, {{x}} -> x (path/to/file -> FILE-ish word)."""
    if mode == "raw": return cmd
    cmd = ALT.sub(lambda m: m.group(1), cmd)
    def word(m):
        v = m.group(1)
        if mode == "upper":  # path/to/file -> FILE, path/to/directory -> DIRECTORY
            v = v.split("/")[-1] if v.startswith("path/to/") else v
            return re.sub(r"[^A-Za-z0-9_.*-]+", "_", v).upper().strip("_") or "ARG"
        return v
    return PH.sub(word, cmd)


# ---- leakage -----------------------------------------------------------------------------------
def norm_cmd(c):
    c = c.strip().rstrip(";").strip()
    c = re.sub(r"\s+", " ", c)
    return c.replace('"', "'")

def cmd_regex(cmd):
    """tldr command -> regex where each placeholder matches one shell word (several if it lists several)."""
    parts, pos = [], 0
    cmd = norm_cmd(cmd)
    for m in PH.finditer(cmd):
        parts.append(re.escape(cmd[pos:m.start()]))
        inner = m.group(1)
        alt = re.fullmatch(r"\[([^\]]*)\]", inner)
        if alt:
            parts.append("(?:" + "|".join(re.escape(x) for x in alt.group(1).split("|")) + ")")
        elif " " in inner or "..." in inner:
            parts.append(r".+?")
        else:
            parts.append(r"(?:'[^']*'|[^\s|;&]+)")
        pos = m.end()
    parts.append(re.escape(cmd[pos:]))
    return re.compile("".join(parts))

_RX = {}
def same_command(tldr_cmd, gold):
    if tldr_cmd.lstrip().startswith("{{"): return False  # `{{command}}`-only examples match anything
    rx = _RX.get(tldr_cmd)
    if rx is None: rx = _RX[tldr_cmd] = cmd_regex(tldr_cmd)
    return rx.fullmatch(norm_cmd(gold)) is not None

def jaccard(a, b):
    a, b = set(re.findall(r"[a-z0-9]+", a.lower())), set(re.findall(r"[a-z0-9]+", b.lower()))
    return len(a & b) / len(a | b) if a | b else 0.0
