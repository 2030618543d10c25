#!/usr/bin/env bash
# Where a replay's time goes, phase by phase, for `elicit test -j 1` and for the server
# alone driven by a minimal client: the kernel's own tracepoints (perf record of
# sched_process_fork/exec and the server's reads of stdin, writes to stdout and exit), so
# nothing is slowed the way strace slows it. Each phase's median over N servers:
#   fork->exec          the spawn (the parent waits until the child has begun its exec)
#   exec->read0         the server's start-up, until it first reads its stdin
#   read0->lastwrite    the conversation (initialize, the call, the form, the result)
#   lastwrite->exit     the server's own exit, once its stdin is closed
#   exit->next fork     the client's part between one server's exit and the next spawn
# What elicit adds is the difference in the phases that are the client's: fork->exec and
# exit->next fork (start-up and exit are the server's, and vary run to run).
# Not a test: run it by hand, where perf may record tracepoints (root, or
# kernel.perf_event_paranoid <= 1).
#   bench/replay-phases.sh [N]   (ELICIT_BIN=path: that binary; BEFORE_BIN=path: another too)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-40}"
command -v perf > /dev/null || { echo "replay-phases: needs perf" >&2; exit 1; }
if [[ -z "${ELICIT_BIN:-}" ]]; then cargo build --release -q; fi
bin="${ELICIT_BIN:-$PWD/target/release/elicit}"
python=$(python3 -c 'import sys; print(sys.executable)')
server=("$python" "$PWD/tests/servers/cassette_server.py")
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
"$bin" call --no-input --server-log /dev/null --record "$work/one.json" \
  --tool profile -a name=Ada -a accept -- "${server[@]}" > /dev/null
mkdir "$work/cassettes"
for i in $(seq 1 "$n"); do cp "$work/one.json" "$work/cassettes/t$i.cassette.json"; done
cat > "$work/alone.py" <<'PY'
import json, subprocess, sys
n, cassette, server = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
c = json.load(open(cassette))
def line(m):
    return (json.dumps(m) + "\n").encode()
init = line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": c["protocol"], "capabilities": {"elicitation": {"form": {}, "url": {}}}, "clientInfo": {"name": "bench", "version": "1"}}})
call = line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": c["tool"], "arguments": c["arguments"]}})
answer = line({"jsonrpc": "2.0", "id": "e-1", "result": c["elicitations"][0]["answer"]})
for _ in range(n):
    p = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    for message in (init, call, answer):
        p.stdin.write(message)
        p.stdout.readline()
    p.stdin.close()
    p.wait()
PY
events=(-e sched:sched_process_fork -e sched:sched_process_exec
        -e syscalls:sys_enter_read --filter 'fd==0' -e syscalls:sys_enter_write --filter 'fd==1'
        -e syscalls:sys_enter_exit_group)
record() { perf record -q "${events[@]}" -o "$1" -- "${@:2}" > /dev/null 2>&1; }
for round in 1 2; do
  record "$work/elicit-$round.data" "$bin" test -j 1 "$work/cassettes"
  if [[ -n "${BEFORE_BIN:-}" ]]; then
    record "$work/before-$round.data" "$BEFORE_BIN" test -j 1 "$work/cassettes"
  fi
  record "$work/alone-$round.data" "$python" "$work/alone.py" "$n" "$work/one.json" "${server[@]}"
done
python3 - "$work"/*.data <<'PY'
import os, re, statistics, subprocess, sys
def phases(path):
    out = subprocess.run(["perf", "script", "-i", path], capture_output=True, text=True).stdout
    forked, servers = {}, {}
    for l in out.splitlines():
        m = re.match(r'\s*\S+\s+(\d+)\s+\[\d+\]\s+([\d.]+):\s+(\S+):\s*(.*)', l)
        if not m:
            continue
        pid, t, name, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        if name == "sched:sched_process_fork":
            forked[int(re.search(r"child_pid=(\d+)", rest).group(1))] = t
        elif name == "sched:sched_process_exec" and "python" in rest:
            servers[pid] = {"fork": forked.get(pid), "exec": t, "w": []}
        elif pid in servers:
            s = servers[pid]
            if name == "syscalls:sys_enter_read":
                s.setdefault("r0", t)
            elif name == "syscalls:sys_enter_write":
                s["w"].append(t)
            elif name == "syscalls:sys_enter_exit_group":
                s["exit"] = t
    # Servers that held the whole conversation (not the client script itself).
    rows = sorted((s for s in servers.values() if s["fork"] and "exit" in s and "r0" in s and len(s["w"]) >= 2),
                  key=lambda s: s["fork"])
    med = lambda xs: statistics.median(xs) * 1e3
    return {
        "fork->exec": med([s["exec"] - s["fork"] for s in rows]),
        "exec->read0": med([s["r0"] - s["exec"] for s in rows]),
        "read0->lastwrite": med([s["w"][-1] - s["r0"] for s in rows]),
        "lastwrite->exit": med([s["exit"] - s["w"][-1] for s in rows]),
        "exit->next fork": med([b["fork"] - a["exit"] for a, b in zip(rows, rows[1:])]),
        "a test": med([b["fork"] - a["fork"] for a, b in zip(rows, rows[1:])]),
        "servers": len(rows),
    }
cols = ["fork->exec", "exec->read0", "read0->lastwrite", "lastwrite->exit", "exit->next fork", "a test"]
print("%-12s" % "run (ms)" + "".join("%18s" % c for c in cols))
for path in sys.argv[1:]:
    p = phases(path)
    print("%-12s" % os.path.basename(path)[:-5] + "".join("%18.2f" % p[c] for c in cols))
PY
