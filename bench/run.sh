#!/usr/bin/env bash
# Benchmarks: elicit against `cat` and an equivalent jq program (bench/fill.jq).
#
#   bench/run.sh            # build release, measure, print a markdown table
#   LINES=20000 RUNS=50 bench/run.sh
#   NO_BUILD=1 bench/run.sh # measure target/release/elicit as it is
#
# bench/http.sh measures `elicit call URL` against curl; bench/proxy.sh the
# proxy relay.
#
# Needs hyperfine, jq and GNU time (/usr/bin/time). When they are missing and
# this runs as root with apt-get, it installs them (Debian packages
# `hyperfine jq time`); otherwise it says how and stops.
#
# (a) one scripted resolution of fixtures/server-everything/form.request.json,
#     whole process (exec, read, resolve, print); target: within 1.5x of cat.
# (b) `--lines` over LINES (default 100000) copies of it, one per line;
#     throughput in lines/s; target: at least 5x `jq -c -f bench/fill.jq`.
# (c) peak memory (max RSS, /usr/bin/time -v) of each command in (a) and (b).
#
# Timings are wall clock on whatever else the machine is doing: run it on a
# quiet machine for numbers worth quoting.
set -euo pipefail
cd "$(dirname "$0")/.."

LINES=${LINES:-100000}
RUNS=${RUNS:-200}
STREAM_RUNS=${STREAM_RUNS:-5}
REQ=fixtures/server-everything/form.request.json
ANSWERS=(--no-input -a accept -a name=Ada -a email=ada@example.com)

need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v jq >/dev/null || need+=(jq)
[ -x /usr/bin/time ] || need+=(time)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing ${need[*]} with apt-get" >&2
        apt-get install -y "${need[@]}" >/dev/null || { apt-get update >/dev/null && apt-get install -y "${need[@]}" >/dev/null; }
    else
        echo "missing: ${need[*]}. Install them: sudo apt-get install -y ${need[*]} (Debian/Ubuntu), brew install hyperfine jq gnu-time (macOS)" >&2
        exit 1
    fi
fi

[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet
BIN=$PWD/target/release/elicit
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The jq program must print exactly what elicit prints.
if ! diff <("$BIN" "${ANSWERS[@]}" < "$REQ") <(jq -c -f bench/fill.jq "$REQ") >/dev/null; then
    echo "bench/fill.jq and elicit disagree on $REQ; fix the jq program first" >&2
    exit 1
fi
one=$(jq -c . "$REQ")
awk -v n="$LINES" -v s="$one" 'BEGIN { for (i = 0; i < n; i++) print s }' > "$work/lines.ndjson"
if ! cmp -s <("$BIN" --lines "${ANSWERS[@]}" < "$work/lines.ndjson") <(jq -c -f bench/fill.jq "$work/lines.ndjson"); then
    echo "elicit --lines and jq -c disagree on the stream" >&2
    exit 1
fi

q() { printf '%q ' "$@"; }
E1="$(q "$BIN" "${ANSWERS[@]}") < $REQ"
J1="jq -c -f bench/fill.jq $REQ"
C1="cat $REQ"
V1="$(q "$BIN" --version)"
EL="$(q "$BIN" --lines "${ANSWERS[@]}") < $work/lines.ndjson"
JL="jq -c -f bench/fill.jq $work/lines.ndjson"
CL="cat $work/lines.ndjson"

echo "(a) one resolution, $RUNS runs each" >&2
hyperfine --style basic --warmup 20 --runs "$RUNS" --output=null \
    -n cat "$C1" -n "elicit --version" "$V1" -n elicit "$E1" -n jq "$J1" \
    --export-json "$work/a.json" --export-markdown "$work/a.md" >&2
echo "(b) --lines over $LINES lines, $STREAM_RUNS runs each" >&2
hyperfine --style basic --warmup 1 --runs "$STREAM_RUNS" --output=null \
    -n cat "$CL" -n "elicit --lines" "$EL" -n "jq -c" "$JL" \
    --export-json "$work/b.json" --export-markdown "$work/b.md" >&2

mean() { jq -r --arg n "$2" '.results[] | select(.command == $n) | .mean' "$1"; }
sd() { jq -r --arg n "$2" '.results[] | select(.command == $n) | .stddev' "$1"; }
rss() { # peak resident set size in MiB, best of 3
    local best=
    for _ in 1 2 3; do
        local kb
        kb=$(bash -c "/usr/bin/time -v bash -c $(printf '%q' "exec $1") >/dev/null 2>$work/t; grep -o 'Maximum resident set size (kbytes): [0-9]*' $work/t | grep -o '[0-9]*$'")
        if [ -z "$best" ] || [ "$kb" -lt "$best" ]; then best=$kb; fi
    done
    awk -v k="$best" 'BEGIN { printf "%.1f MiB", k / 1024 }'
}
ms() { awk -v s="$1" -v d="$2" 'BEGIN { printf "%.2f ms ± %.2f", s * 1000, d * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a / b }'; }
lps() { awk -v n="$LINES" -v s="$1" 'BEGIN { printf "%\047.0f lines/s", n / s }'; }

ca=$(mean "$work/a.json" cat); va=$(mean "$work/a.json" "elicit --version"); ea=$(mean "$work/a.json" elicit); ja=$(mean "$work/a.json" jq)
cb=$(mean "$work/b.json" cat); eb=$(mean "$work/b.json" "elicit --lines"); jb=$(mean "$work/b.json" "jq -c")

cat <<TABLE

#### (a) one scripted resolution (\`server-everything/form.request.json\`, whole process)

| command | time (mean ± σ) | vs cat | peak RSS |
|---|---|---|---|
| \`cat\` | $(ms "$ca" "$(sd "$work/a.json" cat)") | 1.00× | $(rss "$C1") |
| \`elicit --version\` (start-up alone) | $(ms "$va" "$(sd "$work/a.json" "elicit --version")") | $(ratio "$va" "$ca") | $(rss "$V1") |
| \`elicit --no-input -a accept -a name=Ada -a email=…\` | $(ms "$ea" "$(sd "$work/a.json" elicit)") | $(ratio "$ea" "$ca") | $(rss "$E1") |
| \`jq -c -f bench/fill.jq\` | $(ms "$ja" "$(sd "$work/a.json" jq)") | $(ratio "$ja" "$ca") | $(rss "$J1") |

Target: elicit within 1.5× of cat.

#### (b) \`--lines\` over $LINES copies of that request ($(du -h "$work/lines.ndjson" | cut -f1))

| command | time (mean) | throughput | vs jq | peak RSS |
|---|---|---|---|---|
| \`cat\` | $(ms "$cb" "$(sd "$work/b.json" cat)") | $(lps "$cb") | $(ratio "$jb" "$cb") | $(rss "$CL") |
| \`elicit --lines …\` | $(ms "$eb" "$(sd "$work/b.json" "elicit --lines")") | $(lps "$eb") | $(ratio "$jb" "$eb") | $(rss "$EL") |
| \`jq -c -f bench/fill.jq\` | $(ms "$jb" "$(sd "$work/b.json" "jq -c")") | $(lps "$jb") | 1.00× | $(rss "$JL") |

Target: elicit at least 5× jq's throughput.

Machine: $(nproc) CPUs, $(uname -sr), $(hyperfine --version), $(jq --version), $("$BIN" --version 2>/dev/null | head -1).
TABLE
