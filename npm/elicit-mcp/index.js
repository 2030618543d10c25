// elicit's resolvers for the TypeScript SDK's client, in one line:
//
//   client.setRequestHandler(ElicitRequestSchema, elicitHandler());     // SDK v1
//   client.setRequestHandler("elicitation/create", elicitHandler());    // SDK v2
//
// Each elicitation is handed to the elicit binary of this package (the platform package's, as
// the `elicit` command finds it; ELICIT_BINARY names another): its params go in on stdin, the
// ElicitResult comes back on stdout. elicit asks at the terminal when there is one, else on a
// local browser page, or answers from scripted answers and answer rules; the environment
// variables of the command apply (ELICIT_ANSWERS, ELICIT_UI, ELICIT_NO_INPUT, ELICIT_NO_OPEN,
// ELICIT_BROWSER), and the options below set the same per client. No dependency on the SDK.
"use strict";

const { spawn } = require("child_process");
const { findBinary: findInstalled, missingMessage } = require("./lib/find-binary.js");

// How long a person may take unless told (ms); past it elicit answers cancel.
const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;
// What elicit may take past its own --timeout to print the cancel and exit before it is ended.
const GRACE_MS = 15 * 1000;
// The last lines of elicit's stderr kept for an error's message.
const STDERR_TAIL = 20;

class ElicitError extends Error {
  constructor(message, exitCode = null, stderr = "") {
    super(message);
    this.name = "ElicitError";
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

class ElicitNotFound extends ElicitError {
  constructor(message) {
    super(message);
    this.name = "ElicitNotFound";
  }
}

// The binary's path; throws ElicitNotFound, saying which package is missing, when none.
function findBinary() {
  const binary = findInstalled();
  if (!binary) throw new ElicitNotFound(missingMessage());
  return binary;
}

// The command line that resolves one elicitation read from stdin.
function elicitArgs(options) {
  const args = [];
  for (const answer of [].concat(options.answers || [])) args.push("--answer", String(answer));
  if (options.answersFile != null) args.push("--answers", String(options.answersFile));
  if (options.ui != null) args.push("--ui", options.ui);
  if (options.noInput) args.push("--no-input");
  if (options.noOpen) args.push("--no-open");
  if (options.browser != null) args.push("--browser", options.browser);
  args.push("--timeout", `${Math.max(1, Math.round(timeoutOf(options)))}ms`);
  // A client killed meanwhile (no abort reaches elicit then) leaves nothing behind.
  args.push("--exit-with-parent");
  args.push(...(options.args || []));
  args.push("-");
  return args;
}

// Where elicit reads the server's name in an elicitation's params (`_meta`, as 2026-07-28
// servers stamp it): the header a person sees, and the `server` of answer rules.
const SERVER_INFO_META = "io.modelcontextprotocol/serverInfo";

// The params with the `server` option's name (a name, or a function giving one when asked:
// `() => client.getServerVersion()?.name`) in `_meta`.
function withServer(params, server) {
  const name = typeof server === "function" ? server() : server;
  if (!name) return params;
  const meta = params._meta && typeof params._meta === "object" ? params._meta : {};
  return { ...params, _meta: { ...meta, [SERVER_INFO_META]: { name: String(name) } } };
}

function timeoutOf(options) {
  const t = options.timeout == null ? DEFAULT_TIMEOUT_MS : options.timeout;
  if (typeof t !== "number" || !(t > 0) || !Number.isFinite(t)) {
    throw new TypeError(`timeout must be a positive number of milliseconds, got ${t}`);
  }
  return t;
}

// One elicitation at a time per process: a person has one terminal (two elicits reading it at
// once would take each other's keys) and answers one form at a time; a server's concurrent
// requests wait their turn, each still bounded by its own timeout. An aborted request leaves
// the queue at once.
let turns = Promise.resolve();

function resolve(params, options = {}) {
  const mine = turns.then(() => {
    if (options.signal && options.signal.aborted) return Promise.reject(options.signal.reason);
    return resolveNow(params, options);
  });
  turns = mine.then(
    () => undefined,
    () => undefined,
  );
  if (!options.signal) return mine;
  // Waiting for its turn, an aborted request rejects at once (its run, if started, is ended).
  return new Promise((resolvePromise, reject) => {
    const onAbort = () => reject(options.signal.reason);
    options.signal.addEventListener("abort", onAbort, { once: true });
    mine.then(resolvePromise, reject).finally(() => options.signal.removeEventListener("abort", onAbort));
  });
}

// Resolves one elicitation (its params: message, requestedSchema or url...) with elicit and
// returns the ElicitResult: {action: "accept", content}, "decline" or "cancel" (a person who
// dismissed it, or no answer within the timeout). Rejects with ElicitNotFound when there is no
// binary, ElicitError when elicit fails, and the signal's reason when `signal` aborts (elicit
// is ended then).
function resolveNow(params, options) {
  return new Promise((resolvePromise, reject) => {
    let binary;
    let args;
    try {
      if (params === null || typeof params !== "object" || Array.isArray(params)) {
        throw new TypeError("expected an elicitation's params (an object)");
      }
      params = withServer(params, options.server);
      binary = options.binary || findBinary();
      args = elicitArgs(options);
    } catch (e) {
      reject(e);
      return;
    }
    const signal = options.signal;
    if (signal && signal.aborted) {
      reject(signal.reason);
      return;
    }
    // On Windows elicit draws its form on stderr, which must be the console: leave it.
    // Elsewhere it draws on the terminal itself, and stderr is relayed line by line.
    const relay = process.platform !== "win32";
    const env = options.env ? { ...process.env, ...options.env } : process.env;
    let child;
    try {
      child = spawn(binary, args, {
        stdio: ["pipe", "pipe", relay ? "pipe" : "inherit"],
        env,
        windowsHide: true,
      });
    } catch (e) {
      reject(new ElicitError(`cannot run elicit (${binary}): ${e.message}`));
      return;
    }
    const out = [];
    const tail = [];
    let partial = "";
    let settled = false;
    let killTimer = null;

    const end = () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        child.kill("SIGTERM"); // elicit puts the terminal back and closes its page
      } catch (_) {
        return;
      }
      killTimer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch (_) {
          // gone
        }
      }, 3000);
      killTimer.unref();
    };
    const settle = (fn, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(limit);
      if (signal) signal.removeEventListener("abort", onAbort);
      fn(value);
    };
    const stderrText = () => tail.join("");

    const limit = setTimeout(() => {
      end();
      const total = timeoutOf(options) + GRACE_MS;
      settle(
        reject,
        new ElicitError(
          `elicit gave no result within ${total / 1000}s (its own limit was ${timeoutOf(options) / 1000}s) and was ended`,
          null,
          stderrText(),
        ),
      );
    }, timeoutOf(options) + GRACE_MS);
    const onAbort = () => {
      end();
      settle(reject, signal.reason);
    };
    if (signal) signal.addEventListener("abort", onAbort, { once: true });

    child.on("error", (err) => {
      const Kind = err.code === "ENOENT" ? ElicitNotFound : ElicitError;
      settle(reject, new Kind(`cannot run elicit (${binary}): ${err.message}`));
    });
    child.stdout.on("data", (chunk) => out.push(chunk));
    if (relay) {
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (text) => {
        process.stderr.write(text);
        const lines = (partial + text).split(/(?<=\n)/);
        partial = lines[lines.length - 1].endsWith("\n") ? "" : lines.pop();
        tail.push(...lines);
        tail.splice(0, Math.max(0, tail.length - STDERR_TAIL));
      });
    }
    child.stdin.on("error", () => {
      // elicit stopped reading: its exit status says why
    });
    child.stdin.end(JSON.stringify(params));

    child.on("close", (code, sig) => {
      if (killTimer) clearTimeout(killTimer);
      if (partial) tail.push(partial);
      const stderr = stderrText();
      if (code !== 0) {
        const said = stderr.split("\n").map((l) => l.trim()).filter(Boolean).slice(-3);
        const how = sig ? `was ended by ${sig}` : `failed (exit status ${code})`;
        settle(reject, new ElicitError(`elicit ${how}${said.length ? ": " + said.join(" / ") : ""}`, code, stderr));
        return;
      }
      const text = Buffer.concat(out).toString("utf8");
      let result;
      try {
        result = JSON.parse(text);
      } catch (_) {
        result = null;
      }
      if (!result || typeof result !== "object" || !["accept", "decline", "cancel"].includes(result.action)) {
        settle(reject, new ElicitError(`elicit printed no ElicitResult: ${JSON.stringify(text.slice(0, 200))}`, 0, stderr));
        return;
      }
      settle(resolvePromise, result);
    });
  });
}

// A request handler for the TypeScript SDK's client: v1
// `client.setRequestHandler(ElicitRequestSchema, elicitHandler(options))`, v2
// `client.setRequestHandler("elicitation/create", elicitHandler(options))`. It takes the
// request (or its params) and the SDK's extra/context, whose abort signal ends elicit when the
// server withdraws the request. The client must declare the capability:
// `new Client(info, { capabilities: { elicitation: { form: {}, url: {} } } })`.
function elicitHandler(options = {}) {
  timeoutOf(options); // a bad option fails here, not at the first elicitation
  return async function elicit(request, extra) {
    const params = request && request.method && request.params ? request.params : request;
    const signal = (extra && (extra.signal || (extra.mcpReq && extra.mcpReq.signal))) || undefined;
    return resolve(params, { ...options, signal: options.signal || signal });
  };
}

exports.elicitHandler = elicitHandler;
exports.resolve = resolve;
exports.findBinary = findBinary;
exports.ElicitError = ElicitError;
exports.ElicitNotFound = ElicitNotFound;
exports.DEFAULT_TIMEOUT_MS = DEFAULT_TIMEOUT_MS;
