#!/usr/bin/env bash
# Coverage-guided fuzzing of elicit's input paths with cargo-fuzz (libFuzzer).
#
#   fuzz/run.sh [SECONDS] [TARGET...]     # default: 600 s for each target, all targets
#   nice -n 19 fuzz/run.sh 300 sanitize url
#
# .ci/run runs every target on 30,000 inputs from a fixed seed, at most 60 s
# (FUZZ_FRESH=1 FUZZ_RUNS=30000; scripts/install-fuzz installs the pinned
# cargo-fuzz first). The exit status is non-zero when the build fails or any
# target crashes, leaks, runs out of memory or times out on an input; the
# time each target took and the total are printed at the end.
#
# cargo-fuzz needs nightly-only rustc flags (-Zsanitizer); this script sets
# RUSTC_BOOTSTRAP=1, which lets the stable toolchain accept them. With a
# nightly toolchain installed, `cargo +nightly fuzz run TARGET` works as well.
#
# Seeds: every *.json under fixtures/ goes into each target's corpus
# (fuzz/corpus/TARGET, git-ignored), with the target's saved regressions,
# plus, when jq is installed, seeds in the shape the schema/answers/url/sse
# targets read. A crash stops that target, is saved by libFuzzer under
# fuzz/artifacts/TARGET/ (git-ignored), and is listed at the end; copy it to
# fuzz/regressions/TARGET/ with a name that says what it is, and
# tests/it/fuzz_regressions.rs replays it from then on. Replay one input:
# cargo fuzz run TARGET FILE.
set -uo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
shift || true
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "cargo-fuzz is missing: cargo install cargo-fuzz --locked" >&2
    exit 1
fi
if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

seed() {
    local t=$1 dir=corpus/$1
    mkdir -p "$dir" "artifacts/$t"
    local f
    while IFS= read -r f; do
        cp "$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"
    done < <(find ../fixtures -name '*.json')
    if [ -d "regressions/$t" ]; then cp -r "regressions/$t/." "$dir/"; fi
    command -v jq >/dev/null || return 0
    while IFS= read -r f; do
        # Every requestedSchema anywhere in the fixture, compact, one per seed.
        jq -c '.. | objects | .requestedSchema? // empty' "$f" 2>/dev/null | while IFS= read -r s; do
            h=$(printf '%s' "$s" | md5sum | cut -c1-12)
            case $t in
                schema) printf '%s\n---\n{}' "$s" > "$dir/schema-$h" ;;
                answers) printf '%s\naccept\nname=Ada\nemail=ada@example.com\ninteger=7\ntags=bug' "$s" > "$dir/answers-$h" ;;
            esac
        done
        if [ "$t" = sse ]; then
            # Each fixture's messages as the events of one stream.
            h=$(md5sum "$f" | cut -c1-12)
            jq -c '.. | objects | select(has("jsonrpc"))' "$f" 2>/dev/null \
                | awk '{ printf "event: message\nid: %d\ndata: %s\n\n", NR, $0 }' > "$dir/sse-$h"
        fi
        if [ "$t" = url ]; then
            jq -r '.. | objects | .url? // empty | strings' "$f" 2>/dev/null | while IFS= read -r u; do
                printf '%s' "$u" > "$dir/url-$(printf '%s' "$u" | md5sum | cut -c1-12)"
            done
        fi
    done < <(find ../fixtures -name '*.json')
}

began=$SECONDS
cargo fuzz build || { echo "fuzz: the build failed" >&2; exit 1; }
built=$((SECONDS - began))
# Crash files from earlier runs are not this run's: only newer ones count.
mark=$(mktemp)
trap 'rm -f "$mark"' EXIT
declare -A status took
for t in "${targets[@]}"; do
    # FUZZ_FRESH=1: the corpus is only the seeds (as on a fresh clone), so a run
    # with FUZZ_RUNS (a fixed count of inputs, libFuzzer's -runs with -seed=1)
    # does here what it does in CI: a crash CI finds is found again by the
    # same command on any machine.
    [ "${FUZZ_FRESH:-}" = 1 ] && rm -rf "corpus/$t"
    seed "$t"
    echo "== $t: ${secs}s${FUZZ_RUNS:+ or $FUZZ_RUNS inputs}, corpus $(ls "corpus/$t" | wc -l) files" >&2
    start=$SECONDS
    cargo fuzz run "$t" "corpus/$t" -- \
        -max_total_time="$secs" ${FUZZ_RUNS:+-runs=$FUZZ_RUNS -seed=1} \
        -timeout=30 -rss_limit_mb=2048 -dict=json.dict \
        -max_len=65536 -print_final_stats=1 \
        2>&1 | tee "artifacts/$t.log" | grep -E '^(#[0-9]+ +(INITED|DONE|pulse)|==|stat::|thread .* panicked|SUMMARY|artifact_prefix|Test unit written)' >&2
    status[$t]=${PIPESTATUS[0]}
    took[$t]=$((SECONDS - start))
done

crashes() { find "artifacts/$1" -type f -newer "$mark" \( -name 'crash-*' -o -name 'leak-*' -o -name 'oom-*' -o -name 'timeout-*' \); }
echo
echo "| target | seconds | executions | exec/s | corpus | crashes |"
echo "|---|---|---|---|---|---|"
failed=0
for t in "${targets[@]}"; do
    log=artifacts/$t.log
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    corpus=$(ls "corpus/$t" | wc -l)
    found=$(crashes "$t" | wc -l)
    echo "| $t | ${took[$t]} | ${execs:-?} | ${rate:-?} | $corpus | $found (exit ${status[$t]}) |"
    if [ "$found" -gt 0 ] || [ "${status[$t]}" -ne 0 ]; then failed=1; fi
done
echo "fuzz: ${#targets[@]} targets, ${secs}s each; the build ${built}s, in all $((SECONDS - began))s"
for t in "${targets[@]}"; do crashes "$t"; done | sed 's/^/crash input: fuzz\//'
if [ "$failed" -ne 0 ]; then
    echo "fuzz: a target failed: copy its input to fuzz/regressions/TARGET/ and fix what it finds" >&2
    exit 1
fi
