// Finding the elicit binary of the npm package elicit-mcp: the platform package for this
// machine (one optional dependency per platform, installed by npm from its os/cpu/libc
// fields), or ELICIT_BINARY. Shared by the `elicit` command (bin/elicit), the SDK handler
// (index.js) and the install step that puts the binary in the command's place (lib/install.js).
"use strict";

const fs = require("fs");

// The platform table: the package's copy (scripts/package puts it there), else the source
// tree's npm/platforms.json (a checkout, where the tests load this module).
let platformsCache;
function platforms() {
  if (!platformsCache) {
    try {
      platformsCache = require("../platforms.json");
    } catch (_) {
      platformsCache = require("../../platforms.json");
    }
  }
  return platformsCache;
}

// glibc or musl, as biome decides it: Node's own report says which glibc it runs on; a
// Node without one (built against musl) runs on musl.
function linuxLibc() {
  try {
    const report = process.report && process.report.getReport();
    const header = report && (typeof report === "string" ? JSON.parse(report) : report).header;
    if (header && header.glibcVersionRuntime) return "glibc";
    if (header) return "musl";
  } catch (_) {
    // fall through to the file check
  }
  try {
    return fs.readFileSync("/usr/bin/ldd", "latin1").includes("musl") ? "musl" : "glibc";
  } catch (_) {
    return "musl";
  }
}

const os = process.platform;
const cpu = process.arch;
let libcCache;
function libc() {
  if (libcCache === undefined) libcCache = os === "linux" ? linuxLibc() : null;
  return libcCache || undefined;
}
const exe = os === "win32" ? "elicit.exe" : "elicit";

// This machine's package first; on Linux the other libc's next (the musl build is static,
// so it runs on glibc systems too).
function candidates() {
  const mine = libc();
  return Object.entries(platforms())
    .filter(([key, p]) => !key.startsWith("/") && p.os === os && p.cpu === cpu)
    .sort(([, a], [, b]) => (a.libc === mine ? 0 : 1) - (b.libc === mine ? 0 : 1))
    .map(([, p]) => p.package);
}

// The binary's path: ELICIT_BINARY, else the installed platform package's; null when none.
function findBinary() {
  if (process.env.ELICIT_BINARY) return process.env.ELICIT_BINARY;
  return findPackagedBinary();
}

// The installed platform package's binary, whatever ELICIT_BINARY says; null when none.
function findPackagedBinary() {
  for (const pkg of candidates()) {
    try {
      return require.resolve(`${pkg}/bin/${exe}`);
    } catch (_) {
      // not installed: try the next
    }
  }
  return null;
}

// What to tell a person when findBinary() found nothing: which package, for which platform,
// and how to get it.
function missingMessage() {
  const mine = libc();
  const here = `${os} ${cpu}${mine ? ` (${mine})` : ""}`;
  const { version } = require("../package.json");
  const lines = [`elicit-mcp: no elicit binary for this platform: ${here}.`];
  const found = candidates();
  if (found.length) {
    lines.push(
      `The package that holds it, ${found[0]}@${version}, is not installed.`,
      "npm installs it as an optional dependency of elicit-mcp; it is left out when",
      "optional dependencies are skipped (--omit=optional, --no-optional) or when the",
      "lockfile was made on another platform. Reinstall with optional dependencies:",
      `  npm install elicit-mcp@${version}`,
    );
  } else {
    const known = Object.entries(platforms())
      .filter(([key]) => !key.startsWith("/"))
      .map(([, p]) => `${p.os} ${p.cpu}${p.libc ? ` (${p.libc})` : ""}`);
    lines.push(
      `elicit-mcp ${version} is built for: ${known.join(", ")}.`,
      "Other platforms: `cargo install elicit-mcp` builds it from source.",
    );
  }
  return lines.join("\n");
}

module.exports = { findBinary, findPackagedBinary, missingMessage };
