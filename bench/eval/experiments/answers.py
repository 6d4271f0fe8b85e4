"""The agent's final answers to questions about this machine, judged by a pattern (issue 22).

NL2SH-ALFA judges commands, not what the agent says after running them. This asks `opsai -q`
sixteen questions whose answer this script knows (a file's line count, the kernel, the CPU count,
…), in a scratch directory it fills, against a real model server, and counts the answers that
hold the fact:

    python3 bench/eval/experiments/answers.py --opsai target/debug/opsai --out answers.jsonl

`--base-url`/`--model` default to the eval's llama-server (bench/eval/setup.sh --serve).
"""
import argparse, json, os, re, shutil, socket, subprocess, tempfile


def distribution():
    text = open("/etc/os-release").read()
    return re.search(r'^ID="?([^"\n]+)"?$', text, re.M).group(1)


def questions():
    passwd = sum(1 for _ in open("/etc/passwd"))
    return [
        ("how many lines are in nums.txt", r"\b1000\b"),
        ("what is the kernel version", re.escape(os.uname().release.split("-")[0])),
        ("what's the hostname of this machine", r"\b%s\b" % re.escape(socket.gethostname())),
        ("which user am I running as", r"\b%s\b" % re.escape(os.environ.get("USER", "root"))),
        ("how many CPU cores does this machine have", r"\b%d\b" % len(os.sched_getaffinity(0))),
        ("what is the largest file in this directory", r"big\.bin"),
        ("what time zone is this machine in", r"UTC|%s" % re.escape(os.path.realpath("/etc/localtime").split("zoneinfo/")[-1])),
        ("which Linux distribution is this", re.escape(distribution())),
        ("how many files are in this directory", r"\b5\b|\bfive\b"),
        ("what does a.txt contain", r"hello"),
        ("how many .log files are here", r"\b2\b|\btwo\b"),
        ("what is the size of big.bin", r"3(\.0)? ?M|3145728|3,145,728"),
        ("how many lines does /etc/passwd have", r"\b%d\b" % passwd),
        ("what is the first line of nums.txt", r"\b1\b"),
        ("what is the last line of nums.txt", r"\b1000\b"),
        ("which line of nums.txt is 777", r"\b777\b"),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opsai", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--base-url", default=os.environ.get("OPSAI_EVAL_BASE_URL", "http://127.0.0.1:8081/v1"))
    ap.add_argument("--model", default=os.environ.get("OPSAI_EVAL_MODEL", "qwen2.5-coder-1.5b-instruct-q4_k_m"))
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="answers-")
    os.makedirs(os.path.join(work, "dir"))
    here = os.path.join(work, "dir")
    open(os.path.join(here, "a.txt"), "w").write("hello\n")
    open(os.path.join(here, "nums.txt"), "w").write("".join(f"{i}\n" for i in range(1, 1001)))
    open(os.path.join(here, "big.bin"), "wb").write(b"\0" * 3145728)
    for name, text in (("c.log", "x\n"), ("d.log", "y\n")):
        open(os.path.join(here, name), "w").write(text)
    env = dict(os.environ, OPSAI_HOME=os.path.join(work, "home"), OPSAI_BASE_URL=a.base_url, OPSAI_MODEL=a.model)
    right = 0
    asked = questions()
    with open(a.out, "w") as out:
        for question, pattern in asked:
            try:
                run = subprocess.run([os.path.abspath(a.opsai), "-q", question], cwd=here, env=env,
                                     stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
                answer, stderr = run.stdout.strip(), run.stderr.strip()[-300:]
            except subprocess.TimeoutExpired:
                answer, stderr = "", "timed out after 180 s"
            ok = bool(re.search(pattern, answer, re.I))
            right += ok
            out.write(json.dumps({"question": question, "ok": ok, "answer": answer[-500:], "stderr": stderr}) + "\n")
            out.flush()
            print(f"{'PASS' if ok else 'fail'} {question}: {answer[:100]!r}", flush=True)
    print(f"{a.out}: {right}/{len(asked)} answers hold the fact")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
