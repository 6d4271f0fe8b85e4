"""The tools under test (issue 22): how each is asked for a command, and what counts as its answer.

Every tool runs inside the same sandbox as the judge, with a copy of the task's test filesystem as
`/` (so `/testbed` and friends exist for its probes, exactly as for the reference) and the host's
network shared so it reaches the model server on 127.0.0.1.

- `widget`: `OPSAI_BUFFER=<task> opsai widget </dev/null`; exit 0 means stdout is the command.
  It runs on a read-only copy: probes are read-only by design, and the judge runs the answer in a
  fresh copy anyway.
- `agent`: `opsai --json -y <task>` on a writable copy it may change; judged on that copy's final
  state and the output of the last command it ran. With no terminal, a High command (a deletion)
  is refused, as opsai's invariant 2 says.
- `agent-yes`: the same, with a pseudo-terminal as stdin and a person who types `yes` at every
  approval prompt: what a user who approves each command gets (High always asks; `-y` covers
  Medium only).
- `shell_gpt`, `aichat`: peers, pointed at the same server; their text is read kindly, as a person
  pasting it would (`peer_command`: the first fenced block, or one line out of its backticks; a
  shell line would do neither), and whether the raw text was a clean command is recorded.
"""

import json
import os
import pty
import re
import select
import shutil
import subprocess
import tempfile
import time

import judge

# Seconds one tool may take on one task (run.py --tool-timeout). A tool stopped by it is recorded
# with "timeout": true: on a loaded machine that is the machine, so rerun those tasks (--tasks).
TOOL_TIMEOUT = 300
OPSAI_IN_SANDBOX = "/opt/opsai-eval/opsai"
HOME_IN_SANDBOX = "/var/opsai-home"

# A capitalized sentence of several words ending in a word and a full stop or colon.
PROSE_SENTENCE = re.compile(r"^[A-Z][a-z]+( \S+){3,}[a-z]{2,}[.:]$", re.S)
FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.S)
PROSE_START = re.compile(
    r"^(to |you |here|the |this |that |i |sure|certainly|use |it |note|please|sorry|as an)", re.I
)


def format_failure(text):
    """Why `text` is not a clean command line, or None when it is one."""
    stripped = text.strip()
    if not stripped:
        return "empty"
    if "```" in stripped:
        return "fence"
    if len(stripped) > 1 and stripped[0] == stripped[-1] == "`":
        return "inline_code"
    if PROSE_START.match(stripped) or PROSE_SENTENCE.match(stripped):
        return "prose"
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    # Several lines are a script (run one after the other) unless they read as choices: the same
    # program on every line, or a line that is only "or".
    if len(lines) > 1 and (len({line.split()[0] for line in lines}) == 1 or any(line.lower() == "or" for line in lines)):
        return "alternatives"
    if "/" in stripped and " " not in stripped and os.path.isabs(stripped):
        return "path"
    check = subprocess.run(["bash", "-n", "-c", stripped], capture_output=True)
    if check.returncode != 0:
        return "syntax"
    return None


def peer_command(text):
    """A peer's command, read as kindly as a person pasting it would: the first fenced block, or a
    line wrapped in one pair of backticks without them (both still count as format failures)."""
    match = FENCE.search(text)
    command = match.group(1).strip() if match else text.strip()
    if len(command) > 1 and command[0] == command[-1] == "`" and "`" not in command[1:-1] and "\n" not in command:
        command = command[1:-1].strip()
    return command


class Endpoint:
    def __init__(self, base_url, model, api_key):
        self.base_url = base_url
        self.model = model
        self.api_key = api_key


def opsai_env(endpoint, fs, extra=None):
    env = dict(judge.IMAGE_ENV.get(fs, {}))
    env |= {
        "OPSAI_HOME": HOME_IN_SANDBOX,
        "OPSAI_BASE_URL": endpoint.base_url,
        "OPSAI_API_KEY": endpoint.api_key,
        "NO_COLOR": "1",
    }
    if endpoint.model:
        env["OPSAI_MODEL"] = endpoint.model
    env.update(extra or {})
    return env


def run_sandboxed(root, argv, env, writable, binds, timeout=None):
    timeout = timeout or TOOL_TIMEOUT
    cmd = judge.bwrap(root, argv, writable=writable, share_net=True, binds=binds, env=env)
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        out, err, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out, err, code = e.stdout or b"", e.stderr or b"", 124
    return out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), code, time.monotonic() - started


# The last line of opsai's prompt for a High command (src/ui/approve.rs), on stderr when stdin is
# the terminal.
HIGH_PROMPT = b"Type yes and Enter to run it"


def run_approving(root, argv, env, writable, binds, timeout=None):
    """`run_sandboxed` with a pseudo-terminal as stdin, answering `yes` to each High prompt."""
    timeout = timeout or TOOL_TIMEOUT
    cmd = judge.bwrap(root, argv, writable=writable, share_net=True, binds=binds, env=env)
    master, slave = pty.openpty()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    finally:
        os.close(slave)
    try:
        return answer_high_prompts(proc, master, started, timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        os.close(master)


def answer_high_prompts(proc, master, started, timeout):
    streams = {proc.stdout.fileno(): bytearray(), proc.stderr.fileno(): bytearray()}
    out, err = streams[proc.stdout.fileno()], streams[proc.stderr.fileno()]
    open_fds, answered, code = set(streams) | {master}, 0, None
    while open_fds - {master}:
        left = started + timeout - time.monotonic()
        if left <= 0:
            proc.kill()
            code = 124
            break
        ready, _, _ = select.select(list(open_fds), [], [], left)
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the terminal's other side closed (EIO)
                chunk = b""
            if not chunk:
                open_fds.discard(fd)
            elif fd != master:  # the master side only echoes what was typed
                streams[fd] += chunk
        # Typed only once the prompt is on screen: opsai drops keys pressed before it.
        if err.count(HIGH_PROMPT) > answered:
            answered += 1
            os.write(master, b"yes\r")
    proc.wait()
    code = proc.returncode if code is None else code
    return out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), code, time.monotonic() - started


class Result:
    """One tool's answer to one task, before judging."""

    def __init__(self, candidate, raw, seconds, fmt=None, code=0, outcome=None, note="", earlier=()):
        self.candidate = candidate
        self.earlier = list(earlier)  # the agent's commands that ran before `candidate`, in order
        self.raw = raw
        self.seconds = seconds
        self.format_failure = fmt
        self.code = code
        self.outcome = outcome  # set when the tool itself changed a copy (the agent)
        self.note = note


def opsai_binds(binary, home):
    return [("--ro-bind", binary, OPSAI_IN_SANDBOX), ("--bind", home, HOME_IN_SANDBOX)]


def widget(task, testbed, endpoint, binary, keep_dir):
    home = tempfile.mkdtemp(prefix="home-", dir=testbed.workdir)
    try:
        env = opsai_env(endpoint, task.fs, {"OPSAI_BUFFER": task.nl, "OPSAI_CURSOR": str(len(task.nl)),
                                    "OPSAI_SHELL": "bash", "OPSAI_SHELL_VERSION": "5.2"})
        out, err, code, secs = run_sandboxed(testbed.templates[task.fs], [OPSAI_IN_SANDBOX, "widget"], env,
                                             writable=False, binds=opsai_binds(binary, home))
        keep_log(home, keep_dir, task)
        if code != 0:
            return Result("", out + err, secs, fmt="no_command", code=code, note=out.strip()[:200])
        return Result(out, out, secs, fmt=format_failure(out), code=code)
    finally:
        judge.remove(home)


def agent(task, testbed, endpoint, binary, keep_dir, approve=False):
    home = tempfile.mkdtemp(prefix="home-", dir=testbed.workdir)
    copy = testbed.copy(task.fs)
    try:
        env = opsai_env(endpoint, task.fs)
        run = run_approving if approve else run_sandboxed
        out, err, code, secs = run(copy, [OPSAI_IN_SANDBOX, "--json", "-y", task.nl], env,
                                   writable=True, binds=opsai_binds(binary, home))
        keep_log(home, keep_dir, task)
        if keep_dir:
            with open(os.path.join(keep_dir, f"{task.id}.agent.jsonl"), "w", encoding="utf-8") as f:
                f.write(out)
        ran, output = commands_run(out)
        if not ran:
            return Result("", out[-2000:] + err[-500:], secs, fmt="no_command", code=code)
        outcome = judge.Outcome(stdout=output, changes=testbed.changes(task.fs, copy), code=code)
        return Result(ran[-1], ran[-1], secs, fmt=None, code=code, outcome=outcome, earlier=ran[:-1])
    finally:
        judge.remove(copy)
        judge.remove(home)


def commands_run(jsonl):
    """The commands the agent ran, in order, and what the last one printed, from `--json` events."""
    commands, chunks, ran = {}, {}, []
    for line in jsonl.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = event.get("type")
        # Only shell commands: the file tools' calls carry a display line (`read_file PATH`) too.
        if kind == "tool_call" and event.get("tool") == "run_command" and event.get("command"):
            commands[event["id"]] = event["command"]
        elif kind == "output":
            chunks.setdefault(event["id"], []).append(event.get("chunk", ""))
        # A command counts when it actually ran (not refused by policy or user, not invalid).
        elif kind == "tool_result" and event.get("id") in commands and event.get("status") in ("ran", "timed_out", "interrupted"):
            ran.append(event["id"])
    if not ran:
        return [], ""
    last = ran[-1]
    return [commands[id] for id in ran], "".join(chunks.get(last, [])).replace("\r\n", "\n")


def peer(name, task, testbed, endpoint, keep_dir):
    """shell_gpt or aichat, asked the task text once, on the host (they only print)."""
    work = tempfile.mkdtemp(prefix=f"{name}-", dir=testbed.workdir)
    try:
        env = dict(PATH=os.environ.get("PATH", ""), HOME=work, LANG="C.UTF-8", TERM="dumb", NO_COLOR="1")
        if name == "shell_gpt":
            argv, env = shell_gpt_argv(task, endpoint, work, env)
        else:
            argv, env = aichat_argv(task, endpoint, work, env)
        started = time.monotonic()
        try:
            proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, cwd=work,
                                  timeout=TOOL_TIMEOUT)
            raw, code = proc.stdout.decode("utf-8", "replace"), proc.returncode
            if code != 0:
                raw += proc.stderr.decode("utf-8", "replace")[-500:]
        except subprocess.TimeoutExpired:
            raw, code = "", 124
        secs = time.monotonic() - started
        return Result(peer_command(raw) if code == 0 else "", raw, secs, fmt=format_failure(raw), code=code)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def shell_gpt_argv(task, endpoint, home, env):
    cfg = os.path.join(home, ".config", "shell_gpt")
    os.makedirs(cfg, exist_ok=True)
    with open(os.path.join(cfg, ".sgptrc"), "w", encoding="utf-8") as f:
        f.write(f"API_BASE_URL={endpoint.base_url}\nOPENAI_API_KEY={endpoint.api_key}\n"
                f"DEFAULT_MODEL={endpoint.model or 'local'}\nPRETTIFY_MARKDOWN=false\nCACHE_LENGTH=0\n"
                "REQUEST_TIMEOUT=170\nSHOW_FUNCTIONS_OUTPUT=false\nOPENAI_USE_FUNCTIONS=false\n")
    exe = shutil.which("sgpt") or "sgpt"
    # --shell is shell_gpt's own "give me a command" mode (its system prompt asks for a bare command).
    return [exe, "--shell", "--no-interaction", "--no-md", "--no-cache", "--no-functions",
            "--model", endpoint.model or "local", "--temperature", "0", "--top-p", "1", task.nl], env


def aichat_argv(task, endpoint, home, env):
    # `-e` without a terminal prints the command and runs nothing (aichat 0.30.0, session 36).
    cfg = os.path.join(home, ".config", "aichat")
    os.makedirs(cfg, exist_ok=True)
    with open(os.path.join(cfg, "config.yaml"), "w", encoding="utf-8") as f:
        f.write(f"model: local:{endpoint.model or 'local'}\ntemperature: 0\nstream: false\nclients:\n"
                f"- type: openai-compatible\n  name: local\n  api_base: {endpoint.base_url}\n"
                f"  api_key: {endpoint.api_key}\n  models:\n  - name: {endpoint.model or 'local'}\n")
    exe = shutil.which("aichat") or "aichat"
    env["AICHAT_CONFIG_DIR"] = cfg
    return [exe, "--no-stream", "-e", task.nl], env


def keep_log(home, keep_dir, task):
    """Keep the widget's log and the audit line of a task beside the run's results, for reading."""
    if not keep_dir:
        return
    for name in ("widget.log", "audit.log"):
        src = os.path.join(home, name)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(keep_dir, f"{task.id}.{name}"))
