"""A stdio server for `elicit proxy` tests (Python stdlib only).

Deliberately odd framing: spaces after separators, "id" before "jsonrpc", and
escapes ("caf\\u00e9 \\/") that a JSON re-serialiser would change, so a test can
tell byte-for-byte relaying from re-encoding.

Client requests:
  echo {seq, pad}   -> result {"raw": <the exact line received>, "odd": ...}
  ask {n}           -> sends elicitation/create (id "q-<n>") and keeps serving;
                       answers the ask with the reply once it arrives
  big {size}        -> result with a string of `size` bytes
  crash {code}      -> writes a notification, then exits with `code`
  initialize        -> result with the params it received (to show injection)
Every 10th echo also emits a notification (notifications/tick).
Env RELAY_RECORD: append each elicitation reply line there.
Env RELAY_SIGNALS: append "SIGINT" there when the server is interrupted, so a
test can tell a Ctrl-C that reached the server from one that did not.
"""

import json
import os
import signal
import sys


def on_sigint(signum, frame):
    if os.environ.get("RELAY_SIGNALS"):
        with open(os.environ["RELAY_SIGNALS"], "a") as f:
            f.write("SIGINT\n")
    os._exit(130)


signal.signal(signal.SIGINT, on_sigint)

out = sys.stdout
pending = {}  # elicitation id -> ask request id
ticks = 0


def write(text):
    out.write(text + "\n")
    out.flush()


def odd_result(rid, result_json):
    return '{"id": %s, "jsonrpc": "2.0", "result": %s}' % (json.dumps(rid), result_json)


for raw in sys.stdin:
    raw = raw.rstrip("\n")
    msg = json.loads(raw)
    method, rid = msg.get("method"), msg.get("id")
    if method is None and rid in pending:
        ask_id = pending.pop(rid)
        if os.environ.get("RELAY_RECORD"):
            with open(os.environ["RELAY_RECORD"], "a") as f:
                f.write(raw + "\n")
        write(odd_result(ask_id, json.dumps({"reply": msg})))
        continue
    if method == "initialize":
        write(odd_result(rid, json.dumps({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "relay", "version": "1"}, "received": msg["params"]})))
    elif method == "echo":
        write(odd_result(rid, '{"raw": %s, "odd": "caf\\u00e9 \\/"}' % json.dumps(raw)))
        ticks += 1
        if ticks % 10 == 0:
            write('{"jsonrpc": "2.0", "method": "notifications/tick", "params": {"n": %d}}' % ticks)
    elif method == "ask":
        qid = "q-%s" % msg["params"]["n"]
        pending[qid] = rid
        write(json.dumps({"jsonrpc": "2.0", "id": qid, "method": "elicitation/create", "params": {
            "message": "Question %s" % msg["params"]["n"],
            "requestedSchema": {"type": "object", "properties": {"n": {"type": "integer", "default": msg["params"]["n"]}}}}}))
    elif method == "big":
        write(odd_result(rid, json.dumps({"blob": "y" * msg["params"]["size"]})))
    elif method == "crash":
        write('{"jsonrpc": "2.0", "method": "notifications/bye", "params": {}}')
        sys.exit(msg["params"]["code"])
    elif rid is not None:
        write(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}}))
