"""Hostile MCP servers that attack elicit's memory and time bounds (stdlib only), for
tests/bounds.rs.

Usage: python3 tests/servers/http_bounds.py MODE PORT    (Streamable HTTP on 127.0.0.1)
       python3 tests/servers/http_bounds.py MODE stdio   (the same tools/call over stdio,
                                                          where the mode makes sense)

Every mode is a 2025-11-25 server (server/discover refused) with one tool `t`; MODE decides
what happens around tools/call:
  flood      the tools/call stream sends a ping, holds the reply POST for HOLD seconds while
             the stream writes notifications (of many small values) as fast as the socket
             takes them, then answers
  wide       tools/call is answered (JSON body, or one line on stdio) with SIZE bytes of
             `[{},{},...]` inside the result
  deep       likewise with arrays nested 120 deep, repeated (many small vectors)
  wide_sse   `wide`, as one SSE event of the tools/call stream
  stall_init      the initialize POST is never answered
  stall_initialized  notifications/initialized gets 202 with a Content-Length whose body
             trickles one byte a second
  stall_delete    tools/call answers "ok"; the closing DELETE is never answered
  stall_sse_get   (legacy HTTP+SSE, --transport sse) the GET never sends its headers
  slow_ping  the tools/call stream sends a ping every 0.1 s and never answers; each reply
             POST is acknowledged after 0.5 s
  retry_huge the tools/call stream sends a priming event (id, retry: one hour) and closes;
             the resuming GET answers the call
  replay     the tools/call stream sends one elicitation ten times (same event id), then the
             same request id under new event ids, then the result: the text says how many
             replies the server got (stdio: three times, then a ping whose reply ends it)
  resume_replay  the tools/call stream sends a log notification (event ev-1, retry: 100 ms)
             and an elicitation (ev-2), and is cut; the GET resuming it (Last-Event-ID)
             replays both under the same ids, then the result (ev-3): the text says how many
             replies the server got and the Last-Event-ID of each resume
  ask        (stdio only) tools/call asks for a name, and answers with it
  legacy_replay, legacy_wide  a legacy HTTP+SSE server (GET opens the stream, its `endpoint`
             event names where to POST): `replay` and `wide` on that stream
Binds 127.0.0.1 only.
"""

import json
import os
import queue
import sys
import threading
import time
from http.server import ThreadingHTTPServer

from mcp_wire import QuietHandler

MODE = sys.argv[1]
PORT = sys.argv[2]
SIZE = int(os.environ.get("BOUNDS_SIZE", str(8 * 1024 * 1024)))
HOLD = float(os.environ.get("BOUNDS_HOLD", "2.5"))

INIT = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "bounds", "version": "1"}}
TOOLS = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
FORM = {"mode": "form", "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}

def reached():
    """Creates the file BOUNDS_REACHED names (if it does): the test waits for it to know
    the server is where it stalls."""
    if os.environ.get("BOUNDS_REACHED"):
        open(os.environ["BOUNDS_REACHED"], "w").close()


ASK = {"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create", "params": FORM}
LOG_NOTE = {"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "logger": "bounds", "data": "working on it"}}

replies = []
replies_lock = threading.Lock()
# resume_replay: the Last-Event-ID of each GET that resumed the stream.
resumed_after = []
# The legacy transport's one stream: what the POST handlers send on it.
legacy_stream = queue.Queue()


def rpc(mid, result):
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def text_result(mid, text):
    return rpc(mid, {"content": [{"type": "text", "text": text}]})


def big_reply(mid, shape):
    """A tools/call reply of about SIZE bytes, as bytes."""
    if shape == "deep":
        unit = b"[" * 120 + b"]" * 120 + b","
    else:
        unit = b"{},"
    body = unit * (SIZE // len(unit)) + b"0"
    head = json.dumps(rpc(mid, {"content": [], "structuredContent": {"x": None}})).encode()
    # Splice the big array in place of null.
    return head.replace(b'"x": null', b'"x": [' + body + b"]")


def sse(msg, event_id=None):
    out = b""
    if event_id is not None:
        out += b"id: " + event_id.encode() + b"\n"
    return out + b"data: " + json.dumps(msg).encode() + b"\n\n"


def wait_for_replies(rid):
    """How many replies to request `rid` came: counted once none has come for a second
    after the first (or after 8 s)."""
    until = time.time() + 8
    seen, quiet_since = -1, time.time()
    while time.time() < until:
        with replies_lock:
            got = [r for r in replies if r.get("id") == rid]
        if len(got) != seen:
            seen, quiet_since = len(got), time.time()
        elif got and time.time() - quiet_since > 1.0:
            break
        time.sleep(0.05)
    return len(got)


class Handler(QuietHandler):
    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.close_connection = True

    def do_DELETE(self):
        if MODE == "stall_delete":
            time.sleep(120)
        self.reply(405)

    def do_GET(self):
        if MODE.startswith("legacy_"):
            self.start_stream()
            self.wfile.write(b"event: endpoint\ndata: /messages\n\n")
            self.wfile.flush()
            while True:
                chunk = legacy_stream.get()
                self.wfile.write(chunk)
                self.wfile.flush()
        if MODE == "stall_sse_get":
            time.sleep(120)
            return
        if MODE == "resume_replay" and self.headers.get("Last-Event-ID"):
            with replies_lock:
                resumed_after.append(self.headers.get("Last-Event-ID"))
            self.start_stream()
            # A server that replays from the stream's start, not from the
            # event the client names: both events again, under their ids.
            self.wfile.write(sse(LOG_NOTE, "ev-1") + sse(ASK, "ev-2"))
            self.wfile.flush()
            got = wait_for_replies("e-1")
            with replies_lock:
                after = ",".join(resumed_after)
            text = f"replies: {got}; resumed after: {after}"
            self.wfile.write(sse(text_result(Handler.call_id, text), "ev-3"))
            self.wfile.flush()
            return
        if MODE == "retry_huge" and self.headers.get("Last-Event-ID") == "prime-1":
            self.start_stream()
            self.wfile.write(sse(text_result(Handler.call_id, "resumed"), "after-1"))
            self.wfile.flush()
            return
        self.reply(405)

    call_id = None

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        msg = json.loads(body or b"{}")
        method, mid = msg.get("method"), msg.get("id")
        if MODE.startswith("legacy_"):
            self.reply(202, b"Accepted")
            return self.legacy(method, mid, msg)
        if method is None:
            # A reply to one of our requests.
            with replies_lock:
                replies.append(msg)
            if MODE == "flood":
                time.sleep(HOLD)
            if MODE == "slow_ping":
                time.sleep(0.5)
            return self.reply(202)
        if method == "server/discover":
            return self.reply(400, b"")
        if method == "initialize":
            if MODE == "stall_init":
                reached()
                time.sleep(120)
                return
            data = json.dumps(rpc(mid, INIT)).encode()
            return self.reply(200, data, "application/json", [("Mcp-Session-Id", "s-1")])
        if mid is None:
            if MODE == "stall_initialized" and method == "notifications/initialized":
                self.send_response(202)
                self.send_header("Content-Length", "100")
                self.end_headers()
                for _ in range(100):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(1)
                return
            return self.reply(202)
        if method == "tools/list":
            return self.json_reply(rpc(mid, TOOLS))
        if method != "tools/call":
            return self.json_reply(rpc(mid, {}))
        Handler.call_id = mid
        if MODE in ("wide", "deep"):
            return self.reply(200, big_reply(mid, MODE), "application/json")
        if MODE == "wide_sse":
            self.start_stream()
            self.wfile.write(b"data: " + big_reply(mid, "wide") + b"\n\n")
            return
        if MODE == "flood":
            return self.flood(mid)
        if MODE == "slow_ping":
            self.start_stream()
            n = 0
            try:
                while True:
                    n += 1
                    self.wfile.write(sse({"jsonrpc": "2.0", "id": f"ping-{n}", "method": "ping"}))
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                return
        if MODE == "retry_huge":
            self.start_stream()
            self.wfile.write(b"id: prime-1\nretry: 3600000\ndata: \n\n")
            return
        if MODE == "resume_replay":
            self.start_stream()
            self.wfile.write(b"retry: 100\n" + sse(LOG_NOTE, "ev-1") + sse(ASK, "ev-2"))
            self.wfile.flush()
            return  # the stream is cut: the connection closes
        if MODE == "replay":
            self.start_stream()
            ask = {"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create", "params": FORM}
            for _ in range(10):
                self.wfile.write(sse(ask, "ev-1"))
            for n in range(5):
                self.wfile.write(sse(ask, f"ev-again-{n}"))
            self.wfile.flush()
            # The answers arrive by POST meanwhile.
            got = wait_for_replies("e-1")
            self.wfile.write(sse(text_result(mid, f"replies: {got}"), "ev-end"))
            return
        return self.json_reply(text_result(mid, "ok"))

    def legacy(self, method, mid, msg):
        """Answers on the one stream (the POST got its 202 already)."""
        def put(message, event_id=None):
            legacy_stream.put(b"event: message\n" + sse(message, event_id))

        if method is None and mid == "e-1":
            with replies_lock:
                replies.append(msg)
            return
        if method is None and mid == "p-final":
            with replies_lock:
                got = len(replies)
            return put(text_result(Handler.call_id, f"replies: {got}"))
        if mid is None:
            return
        if method == "initialize":
            return put(rpc(mid, dict(INIT, protocolVersion="2024-11-05")))
        if method == "tools/list":
            return put(rpc(mid, TOOLS))
        if method != "tools/call":
            return put(rpc(mid, {}))
        Handler.call_id = mid
        if MODE == "legacy_wide":
            return legacy_stream.put(b"event: message\ndata: " + big_reply(mid, "wide") + b"\n\n")
        ask = {"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create", "params": FORM}
        for _ in range(5):
            put(ask, "ev-1")
        for n in range(3):
            put(ask, f"ev-again-{n}")
        put({"jsonrpc": "2.0", "id": "p-final", "method": "ping"}, "ev-ping")

    def flood(self, mid):
        self.start_stream()
        self.wfile.write(sse({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"}))
        self.wfile.flush()
        # Small values: each parses into some hundred bytes.
        note = {"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": [0] * 200}}
        chunk = sse(note) * 500
        until = time.time() + HOLD
        while time.time() < until:
            self.wfile.write(chunk)
        self.wfile.write(sse(text_result(mid, "flood over")))
        self.wfile.flush()


def stdio():
    """The stdio shapes: wide and deep replies; replay (one elicitation sent three times,
    then a ping: when its reply comes, the result says how many replies the elicitation got)."""
    out = sys.stdout.buffer
    call_id, got = None, 0
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        method, mid = msg.get("method"), msg.get("id")
        if method is None and mid == "e-1":
            got += 1
            if MODE == "ask":
                name = (msg.get("result") or {}).get("content", {}).get("name")
                out.write(json.dumps(text_result(call_id, f"answered {name}")).encode() + b"\n")
                out.flush()
            continue
        if method is None and mid == "p-final":
            out.write(json.dumps(text_result(call_id, f"replies: {got}")).encode() + b"\n")
            out.flush()
            continue
        if mid is None:
            continue
        if method == "initialize":
            result = INIT
        elif method == "tools/list":
            result = TOOLS
        elif method == "tools/call":
            if MODE in ("wide", "deep"):
                out.write(big_reply(mid, MODE) + b"\n")
                out.flush()
                continue
            if MODE == "ask":
                call_id = mid
                ask = {"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create", "params": FORM}
                out.write(json.dumps(ask).encode() + b"\n")
                out.flush()
                continue
            if MODE == "replay":
                call_id = mid
                ask = {"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create", "params": FORM}
                for _ in range(3):
                    out.write(json.dumps(ask).encode() + b"\n")
                out.write(json.dumps({"jsonrpc": "2.0", "id": "p-final", "method": "ping"}).encode() + b"\n")
                out.flush()
                continue
            result = {"content": [{"type": "text", "text": "ok"}]}
        else:
            result = {}
        out.write(json.dumps(rpc(mid, result)).encode() + b"\n")
        out.flush()


if PORT == "stdio":
    stdio()
else:
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer(("127.0.0.1", int(PORT)), Handler).serve_forever()
