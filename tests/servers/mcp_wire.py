"""What the stdlib test servers beside this file share: JSON-RPC one message a line on
stdio, a tool's text result, and a quiet HTTP handler that answers with a length.

A server imports it by name (`from mcp_wire import send, read`): Python puts the folder of the
script it runs first on `sys.path`, and the tests run every server by its path.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler


def send(msg):
    """Writes one JSON-RPC message as a line on stdout."""
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def read():
    """The next message on stdin; the server exits when stdin closes."""
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


def wait_reply(rid):
    """Reads until the client's reply to request `rid` (result or error) and returns it whole;
    what comes in between (notifications, other requests) is passed over."""
    while True:
        msg = read()
        if msg.get("id") == rid and "method" not in msg:
            return msg


def request(method, params, rid):
    """A server-to-client request; returns the client's whole reply."""
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    return wait_reply(rid)


def text(obj, is_error=False):
    """A tool result of one text block: `obj` as compact JSON, so a test can compare it."""
    return {"content": [{"type": "text", "text": json.dumps(obj, separators=(",", ":"))}],
            "isError": is_error}


class QuietHandler(BaseHTTPRequestHandler):
    """An HTTP handler that logs nothing (stderr stays the test's) and replies with a length."""

    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", ctype=None, headers=()):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def json_reply(self, msg):
        self.reply(200, json.dumps(msg).encode(), "application/json")


def requests(replies_too=True):
    """What the client sends with an id, as (message, method, id), until stdin closes;
    notifications are passed over, and so are replies (no method) unless `replies_too`."""
    while True:
        msg = read()
        method, rid = msg.get("method"), msg.get("id")
        if rid is not None and (method is not None or replies_too):
            yield msg, method, rid


def reply(rid, result):
    """Answers request `rid` with `result`."""
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def fail(rid, code, message, data=None):
    """Refuses request `rid` with a JSON-RPC error."""
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    send({"jsonrpc": "2.0", "id": rid, "error": error})
