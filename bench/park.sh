#!/usr/bin/env bash
# Parked calls: what answering later costs against answering in advance, for the same
# call of a stdlib Python server (tests/servers/fake_server.py, tool `form`):
#   advance  elicit call --no-input --tool form -a accept -a name=Ada -- SERVER
#   parked   elicit call --park --tool form -- SERVER   (exit 5, the parked object)
#            then elicit respond ID -a accept -a name=Ada         (the tool's result)
# Both run whole (process starts, the server's start-up, the question, the result); the
# ratio parked/advance is what the holder, its endpoint and the second command add (or save:
# `respond` prints the result as soon as the holder has it, where `call` also waits for the
# server to end). Also the time `call --park` takes to print the parked object.
#   bench/park.sh                       # build release, measure
#   NO_BUILD=1 ELICIT_BIN=path bench/park.sh
#   RUNS=30 bench/park.sh
# Needs python3, jq, hyperfine (installed with apt-get when missing and running as root).
# Linux and macOS (parking uses the user's runtime folder; a private one is made here).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-20}"
for tool in hyperfine jq; do
  if ! command -v "$tool" >/dev/null; then
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
      apt-get install -y -qq "$tool" >/dev/null 2>&1 \
        || { apt-get update -qq >/dev/null && apt-get install -y -qq "$tool" >/dev/null; }
    else
      echo "bench/park.sh: needs $tool" >&2; exit 1
    fi
  fi
done
[ -n "${NO_BUILD:-}" ] || cargo build --release -q
bin="${ELICIT_BIN:-$PWD/target/release/elicit}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
chmod 700 "$work"
export XDG_RUNTIME_DIR="$work" ELICIT_BIN_PATH="$bin"
server=(python3 tests/servers/fake_server.py)
export SERVER="${server[*]}"

cat > "$work/parked.sh" <<'SH'
#!/bin/sh
set -e
id=$("$ELICIT_BIN_PATH" call --park --tool form -- $SERVER 2>/dev/null | jq -r .parked) || true
[ -n "$id" ] && [ "$id" != null ] || { echo "did not park" >&2; exit 1; }
"$ELICIT_BIN_PATH" respond "$id" -a accept -a name=Ada >/dev/null
SH
cat > "$work/park-only.sh" <<'SH'
#!/bin/sh
# Parks, timing only that command (the next run's prepare step answers it, and the script
# answers the last one at the end).
"$ELICIT_BIN_PATH" call --park --tool form -- $SERVER > "$XDG_RUNTIME_DIR/last" 2>/dev/null
[ $? -eq 5 ]
SH
cat > "$work/answer-last.sh" <<'SH'
#!/bin/sh
[ -s "$XDG_RUNTIME_DIR/last" ] || exit 0
"$ELICIT_BIN_PATH" respond "$(jq -r .parked "$XDG_RUNTIME_DIR/last")" -a accept -a name=Ada >/dev/null 2>&1
rm -f "$XDG_RUNTIME_DIR/last"
SH
chmod +x "$work"/*.sh

hyperfine -N --warmup 2 --runs "$runs" --export-json "$work/flow.json" \
  -n advance "$bin call --no-input --tool form -a accept -a name=Ada -- ${server[*]}" \
  -n parked "$work/parked.sh" >&2
hyperfine -N --warmup 1 --runs "$runs" --prepare "$work/answer-last.sh" \
  --export-json "$work/park.json" \
  -n "call --park" "$work/park-only.sh" >&2
"$work/answer-last.sh"

jq -r -s '
  (.[0].results | map({(.command): .median}) | add) as $f
  | (.[1].results[0].median) as $p
  | "| measure | median |",
    "|---|---|",
    "| advance: call -a (whole call) | \($f.advance * 1000 | floor) ms |",
    "| parked: call --park, then respond | \($f.parked * 1000 | floor) ms |",
    "| parked / advance | \($f.parked / $f.advance * 100 | floor / 100)x |",
    "| call --park alone (to the parked object) | \($p * 1000 | floor) ms |"
' "$work/flow.json" "$work/park.json"
