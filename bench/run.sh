#!/usr/bin/env bash
# Benchmarks: elicit against `cat` and an equivalent jq program (bench/fill.jq).
#
#   bench/run.sh            # build release, measure, print a markdown table
#   LINES=20000 RUNS=50 bench/run.sh
#   NO_BUILD=1 bench/run.sh # measure target/release/elicit as it is
#   BASELINE=path/to/old/elicit bench/run.sh
#                           # also measures another build of elicit in the
#                           # same rounds, side by side (before and after a change)
#   TARGET=x86_64-unknown-linux-musl bench/run.sh
#                           # a static musl build (README, "Install and try it"):
#                           # needs `rustup target add x86_64-unknown-linux-musl`
#                           # and musl-gcc (Debian: musl-tools) for ring's C code
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
#     Run without a shell (hyperfine -N, the file as an argument), in ROUNDS
#     (default 5) rounds of RUNS/ROUNDS runs, cat and elicit alternating, so
#     that a change in the machine's load lands on both: the ratio given is
#     the median of the rounds' ratios. With valgrind installed, it also
#     counts each command's instructions (callgrind), the figure that does
#     not move with the load.
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

if [ -n "${TARGET:-}" ]; then
    # ring compiles C: for musl with musl-gcc, unless a compiler is given.
    cc_var="CC_${TARGET//-/_}"
    if [[ $TARGET == *musl* ]] && [ -z "${!cc_var:-}" ]; then
        command -v musl-gcc >/dev/null || { echo "TARGET=$TARGET needs musl-gcc (Debian: apt-get install musl-tools)" >&2; exit 1; }
        export "$cc_var=musl-gcc"
    fi
    [ -n "${NO_BUILD:-}" ] || cargo build --release --quiet --target "$TARGET"
    BIN=$PWD/target/$TARGET/release/elicit
else
    [ -n "${NO_BUILD:-}" ] || cargo build --release --quiet
    BIN=$PWD/target/release/elicit
fi
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
ROUNDS=${ROUNDS:-5}
E1="$(q "$BIN" "${ANSWERS[@]}" "$REQ")"
J1="jq -c -f bench/fill.jq $REQ"
C1="cat $REQ"
V1="$(q "$BIN" --version)"
B1=${BASELINE:+$(q "$BASELINE" "${ANSWERS[@]}" "$REQ")}
EL="$(q "$BIN" --lines "${ANSWERS[@]}") < $work/lines.ndjson"
JL="jq -c -f bench/fill.jq $work/lines.ndjson"
CL="cat $work/lines.ndjson"

echo "(a) one resolution, $ROUNDS rounds of $((RUNS / ROUNDS)) runs each" >&2
for r in $(seq "$ROUNDS"); do
    hyperfine -N --style basic --warmup 20 --runs "$((RUNS / ROUNDS))" --output=null \
        -n cat "$C1" -n "elicit --version" "$V1" -n elicit "$E1" \
        ${BASELINE:+-n baseline "$B1"} \
        --export-json "$work/a$r.json" >&2
done
hyperfine -N --style basic --warmup 3 --runs 20 --output=null -n jq "$J1" \
    --export-json "$work/aj.json" >&2
# Instruction counts (callgrind): the same for the same binary and input,
# whatever else the machine does.
instr() {
    if command -v valgrind >/dev/null; then
        bash -c "exec valgrind --tool=callgrind --callgrind-out-file=$work/cg $1" >/dev/null 2>&1 &&
            awk '/^summary:/ { printf "%.2f M", $2 / 1e6 }' "$work/cg"
    else
        echo "(no valgrind)"
    fi
}
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
# How the binary is linked, as file(1) says it (when file is installed).
linkage() {
    if command -v file >/dev/null; then
        file -b "$BIN" | grep -o 'dynamically linked\|static-pie linked\|statically linked' | head -1
    else
        echo "linkage unknown: no file(1)"
    fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f×", a / b }'; }
lps() { awk -v n="$LINES" -v s="$1" 'BEGIN { printf "%\047.0f lines/s", n / s }'; }

# Per round: each command's mean; over the rounds: the median of those
# means, and the median of the rounds' ratios to cat.
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
over_rounds() { for r in $(seq "$ROUNDS"); do mean "$work/a$r.json" "$1"; done | median; }
ratio_rounds() {
    for r in $(seq "$ROUNDS"); do
        awk -v a="$(mean "$work/a$r.json" "$1")" -v b="$(mean "$work/a$r.json" cat)" 'BEGIN { print a / b }'
    done | median | awk '{ printf "%.2f×", $1 }'
}
sd_rounds() { for r in $(seq "$ROUNDS"); do sd "$work/a$r.json" "$1"; done | median; }
ca=$(over_rounds cat); va=$(over_rounds "elicit --version"); ea=$(over_rounds elicit); ja=$(mean "$work/aj.json" jq)
cb=$(mean "$work/b.json" cat); eb=$(mean "$work/b.json" "elicit --lines"); jb=$(mean "$work/b.json" "jq -c")

cat <<TABLE

#### (a) one scripted resolution (\`server-everything/form.request.json\`, whole process)

| command | time (mean ± σ) | vs cat | instructions | peak RSS |
|---|---|---|---|---|
| \`cat\` | $(ms "$ca" "$(sd_rounds cat)") | 1.00× | $(instr "$C1") | $(rss "$C1") |
| \`elicit --version\` (start-up alone) | $(ms "$va" "$(sd_rounds "elicit --version")") | $(ratio_rounds "elicit --version") | $(instr "$V1") | $(rss "$V1") |
| \`elicit --no-input -a accept -a name=Ada -a email=…\` | $(ms "$ea" "$(sd_rounds elicit)") | $(ratio_rounds elicit) | $(instr "$E1") | $(rss "$E1") |
$(if [ -n "${BASELINE:-}" ]; then echo "| baseline \`$BASELINE\`, same arguments | $(ms "$(over_rounds baseline)" "$(sd_rounds baseline)") | $(ratio_rounds baseline) | $(instr "$B1") | $(rss "$B1") |"; fi)
| \`jq -c -f bench/fill.jq\` | $(ms "$ja" "$(sd "$work/aj.json" jq)") | $(ratio "$ja" "$ca") | $(instr "$J1") | $(rss "$J1") |

Target: elicit within 1.5× of cat. (Times: the median over $ROUNDS rounds of each
round's mean; ratios: the median of the rounds' ratios.)

#### (b) \`--lines\` over $LINES copies of that request ($(du -h "$work/lines.ndjson" | cut -f1))

| command | time (mean) | throughput | vs jq | peak RSS |
|---|---|---|---|---|
| \`cat\` | $(ms "$cb" "$(sd "$work/b.json" cat)") | $(lps "$cb") | $(ratio "$jb" "$cb") | $(rss "$CL") |
| \`elicit --lines …\` | $(ms "$eb" "$(sd "$work/b.json" "elicit --lines")") | $(lps "$eb") | $(ratio "$jb" "$eb") | $(rss "$EL") |
| \`jq -c -f bench/fill.jq\` | $(ms "$jb" "$(sd "$work/b.json" "jq -c")") | $(lps "$jb") | 1.00× | $(rss "$JL") |

Target: elicit at least 5× jq's throughput.

Machine: $(nproc) CPUs, $(uname -sr), $(hyperfine --version), $(jq --version), $("$BIN" --version 2>/dev/null | head -1) ($(linkage)${TARGET:+, $TARGET}).
TABLE
