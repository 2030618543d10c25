"""A stdio MCP server (Python stdlib only) that serves both lifecycles the way the Python
frameworks do: `server/discover` lists only 2026-07-28, and `initialize` works as well.
Its tools fail on 2026-07-28 in words no framework uses, so a test can tell that elicit
decides on protocol facts, not on an error's wording.

Tools (each returns compact JSON text with "era": "handshake" | "stateless"):
  ask             stateless: an isError result before asking anything; handshake: a
                  server-to-client elicitation/create (one string field `name`).
  asks_then_fails stateless: input_required first, then an isError result for the answer;
                  handshake: refused (-32602) naming input_required and 2026-07-28, as FastMCP
                  refuses a guard-pattern tool there.
  refuses         handshake: a JSON-RPC error (-32603) that names nothing; a client that calls
                  again elsewhere would run the tool twice.
  broken          an isError result in both lifecycles, before asking anything.
  bad_params      JSON-RPC error -32602 in both lifecycles.
Writes "two-era server started" to stderr when it starts.
  asks_twice      handshake: the same form twice (its schema has a top-level "x-layout"),
                  for warnings that come once per schema.
"""

import sys

import mcp_wire
from mcp_wire import fail, read, reply, request, requests, send

era = "stateless"
sys.stderr.write("two-era server started\n")
sys.stderr.flush()
FORM = {
    "mode": "form",
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
}
TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("ask", "asks_then_fails", "broken", "bad_params", "asks_twice", "refuses")]


def ask(params, rid):
    return request("elicitation/create", params, rid).get("result")


def text(obj, error=False):
    return mcp_wire.text(dict(obj, era=era), error)


def call_tool(params):
    name = params["name"]
    if name == "broken":
        return {"result": text({"error": "the disk is full"}, error=True)}
    if name == "bad_params":
        return {"error": {"code": -32602, "message": "Invalid params: no such argument"}}
    if era == "handshake" and name == "asks_then_fails":
        return {"error": {"code": -32602, "message": "the tool returned input_required, which needs protocol 2026-07-28; this connection negotiated 2025-11-25"}}
    if era == "handshake" and name == "refuses":
        return {"error": {"code": -32603, "message": "Internal error after the work was done"}}
    if era == "stateless":
        if name == "ask":
            return {"result": text({"error": "Cannot prompt the user from here."}, error=True)}
        if name == "asks_then_fails":
            if params.get("inputResponses") is None:
                return {"result": {"resultType": "input_required", "inputRequests": {"q": {"method": "elicitation/create", "params": FORM}}, "requestState": "s1"}}
            return {"result": text({"error": "that name is taken"}, error=True)}
    if name == "asks_twice":
        odd = dict(FORM, requestedSchema=dict(FORM["requestedSchema"], **{"x-layout": "grid"}))
        replies = [ask(odd, "t-%d" % i) for i in (1, 2)]
        return {"result": text({"replies": replies})}
    if name == "ask":
        send({"jsonrpc": "2.0", "id": "e-1", "method": "elicitation/create", "params": FORM})
        while True:
            msg = read()
            if msg.get("id") == "e-1" and "method" not in msg:
                return {"result": text({"reply": msg.get("result")})}
    return {"result": text({"called": name})}


for msg, method, rid in requests():
    if method == "server/discover":
        reply(rid, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "serverInfo": {"name": "two-era", "version": "1"}, "resultType": "complete"})
    elif method == "initialize":
        era = "handshake"
        reply(rid, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "two-era", "version": "1"}})
    elif method == "tools/list":
        reply(rid, {"tools": TOOLS})
    elif method == "tools/call":
        send(dict({"jsonrpc": "2.0", "id": rid}, **call_tool(msg["params"])))
    else:
        fail(rid, -32601, "Method not found")
