// elicit-mcp's postinstall: puts the platform package's binary in the place of the JS
// launcher (bin/elicit), so `node_modules/.bin/elicit`, which npm links to that file, runs
// the binary without starting Node first (esbuild does the same). Whenever a condition below
// does not hold, or anything fails, the JS launcher stays and still runs the binary: the
// install never fails because of this step, and a package manager that skips install
// scripts gets the launcher.
"use strict";

const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");
const { findPackagedBinary } = require("./find-binary.js");

const packageRoot = path.dirname(__dirname);
const launcher = path.join(packageRoot, "bin", "elicit");

// Why the launcher must stay, or null when the binary can take its place.
function reasonToKeepLauncher() {
  // npm's Windows shims (.cmd, .ps1) run `node <bin file>`: the file must stay JavaScript.
  if (process.platform === "win32") return "on Windows npm runs the command through node";
  // Other managers (pnpm, yarn, bun) may write shims that run the file with node.
  const agent = process.env.npm_config_user_agent || "";
  if (!agent.startsWith("npm/")) return `not installed by npm (${agent || "no user agent"})`;
  // ELICIT_BINARY names another binary: the launcher is what honours it.
  if (process.env.ELICIT_BINARY) return "ELICIT_BINARY is set";
  // Only an installed copy, never a source checkout, has its launcher replaced.
  if (!packageRoot.split(path.sep).includes("node_modules")) return "not inside node_modules";
  return null;
}

// The platform binary, when it runs here and is this package's version.
function checkedBinary() {
  const binary = findPackagedBinary();
  if (!binary) return { reason: "no platform package installed" };
  const { version } = require("../package.json");
  let out;
  try {
    out = execFileSync(binary, ["--version"], { encoding: "utf8", timeout: 10000, stdio: "pipe" });
  } catch (err) {
    return { reason: `${binary} --version failed: ${err.message}` };
  }
  if (out.trim() !== `elicit ${version}`) {
    return { reason: `${binary} is not elicit ${version}` };
  }
  return { binary };
}

// Replaces the launcher in one rename, so the command is always one or the other: a hard
// link to the binary (no second copy on disk), else a copy.
function replaceLauncher(binary) {
  const staged = path.join(packageRoot, "bin", `.elicit-install-${process.pid}`);
  try {
    try {
      fs.linkSync(binary, staged);
    } catch (_) {
      fs.copyFileSync(binary, staged);
      fs.chmodSync(staged, 0o755);
    }
    fs.renameSync(staged, launcher);
  } catch (err) {
    fs.rmSync(staged, { force: true });
    throw err;
  }
}

function main() {
  const keep = reasonToKeepLauncher();
  if (keep) return `elicit-mcp: the JS launcher stays (${keep})`;
  const { binary, reason } = checkedBinary();
  if (!binary) return `elicit-mcp: the JS launcher stays (${reason})`;
  try {
    replaceLauncher(binary);
  } catch (err) {
    return `elicit-mcp: the JS launcher stays (${err.message})`;
  }
  return null;
}

// Why the launcher stayed, on stderr (npm shows it with --foreground-scripts); exit 0 always.
const note = main();
if (note) process.stderr.write(note + "\n");
