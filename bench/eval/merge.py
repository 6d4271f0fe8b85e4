#!/usr/bin/env python3
"""Replace a run's rows with a rerun's rows for the same (tool, task), then print the summary:

    python3 bench/eval/merge.py RUN/results.jsonl RERUN/results.jsonl [--out MERGED.jsonl]
    python3 bench/eval/merge.py WIDGET.jsonl PEER.jsonl --same-tasks-as PEER.jsonl   # a paired sample

For tasks a loaded machine stopped by --tool-timeout, rerun with `--tasks` and merge here.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tools  # noqa: E402
from run import summarize  # noqa: E402


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("base")
    p.add_argument("reruns", nargs="+")
    p.add_argument("--out", default="")
    p.add_argument("--label", default="")
    p.add_argument("--same-tasks-as", default="", help="keep only the tasks of this results.jsonl (paired samples)")
    p.add_argument("--reclassify", action="store_true", help="recompute format failures with today's rules")
    args = p.parse_args()
    rows = {(r["tool"], r["task"]): r for r in read(args.base)}
    for path in args.reruns:
        for r in read(path):
            rows[(r["tool"], r["task"])] = r
    merged = sorted(rows.values(), key=lambda r: (r["tool"], r["task"]))
    if args.same_tasks_as:
        keep = {r["task"] for r in read(args.same_tasks_as)}
        merged = [r for r in merged if r["task"] in keep]
    if args.reclassify:
        for r in merged:
            if r.get("exit") == 0 and not r["tool"].startswith("agent"):
                r["format_failure"] = tools.format_failure(r.get("raw", r["candidate"]))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in merged)
    order = list(dict.fromkeys(r["tool"] for r in merged))
    print(summarize(merged, order, args.label))


if __name__ == "__main__":
    main()
