"""A deterministic stdio MCP server for elicit's `call` tests (Python stdlib only).

Speaks one lifecycle: the initialize handshake (elicitations as server-to-client
requests) or, when started with --stateless, only 2026-07-28 discovery (elicitations
inside input_required results; initialize refused with -32601). Each tool exercises one behaviour; every result
echoes what the server received so a test can compare exactly.

Env FAKE_PID_FILE: write our pid there (tests check nothing is left behind).
Env FAKE_HANG_MARK: a file the `hang` tool creates once called (tests wait for it).
"""

import os
import sys
import time

from mcp_wire import fail, reply, requests, send, text
from mcp_wire import request as ask

STATELESS = "--stateless" in sys.argv
if os.environ.get("FAKE_PID_FILE"):
    with open(os.environ["FAKE_PID_FILE"], "w") as f:
        f.write(str(os.getpid()))

FORM = {
    "mode": "form",
    "message": "Who are you?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        },
        "required": ["name"],
    },
}
URL = {"mode": "url", "message": "Connect", "url": "https://example.com/connect", "elicitationId": "fake-1"}
TOOLS = [
    {"name": "form", "description": "asks a form", "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}}},
    {"name": "url", "inputSchema": {"type": "object"}},
    {"name": "sampling", "inputSchema": {"type": "object"}},
    {"name": "crash", "inputSchema": {"type": "object"}},
    {"name": "malformed", "inputSchema": {"type": "object"}},
    {"name": "hang", "inputSchema": {"type": "object"}},
    {"name": "chatty", "inputSchema": {"type": "object"}},
    {"name": "sum", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}},
    {"name": "url_required", "inputSchema": {"type": "object"}},
    {"name": "lost_state", "inputSchema": {"type": "object"}},
]
url_required_calls = 0


def call_tool(msg):
    global url_required_calls
    p = msg["params"]
    name, args = p["name"], p.get("arguments", {})
    if name == "crash":
        sys.exit(3)
    if name == "malformed":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
        return None
    if name == "hang":
        if os.environ.get("FAKE_HANG_MARK"):
            open(os.environ["FAKE_HANG_MARK"], "w").close()
        time.sleep(3600)
    if name == "sum":
        return {"result": text({"sum": args["a"] + args["b"]})}
    if name == "chatty":
        # Talks forever without answering: notifications and replies to ids
        # nobody asked about must not keep the client waiting.
        n = 0
        while True:
            n += 1
            send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": n}})
            send({"jsonrpc": "2.0", "id": 10000 + n, "result": {}})
            time.sleep(0.1)
    if name == "url_required":
        url_required_calls += 1
        if url_required_calls == 1:
            return {"error": {"code": -32042, "message": "URL elicitation required", "data": {"elicitations": [URL]}}}
        return {"result": text({"calls": url_required_calls})}
    if STATELESS:
        if name == "lost_state":
            return {"result": {"resultType": "input_required", "inputRequests": {"q": {"method": "elicitation/create", "params": FORM}}}}
        responses = p.get("inputResponses")
        if responses is None:
            reqs = {"who": {"method": "elicitation/create", "params": FORM}}
            if name == "url":
                reqs = {"link": {"method": "elicitation/create", "params": {k: v for k, v in URL.items() if k != "elicitationId"}}}
            return {"result": {"resultType": "input_required", "inputRequests": reqs, "requestState": "state-\u00e9-1"}}
        return {"result": dict(text({"responses": responses, "requestState": p.get("requestState"), "args": args}), resultType="complete")}
    if name == "sampling":
        got = ask("sampling/createMessage", {"messages": [], "maxTokens": 1}, "s-1")
        pong = ask("ping", {}, "s-2")
        form = ask("elicitation/create", FORM, "s-3")
        return {"result": text({"sampling": got, "ping": pong, "form": form})}
    if name == "url":
        reply = ask("elicitation/create", URL, 0)
        return {"result": text(reply)}
    send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "asking"}})
    reply = ask("elicitation/create", FORM, 0)
    return {"result": text({"reply": reply, "args": args})}


for msg, method, rid in requests():
    if method == "server/discover":
        if STATELESS:
            reply(rid, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "serverInfo": {"name": "fake-stateless", "version": "1"}, "resultType": "complete"})
        else:
            fail(rid, -32601, "Method not found")
    elif method == "initialize" and STATELESS:
        # A 2026-07-28-only server has no handshake.
        fail(rid, -32601, "Method not found")
    elif method == "initialize":
        reply(rid, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}, "client": msg["params"]})
    elif method == "tools/list":
        reply(rid, {"tools": TOOLS})
    elif method == "tools/call":
        out = call_tool(msg)
        if out is not None:
            send(dict({"jsonrpc": "2.0", "id": rid}, **out))
    else:
        fail(rid, -32601, "Method not found")
