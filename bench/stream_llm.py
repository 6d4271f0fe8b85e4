#!/usr/bin/env python3
"""A streaming OpenAI-compatible endpoint for bench/serve.py: every chat request is answered with
TOKENS content chunks, DELAY_MS apart (the first at once), then `[DONE]`; many at a time (one
thread per connection). `POST /control {"tokens": N, "delay_ms": D}` changes both for the requests
that follow; `GET …/models` lists one model. Serves until killed.

    bench/stream_llm.py PORT [TOKENS] [DELAY_MS]
"""
import http.server
import json
import sys
import time

port = int(sys.argv[1])
settings = {"tokens": int(sys.argv[2]) if len(sys.argv) > 2 else 3,
            "delay_ms": float(sys.argv[3]) if len(sys.argv) > 3 else 0.0}


def event(delta, finish=None):
    chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return ("data: " + json.dumps(chunk) + "\n\n").encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "bench-model", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == "/control":
            settings.update(json.loads(body))
            self.send_response(204)
            self.send_header("Connection", "close")
            self.end_headers()
            return
        tokens, delay = settings["tokens"], settings["delay_ms"] / 1000
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(event({"role": "assistant", "content": "Files "}))
            self.wfile.flush()
            for n in range(1, tokens):
                if delay:
                    time.sleep(delay)
                self.wfile.write(event({"content": f"w{n} "}))
                self.wfile.flush()
            self.wfile.write(event({}, "stop") + b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


Server(("127.0.0.1", port), Handler).serve_forever()
