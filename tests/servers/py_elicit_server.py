"""A stdio MCP test server for elicit, built on PyPI `mcp` 2.3.0 (MCPServer, formerly FastMCP).

Run with the pinned venv:  .deps/venv/bin/python tests/servers/py_elicit_server.py
(install it with scripts/install-test-servers).

Every tool returns one text content block holding compact JSON, so a test can compare:
  {"action": "accept"|"decline"|"cancel", "content": {...} | null}
  (connect_account: {"action": ..., "elicitationId": ...}).

Tools:
  ask_profile      form mode via the SDK's declarative resolver (Resolve + Elicit); works on a
                   handshake connection (server-to-client elicitation/create) and on a 2026-07-28
                   connection (tools/call -> resultType "input_required"). Content is what the
                   SDK validated (pydantic model dump, defaults filled in); invalid content ->
                   isError result.
  ask_profile_raw  same schema, sent with the low-level session.elicit_form: echoes the raw
                   ElicitResult exactly as received, no validation (handshake only).
  confirm_delete   form mode via ctx.elicit (imperative API, handshake only); shows a decline
                   or cancel reaching the tool as a normal result.
  connect_account  URL mode: ctx.elicit_url on a handshake connection (then sends
                   notifications/elicitation/complete on accept); a hand-built
                   InputRequiredResult on a 2026-07-28 connection.
  require_url      raises UrlElicitationRequiredError -> JSON-RPC error -32042.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp.server.elicitation import ElicitationResult, render_elicitation_schema
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import ElicitRequest, ElicitRequestURLParams, ElicitResult, InputRequiredResult
from pydantic import BaseModel, Field

server = MCPServer("elicit-py-test-server")

DEFAULT_URL = "https://example.com/connect?session=abc"
DEFAULT_MESSAGE = "Connect your Example account"
DEFAULT_ELICITATION_ID = "el-123"


class Profile(BaseModel):
    name: str = Field(description="Your name", min_length=1, max_length=50)
    age: int = Field(description="Your age in years", ge=0, le=150)
    subscribe: bool = Field(default=False, description="Subscribe to the newsletter?")
    color: Literal["red", "green", "blue"] = Field(description="Favourite colour")


class Confirm(BaseModel):
    confirm: bool = Field(description="Really delete it?")


def _echo(action: str, content: Any) -> str:
    return json.dumps({"action": action, "content": content}, separators=(",", ":"))


def ask_profile_question() -> Elicit[Profile]:
    return Elicit("Tell us about yourself", Profile)


@server.tool(structured_output=False)
def ask_profile(
    profile: Annotated[ElicitationResult[Profile], Resolve(ask_profile_question)],
) -> str:
    """Ask for a profile (form mode) and echo the outcome as JSON."""
    if profile.action == "accept":
        return _echo("accept", profile.data.model_dump(mode="json"))
    return _echo(profile.action, None)


@server.tool(structured_output=False)
async def ask_profile_raw(ctx: Context) -> str:
    """Ask for a profile (form mode) and echo the raw ElicitResult, unvalidated."""
    result = await ctx.request_context.session.elicit_form(
        message="Tell us about yourself",
        requested_schema=render_elicitation_schema(Profile),
        related_request_id=ctx.request_context.request_id,
    )
    return _echo(result.action, result.content)


@server.tool(structured_output=False)
async def confirm_delete(item: str = "report.txt", *, ctx: Context) -> str:
    """Ask for confirmation before deleting; a decline reaches the tool as a normal result."""
    result = await ctx.elicit(f"Delete {item}?", Confirm)
    if result.action == "accept":
        return _echo("accept", result.data.model_dump(mode="json"))
    return _echo(result.action, None)


@server.tool(structured_output=False)
async def connect_account(
    url: str = DEFAULT_URL,
    message: str = DEFAULT_MESSAGE,
    elicitation_id: str = DEFAULT_ELICITATION_ID,
    *,
    ctx: Context,
) -> str | InputRequiredResult:
    """Ask the user to open a URL (URL mode) and echo the action as JSON."""
    version = ctx.protocol_version or ""
    if version >= "2026-07-28":
        responses = ctx.input_responses or {}
        answer = responses.get("connect")
        if answer is None:
            return InputRequiredResult(
                input_requests={
                    "connect": ElicitRequest(params=ElicitRequestURLParams(message=message, url=url))
                },
                request_state="connect-1",
            )
        action = answer.action if isinstance(answer, ElicitResult) else ElicitResult.model_validate(answer).action
        return json.dumps({"action": action, "elicitationId": None}, separators=(",", ":"))

    result = await ctx.elicit_url(message=message, url=url, elicitation_id=elicitation_id)
    if result.action == "accept":
        await ctx.request_context.session.send_elicit_complete(
            elicitation_id, related_request_id=ctx.request_context.request_id
        )
    return json.dumps({"action": result.action, "elicitationId": elicitation_id}, separators=(",", ":"))


@server.tool(structured_output=False)
async def require_url(url: str = DEFAULT_URL, elicitation_id: str = DEFAULT_ELICITATION_ID) -> str:
    """Fail with JSON-RPC error -32042 (URL elicitation required)."""
    raise UrlElicitationRequiredError(
        [ElicitRequestURLParams(message=DEFAULT_MESSAGE, url=url, elicitation_id=elicitation_id)]
    )


if __name__ == "__main__":
    server.run("stdio")
