#!/usr/bin/env python3
"""NL2SH-ALFA, judged by execution, for opsai and its peers (issue 22). One command, outside CI:

    bench/eval/setup.sh --serve          # once: llama-server, the model, the ALFA data
    python3 bench/eval/run.py --tools widget,agent --opsai target/release/opsai

Per task it writes one JSON line (tool, task, difficulty, candidate, pass, format_failure, seconds)
to `$CACHE/runs/<stamp>/results.jsonl` and prints the summary in bench/BENCHMARKS.md's table shape.
Only tasks whose reference gives the same result twice are scored (cached per data set).
"""

import argparse
import datetime
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import alfa  # noqa: E402
import judge  # noqa: E402
import tools  # noqa: E402

CACHE = os.environ.get("OPSAI_EVAL_CACHE") or os.path.expanduser("~/.cache/opsai-eval")


# How much of a tool's raw answer a row keeps.
RAW_KEPT = 2000


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tools", default="widget", help="comma list of widget, agent, agent-yes, shell_gpt, aichat")
    p.add_argument("--opsai", default=None, help="the opsai binary (default: target/release/opsai)")
    p.add_argument("--base-url", default=os.environ.get("OPSAI_EVAL_BASE_URL", "http://127.0.0.1:8081/v1"))
    p.add_argument("--model", default=os.environ.get("OPSAI_EVAL_MODEL", "qwen2.5-coder-1.5b-instruct-q4_k_m"))
    p.add_argument("--api-key", default=os.environ.get("OPSAI_EVAL_API_KEY", "sk-local"))
    p.add_argument("--alfa", default=os.path.join(CACHE, "alfa"), help="unpacked icalfa (or the same layout)")
    p.add_argument("--cache", default=CACHE, help="where runs and the deterministic-task list go")
    p.add_argument("--limit", type=int, default=0, help="only the first N scored tasks")
    p.add_argument("--sample", type=int, default=0, help="K scored tasks drawn at random (seeded)")
    p.add_argument("--seed", type=int, default=22)
    p.add_argument("--tasks", default="", help="comma list of task ids (and ranges like 10-20)")
    p.add_argument("--label", default="", help="a name for this run in the summary")
    p.add_argument("--out", default="", help="the run's directory (default: under --cache/runs)")
    p.add_argument("--all-tasks", action="store_true", help="score nondeterministic tasks too")
    p.add_argument("--quiet", action="store_true", help="no per-task lines")
    p.add_argument("--tool-timeout", type=int, default=tools.TOOL_TIMEOUT, help="seconds per tool and task")
    p.add_argument("--rejudge", default="", metavar="RESULTS_JSONL",
                   help="judge a run's peer answers again, read with today's peer_command (no model needed)")
    return p.parse_args()


def task_filter(spec):
    ids = set()
    for part in filter(None, spec.split(",")):
        lo, _, hi = part.partition("-")
        ids.update(range(int(lo), int(hi or lo) + 1))
    return ids


def usable(outcome):
    """False for a reference that fails here without output or change (a program the host lacks,
    no network in the sandbox): any command that fails quietly would match it."""
    return outcome.code == 0 or bool(outcome.stdout.strip()) or bool(outcome.changes)


def deterministic(tasks, testbed, cache, fingerprint, log):
    """task id -> the indexes of its references that give the same result twice and are usable
    (cached per data set: delete the file after installing programs the references use)."""
    path = os.path.join(cache, f"deterministic-{fingerprint}.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return {int(k): v for k, v in json.load(f).items()}
    log(f"running every reference twice to find the deterministic tasks (cached in {path})")
    first = {}
    for task in tasks:
        first[task.id] = [testbed.run(task.fs, alfa.shell_for(task.fs), ref) for ref in task.refs]
    # The second pass comes minutes later, so clocks and counters show up as differences.
    result = {}
    for task in tasks:
        again = [testbed.run(task.fs, alfa.shell_for(task.fs), ref) for ref in task.refs]
        result[task.id] = [
            i for i, (a, b) in enumerate(zip(first[task.id], again)) if judge.same(a, b) and usable(a)
        ]
    os.makedirs(cache, exist_ok=True)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump({str(k): v for k, v in result.items()}, f)
    os.replace(path + ".tmp", path)
    return result


def select(tasks, det, args):
    chosen = [t for t in tasks if args.all_tasks or det.get(t.id)]
    if args.tasks:
        wanted = task_filter(args.tasks)
        chosen = [t for t in chosen if t.id in wanted]
    if args.sample:
        chosen = sorted(random.Random(args.seed).sample(chosen, min(args.sample, len(chosen))), key=lambda t: t.id)
    if args.limit:
        chosen = chosen[: args.limit]
    return chosen


REFERENCE_OUTCOMES = {}


def scored_refs(task, det):
    """The references a task is judged against: those that gave the same result twice, or all of
    them when none did (such a task is scored only with `--all-tasks`)."""
    return det.get(task.id) or list(range(len(task.refs)))


def judge_task(task, refs_ok, result, testbed, as_seen=False):
    """Pass when the candidate's outcome equals a deterministic reference's outcome.

    The agent's outcome is the state it left, with the stdout its last command prints when run
    in a fresh copy, after the commands it ran before (their output dropped), as the widget's
    candidate is run: what opsai showed on its terminal merges
    stderr into the output (a PTY) and comes from inside opsai's sandbox, whose view of `/proc`,
    of processes and of the network is not the judge's. `as_seen` judges that terminal output
    instead (the agent rows before session 34)."""
    if not result.candidate.strip():
        return False
    shell = alfa.shell_for(task.fs)
    outcome = result.outcome
    if outcome is None:
        outcome = testbed.run(task.fs, shell, result.candidate)
    elif not as_seen:
        # Each of the agent's commands ran in a shell of its own: only the files carry over.
        script = "".join(f"( {command}\n) >/dev/null 2>&1\n" for command in result.earlier) + result.candidate
        rerun = testbed.run(task.fs, shell, script)
        outcome = judge.Outcome(stdout=rerun.stdout, changes=outcome.changes, code=outcome.code)
    for i in refs_ok:
        key = (task.id, i)
        if key not in REFERENCE_OUTCOMES:
            REFERENCE_OUTCOMES[key] = testbed.run(task.fs, shell, task.refs[i])
        if judge.same(outcome, REFERENCE_OUTCOMES[key]):
            return True
    return False


def ask(tool, task, testbed, endpoint, binary, keep_dir):
    if tool == "widget":
        return tools.widget(task, testbed, endpoint, binary, keep_dir)
    if tool in ("agent", "agent-yes"):
        return tools.agent(task, testbed, endpoint, binary, keep_dir, approve=tool == "agent-yes")
    if tool in ("shell_gpt", "aichat"):
        return tools.peer(tool, task, testbed, endpoint, keep_dir)
    raise SystemExit(f"unknown tool {tool!r}: use widget, agent, agent-yes, shell_gpt or aichat")


def summarize(rows, tools_run, label=""):
    lines = [
        "| tool | easy | medium | hard | all | format failures | median s/task |",
        "|---|---|---|---|---|---|---|",
    ]
    for tool in tools_run:
        mine = [r for r in rows if r["tool"] == tool]
        if not mine:
            continue
        cells = []
        for level in ("easy", "medium", "hard"):
            sub = [r for r in mine if r["difficulty"] == level]
            cells.append(f"{sum(r['pass'] for r in sub)}/{len(sub)}")
        passed = sum(r["pass"] for r in mine)
        pct = round(100 * passed / len(mine))
        fails = sum(1 for r in mine if r["format_failure"] and not r.get("timeout"))
        median = statistics.median(r["seconds"] for r in mine)
        name = f"{tool} ({label})" if label else tool
        lines.append(f"| {name} | {' | '.join(cells)} | **{passed}/{len(mine)} ({pct} %)** | {fails} | {median:.1f} |")
    for tool in tools_run:
        seen = [r for r in rows if r["tool"] == tool and "pass_as_seen" in r]
        if seen:
            lines.append(f"\n{tool}: {sum(r['pass_as_seen'] for r in seen)}/{len(seen)} when judged on the output "
                         "its terminal showed (stderr merged, inside opsai's sandbox) instead of its last command's "
                         "stdout in a fresh copy")
    stopped = [f"{r['tool']} #{r['task']}" for r in rows if r.get("timeout")]
    if stopped:
        lines.append(f"\nStopped by --tool-timeout (counted as failures; rerun with --tasks): {', '.join(stopped)}")
    return "\n".join(lines)


def rejudge(path, tasks, det, testbed, out_dir, label, log):
    """The rows of `path` again: a peer's answer read from its raw output with today's rules and
    judged again; opsai's rows as they were."""
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    changed = 0
    for row in rows:
        if row["tool"] not in ("shell_gpt", "aichat") or row.get("timeout") or row.get("exit", 0) != 0:
            continue
        raw = row.get("raw", row["candidate"])
        if "raw" in row and len(raw) >= RAW_KEPT:
            continue  # kept cut: its block may be cut too, and the stored verdict read it whole
        candidate = tools.peer_command(raw)
        if candidate == row["candidate"]:
            continue
        task = tasks[row["task"]]
        refs_ok = scored_refs(task, det)
        passed = judge_task(task, refs_ok, tools.Result(candidate, raw, row["seconds"]), testbed)
        changed += passed != row["pass"]
        row.update(candidate=candidate, pass_before_rejudge=row["pass"], raw=raw)
        row["pass"] = passed
    with open(os.path.join(out_dir, "results.jsonl"), "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row) + "\n")
    table = summarize(rows, list(dict.fromkeys(r["tool"] for r in rows)), label)
    with open(os.path.join(out_dir, "summary.md"), "w", encoding="utf-8") as f:
        f.write(table + "\n")
    print(table)
    log(f"rejudged {path}: {changed} verdicts changed; results: {out_dir}")


def main():
    args = parse_args()
    tools.TOOL_TIMEOUT = args.tool_timeout
    wanted_tools = [t.strip() for t in args.tools.split(",") if t.strip() and t.strip() != "none"]
    binary = os.path.abspath(args.opsai or os.path.join(os.path.dirname(__file__), "..", "..", "target", "release", "opsai"))
    if any(t in ("widget", "agent", "agent-yes") for t in wanted_tools) and not os.access(binary, os.X_OK):
        raise SystemExit(f"no opsai binary at {binary}: build it (cargo build --release) or pass --opsai")
    if not shutil.which("bwrap"):
        raise SystemExit("bwrap (bubblewrap) is needed to judge: apt-get install bubblewrap")

    # Peers installed by setup.sh (shell_gpt) live in the cache's venv.
    os.environ["PATH"] = os.path.join(args.cache, "venv", "bin") + os.pathsep + os.environ.get("PATH", "")
    assets = alfa.assets_dir(args.alfa)
    tasks = alfa.load(assets)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out_dir = args.out or os.path.join(args.cache, "runs", stamp + (f"-{args.label}" if args.label else ""))
    os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="opsai-eval-")

    def log(msg):
        print(f"[eval {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    try:
        testbed = judge.Testbed(work, assets, alfa.filesystems(assets), alfa.setup_script)
        det = deterministic(tasks, testbed, args.cache, alfa.fingerprint(assets), log)
        chosen = select(tasks, det, args)
        log(f"{len(chosen)} tasks ({sum(1 for t in tasks if det.get(t.id))} of {len(tasks)} deterministic), "
            f"tools {','.join(wanted_tools)}, results in {out_dir}")
        if args.rejudge:
            rejudge(args.rejudge, {t.id: t for t in tasks}, det, testbed, out_dir, args.label, log)
            return
        endpoint = tools.Endpoint(args.base_url, args.model, args.api_key)
        rows = []
        with open(os.path.join(out_dir, "results.jsonl"), "w", encoding="utf-8") as out:
            for tool in wanted_tools:
                for n, task in enumerate(chosen, 1):
                    result = ask(tool, task, testbed, endpoint, binary, os.path.join(out_dir, "logs"))
                    refs_ok = scored_refs(task, det)
                    passed = judge_task(task, refs_ok, result, testbed)
                    row = {"tool": tool, "task": task.id, "difficulty": task.difficulty,
                           "candidate": result.candidate, "pass": passed,
                           "format_failure": result.format_failure, "seconds": round(result.seconds, 2),
                           "exit": result.code, "timeout": result.code == 124}
                    if result.outcome is not None:
                        row["pass_as_seen"] = judge_task(task, refs_ok, result, testbed, as_seen=True)
                    if result.raw != result.candidate:
                        row["raw"] = result.raw[:RAW_KEPT]
                    rows.append(row)
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    if not args.quiet:
                        mark = "PASS" if passed else ("FMT " + result.format_failure if result.format_failure else "fail")
                        log(f"{tool} {n}/{len(chosen)} #{task.id} {mark} {result.seconds:.1f}s {result.candidate.strip()[:100]!r}")
        table = summarize(rows, wanted_tools, args.label)
        with open(os.path.join(out_dir, "summary.md"), "w", encoding="utf-8") as f:
            f.write(table + "\n")
        print(table)
        log(f"results: {out_dir}")
    finally:
        judge.remove(work)


if __name__ == "__main__":
    main()
