"""A Streamable HTTP server (stdlib only) that stalls in one way each, for `elicit proxy URL`'s
bounds: initialize is answered (2025-11-25, a session), then

Usage: python3 tests/servers/http_stalling.py MODE [RECORD] PORT
  silent        every other request is held open, never answered (notifications get 202)
  stall-notify  every notification or reply POST is held open, never answered (a line
                "held" written to RECORD, when given, as each is)
  ask           tools/call streams an elicitation/create (id "q-5") and waits for its answer,
                which is written as a JSON line to RECORD, then the tool's result
  count         answers at once (tools/call as a short event stream) over HTTP/1.1 keep-alive,
                and writes each POST's method and client port (its connection) to RECORD
Binds 127.0.0.1 only.
"""

import json
import sys
import threading
import time
from http.server import ThreadingHTTPServer

from mcp_wire import QuietHandler

MODE = sys.argv[1]
PORT = int(sys.argv[-1])
RECORD = sys.argv[2] if len(sys.argv) > 3 else None
ANSWERED = threading.Event()


class Handler(QuietHandler):
    if MODE == "count":
        protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.reply(405)

    def do_DELETE(self):
        self.reply(200)

    def hold(self):
        while True:
            time.sleep(3600)

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        method, mid = msg.get("method"), msg.get("id")
        if MODE == "count":
            with open(RECORD, "a") as f:
                f.write(json.dumps({"method": method, "port": self.client_address[1]}) + "\n")
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "stalling", "version": "1"}}
            data = json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}).encode()
            return self.reply(200, data, "application/json", [("Mcp-Session-Id", "s-1")])
        if method is None or mid is None:
            if MODE == "stall-notify":
                if RECORD:
                    with open(RECORD, "a") as f:
                        f.write("held\n")
                return self.hold()
            if method is None and MODE == "ask":
                with open(RECORD, "a") as f:
                    f.write(json.dumps(msg) + "\n")
                ANSWERED.set()
            return self.reply(202)
        if MODE == "silent":
            return self.hold()
        if MODE == "count" and method == "tools/call":
            done = {"jsonrpc": "2.0", "id": mid, "result": {"content": []}}
            body = b"event: message\ndata: " + json.dumps(done).encode() + b"\n\n"
            return self.reply(200, body, "text/event-stream")
        if MODE == "ask" and method == "tools/call":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            ask = {"jsonrpc": "2.0", "id": "q-5", "method": "elicitation/create", "params": {
                "mode": "form", "message": "How old are you?", "requestedSchema": {
                    "type": "object", "properties": {"age": {"type": "integer"}},
                    "required": ["age"]}}}
            self.wfile.write(b"data: " + json.dumps(ask).encode() + b"\n\n")
            self.wfile.flush()
            ANSWERED.wait(60)
            done = {"jsonrpc": "2.0", "id": mid, "result": {"content": []}}
            self.wfile.write(b"data: " + json.dumps(done).encode() + b"\n\n")
            self.wfile.flush()
            self.close_connection = True
            return
        data = json.dumps({"jsonrpc": "2.0", "id": mid, "result": {}}).encode()
        self.reply(200, data, "application/json")


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
