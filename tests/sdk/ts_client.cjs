// A TypeScript SDK (v1, @modelcontextprotocol/sdk from .deps/node, pinned by
// scripts/servers/package-lock.json) client with elicit's one-line handler, as a user writes
// it; run by tests/it/sdk_resolvers.rs with the freshly built binary in ELICIT_BINARY.
//
//   node ts_client.cjs MODULE TOOL ARGS_JSON OPTIONS_JSON -- SERVER_COMMAND...
//   node ts_client.cjs MODULE TOOL ARGS_JSON OPTIONS_JSON -- http://HOST:PORT/mcp
//
// A URL for the server is reached over Streamable HTTP.
// MODULE   the elicit-mcp package to load (the source tree's npm/elicit-mcp, or an installed one)
// OPTIONS  the options of elicitHandler(...) (`null`: none)
//
// Prints one line of JSON on stdout: {"sdk": the SDK's version, "content": [the result's text
// blocks], "isError": ..., "tools": the names listTools() gave},
// or {"error": "<name>: <message>"} when the call failed.
"use strict";

const path = require("path");
const { createRequire } = require("module");

const root = path.resolve(__dirname, "../..");
const sdk = createRequire(path.join(root, ".deps/node/package.json"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema } = sdk("@modelcontextprotocol/sdk/types.js");
// Its own package.json (the SDK's exports map "./package.json" to its dist's).
const sdkVersion = JSON.parse(
  require("fs").readFileSync(path.join(root, ".deps/node/node_modules/@modelcontextprotocol/sdk/package.json"), "utf8"),
).version;

async function main() {
  const argv = process.argv.slice(2);
  const split = argv.indexOf("--");
  const [modulePath, tool, argsJson, optionsJson] = argv.slice(0, split);
  const [command, ...serverArgs] = argv.slice(split + 1);
  const { elicitHandler } = require(path.resolve(modulePath));
  const options = JSON.parse(optionsJson);

  const client = new Client(
    { name: "sdk-resolver-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {}, url: {} } } },
  );
  client.setRequestHandler(ElicitRequestSchema, elicitHandler(options || undefined));
  let out;
  try {
    const isUrl = /^https?:\/\//.test(command) && serverArgs.length === 0;
    await client.connect(
      isUrl
        ? new StreamableHTTPClientTransport(new URL(command))
        : new StdioClientTransport({ command, args: serverArgs, stderr: "ignore" }),
    );
    const tools = (await client.listTools()).tools.map((t) => t.name);
    const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJson) }, undefined, {
      timeout: 120000,
    });
    out = { sdk: sdkVersion, content: result.content.map((b) => b.text), isError: Boolean(result.isError), tools };
  } catch (e) {
    out = { error: `${e.name}: ${e.message}` };
  } finally {
    await client.close().catch(() => {});
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

main();
