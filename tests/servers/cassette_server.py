"""A stdio MCP server for elicit's cassette tests and bench (Python stdlib only).

Its form changes with the environment, so a test can record against one form and
replay against another:
  CASSETTE_FORM=base     name (string, required), age (integer 0..150, default 30), tags
  CASSETTE_FORM=added    base + email (string, required, no default)
  CASSETTE_FORM=optional base + nickname (string, optional, default "x")
  CASSETTE_FORM=renamed  name renamed to fullName
  CASSETTE_FORM=bound    age's maximum 150 -> 120
  CASSETTE_FORM=silent   the tool asks nothing
  CASSETTE_FORM=twice    the tool asks the base form twice
  CASSETTE_FORM=skip     `steps` no longer asks its confirmation (its second step)
  CASSETTE_FORM=fresh    `link` makes a fresh elicitationId and a UUID in its URL every time
  CASSETTE_FORM=hang     `profile` never answers a call whose form was cancelled (a hang)
  CASSETTE_FORM=dotted   base + color (optional single select: "a.b", "a-b", "a b",
                         three options whose file-name slugs are the same)
  CASSETTE_RESULT_BYTES=N  `profile`'s result carries a second text block of N bytes
  CASSETTE_FORM=validating  `profile` refuses a call whose accepted content breaks the
                         form with a JSON-RPC error (-32602), as servers are told to validate

With --stateless it speaks 2026-07-28 (server/discover; elicitations inside
input_required results); otherwise the initialize handshake (server-to-client
elicitation/create). Tools:
  profile  asks the form; returns {"reply": <ElicitResult>, "args": ...}
  steps    two rounds: a form, then a form and a URL elicitation together; on
           2026-07-28 each round's requestState must come back byte for byte
  link     a URL-mode elicitation
  stamp    asks the form; the result holds a changing time and id
"""

import json
import os
import sys
import time
import uuid

from mcp_wire import fail, reply, request, requests, text

STATELESS = "--stateless" in sys.argv
VARIANT = os.environ.get("CASSETTE_FORM", "base")


def form():
    props = {
        "name": {"type": "string", "title": "Name", "minLength": 1},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    }
    required = ["name"]
    if VARIANT == "added":
        props["email"] = {"type": "string", "format": "email"}
        required.append("email")
    if VARIANT == "optional":
        props["nickname"] = {"type": "string", "default": "x"}
    if VARIANT == "renamed":
        props = {("fullName" if k == "name" else k): v for k, v in props.items()}
        required = ["fullName"]
    if VARIANT == "secret":
        props["password"] = {"type": "string", "title": "Password"}
    if VARIANT == "bound":
        props["age"]["maximum"] = 120
    if VARIANT == "dotted":
        props["color"] = {"type": "string", "enum": ["a.b", "a-b", "a b"]}
    return {"mode": "form", "message": "Who are you?", "requestedSchema": {"type": "object", "properties": props, "required": required}}


CONFIRM = {"mode": "form", "message": "Go ahead?", "requestedSchema": {"type": "object", "properties": {"go": {"type": "boolean"}}, "required": ["go"]}}
URL = {"mode": "url", "message": "Sign in to Example", "url": "https://example.com/connect?session=abc", "elicitationId": "link-1"}


def url_params():
    if VARIANT != "fresh":
        return URL
    eid = "el-" + uuid.uuid4().hex[:8]
    return dict(URL, elicitationId=eid, url="https://example.com/connect?e=%s&s=%s" % (eid, uuid.uuid4()))
# Each round's state: a string a client must echo exactly (escapes, non-ASCII).
STATES = ["round-1 \u00e9 \"q\" \\n \u2603", "round-2 \t tab \u00fc"]
TOOLS = [{"name": n, "inputSchema": {"type": "object", "properties": {"note": {"type": "string"}}}} for n in ("profile", "steps", "link", "stamp")]


counter = 0


def ask(params):
    """A server-to-client elicitation (handshake); returns the client's result."""
    global counter
    counter += 1
    rid = "e-%d" % counter
    msg = request("elicitation/create", params, rid)
    return msg.get("result", msg.get("error"))


def elicit_req(params):
    return {"method": "elicitation/create", "params": params}


def handshake_tool(name, args):
    if name == "link":
        return text({"reply": ask(url_params())})
    if name == "steps":
        first = ask(form())
        second = ask(CONFIRM) if VARIANT != "skip" else None
        link = ask(URL)
        return text({"replies": [first, second, link]})
    if VARIANT == "silent":
        return text({"reply": None, "args": args})
    replies = [ask(form())]
    if VARIANT == "validating":
        check_content(replies[0])
    if VARIANT == "hang" and (replies[0] or {}).get("action") == "cancel":
        time.sleep(3600)
    if VARIANT == "twice":
        replies.append(ask(form()))
    out = {"reply": replies[0], "args": args}
    padding = int(os.environ.get("CASSETTE_RESULT_BYTES", "0"))
    if name == "profile" and padding:
        result = text(out)
        result["content"].append({"type": "text", "text": "p" * padding})
        return result
    if name == "stamp":
        out = {"reply": replies[0], "at": time.strftime("%H:%M:%S"), "id": str(uuid.uuid4())}
        return {"content": [{"type": "text", "text": "id " + out["id"]}, {"type": "text", "text": "at " + out["at"]}, {"type": "text", "text": json.dumps(replies[0])}], "isError": False}
    return text(out)


class Refused(Exception):
    """The call is answered with a JSON-RPC error instead of a result."""


def check_content(reply):
    if (reply or {}).get("action") != "accept":
        return
    content = reply.get("content") or {}
    name, age = content.get("name"), content.get("age", 30)
    if not isinstance(name, str) or not name:
        raise Refused("invalid elicitation content: name is required")
    if not isinstance(age, int) or isinstance(age, bool) or not 0 <= age <= 150:
        raise Refused("invalid elicitation content: age must be an integer from 0 to 150")
    tags = content.get("tags", [])
    if not isinstance(tags, list) or any(t not in ("a", "b") for t in tags):
        raise Refused("invalid elicitation content: tags must be a list of a and b")


def stateless_tool(name, args, p):
    responses = p.get("inputResponses")
    state = p.get("requestState")
    if name == "steps":
        if responses is None:
            return {"resultType": "input_required", "inputRequests": {"who": elicit_req(form())}, "requestState": STATES[0]}
        if "who" in responses:
            if state != STATES[0]:
                return dict(text({"error": "requestState of round 1 came back changed", "got": state}, True), resultType="complete")
            return {"resultType": "input_required", "inputRequests": {"go": elicit_req(CONFIRM), "link": elicit_req({k: v for k, v in URL.items() if k != "elicitationId"})}, "requestState": STATES[1] + "|" + json.dumps(responses["who"], sort_keys=True)}
        if state is None or not state.startswith(STATES[1] + "|"):
            return dict(text({"error": "requestState of round 2 came back changed", "got": state}, True), resultType="complete")
        first = json.loads(state.split("|", 1)[1])
        return dict(text({"replies": [first, responses.get("go"), responses.get("link")]}), resultType="complete")
    if name == "link":
        if responses is None:
            return {"resultType": "input_required", "inputRequests": {"link": elicit_req({k: v for k, v in URL.items() if k != "elicitationId"})}}
        return dict(text({"reply": responses.get("link")}), resultType="complete")
    if VARIANT == "silent":
        return dict(text({"reply": None, "args": args}), resultType="complete")
    if responses is None:
        return {"resultType": "input_required", "inputRequests": {"who": elicit_req(form())}, "requestState": STATES[0]}
    return dict(text({"reply": responses.get("who"), "args": args}), resultType="complete")


for msg, method, rid in requests(replies_too=False):
    if method == "server/discover":
        if STATELESS:
            reply(rid, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "serverInfo": {"name": "cassette-fixture", "version": "1"}, "resultType": "complete"})
        else:
            fail(rid, -32601, "Method not found")
    elif method == "initialize":
        reply(rid, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "cassette-fixture", "version": "1"}})
    elif method == "tools/list":
        reply(rid, {"tools": TOOLS})
    elif method == "tools/call":
        p = msg["params"]
        name, args = p["name"], p.get("arguments", {})
        try:
            result = stateless_tool(name, args, p) if STATELESS else handshake_tool(name, args)
        except Refused as why:
            fail(rid, -32602, str(why))
            continue
        reply(rid, result)
    else:
        fail(rid, -32601, "Method not found")
