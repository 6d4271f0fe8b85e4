#!/usr/bin/env python3
"""A scripted OpenAI-compatible model for testing the harness itself (issue 22's CI test).

    python3 scripted_llm.py MAP.json      # prints the port it listens on (127.0.0.1), then serves

MAP.json is {"substring of the last user message": answer, ...}; an answer is a string (sent as
the reply's text) or {"propose_command": "CMD"} / {"run_command": "CMD"} (a native tool call; after
a tool's result the reply is "Done."). The first key found
in the last user message wins; no match answers "I cannot help with that.". Streams (SSE) when the
request asks to, like llama-server; `GET .../models` lists one model.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "scripted"


def last_user_text(body):
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
            return content or ""
    return ""


def choose(script, body):
    messages = body.get("messages") or []
    if messages and messages[-1].get("role") == "tool":
        return "Done."  # after a tool's result, end the turn (the agent would loop otherwise)
    text = last_user_text(body)
    for key, answer in script.items():
        if key in text:
            return answer
    return "I cannot help with that."


def chunks(answer):
    """The streamed deltas of one answer, then the finish reason."""
    if isinstance(answer, dict):
        name, command = next(iter(answer.items()))
        args = json.dumps({"command": command, "explanation": "scripted", "why": "scripted"})
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}
        return [{"role": "assistant", "tool_calls": [call]}], "tool_calls"
    return [{"role": "assistant", "content": ""}, {"content": str(answer)}], "stop"


class Handler(BaseHTTPRequestHandler):
    script = {}
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args):
        pass

    def send_json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.send_json({"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self.send_json({"status": "ok"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = {}
        deltas, finish = chunks(choose(self.script, body))
        base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": MODEL}
        if not body.get("stream"):
            message = {"role": "assistant", "content": None}
            for d in deltas:
                if d.get("content"):
                    message["content"] = (message["content"] or "") + d["content"]
                if d.get("tool_calls"):
                    message["tool_calls"] = d["tool_calls"]
            self.send_json({**base, "object": "chat.completion",
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        events = [{**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        Handler.script = json.load(f)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    # Serve until stdin closes (the test holds it open), so no stray server outlives its test.
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
