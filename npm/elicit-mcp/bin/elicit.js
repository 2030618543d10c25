#!/usr/bin/env node
// The `elicit` command of the npm package elicit-mcp: finds the binary that the platform
// package for this machine holds (one optional dependency per platform, installed by npm
// from its os/cpu/libc fields, no install script) and runs it with the same arguments,
// stdio, exit status and signals.
"use strict";

const { spawn } = require("child_process");
const { findBinary, missingMessage } = require("../lib/find-binary.js");

const os = process.platform;

const binary = findBinary();
if (!binary) {
  process.stderr.write(missingMessage() + "\n");
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
