"""Round-trip times of sequential MCP tools/call requests, for bench/proxy_url.sh (stdlib only).

  python3 proxy_url_driver.py http URL N            direct Streamable HTTP (one keep-alive connection)
  python3 proxy_url_driver.py stdio N -- CMD ARGS…  a stdio bridge to the same server (elicit proxy
                                                    URL, mcp-remote URL)

Both do the same session: initialize, notifications/initialized, 20 warm-up calls, then N timed
`tools/call echo` round trips, one at a time (each sent when the previous answer has arrived).
Prints one JSON line: {"median_ms", "p90_ms", "min_ms", "n"}.
"""

import http.client
import json
import statistics
import subprocess
import sys
import time
import urllib.parse

WARMUP = 20
INIT = {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}


def call(i):
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": f"hi {i}"}}}


class Direct:
    def __init__(self, url):
        u = urllib.parse.urlparse(url)
        self.path = u.path
        self.conn = http.client.HTTPConnection(u.hostname, u.port)
        self.session = None

    def post(self, msg):
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
            headers["MCP-Protocol-Version"] = INIT["protocolVersion"]
        self.conn.request("POST", self.path, json.dumps(msg), headers)
        resp = self.conn.getresponse()
        self.session = resp.getheader("mcp-session-id") or self.session
        if "id" not in msg:
            resp.read()
            return None
        if resp.getheader("content-type", "").startswith("text/event-stream"):
            # Read events until the reply to this request.
            while True:
                line = resp.readline()
                if not line:
                    raise SystemExit("stream ended without a reply")
                if line.startswith(b"data:"):
                    reply = json.loads(line[5:])
                    if reply.get("id") == msg["id"]:
                        resp.read()
                        return reply
        return json.loads(resp.read())


class Stdio:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)

    def post(self, msg):
        self.p.stdin.write(json.dumps(msg).encode() + b"\n")
        self.p.stdin.flush()
        if "id" not in msg:
            return None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("the bridge closed its stdout")
            reply = json.loads(line)
            if reply.get("id") == msg["id"] and "method" not in reply:
                return reply

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()


def main():
    if sys.argv[1] == "http":
        peer, n = Direct(sys.argv[2]), int(sys.argv[3])
    else:
        n = int(sys.argv[2])
        peer = Stdio(sys.argv[sys.argv.index("--") + 1:])
    reply = peer.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    assert "result" in reply, reply
    peer.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    for i in range(1, WARMUP + n + 1):
        started = time.perf_counter()
        reply = peer.post(call(i))
        took = time.perf_counter() - started
        assert reply["result"]["content"][0]["text"].endswith(f"hi {i}"), reply
        if i > WARMUP:
            times.append(took * 1000)
    if isinstance(peer, Stdio):
        peer.close()
    times.sort()
    print(json.dumps({"median_ms": statistics.median(times),
                      "p90_ms": times[int(len(times) * 0.9)], "min_ms": times[0], "n": n}))


main()
