#!/usr/bin/env bash
# Coverage-guided fuzzing of elicit's input paths with cargo-fuzz (libFuzzer).
#
#   fuzz/run.sh [SECONDS] [TARGET...]     # default: 600 s for each target, all targets
#   nice -n 19 fuzz/run.sh 300 sanitize url
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). cargo-fuzz needs
# nightly-only rustc flags (-Zsanitizer); on a stable toolchain this script
# sets RUSTC_BOOTSTRAP=1, which lets stable rustc accept them. With a nightly
# toolchain installed, `cargo +nightly fuzz run TARGET` works as well.
#
# Seeds: every *.json under fixtures/ goes into each target's corpus
# (fuzz/corpus/TARGET, git-ignored), plus, when jq is installed, seeds in the
# shape the schema/answers/url targets read. A crash stops that target, is
# saved by libFuzzer under fuzz/artifacts/TARGET/ (git-ignored), and is listed
# at the end; copy it to fuzz/regressions/TARGET/ and add it to
# tests/fuzz_regressions.rs. Replay one input: cargo fuzz run TARGET FILE.
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
        if [ "$t" = url ]; then
            jq -r '.. | objects | .url? // empty | strings' "$f" 2>/dev/null | while IFS= read -r u; do
                printf '%s' "$u" > "$dir/url-$(printf '%s' "$u" | md5sum | cut -c1-12)"
            done
        fi
    done < <(find ../fixtures -name '*.json')
}

cargo fuzz build || exit 1
declare -A status
for t in "${targets[@]}"; do
    seed "$t"
    echo "== $t: ${secs}s, corpus $(ls "corpus/$t" | wc -l) files" >&2
    cargo fuzz run "$t" "corpus/$t" -- \
        -max_total_time="$secs" -dict=json.dict -max_len=65536 -print_final_stats=1 \
        2>&1 | tee "artifacts/$t.log" | grep -E '^(#[0-9]+ +(INITED|DONE|pulse)|==|stat::|thread .* panicked|SUMMARY|artifact_prefix|Test unit written)' >&2
    status[$t]=${PIPESTATUS[0]}
done

echo
echo "| target | seconds | executions | exec/s | corpus | crashes |"
echo "|---|---|---|---|---|---|"
for t in "${targets[@]}"; do
    log=artifacts/$t.log
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    corpus=$(ls "corpus/$t" | wc -l)
    crashes=$(find "artifacts/$t" -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \) | wc -l)
    echo "| $t | $secs | ${execs:-?} | ${rate:-?} | $corpus | $crashes (exit ${status[$t]}) |"
done
find artifacts -type f \( -name 'crash-*' -o -name 'oom-*' -o -name 'timeout-*' \) -print | sed 's/^/crash input: fuzz\//'
