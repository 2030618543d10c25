#!/usr/bin/env node
// The `elicit` command of the npm package elicit-mcp: finds the binary that the platform
// package for this machine holds (one optional dependency per platform, installed by npm
// from its os/cpu/libc fields, no install script) and runs it with the same arguments,
// stdio, exit status and signals.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const path = require("path");

const platforms = require("../platforms.json");

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
const libc = os === "linux" ? linuxLibc() : undefined;
const exe = os === "win32" ? "elicit.exe" : "elicit";

// This machine's package first; on Linux the other libc's next (the musl build is static,
// so it runs on glibc systems too).
const candidates = Object.entries(platforms)
  .filter(([key, p]) => !key.startsWith("/") && p.os === os && p.cpu === cpu)
  .sort(([, a], [, b]) => (a.libc === libc ? 0 : 1) - (b.libc === libc ? 0 : 1))
  .map(([, p]) => p.package);

function findBinary() {
  if (process.env.ELICIT_BINARY) return process.env.ELICIT_BINARY;
  for (const pkg of candidates) {
    try {
      return require.resolve(`${pkg}/bin/${exe}`);
    } catch (_) {
      // not installed: try the next
    }
  }
  return null;
}

const binary = findBinary();
if (!binary) {
  const here = `${os} ${cpu}${libc ? ` (${libc})` : ""}`;
  const { version } = require("../package.json");
  const lines = [`elicit-mcp: no elicit binary for this platform: ${here}.`];
  if (candidates.length) {
    lines.push(
      `The package that holds it, ${candidates[0]}@${version}, is not installed.`,
      "npm installs it as an optional dependency of elicit-mcp; it is left out when",
      "optional dependencies are skipped (--omit=optional, --no-optional) or when the",
      "lockfile was made on another platform. Reinstall with optional dependencies:",
      `  npm install elicit-mcp@${version}`,
    );
  } else {
    const known = Object.entries(platforms)
      .filter(([key]) => !key.startsWith("/"))
      .map(([, p]) => `${p.os} ${p.cpu}${p.libc ? ` (${p.libc})` : ""}`);
    lines.push(
      `elicit-mcp ${version} is built for: ${known.join(", ")}.`,
      "Other platforms: `cargo install elicit-mcp` builds it from source.",
    );
  }
  process.stderr.write(lines.join("\n") + "\n");
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

// A signal sent to this launcher is passed on to elicit, which decides what it means.
// SIGINT and SIGQUIT from the terminal (Ctrl-C, Ctrl-\) already reach elicit, which is in the
// terminal's foreground process group with us: passing them on too would count one press
// twice, so they are only kept from killing the launcher before elicit has answered them.
const forwarded = ["SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2"];
const absorbed = ["SIGINT", "SIGQUIT"];
const handlers = {};
for (const sig of [...forwarded, ...absorbed]) {
  if (os === "win32" && sig !== "SIGINT") continue;
  handlers[sig] = () => {
    if (forwarded.includes(sig)) {
      try {
        child.kill(sig);
      } catch (_) {
        // already gone
      }
    }
  };
  process.on(sig, handlers[sig]);
}

child.on("error", (err) => {
  process.stderr.write(`elicit-mcp: could not run ${binary}: ${err.message}\n`);
  process.exit(1);
});

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so whoever started us sees what elicit's parent would have.
    for (const [sig, h] of Object.entries(handlers)) process.removeListener(sig, h);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
