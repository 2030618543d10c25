#!/usr/bin/env bash
# Proxy benchmark: relay throughput and added latency of `elicit proxy`
# against a direct pipe, for the same traffic. Not a test: run it by hand.
#   bench/proxy.sh [LINES]      (default 100000 lines of ~1 KiB, ~98 MiB)
#   NO_BUILD=1 ELICIT_BIN=path bench/proxy.sh   # that binary as it is, no build
#   BASELINE=path/to/old/elicit bench/proxy.sh  # another build measured in the same
#                               # run, side by side (throughput and latency), with
#                               # the ratio of the two
# Needs: cargo, python3, hyperfine (a Debian package: installed here with
# apt-get when missing and running as root).
set -euo pipefail
cd "$(dirname "$0")/.."
lines="${1:-100000}"
if ! command -v hyperfine >/dev/null; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    apt-get install -y -qq hyperfine >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null && apt-get install -y -qq hyperfine >/dev/null; }
  else
    echo "bench/proxy.sh: needs hyperfine (apt-get install hyperfine)" >&2; exit 1
  fi
fi
[ -n "${NO_BUILD:-}" ] || cargo build --release -q
bin="${ELICIT_BIN:-$PWD/target/release/elicit}"
base="${BASELINE:-}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

# Realistic bulk traffic: JSON-RPC notifications elicit relays unparsed.
python3 - "$lines" > "$work/traffic.jsonl" <<'PY'
import json, sys
pad = "x" * 900
for i in range(int(sys.argv[1])):
    print(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": i, "progress": i, "message": pad}}))
PY
size_mb=$(( $(stat -c %s "$work/traffic.jsonl") / 1024 / 1024 ))
# The same traffic both ways: a client (cat of the file) writes to a server
# (cat, which echoes every line back), whose output a client reader (cat)
# consumes; once directly, once with elicit proxy in the middle, and once
# with two more `cat`s in place of elicit's two relay hops (the same number
# of processes a byte passes through, doing no work: what the extra hops
# alone cost on this machine).
echo "## Relay throughput: $lines lines, $size_mb MiB, client -> server (cat) -> client"
hyperfine -N --warmup 2 --runs 10 --export-markdown "$work/throughput.md" \
  --export-json "$work/throughput.json" \
  -n "direct pipe" "sh -c \"cat '$work/traffic.jsonl' | cat | cat > /dev/null\"" \
  -n "elicit proxy" "sh -c \"cat '$work/traffic.jsonl' | '$bin' proxy --no-input -- cat | cat > /dev/null\"" \
  ${base:+-n "baseline proxy" "sh -c \"cat '$work/traffic.jsonl' | '$base' proxy --no-input -- cat | cat > /dev/null\""} \
  -n "same hops, cat" "sh -c \"cat '$work/traffic.jsonl' | cat | cat | cat | cat > /dev/null\""
cat "$work/throughput.md"
python3 - "$work/throughput.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
d, p = r["direct pipe"], r["elicit proxy"]
print("\nthroughput through elicit proxy: %.2fx the direct pipe's (mean %.1f ms vs %.1f ms; median %.2fx)"
      % (d["mean"] / p["mean"], p["mean"] * 1e3, d["mean"] * 1e3, d["median"] / p["median"]))
b = r.get("baseline proxy")
if b:
    print("throughput through the baseline:   %.2fx the direct pipe's (mean %.1f ms; median %.2fx); this build / baseline: %.2fx (median %.2fx)"
          % (d["mean"] / b["mean"], b["mean"] * 1e3, d["median"] / b["median"], b["mean"] / p["mean"], b["median"] / p["median"]))
c = r["same hops, cat"]
print("throughput through two more cats:  %.2fx the direct pipe's (mean %.1f ms; median %.2fx)"
      % (d["mean"] / c["mean"], c["mean"] * 1e3, d["median"] / c["median"]))
PY

echo
echo "## Added latency: 2000 request/response round trips (tests/servers/relay_server.py)"
python3 - "$bin" "$base" <<'PY'
import json, statistics, subprocess, sys, time
server = ["python3", "tests/servers/relay_server.py"]
def run(cmd):
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    times = []
    for i in range(2000):
        t = time.perf_counter()
        p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "echo", "params": {}}) + "\n")
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if '"id": %d,' % i in line:
                break
        times.append((time.perf_counter() - t) * 1e6)
    p.stdin.close(); p.wait()
    times.sort()
    return statistics.mean(times), times[len(times) // 2], times[int(len(times) * 0.99)]
base = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
# Alternating, so that a change in the machine's load lands on each.
runs = {"direct": [], "elicit proxy": [], "baseline proxy": []}
for _ in range(2):
    runs["direct"].append(run(server))
    runs["elicit proxy"].append(run([sys.argv[1], "proxy", "--no-input", "--"] + server))
    if base:
        runs["baseline proxy"].append(run([base, "proxy", "--no-input", "--"] + server))
best = {k: min(v, key=lambda t: t[1]) for k, v in runs.items() if v}
print("| path (the better of 2 rounds) | mean µs | p50 µs | p99 µs |")
print("|---|---|---|---|")
for k, v in best.items():
    print("| %s | %.0f | %.0f | %.0f |" % ((k,) + v))
print("| added by elicit proxy | %.0f | %.0f | %.0f |" % tuple(b - a for a, b in zip(best["direct"], best["elicit proxy"])))
if base:
    print("| added by the baseline | %.0f | %.0f | %.0f |" % tuple(b - a for a, b in zip(best["direct"], best["baseline proxy"])))
PY
