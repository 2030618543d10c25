// A TypeScript SDK (v1, @modelcontextprotocol/sdk from .deps/node) server over Streamable HTTP
// on 127.0.0.1, as its users write one: `connect_account` asks a URL elicitation and, on
// accept, sends notifications/elicitation/complete with the SDK's notifier, which (with no
// related request) goes out on the standalone GET stream, not the tool call's.
//
//   node tests/servers/ts_url_complete_server.cjs PORT
"use strict";

const path = require("path");
const http = require("http");
const { createRequire } = require("module");

const root = path.resolve(__dirname, "../..");
const sdk = createRequire(path.join(root, ".deps/node/package.json"));
const { McpServer } = sdk("@modelcontextprotocol/sdk/server/mcp.js");
const { StreamableHTTPServerTransport } = sdk("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { randomUUID } = require("crypto");

function newServer() {
  const server = new McpServer({ name: "ts-url-complete", version: "1.0.0" });
  server.registerTool("connect_account", { description: "Open a URL to connect" }, async () => {
    const id = "ts-el-1";
    const result = await server.server.elicitInput({
      mode: "url",
      message: "Connect your account",
      url: "https://example.com/connect",
      elicitationId: id,
    });
    if (result.action === "accept") {
      await server.server.createElicitationCompletionNotifier(id)();
    }
    return { content: [{ type: "text", text: result.action }] };
  });
  return server;
}

const transports = {};
http
  .createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const parsed = body ? JSON.parse(body) : undefined;
    const sid = req.headers["mcp-session-id"];
    let transport = sid && transports[sid];
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports[id] = transport;
        },
      });
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res, parsed);
  })
  .listen(Number(process.argv[2]), "127.0.0.1");
