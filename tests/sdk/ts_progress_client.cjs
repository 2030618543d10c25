// A TypeScript SDK (v1, @modelcontextprotocol/sdk from .deps/node) client that declares no
// elicitation and calls one tool with a short request timeout that progress resets, as a
// desktop app that sets `resetTimeoutOnProgress` does; run by tests/it/keepalive.rs, with the
// server command being `elicit proxy ...` (elicit's stderr passes through to this one's).
//
//   node ts_progress_client.cjs TOOL ARGS_JSON TIMEOUT_MS -- SERVER_COMMAND...
//
// Prints one line of JSON on stdout: {"content": [the result's text blocks], "progress": [each
// progress value heard, in order], "errors": [what the SDK reported meanwhile]}, or
// {"error": "<name>: <message>", ...} when the call failed.
"use strict";

const path = require("path");
const { createRequire } = require("module");

const root = path.resolve(__dirname, "../..");
const sdk = createRequire(path.join(root, ".deps/node/package.json"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");

async function main() {
  const argv = process.argv.slice(2);
  const split = argv.indexOf("--");
  const [tool, argsJson, timeoutMs] = argv.slice(0, split);
  const [command, ...serverArgs] = argv.slice(split + 1);
  const client = new Client({ name: "keepalive-test", version: "1.0.0" }, { capabilities: {} });
  const progress = [];
  const errors = [];
  // A progress notification for a request already answered is reported here.
  client.onerror = (e) => errors.push(`${e.name}: ${e.message}`);
  let out;
  try {
    await client.connect(new StdioClientTransport({ command, args: serverArgs, stderr: "inherit" }));
    const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJson) }, undefined, {
      timeout: Number(timeoutMs),
      resetTimeoutOnProgress: true,
      onprogress: (p) => progress.push(p.progress),
    });
    out = { content: result.content.map((b) => b.text), progress, errors };
  } catch (e) {
    out = { error: `${e.name}: ${e.message}`, progress, errors };
  } finally {
    await client.close().catch(() => {});
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main();
