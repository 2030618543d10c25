"""A Python MCP client with elicit's one-line resolver, as a user writes it; run by
tests/it/sdk_resolvers.rs with the pinned venv (.deps/venv: mcp 2.3.0, fastmcp 4.2.3) and
PYTHONPATH=python, so `elicit_mcp` is the source tree's module.

    python_client.py SDK TOOL ARGS_JSON OPTIONS_JSON -- SERVER_COMMAND...
    python_client.py SDK TOOL ARGS_JSON OPTIONS_JSON -- http://HOST:PORT/mcp

SDK      `mcp` (mcp.client.Client, elicitation_callback=), `mcp-session` (ClientSession over
         stdio_client, elicitation_callback=) or `fastmcp`
         (fastmcp.Client, elicitation_handler=); `mcp-legacy` and `fastmcp-legacy` pin the
         handshake era (mode="legacy"), where a server's ctx.elicit sends elicitation/create
TOOL     the tool to call, with ARGS_JSON as its arguments
OPTIONS  `null` for the module's own `elicitation_callback`/`elicitation_handler`, else the
         keyword arguments of `elicit_mcp.Elicit(...)`

A URL for the server (`mcp` only) is reached over Streamable HTTP. CLIENT_ENV, when set, is a
JSON object of variables set in the client's environment first (the test harness clears
ELICIT_UI and ELICIT_BROWSER from the environment it starts the client with).

Prints one line of JSON on stdout: {"sdk": ..., "content": [the result's text blocks],
"isError": ...} (with `mcp`, also "tools": the names `list_tools()` gave and "protocol": the
version negotiated), or {"error": "<type>: <message>"} when the call raised (an exception
group's innermost exceptions).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

import elicit_mcp


def innermost(e: BaseException) -> list[BaseException]:
    """The exceptions inside an exception group (anyio wraps a failure in a task group)."""
    if isinstance(e, BaseExceptionGroup):
        return [x for sub in e.exceptions for x in innermost(sub)]
    return [e]


async def main() -> None:
    os.environ.update(json.loads(os.environ.pop("CLIENT_ENV", "{}")))
    argv = sys.argv[1:]
    split = argv.index("--")
    sdk, tool, args_json, options_json = argv[:split]
    command, *server_args = argv[split + 1 :]
    options = json.loads(options_json)
    resolver = elicit_mcp.Elicit(**options) if options is not None else None
    try:
        if sdk == "mcp-session":
            # The low-level ClientSession over stdio_client, as older code and the SDK's
            # examples write it.
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client

            callback = resolver.callback if resolver else elicit_mcp.elicitation_callback
            params = StdioServerParameters(command=command, args=server_args)
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write, elicitation_callback=callback) as session:
                    await session.initialize()
                    result = await session.call_tool(tool, json.loads(args_json))
            texts = [getattr(b, "text", None) for b in result.content]
            out = {"sdk": "mcp", "content": texts, "isError": bool(result.is_error)}
        elif sdk.startswith("mcp"):
            from mcp import StdioServerParameters
            from mcp.client import Client

            callback = resolver.callback if resolver else elicit_mcp.elicitation_callback
            is_url = command.startswith(("http://", "https://")) and not server_args
            client = Client(
                command if is_url else StdioServerParameters(command=command, args=server_args),
                elicitation_callback=callback,
                mode="legacy" if sdk == "mcp-legacy" else "auto",
            )
            async with client:
                tools = [t.name for t in (await client.list_tools()).tools]
                result = await client.call_tool(tool, json.loads(args_json))
                protocol = client.protocol_version
            texts = [getattr(b, "text", None) for b in result.content]
            out = {"sdk": "mcp", "content": texts, "isError": bool(result.is_error), "tools": tools,
                   "protocol": protocol}
        elif sdk.startswith("fastmcp"):
            from fastmcp import Client
            from fastmcp.client.transports import StdioTransport

            handler = resolver.handler if resolver else elicit_mcp.elicitation_handler
            client = Client(
                StdioTransport(command, server_args),
                elicitation_handler=handler,
                mode="legacy" if sdk == "fastmcp-legacy" else "auto",
            )
            async with client:
                result = await client.call_tool(tool, json.loads(args_json), raise_on_error=False)
            texts = [getattr(b, "text", None) for b in result.content]
            out = {"sdk": "fastmcp", "content": texts, "isError": bool(result.is_error)}
        else:
            raise SystemExit("unknown SDK %r" % sdk)
    except Exception as e:  # the test compares what the user would see
        out = {"error": "; ".join("%s: %s" % (type(x).__name__, x) for x in innermost(e))}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
