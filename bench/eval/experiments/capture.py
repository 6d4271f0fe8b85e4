"""A logging proxy: each chat request body opsai sends is appended (one JSON line) to a file, and the
request goes on to the eval's llama-server, its stream passed back as it comes (issue 22). How the
agent's first request was captured for the replays in bench/BENCHMARKS.md (session 38):

    python3 bench/eval/experiments/capture.py 8091 requests.jsonl &
    OPSAI_EVAL_CACHE=/work/eval-cache python3 bench/eval/run.py --tools agent-yes --opsai BINARY \
        --tasks 19 --base-url http://127.0.0.1:8091/v1 --out /tmp/capture
    # the first line's messages[0].content is the system prompt to give variant.py --system
"""
import http.server, json, sys, urllib.request, threading
UP = "http://127.0.0.1:8081"; LOG = sys.argv[2]; lock = threading.Lock()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        with urllib.request.urlopen(UP + self.path) as r:
            b = r.read(); self.send_response(r.status); self.send_header("Content-Type", r.headers.get("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(b))); self.end_headers(); self.wfile.write(b)
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with lock, open(LOG, "a") as f: f.write(body.decode() + "\n")
        req = urllib.request.Request(UP + self.path, body, {"Content-Type": "application/json", "Authorization": self.headers.get("Authorization", "")})
        with urllib.request.urlopen(req) as r:
            self.send_response(r.status); self.send_header("Content-Type", r.headers.get("Content-Type", "text/event-stream"))
            self.send_header("Transfer-Encoding", "chunked"); self.end_headers()
            while True:
                chunk = r.read1(65536)
                if not chunk: break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk)); self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
