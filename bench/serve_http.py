"""The small HTTP and process helpers bench/serve.py and bench/serve-replicas.py share."""
import http.client
import json
import socket
import sys
import time


def free_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def wait_for(port, what="the server"):
    for _ in range(400):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"bench: {what} does not listen on port {port}")


def status_kb(pid, field):
    """A field of /proc/PID/status in kB (0 once the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def request(port, method, path, body=None, headers=None):
    """One request on a new connection; the whole JSON answer (None for an empty body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    if resp.status >= 300:
        sys.exit(f"bench: {method} {path} answered {resp.status}: {raw[:300]!r}")
    return json.loads(raw) if raw else None


def answer_of(events):
    """The answer a chat stream carried: the whole `answer` event, else the deltas joined."""
    whole = [e.get("content", "") for e in events if e.get("kind") == "answer"]
    if whole:
        return whole[-1]
    return "".join(e.get("content", "") for e in events if e.get("kind") == "answer_delta")
