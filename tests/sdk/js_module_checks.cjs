// The npm package's handler at its edges, run by tests/it/sdk_resolvers.rs with
// ELICIT_BINARY set to the freshly built binary. Prints one JSON object of what happened; the
// test asserts on it.
//
//   node js_module_checks.cjs MODULE WORKDIR
"use strict";

const fs = require("fs");
const path = require("path");

const FORM = {
  message: "Region?",
  requestedSchema: { type: "object", properties: { region: { type: "string" } }, required: ["region"] },
};

function alive(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").pop()[0] !== "Z";
  } catch (_) {
    return false;
  }
}

async function waitUntil(what, cond, limit = 20000) {
  const deadline = Date.now() + limit;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`waited in vain for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function main() {
  const [modulePath, work] = process.argv.slice(2);
  const m = require(path.resolve(modulePath));
  const real = process.env.ELICIT_BINARY;
  const out = {};

  // The handler as the SDK calls it: the request, and the extra with its signal.
  const handler = m.elicitHandler({ answers: ["region=apac"] });
  out.answered = await handler({ method: "elicitation/create", params: FORM }, { signal: new AbortController().signal });
  out.bareParams = await m.elicitHandler({ answers: "decline" })(FORM);

  try {
    await m.resolve(FORM, { answers: ["nosuchfield=1"], noInput: true });
    out.badAnswer = null;
  } catch (e) {
    out.badAnswer = { name: e.name, message: e.message, exitCode: e.exitCode, isElicitError: e instanceof m.ElicitError };
  }

  try {
    await m.resolve(FORM, { binary: path.join(work, "missing", "elicit") });
    out.binaryMissing = null;
  } catch (e) {
    out.binaryMissing = { name: e.name, message: e.message, isElicitError: e instanceof m.ElicitError };
  }
  delete process.env.ELICIT_BINARY;
  try {
    out.found = m.findBinary();
  } catch (e) {
    out.notFound = { name: e.name, message: e.message };
  }
  process.env.ELICIT_BINARY = real;

  try {
    m.elicitHandler({ timeout: -5 });
    out.badTimeout = null;
  } catch (e) {
    out.badTimeout = `${e.name}: ${e.message}`;
  }

  // Bounded: nobody answers the page within the timeout, and the answer is cancel.
  const started = Date.now();
  const result = await m.resolve(FORM, { ui: "browser", noOpen: true, timeout: 1000 });
  out.timedOut = { result, seconds: Math.round((Date.now() - started) / 100) / 10 };

  // Two at once wait their turns (one terminal, one person): two 1-second runs take two.
  const bothStarted = Date.now();
  const both = await Promise.all([0, 1].map(() => m.resolve(FORM, { ui: "browser", noOpen: true, timeout: 1000 })));
  out.twoAtOnce = { results: both, seconds: Math.round((Date.now() - bothStarted) / 100) / 10 };

  // Aborted while the page waits (the server withdrew the request): elicit is ended.
  const pidfile = path.join(work, "elicit.pid");
  const wrapper = path.join(work, "elicit-wrapper");
  const argsfile = path.join(work, "elicit.args");
  fs.writeFileSync(
    wrapper,
    `#!/bin/sh\necho $$ > '${pidfile}'\nprintf '%s\\n' "$@" > '${argsfile}'\nexec '${real}' "$@"\n`,
    { mode: 0o755 },
  );
  const relayed = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = (chunk, ...rest) => {
    relayed.push(String(chunk));
    return write(chunk, ...rest);
  };
  const ac = new AbortController();
  const pending = m.elicitHandler({ binary: wrapper, ui: "browser", noOpen: true })(
    { method: "elicitation/create", params: FORM },
    { signal: ac.signal },
  );
  await waitUntil("the page's address", () => relayed.join("").includes("answer on the page "));
  const pid = Number(fs.readFileSync(pidfile, "utf8"));
  const wasRunning = alive(pid);
  out.args = fs.readFileSync(argsfile, "utf8").split("\n").filter((a) => a);
  ac.abort(new Error("the server withdrew the request"));
  try {
    await pending;
    out.aborted = "not aborted";
  } catch (e) {
    await waitUntil("elicit to end", () => !alive(pid));
    out.aborted = { reason: e.message, wasRunning, ended: !alive(pid) };
  }
  process.stderr.write = write;
  out.relayed = relayed.join("");
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stdout.write(JSON.stringify({ crashed: String(e && e.stack) }) + "\n");
});
