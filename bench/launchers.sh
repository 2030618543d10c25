#!/usr/bin/env bash
# What each way of starting elicit costs: `elicit --version` through every launcher a
# package installs, against the bare binary, in one hyperfine run (-N: no shell), each
# row also as a ratio to the bare binary. The rows:
#   bare binary                  BIN itself
#   wheel: venv/bin/elicit       the file the wheel installs (a copy of the binary)
#   python -m elicit_mcp         the wheel's module, which execs that binary
#   npm: .bin/elicit             npm install, postinstall ran (the binary in the launcher's place)
#   npm --ignore-scripts         npm install --ignore-scripts (the JS launcher)
#   npx elicit                   npx in each of those two projects
# Two rounds, the second in reverse order; each row's mean is the two rounds' mean.
#
# Usage: bench/launchers.sh            BIN (default target/release/elicit) must exist
# Environment: BIN, RUNS (runs per row and round, default 50), DIST (use its wheel and npm tarballs when it holds them;
# otherwise the npm packages are packed here from npm/elicit-mcp and BIN, and the venv gets
# BIN as its bin/elicit, as the wheel installs it). Offline: nothing comes from a registry.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${BIN:-${CARGO_TARGET_DIR:-$repo/target}/release/elicit}"
RUNS="${RUNS:-50}"
DIST="${DIST:-$repo/dist}"
[[ -x "$BIN" ]] || { echo "no binary at $BIN: cargo build --release, or set BIN" >&2; exit 1; }
for tool in hyperfine jq node npm python3; do
  command -v "$tool" >/dev/null || { echo "missing: $tool" >&2; exit 1; }
done
version="$("$BIN" --version | sed 's/^elicit //')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# ---------------------------------------------------------------- the npm tarballs
case "$(uname -m)" in x86_64) cpu=x64 ;; aarch64 | arm64) cpu=arm64 ;; *) cpu="$(uname -m)" ;; esac
case "$(uname -s)" in Linux) plat="linux-$cpu-gnu" ;; Darwin) plat="darwin-$cpu" ;; *) plat="?" ;; esac
main_tgz="$DIST/elicit-mcp-$version.tgz"
plat_tgz="$DIST/elicit-mcp-$plat-$version.tgz"
if [[ ! -f "$main_tgz" || ! -f "$plat_tgz" ]]; then
  # As scripts/package makes them, from npm/elicit-mcp and BIN.
  mkdir -p "$work/pack/main" "$work/pack/plat/bin" "$work/tgz"
  cp -R "$repo/npm/elicit-mcp/." "$work/pack/main/"
  cp "$repo/npm/platforms.json" "$work/pack/main/"
  chmod 755 "$work/pack/main/bin/elicit"
  cp "$BIN" "$work/pack/plat/bin/elicit"
  node -e '
const fs = require("fs");
const [dir, version, plat] = process.argv.slice(1);
const main = JSON.parse(fs.readFileSync(dir + "/main/package.json"));
main.version = version;
main.optionalDependencies = { ["@elicit-mcp/" + plat]: version };
fs.writeFileSync(dir + "/main/package.json", JSON.stringify(main));
const [os, cpu, libc] = plat.split("-");
const p = { name: "@elicit-mcp/" + plat, version, os: [os], cpu: [cpu], files: ["bin/"] };
if (libc) p.libc = [libc === "gnu" ? "glibc" : "musl"];
fs.writeFileSync(dir + "/plat/package.json", JSON.stringify(p));
' "$work/pack" "$version" "$plat"
  (cd "$work/pack/main" && npm pack --silent --pack-destination "$work/tgz" >/dev/null)
  (cd "$work/pack/plat" && npm pack --silent --pack-destination "$work/tgz" >/dev/null)
  main_tgz="$work/tgz/elicit-mcp-$version.tgz"
  plat_tgz="$work/tgz/elicit-mcp-$plat-$version.tgz"
fi

npm_project() { # DIR NPM-FLAGS...
  local dir="$1"
  shift
  mkdir -p "$dir"
  (cd "$dir" && npm init -y >/dev/null &&
    npm install --offline --cache "$work/npm-cache" --no-audit --no-fund "$@" "$main_tgz" "$plat_tgz" >/dev/null 2>&1)
}
npm_project "$work/npm"
npm_project "$work/npm-js" --ignore-scripts
head -c2 "$work/npm-js/node_modules/.bin/elicit" | grep -q '#!' || { echo "--ignore-scripts did not keep the launcher" >&2; exit 1; }

# ---------------------------------------------------------------- the venv
python3 -m venv "$work/venv"
shopt -s nullglob
wheels=("$DIST"/elicit_mcp-"$version"-py3-none-manylinux*.whl)
shopt -u nullglob
if [[ ${#wheels[@]} -gt 0 ]]; then
  "$work/venv/bin/pip" install --quiet --no-index "${wheels[0]}"
  wheel_row="wheel: venv/bin/elicit"
else
  cp "$BIN" "$work/venv/bin/elicit"
  ln -s "$repo/python/elicit_mcp" "$(echo "$work"/venv/lib/python3*/site-packages)/elicit_mcp"
  wheel_row="wheel layout: venv/bin/elicit"
fi

# ---------------------------------------------------------------- two rounds
# The rows in order, then in reverse order, so a load that changes during the run weighs
# on every row alike; a row's figure is the mean of its two rounds.
npx_cache="--offline --cache $work/npm-cache"
rows=(
  "bare binary" "$BIN --version"
  "$wheel_row" "$work/venv/bin/elicit --version"
  "python -m elicit_mcp" "$work/venv/bin/python -m elicit_mcp --version"
  "npm: node_modules/.bin/elicit (postinstall ran)" "$work/npm/node_modules/.bin/elicit --version"
  "npm --ignore-scripts: node_modules/.bin/elicit (JS launcher)" "$work/npm-js/node_modules/.bin/elicit --version"
  "npx elicit (postinstall ran)" "env -C $work/npm npx $npx_cache elicit --version"
  "npx elicit (JS launcher)" "env -C $work/npm-js npx $npx_cache elicit --version"
)
round() { # OUT-JSON INDEX...: one hyperfine run of those rows
  local out="$1" args=() i
  shift
  for i in "$@"; do args+=(-n "${rows[2 * i]}" "${rows[2 * i + 1]}"); done
  env -u ELICIT_BINARY hyperfine -N --style basic --warmup 3 --runs "$RUNS" --output=null \
    --export-json "$out" "${args[@]}" >&2
}
n=$((${#rows[@]} / 2))
round "$work/round1.json" $(seq 0 $((n - 1)))
round "$work/round2.json" $(seq $((n - 1)) -1 0)

echo
echo "| launcher | mean (round 1, round 2) | ratio to the bare binary |"
echo "|---|---|---|"
jq -rs '[.[0].results, (.[1].results | reverse)] | transpose
  | map({command: .[0].command, a: .[0].mean, b: .[1].mean, mean: ((.[0].mean + .[1].mean) / 2)})
  | .[0].mean as $bare | .[]
  | "| \(.command) | \(.mean * 10000 | round / 10) ms (\(.a * 10000 | round / 10), \(.b * 10000 | round / 10)) | \(.mean / $bare * 10 | round / 10)× |"' \
  "$work/round1.json" "$work/round2.json"
echo
echo "Machine: $(nproc) CPUs, $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null), $(hyperfine --version), node $(node --version), npm $(npm --version), $(python3 --version); $BIN ($version)."
