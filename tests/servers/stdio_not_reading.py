"""A stdio MCP server that answers initialize and tools/list, then never reads its stdin
again (a hung server): a large message to it fills the pipe."""
import sys, time, json

while True:
    msg = json.loads(sys.stdin.readline())
    if msg.get("method") == "initialize":
        r = {"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"noread","version":"1"}}
    elif msg.get("method") == "tools/list":
        r = {"tools":[{"name":"t","inputSchema":{"type":"object","properties":{"note":{"type":"string"}}}}]}
    else:
        continue
    sys.stdout.write(json.dumps({"jsonrpc":"2.0","id":msg["id"],"result":r})+"\n"); sys.stdout.flush()
    if msg.get("method") == "tools/list":
        break
time.sleep(3600)
