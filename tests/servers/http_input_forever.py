"""A Streamable HTTP server (stdlib only) whose every tools/call answers input_required, for
`elicit proxy URL`'s round limit. JSON replies, no session, no GET stream; binds 127.0.0.1.

Usage: python3 tests/servers/http_input_forever.py PORT
"""

import json
import sys
from http.server import ThreadingHTTPServer

from mcp_wire import QuietHandler

FORM = {"mode": "form", "message": "Again?", "requestedSchema": {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}


class Handler(QuietHandler):
    def do_GET(self):
        self.reply(405)

    def do_DELETE(self):
        self.reply(200)

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        if "method" not in msg or "id" not in msg:
            return self.reply(202)
        if msg["method"] == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "forever", "version": "1"}}
        elif msg["method"] == "tools/call":
            result = {"resultType": "input_required", "requestState": "again",
                      "inputRequests": {"q": {"method": "elicitation/create", "params": FORM}}}
        else:
            result = {}
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        self.reply(200, body, "application/json")


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
