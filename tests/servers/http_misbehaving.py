"""Small HTTP servers that misbehave in one way each, for elicit's error paths (stdlib only).

Usage: python3 tests/servers/http_misbehaving.py MODE PORT [CERT KEY]
  html   every POST is answered 200 text/html
  dies   a 2025 Streamable HTTP server whose tools/call stream sends one notification, then
         the connection drops (no response, no event id to resume from)
  gone   initialize works and sets a session; the next request gets 404 (session gone)
  auth   401 with WWW-Authenticate: Bearer to every request
  tls    like html, over TLS with the given (self-signed) certificate
  tlsok  a working 2025 server (tools/list, tools/call "ok") over TLS with the given certificate
  mismatch  a 2026-07-28 server whose tool `t` gains an x-mcp-header parameter after the first
         tools/list: a tools/call without the header gets 400 -32020 (header mismatch)
  capability  a 2026-07-28-only server refusing server/discover with 400 -32021 (missing
         client capability) and initialize with 400 -32022
Binds 127.0.0.1 only.
"""

import json
import ssl
import sys
from http.server import ThreadingHTTPServer

from mcp_wire import QuietHandler

MODE = sys.argv[1]
PORT = int(sys.argv[2])


class Handler(QuietHandler):
    def do_GET(self):
        self.reply(405)

    def do_DELETE(self):
        self.reply(405)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        msg = json.loads(body or b"{}")
        method, mid = msg.get("method"), msg.get("id")
        if MODE in ("mismatch", "capability"):
            return self.modern(method, mid, msg)
        if MODE == "tlsok" and method == "tools/call":
            data = json.dumps({"jsonrpc": "2.0", "id": mid,
                               "result": {"content": [{"type": "text", "text": "ok"}]}}).encode()
            return self.reply(200, data, "application/json")
        if MODE in ("html", "tls"):
            return self.reply(200, b"<!DOCTYPE html><html><body>Login page</body></html>", "text/html")
        if MODE == "auth":
            return self.reply(401, b"", None, [("WWW-Authenticate", 'Bearer realm="test"')])
        if method == "server/discover":
            return self.reply(400, b"")
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "misbehaving", "version": "1"}}
            data = json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}).encode()
            return self.reply(200, data, "application/json", [("Mcp-Session-Id", "s-1")])
        if mid is None:
            return self.reply(202)
        if MODE == "gone":
            return self.reply(404, b"session not found", "text/plain")
        if method == "tools/list":
            tools = [{"name": "t", "inputSchema": {"type": "object"}}]
            data = json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}}).encode()
            return self.reply(200, data, "application/json")
        if MODE == "tlsok":
            return self.reply(200, json.dumps({"jsonrpc": "2.0", "id": mid, "result": {}}).encode(),
                              "application/json")
        # tools/call in "dies": a stream that breaks before the response.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}
        self.wfile.write(b"data: " + json.dumps(note).encode() + b"\n\n")
        self.wfile.flush()
        self.close_connection = True

    lists = 0

    def modern(self, method, mid, msg):
        def answer(result):
            data = json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}).encode()
            return self.reply(200, data, "application/json")

        def refuse(code, message, data=None):
            err = {"code": code, "message": message}
            if data is not None:
                err["data"] = data
            body = json.dumps({"jsonrpc": "2.0", "id": mid, "error": err}).encode()
            return self.reply(400, body, "application/json")

        if mid is None:
            return self.reply(202)
        if MODE == "capability":
            if method == "server/discover":
                return refuse(-32021, "Missing required client capability",
                              {"requiredCapabilities": {"sampling": {}}})
            return refuse(-32022, "Unsupported protocol version",
                          {"supported": ["2026-07-28"], "requested": "2025-11-25"})
        if method == "server/discover":
            return answer({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                           "serverInfo": {"name": "mismatch", "version": "1"}})
        if method == "tools/list":
            Handler.lists += 1
            region = {"type": "string"}
            if Handler.lists > 1:
                region["x-mcp-header"] = "Region"
            schema = {"type": "object", "properties": {"region": region}}
            return answer({"tools": [{"name": "t", "inputSchema": schema}]})
        if method == "tools/call":
            region = (msg.get("params") or {}).get("arguments", {}).get("region")
            if self.headers.get("Mcp-Param-Region") != region:
                return refuse(-32020, "Header mismatch: Mcp-Param-Region")
            return answer({"content": [{"type": "text", "text": f"region {region}"}]})
        return answer({})


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
if MODE in ("tls", "tlsok"):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[3], sys.argv[4])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
server.serve_forever()
