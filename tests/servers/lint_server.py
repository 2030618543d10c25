"""A stdio MCP server that breaks elicitation rules on purpose, for the
`--strict` and `--modes` tests of tests/lint.rs (Python stdlib only).

Handshake by default; with --stateless it serves 2026-07-28 discovery only
(initialize refused with -32022) and
asks through input_required results; its discovery and list results carry what 2026-07-28
requires of them (`resultType`, `ttlMs`, `cacheScope`) unless --bare-lists. It sends what each tool asks for
whatever the client declared: checking capabilities is what a correct
server does and this one must not. Every result echoes what the server got
back, and the capabilities the client declared.
"""

import json
import sys

from mcp_wire import fail, reply, requests, send, text, wait_reply

STATELESS = "--stateless" in sys.argv
# What 2026-07-28 requires of a cacheable result, left out with --bare-lists.
HINTS = {} if "--bare-lists" in sys.argv else {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
NESTED = {
    "message": "Where should we ship it?",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "address": {"type": "object", "properties": {"street": {"type": "string"}}},
        },
        "required": ["name"],
    },
}
PLAIN = {"message": "Your name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}
URL = {"mode": "url", "message": "Connect your account", "url": "https://example.com/connect", "elicitationId": "e-1"}
TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in
         ["nested_form", "url_anyway", "url_completed", "plain_form", "two_at_once", "changing"]]
declared = {}


def call_tool(p):
    name = p["name"]
    if STATELESS:
        declared.update(p.get("_meta", {}).get("io.modelcontextprotocol/clientCapabilities", {}))
        responses = p.get("inputResponses")
        if name == "changing":
            n = int(p.get("requestState") or "0") + 1
            if n > 3:
                return dict(text({"responses": responses}), resultType="complete")
            question = {"message": "Round %d" % n, "requestedSchema": {"type": "object", "properties": {"a%d" % n: {"type": "string"}}}}
            return {"resultType": "input_required", "inputRequests": {"q": {"method": "elicitation/create", "params": question}}, "requestState": str(n)}
        if responses is None:
            params = {"nested_form": NESTED, "plain_form": PLAIN}.get(name, {k: v for k, v in URL.items() if k != "elicitationId"})
            return {"resultType": "input_required", "inputRequests": {"k": {"method": "elicitation/create", "params": params}}, "requestState": "s"}
        return dict(text({"responses": responses, "capabilities": declared}), resultType="complete")
    if name == "two_at_once":
        # Both in one write: the second is there before the first is answered.
        sys.stdout.write("".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": "elicitation/create", "params": PLAIN}) + "\n" for i in (100, 101)))
        sys.stdout.flush()
        replies = [wait_reply(100), wait_reply(101)]
        return text({"replies": replies})
    params = {"nested_form": NESTED, "plain_form": PLAIN}.get(name, URL)
    send({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": params})
    reply = wait_reply(7)
    if name == "url_completed":
        send({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "e-1"}})
    return text({"reply": reply, "capabilities": declared})


for msg, method, rid in requests():
    if method == "server/discover":
        if STATELESS:
            reply(rid, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "serverInfo": {"name": "lint-stateless", "version": "1"}, "resultType": "complete", **HINTS})
        else:
            fail(rid, -32601, "Method not found")
    elif method == "initialize" and STATELESS:
        # A 2026-07-28-only server: no handshake.
        fail(rid, -32022, "Unsupported protocol version", {"supported": ["2026-07-28"], "requested": msg["params"].get("protocolVersion")})
    elif method == "initialize":
        declared.update(msg["params"].get("capabilities", {}))
        reply(rid, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "lint", "version": "1"}})
    elif method == "tools/list":
        reply(rid, dict({"tools": TOOLS}, **(HINTS if STATELESS else {})))
    elif method == "tools/call":
        reply(rid, call_tool(msg["params"]))
    else:
        fail(rid, -32601, "Method not found")
