#!/usr/bin/env python3
"""Prints the size of each mode's first request to the model: the system prompt, the tool schemas
(the `tools` JSON as sent) and their sum, with an estimate of the tokens (bytes / 4; English prose
and JSON run at 3.5 – 4.5 bytes a token for the common BPE vocabularies).

    python3 bench/request_size.py [target/debug/opsai]

Runs the real binary against a local endpoint that records each request body and answers with
text at once, from an empty working directory and an empty OPSAI_HOME. Two environments: this
machine's PATH as is, and a PATH on which a `docker` that answers and a `kubectl` exist (the
largest agent request). Budgets (issue 15): agent <= 6,000 bytes, widget <= 3,000, explain <= 4,000;
exits 1 when one is over. REQUEST_SIZE_DUMP=DIR also writes each request body to DIR/N.json.
"""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/debug/opsai")
BUDGETS = {"agent": 6000, "widget": 3000, "explain": 4000}
bodies = []


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path.endswith("/chat/completions"):
            bodies.append(json.loads(body))
            if os.environ.get("REQUEST_SIZE_DUMP"):
                open(os.path.join(os.environ["REQUEST_SIZE_DUMP"], f"{len(bodies)}.json"), "wb").write(body)
        delta = {"content": "```sh\nls -l\n```"}
        chunk = json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": "stop"}]})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(f"data: {chunk}\n\ndata: [DONE]\n\n".encode())

    def log_message(self, *args):
        pass


def first_request(args, env, stdin=None):
    before = len(bodies)
    subprocess.run([BIN, *args], env=env, cwd=env["HOME"], input=stdin, capture_output=True, timeout=60)
    if len(bodies) == before:
        sys.exit(f"request_size.py: `opsai {' '.join(args)}` sent no request")
    return bodies[before]


def sizes(body):
    system = next(m["content"] for m in body["messages"] if m["role"] == "system")
    tools = json.dumps(body.get("tools", []), separators=(",", ":"), ensure_ascii=False) if body.get("tools") else ""
    names = [t["function"]["name"] for t in body.get("tools", [])]
    return len(system.encode()), len(tools.encode()), names


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    work = tempfile.mkdtemp(prefix="opsai-request-size-")
    fake_bin = os.path.join(work, "bin")
    os.makedirs(fake_bin)
    for name, script in [("docker", "echo '27.1.1|3|1'"), ("kubectl", "exit 0")]:
        path = os.path.join(fake_bin, name)
        with open(path, "w") as out:
            out.write(f"#!/bin/sh\n{script}\n")
        os.chmod(path, 0o755)
    base = {
        "OPSAI_BASE_URL": f"http://127.0.0.1:{server.server_port}/v1",
        "NO_COLOR": "1",
        "LANG": "C.UTF-8",
        "OPSAI_SHELL": "bash",
        "OPSAI_SHELL_VERSION": "5.2",
        "OPSAI_BUFFER": "list files by size",
        "OPSAI_CURSOR": "18",
    }
    print(f"{'mode':<8} {'PATH':<22} {'system':>7} {'tools':>7} {'total':>7} {'~tokens':>8} {'budget':>7}  tools offered")
    failed = False
    for label, path in [("this machine", os.environ.get("PATH", "")), ("+ docker + kubectl", f"{fake_bin}:/usr/bin:/bin")]:
        home = tempfile.mkdtemp(dir=work)
        env = dict(base, PATH=path, HOME=home, OPSAI_HOME=os.path.join(home, ".opsai"))
        # Twice for the agent: the second run sees the Docker probe the first one cached.
        first_request(["-q", "list the files here"], env)
        runs = [
            ("agent", first_request(["-q", "list the files here"], env)),
            ("widget", first_request(["widget"], env)),
            ("explain", first_request(["explain", "-q"], env, stdin=b"write error: No space left on device\n")),
        ]
        for mode, body in runs:
            system, tools, names = sizes(body)
            total = system + tools
            failed |= total > BUDGETS[mode]
            print(f"{mode:<8} {label:<22} {system:>7} {tools:>7} {total:>7} {round(total / 4):>8} {BUDGETS[mode]:>7}  {', '.join(names)}")
    server.shutdown()
    sys.exit(1 if failed else 0)


main()
