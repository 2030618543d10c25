#!/usr/bin/env bash
# `elicit proxy URL` against the usual bridge, npm `mcp-remote`, and a direct HTTP client:
# sequential tools/call round trips to server-everything over Streamable HTTP, all three in
# one run, side by side. Not a test: run it by hand (release build).
#   bench/proxy_url.sh            # 200 round trips each, 3 rounds in alternating order
#   N=500 ROUNDS=5 bench/proxy_url.sh
# Installs mcp-remote (pinned by bench/package-lock.json) into .deps/bench, and
# server-everything with scripts/install-test-servers when missing. Needs node/npm, python3.
# Prints a markdown table: the median round trip of each (the median of the rounds' medians),
# and each bridge's difference from and ratio to the direct client.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18766}

[ -x .deps/node/node_modules/.bin/mcp-server-everything ] || scripts/install-test-servers
bench_dir=.deps/bench
if ! cmp -s bench/package-lock.json "$bench_dir/package-lock.json" \
    || [ ! -x "$bench_dir/node_modules/.bin/mcp-remote" ]; then
    mkdir -p "$bench_dir"
    cp bench/package.json bench/package-lock.json "$bench_dir/"
    npm ci --prefix "$bench_dir" --ignore-scripts --no-audit --no-fund >/dev/null
fi
remote_version=$(node -p "require('./$bench_dir/node_modules/mcp-remote/package.json').version")

[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet
BIN=$PWD/target/release/elicit
work=$(mktemp -d)
PORT=$PORT .deps/node/node_modules/.bin/mcp-server-everything streamableHttp >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
URL=http://127.0.0.1:$PORT/mcp
for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && break
    sleep 0.1
done

drive=(python3 bench/proxy_url_driver.py)
run() {
    case $1 in
        direct) "${drive[@]}" http "$URL" "$N" ;;
        elicit) "${drive[@]}" stdio "$N" -- "$BIN" proxy --no-input "$URL" ;;
        mcp-remote) "${drive[@]}" stdio "$N" -- node "$bench_dir/node_modules/mcp-remote/dist/proxy.js" "$URL" --transport http-only ;;
    esac
}
order=(direct elicit mcp-remote)
for r in $(seq "$ROUNDS"); do
    for who in "${order[@]}"; do
        run "$who" | sed "s/^/$who /" >> "$work/results"
    done
    order=("${order[@]:1}" "${order[0]}")
done

python3 - "$work/results" "$N" "$ROUNDS" "$remote_version" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    who, data = line.split(" ", 1)
    rows.setdefault(who, []).append(json.loads(data))
med = {w: statistics.median(r["median_ms"] for r in rs) for w, rs in rows.items()}
p90 = {w: statistics.median(r["p90_ms"] for r in rs) for w, rs in rows.items()}
d = med["direct"]
print(f"{sys.argv[2]} sequential tools/call round trips to server-everything (Streamable HTTP), "
      f"{sys.argv[3]} rounds in alternating order; medians of the rounds' medians")
print()
print("| client | median round trip | p90 | vs direct |")
print("|---|---|---|---|")
names = {"direct": "direct HTTP (Python http.client, keep-alive)",
         "elicit": "`elicit proxy URL`",
         "mcp-remote": f"npm `mcp-remote` {sys.argv[4]}"}
for w in ["direct", "elicit", "mcp-remote"]:
    vs = "—" if w == "direct" else f"{med[w] - d:+.2f} ms, {med[w] / d:.2f}×"
    print(f"| {names[w]} | {med[w]:.2f} ms | {p90[w]:.2f} ms | {vs} |")
print()
print(f"elicit / mcp-remote: {med['elicit'] / med['mcp-remote']:.2f}×")
PY
