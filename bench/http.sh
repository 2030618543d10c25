#!/usr/bin/env bash
# The time `elicit call URL` adds per HTTP round trip, against curl doing the
# same requests over one keep-alive connection.
#
#   bench/http.sh            # build release, measure, print a markdown table
#   RUNS=50 bench/http.sh
#
# The server (bench/http_server.py, Python's http.server, HTTP/1.1
# keep-alive) answers every request at once with a fixed reply and logs each
# request with the number of the TCP connection it came on. One elicit session
# (`--protocol 2025-11-25`: initialize, notifications/initialized, the
# standalone GET stream, tools/list, tools/call, DELETE) is recorded, then
# curl replays exactly the same requests in one process (`--next`: one
# connection, reused). Both are whole processes, timed by hyperfine:
#   overhead per round trip = (elicit - curl) / requests.
# Needs hyperfine, jq, curl and python3 (installed with apt-get when missing
# and running as root).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-100}
PORT=${PORT:-18765}

need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v jq >/dev/null || need+=(jq)
command -v curl >/dev/null || need+=(curl)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get install -y "${need[@]}" >/dev/null || { apt-get update >/dev/null && apt-get install -y "${need[@]}" >/dev/null; }
    else
        echo "missing: ${need[*]}; install them (e.g. sudo apt-get install -y ${need[*]})" >&2
        exit 1
    fi
fi

[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet
BIN=$PWD/target/release/elicit
work=$(mktemp -d)
python3 bench/http_server.py "$PORT" "$work/log" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
URL=http://127.0.0.1:$PORT/mcp
for _ in $(seq 50); do
    curl -s -o /dev/null "$URL" -X DELETE && break
    sleep 0.1
done

E=("$BIN" call --no-input --protocol 2025-11-25 --tool echo --args '{"message":"hi"}' "$URL")
: > "$work/log"
"${E[@]}" > "$work/out"
grep -q '"hi"' "$work/out" || { echo "elicit call failed: $(cat "$work/out")" >&2; exit 1; }
requests=$(wc -l < "$work/log")
connections=$(jq -s 'map(.conn) | unique | length' "$work/log")

# The same requests with curl: one process, one connection (--next keeps it).
args=()
while IFS= read -r line; do
    method=$(jq -r .method <<< "$line")
    body=$(jq -r .body <<< "$line")
    [ ${#args[@]} -gt 0 ] && args+=(--next)
    args+=(-s -o /dev/null -X "$method" -H 'Accept: application/json, text/event-stream'
        -H 'Mcp-Session-Id: bench-session' -H 'MCP-Protocol-Version: 2025-11-25')
    if [ -n "$body" ]; then args+=(-H 'Content-Type: application/json' --data-raw "$body"); fi
    args+=("$URL")
done < "$work/log"
: > "$work/log"
curl "${args[@]}"
curl_connections=$(jq -s 'map(.conn) | unique | length' "$work/log")

q() { printf '%q ' "$@"; }
hyperfine --style basic --warmup 5 --runs "$RUNS" --output=null -N \
    -n curl "$(q curl "${args[@]}")" -n elicit "$(q "${E[@]}")" \
    --export-json "$work/h.json" >&2

mean() { jq -r --arg n "$1" '.results[] | select(.command == $n) | .mean' "$work/h.json"; }
sd() { jq -r --arg n "$1" '.results[] | select(.command == $n) | .stddev' "$work/h.json"; }
ms() { awk -v s="$1" -v d="$2" 'BEGIN { printf "%.2f ms ± %.2f", s * 1000, d * 1000 }'; }
c=$(mean curl); e=$(mean elicit)

cat <<TABLE

#### (d) \`elicit call URL\` against a local Streamable HTTP server ($requests requests a session)

| client | session (mean ± σ) | TCP connections | per request |
|---|---|---|---|
| \`curl\`, the same requests with \`--next\` | $(ms "$c" "$(sd curl)") | $curl_connections | $(awk -v s="$c" -v n="$requests" 'BEGIN { printf "%.2f ms", s * 1000 / n }') |
| \`elicit call --tool echo\` | $(ms "$e" "$(sd elicit)") | $connections | $(awk -v s="$e" -v n="$requests" 'BEGIN { printf "%.2f ms", s * 1000 / n }') |

Overhead elicit adds per round trip over curl: $(awk -v a="$e" -v b="$c" -v n="$requests" 'BEGIN { printf "%.3f ms", (a - b) * 1000 / n }') (target: under 1 ms). Both figures include starting the process.

Machine: $(nproc) CPUs, $(uname -sr), $(hyperfine --version), $(curl --version | head -1 | cut -d' ' -f1-2), $("$BIN" --version 2>/dev/null | head -1).
TABLE
