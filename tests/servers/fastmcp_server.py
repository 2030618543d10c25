"""A FastMCP (PyPI `fastmcp` 4.2.3) test server for elicit, written as a server author would.

Run with the pinned venv:  .deps/venv/bin/python tests/servers/fastmcp_server.py [PORT]
(no PORT: stdio; a PORT: Streamable HTTP on 127.0.0.1:PORT at /mcp).

Every tool returns one text block of compact JSON, so a test can compare:
  {"action": "accept"|"decline"|"cancel", "content": ... | null}

Tools:
  form_ctx      ctx.elicit with a dataclass (name, age, color): a form, server-initiated,
                so it works only over the initialize handshake. On a 2026-07-28 connection
                FastMCP fails the tool before sending anything.
  pick_color    ctx.elicit with a list of strings: a single choice.
  connect_url   ctx.session.elicit_url: URL mode, server-initiated.
  always_decline ctx.elicit, then reports the action; a decline reaches the tool as a result.
  guard_form    the 2026-07-28 guard pattern: returns an InputRequiredResult first and reads
                ctx.input_responses on the retry (works on 2026-07-28 connections only).
  charge        a side effect, then a failure: appends "charged AMOUNT" to the file LEDGER (an
                argument), then raises ToolError. A client that calls it twice charges twice.
  charge_then_ask  appends "charged AMOUNT" to LEDGER, then asks with ctx.elicit (handshake only).
  guard_charge  the guard pattern asking for a confirmation, then the charge and a ToolError.
  two_questions ctx.elicit twice, one after the other (a name, then a colour; handshake only):
                {"name": {action, content}, "color": {action, content}}.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any, Literal

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult
from pydantic import BaseModel

server = FastMCP("fastmcp-elicit-test")


@dataclass
class Profile:
    name: str
    age: int
    color: Literal["red", "green", "blue"]


def _echo(action: str, content: Any) -> str:
    return json.dumps({"action": action, "content": content}, separators=(",", ":"))


@server.tool
async def form_ctx(ctx: Context) -> str:
    """Ask for a name, an age and a colour (form mode)."""
    result = await ctx.elicit("Tell us about yourself", Profile)
    if result.action == "accept":
        d = result.data
        return _echo("accept", {"name": d.name, "age": d.age, "color": d.color})
    return _echo(result.action, None)


@server.tool
async def pick_color(ctx: Context) -> str:
    """Pick one colour from a list."""
    result = await ctx.elicit("Pick a colour", ["red", "green", "blue"])
    if result.action == "accept":
        return _echo("accept", result.data)
    return _echo(result.action, None)


@server.tool
async def connect_url(ctx: Context) -> str:
    """Ask the user to open a URL (URL mode)."""
    result = await ctx.session.elicit_url(
        message="Connect your Example account",
        url="https://example.com/connect?session=abc",
        elicitation_id="el-fast-1",
        related_request_id=ctx.request_id,
    )
    return _echo(result.action, None)


@server.tool
async def always_decline(ctx: Context) -> str:
    """Ask for confirmation; the answer comes back as the result."""
    result = await ctx.elicit("Really go ahead?", bool)
    if result.action == "accept":
        return _echo("accept", result.data)
    return _echo(result.action, None)


@server.tool
async def guard_form(ctx: Context) -> str | InputRequiredResult:
    """The 2026-07-28 guard pattern: ask by returning input_required."""
    answer = (ctx.input_responses or {}).get("profile")
    if answer is None:
        return InputRequiredResult(
            input_requests={
                "profile": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message="Your name, please",
                        requested_schema={
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                            "required": ["name"],
                        },
                    )
                )
            },
            request_state="guard-1",
        )
    if not isinstance(answer, ElicitResult):
        answer = ElicitResult.model_validate(answer)
    return _echo(answer.action, answer.content)


def _charge(ledger: str, amount: int) -> None:
    with open(ledger, "a", encoding="utf-8") as f:
        f.write(f"charged {amount}\n")


@server.tool
async def charge(ledger: str, amount: int = 5) -> str:
    """Charge a card, then fail."""
    _charge(ledger, amount)
    raise ToolError("the card was declined after the charge")


@server.tool
async def charge_then_ask(ctx: Context, ledger: str, amount: int = 5) -> str:
    """Charge a card, then ask for a confirmation."""
    _charge(ledger, amount)
    result = await ctx.elicit("Keep the receipt?", bool)
    return _echo(result.action, result.data if result.action == "accept" else None)


@server.tool
async def guard_charge(ctx: Context, ledger: str, amount: int = 5) -> str | InputRequiredResult:
    """Ask first (input_required), then charge and fail."""
    answer = (ctx.input_responses or {}).get("confirm")
    if answer is None:
        return InputRequiredResult(
            input_requests={
                "confirm": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message=f"Charge {amount}?",
                        requested_schema={
                            "type": "object",
                            "properties": {"ok": {"type": "boolean"}},
                            "required": ["ok"],
                        },
                    )
                )
            },
            request_state="charge-1",
        )
    _charge(ledger, amount)
    raise ToolError("the card was declined after the charge")


class Name(BaseModel):
    name: str


@server.tool
async def two_questions(ctx: Context) -> str:
    """Ask for a name, then for a colour: two elicitations in one call."""
    answers = {}
    first = await ctx.elicit("Your name, please", Name)
    answers["name"] = {"action": first.action, "content": first.data.name if first.action == "accept" else None}
    second = await ctx.elicit("Pick a colour", ["red", "green", "blue"])
    answers["color"] = {"action": second.action, "content": second.data if second.action == "accept" else None}
    return json.dumps(answers, separators=(",", ":"))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), show_banner=False)
    else:
        server.run("stdio", show_banner=False)
