"""A minimal Streamable HTTP MCP server with fixed, instant replies, for
bench/http.sh: the server's own latency is as small as Python allows, so what
is measured is the client (elicit or curl).

Usage: python3 bench/http_server.py PORT LOG
Every request is appended to LOG as one JSON line:
{"conn": N, "method": "POST", "body": "..."} (conn numbers the TCP connections,
so keep-alive shows as one number reused).
"""

import http.server
import itertools
import json
import sys
import threading

PORT = int(sys.argv[1])
LOG = sys.argv[2]
SESSION = "bench-session"
lock = threading.Lock()
conn_ids = itertools.count(1)

TOOL = {
    "name": "echo",
    "description": "Echoes its message",
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
    },
}


def reply(msg):
    method = msg.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": msg["params"].get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        text = msg["params"].get("arguments", {}).get("message", "")
        result = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": msg.get("id"),
                "error": {"code": -32601, "message": "Method not found"}}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        self.conn = next(conn_ids)

    def log_message(self, *args):
        pass

    def record(self, body=""):
        with lock, open(LOG, "a") as f:
            f.write(json.dumps({"conn": self.conn, "method": self.command, "body": body}) + "\n")

    def send(self, code, body=b"", ctype=None):
        # One write for head and body: two small writes would meet Nagle's
        # algorithm and the client's delayed ACK (a 40 ms stall per reply).
        head = [f"HTTP/1.1 {code} {self.responses[code][0]}",
                f"Mcp-Session-Id: {SESSION}", f"Content-Length: {len(body)}"]
        if ctype:
            head.append(f"Content-Type: {ctype}")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        self.record(body)
        msg = json.loads(body)
        if "id" not in msg or "method" not in msg:
            self.send(202)
            return
        self.send(200, json.dumps(reply(msg)).encode(), "application/json")

    def do_GET(self):
        self.record()
        self.send(405)

    def do_DELETE(self):
        self.record()
        self.send(200)


http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
