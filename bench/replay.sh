#!/usr/bin/env bash
# Replay benchmark: `elicit test` over N cassettes (default 200) against a local stdio
# server (tests/servers/cassette_server.py, Python stdlib), side by side with the server
# alone doing the same work, so that what is left is elicit's own time per test.
# Not a test: run it by hand.
#   bench/replay.sh [N]      (ELICIT_BIN=path: that binary, no build; ROUNDS=3;
#                             BEFORE_BIN=path: another build at -j 1 in the same rounds)
# Reports, in one run:
#   - the server alone: N runs of the same conversation held by a minimal Python client
#     (start-up, the call, one form asked and answered, the result, the exit), one after
#     the other;
#   - elicit test -j 1 over the N cassettes: wall time, and elicit's own CPU time (user +
#     system of elicit itself, not of the servers: its JSON report's elicit_cpu_ms);
#   - elicit's own time per test: (elicit -j 1 wall - server alone wall) / N, and its CPU / N;
#   - -j scaling: -j 1, 2, … up to the number of CPUs, wall time and speed-up over -j 1.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200}"
# ELICIT_BIN: measure that binary instead of a fresh release build.
if [[ -z "${ELICIT_BIN:-}" ]]; then cargo build --release -q; fi
bin="${ELICIT_BIN:-$PWD/target/release/elicit}"
# The interpreter itself, not a version manager's shim (pyenv's costs a shell per start).
python=$(python3 -c 'import sys; print(sys.executable)')
server=("$python" "$PWD/tests/servers/cassette_server.py")
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cpus=$(getconf _NPROCESSORS_ONLN)

# One recorded cassette, copied N times.
"$bin" call --no-input --server-log /dev/null --record "$work/one.json" \
  --tool profile -a name=Ada -a accept -- "${server[@]}" > /dev/null
mkdir "$work/cassettes"
for i in $(seq 1 "$n"); do cp "$work/one.json" "$work/cassettes/t$i.cassette.json"; done

now() { date +%s.%N; }
echo "## $n cassettes, server: ${server[*]}; $cpus CPUs; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

# Alternating rounds (server alone, then elicit at each -j), the best of each kept: on a
# shared machine, load that comes and goes then weighs on every side alike.
rounds="${ROUNDS:-3}"
alone=""
# An indexed array: an associative one lists its values in hash order, which
# swapped the -j columns of an earlier version of this script.
wall=()
for r in $(seq 1 "$rounds"); do
  # The server alone, driven by the smallest client that holds the same
  # conversation: each message sent once the reply it follows has come, stdin
  # closed, the exit waited for. (Fed all at once from a file, a server does
  # not wait between messages, and that is not the work elicit is measured
  # against.) Spawned from a running process, as elicit spawns them.
  a=$("$python" - "$n" "$work/one.json" "${server[@]}" <<'PY'
import json, subprocess, sys, time
n, cassette, server = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
c = json.load(open(cassette))
def line(m):
    return (json.dumps(m) + "\n").encode()
init = line({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": c["protocol"], "capabilities": {"elicitation": {"form": {}, "url": {}}}, "clientInfo": {"name": "bench", "version": "1"}}})
call = line({"jsonrpc": "2.0", "method": "notifications/initialized"}) + line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": c["tool"], "arguments": c["arguments"]}})
answer = line({"jsonrpc": "2.0", "id": "e-1", "result": c["elicitations"][0]["answer"]})
start = time.monotonic()
for _ in range(n):
    p = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    for message in (init, call, answer):
        p.stdin.write(message)
        if not p.stdout.readline():
            sys.exit("the server ended early")
    p.stdin.close()
    p.wait()
print(time.monotonic() - start)
PY
)
  if [[ -z "$alone" ]] || (( $(echo "$a < $alone" | bc -l) )); then alone=$a; fi
  if [[ -n "${BEFORE_BIN:-}" ]]; then
    t0=$(now)
    "$BEFORE_BIN" test -j 1 --format json "$work/cassettes" > "$work/before-$r.json" 2> /dev/null
    t1=$(now)
    w=$(echo "$t1 - $t0" | bc -l)
    if [[ -z "${before:-}" ]] || (( $(echo "$w < $before" | bc -l) )); then
      before=$w
      cp "$work/before-$r.json" "$work/before.json"
    fi
  fi
  for j in $(seq 1 "$cpus"); do
    t0=$(now)
    "$bin" test -j "$j" --format json "$work/cassettes" > "$work/report-$j-$r.json" 2> /dev/null
    t1=$(now)
    w=$(echo "$t1 - $t0" | bc -l)
    if [[ -z "${wall[$j]:-}" ]] || (( $(echo "$w < ${wall[$j]}" | bc -l) )); then
      wall[$j]=$w
      cp "$work/report-$j-$r.json" "$work/report-$j.json"
    fi
  done
done

python3 - "$n" "$alone" "$work/report-1.json" "$cpus" "${wall[@]}" <<'PY'
import json, sys
n, alone, report, cpus = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
walls = [float(x) for x in sys.argv[5:5 + cpus]]
r = json.load(open(report))["summary"]
assert r["passed"] == n, r
print("best of the rounds:")
print("server alone, %d runs one after the other: %.2f s (%.1f ms each)" % (n, alone, alone / n * 1e3))
print("elicit test -j 1:                         %.2f s (%.1f ms each)" % (walls[0], walls[0] / n * 1e3))
print("elicit's own time per test (wall, -j 1 minus the server alone): %.2f ms" % ((walls[0] - alone) / n * 1e3))
print("elicit's own CPU per test (user+system of elicit, not its servers): %.2f ms" % (r["elicit_cpu_ms"] / n))
for j, w in enumerate(walls, 1):
    print("-j %d: %.2f s, %.2fx -j 1" % (j, w, walls[0] / w))
PY
if [[ -n "${BEFORE_BIN:-}" ]]; then
  python3 - "$n" "$alone" "$before" "$work/before.json" <<'PY'
import json, sys
n, alone, before = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
r = json.load(open(sys.argv[4]))["summary"]
print("BEFORE_BIN test -j 1: %.2f s; own time per test %.2f ms; own CPU per test %.2f ms" % (
    before, (before - alone) / n * 1e3, r["elicit_cpu_ms"] / n))
PY
fi
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
