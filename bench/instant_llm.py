#!/usr/bin/env python3
"""An instant OpenAI-compatible endpoint for bench/run.sh: every odd request gets a run_command
tool call for the command in argv[2], every even one a final answer; with `--text` as argv[2]
every request gets the answer `Files listed.` (for peers that offer no tools). Serves until killed."""
import http.server
import json
import sys

port, command = int(sys.argv[1]), sys.argv[2]
count = [0]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        count[0] += 1
        if command == "--text":
            delta = {"content": "Files listed."}
        elif count[0] % 2:
            call = {"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": "run_command", "arguments": json.dumps({"command": command})}}
            delta = {"tool_calls": [call]}
        else:
            delta = {"content": "done"}
        body = "data: " + json.dumps({"choices": [{"index": 0, "delta": delta}]}) + "\n\ndata: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
