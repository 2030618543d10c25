"""A stdio MCP server whose one tool `ask` asks one form question and, while the question
waits, writes FLOOD_BYTES bytes of lines to stderr (then creates the file FLOOD_DONE), for the
bound on what a parked call keeps of its server's stderr. The tool returns the answer."""
import os
import sys

from mcp_wire import read, request, send, text

line = "x" * 99 + "\n"
while True:
    msg = read()
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "stderr-flood", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [
            {"name": "ask", "inputSchema": {"type": "object", "properties": {}}}]}})
    elif method == "tools/call":
        params = {"message": "Name?", "requestedSchema": {
            "type": "object", "properties": {"name": {"type": "string"}}}}
        sys.stdout.write(__import__("json").dumps(
            {"jsonrpc": "2.0", "id": 900, "method": "elicitation/create", "params": params}) + "\n")
        sys.stdout.flush()
        for _ in range(int(os.environ["FLOOD_BYTES"]) // len(line)):
            sys.stderr.write(line)
        sys.stderr.flush()
        open(os.environ["FLOOD_DONE"], "w").close()
        reply = None
        while reply is None:
            m = read()
            if m.get("id") == 900 and "method" not in m:
                reply = m
        send({"jsonrpc": "2.0", "id": rid, "result": text(reply.get("result"))})
