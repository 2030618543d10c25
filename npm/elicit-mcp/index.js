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
// A handler keeps one `elicit --lines` for its client, started at the first elicitation (again
// if it died), so the browser page opened for the first shows the next ones on the same tab; it
// ends with Node. An aborted request ends it (`--lines` cannot withdraw the one elicitation it
// asks): the next elicitation starts another. `resolve()` runs one elicit per elicitation.
"use strict";

const { spawn } = require("child_process");
const { findBinary: findInstalled, missingMessage } = require("./lib/find-binary.js");

// How long a person may take unless told (ms); past it elicit answers cancel.
const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;
// What elicit may take past its own --timeout to print the cancel and exit before it is ended.
const GRACE_MS = 15 * 1000;
// The last lines of elicit's stderr kept for an error's message.
const STDERR_TAIL = 20;
// The longest line read from a handler's elicit (an ElicitResult).
const LINE_LIMIT = 16 * 1024 * 1024;

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

// The command line that resolves one elicitation read from stdin (`lines`: one per line).
function elicitArgs(options, lines = false) {
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
  if (lines) args.push("--lines");
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
  return inTurn(() => resolveNow(params, options), options);
}

// Runs `start` when the elicitations before it are done.
function inTurn(start, options) {
  const mine = turns.then(() => {
    if (options.signal && options.signal.aborted) return Promise.reject(options.signal.reason);
    return start();
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
    const relay = process.platform !== "win32";
    let child;
    try {
      child = startElicit(binary, args, options);
    } catch (e) {
      reject(e);
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

// Starts elicit with piped stdin and stdout: every elicit the package runs starts here. On
// Windows elicit draws its form on stderr, which must be the console: it is left alone;
// elsewhere elicit draws on the terminal itself, and stderr is piped to be relayed.
function startElicit(binary, args, options) {
  const relay = process.platform !== "win32";
  const env = options.env ? { ...process.env, ...options.env } : process.env;
  try {
    return spawn(binary, args, { stdio: ["pipe", "pipe", relay ? "pipe" : "inherit"], env, windowsHide: true });
  } catch (e) {
    throw new ElicitError(`cannot run elicit (${binary}): ${e.message}`);
  }
}

// Ends a running elicit: SIGTERM first (it puts the terminal back and closes its page), then
// SIGKILL if it lingers.
function endElicit(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  try {
    child.kill("SIGTERM");
  } catch (_) {
    return;
  }
  setTimeout(() => {
    try {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    } catch (_) {
      // gone
    }
  }, 3000).unref();
}

// The handlers' long-lived elicits, ended when Node exits.
const living = new Set();
process.on("exit", () => {
  for (const child of living) {
    try {
      child.kill("SIGKILL");
    } catch (_) {
      // gone
    }
  }
});

// One `elicit --lines` for a handler's client: started at the first elicitation (again if it
// died), asked one elicitation at a time as a JSON-RPC request line, each answer matched to its
// request by id. Neither it nor its pipes keep Node running.
class LinesRun {
  constructor(options) {
    this.options = options;
    this.child = null;
    this.asked = 0;
    this.waiting = null;
    this.tail = [];
  }

  running() {
    const c = this.child;
    if (c && c.exitCode === null && c.signalCode === null) return c;
    const binary = this.options.binary || findBinary();
    const child = startElicit(binary, elicitArgs(this.options, true), this.options);
    this.child = child;
    const tail = (this.tail = []);
    let buffer = "";
    let partial = "";
    child.on("error", (err) => {
      const Kind = err.code === "ENOENT" ? ElicitNotFound : ElicitError;
      this.fail(new Kind(`cannot run elicit (${binary}): ${err.message}`));
    });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text) => {
      buffer += text;
      let at;
      while ((at = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 1);
        this.reply(line);
      }
      if (buffer.length > LINE_LIMIT) {
        buffer = "";
        this.end();
        this.fail(new ElicitError(`elicit printed a result over ${LINE_LIMIT} bytes`));
      }
    });
    if (child.stderr) {
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
    living.add(child);
    child.on("close", (code, sig) => {
      living.delete(child);
      if (this.child === child) this.child = null;
      if (partial) tail.push(partial);
      const stderr = tail.join("");
      const said = stderr.split("\n").map((l) => l.trim()).filter(Boolean).slice(-3);
      const how = sig ? `was ended by ${sig}` : `failed (exit status ${code})`;
      this.fail(new ElicitError(`elicit ${how}${said.length ? ": " + said.join(" / ") : ""}`, code, stderr));
    });
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      if (stream && typeof stream.unref === "function") stream.unref();
    }
    return child;
  }

  ask(params, signal) {
    return new Promise((resolvePromise, reject) => {
      let child;
      try {
        child = this.running();
      } catch (e) {
        reject(e);
        return;
      }
      this.asked += 1;
      const id = `elicit-mcp-${this.asked}`;
      const total = timeoutOf(this.options) + GRACE_MS;
      const settle = (fn, value) => {
        if (this.waiting && this.waiting.id === id) this.waiting = null;
        clearTimeout(limit);
        if (signal) signal.removeEventListener("abort", onAbort);
        fn(value);
      };
      const limit = setTimeout(() => {
        this.end();
        settle(
          reject,
          new ElicitError(
            `elicit gave no result within ${total / 1000}s (its own limit was ${timeoutOf(this.options) / 1000}s) and was ended`,
            null,
            this.tail.join(""),
          ),
        );
      }, total);
      // Aborted: --lines cannot withdraw the one elicitation it asks, so this elicit ends and
      // the next elicitation starts another.
      const onAbort = () => {
        this.end();
        settle(reject, signal.reason);
      };
      if (signal) signal.addEventListener("abort", onAbort, { once: true });
      this.waiting = {
        id,
        resolve: (v) => settle(resolvePromise, v),
        reject: (e) => settle(reject, e),
      };
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method: "elicitation/create", params }) + "\n");
    });
  }

  // One line of elicit's stdout: the reply to the elicitation asked.
  reply(line) {
    const waiting = this.waiting;
    if (!waiting) return;
    let message = null;
    try {
      message = JSON.parse(line);
    } catch (_) {
      message = null;
    }
    const stderr = this.tail.join("");
    if (!message || typeof message !== "object" || message.id !== waiting.id) {
      this.end();
      waiting.reject(new ElicitError(`elicit printed no reply to elicitation ${waiting.id}: ${JSON.stringify(line.slice(0, 200))}`, null, stderr));
      return;
    }
    if (message.error && typeof message.error === "object") {
      const first = String(message.error.message || "no reason given").split("\n")[0];
      waiting.reject(new ElicitError(`elicit failed: ${first}`, null, stderr));
      return;
    }
    const result = message.result;
    if (!result || typeof result !== "object" || !["accept", "decline", "cancel"].includes(result.action)) {
      waiting.reject(new ElicitError(`elicit printed no ElicitResult: ${JSON.stringify(line.slice(0, 200))}`, null, stderr));
      return;
    }
    waiting.resolve(result);
  }

  fail(error) {
    const waiting = this.waiting;
    if (waiting) waiting.reject(error);
  }

  end() {
    const child = this.child;
    this.child = null;
    endElicit(child);
  }
}

// A request handler for the TypeScript SDK's client: v1
// `client.setRequestHandler(ElicitRequestSchema, elicitHandler(options))`, v2
// `client.setRequestHandler("elicitation/create", elicitHandler(options))`. It takes the
// request (or its params) and the SDK's extra/context, whose abort signal ends elicit when the
// server withdraws the request. The client must declare the capability:
// `new Client(info, { capabilities: { elicitation: { form: {}, url: {} } } })`.
function elicitHandler(options = {}) {
  timeoutOf(options); // a bad option fails here, not at the first elicitation
  const run = new LinesRun(options);
  return async function elicit(request, extra) {
    const params = request && request.method && request.params ? request.params : request;
    const signal = options.signal || (extra && (extra.signal || (extra.mcpReq && extra.mcpReq.signal))) || undefined;
    if (params === null || typeof params !== "object" || Array.isArray(params)) {
      throw new TypeError("expected an elicitation's params (an object)");
    }
    return inTurn(() => run.ask(withServer(params, options.server), signal), { signal });
  };
}

exports.elicitHandler = elicitHandler;
exports.resolve = resolve;
exports.findBinary = findBinary;
exports.ElicitError = ElicitError;
exports.ElicitNotFound = ElicitNotFound;
exports.DEFAULT_TIMEOUT_MS = DEFAULT_TIMEOUT_MS;
