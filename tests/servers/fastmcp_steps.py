"""A FastMCP (PyPI `fastmcp`, pinned in .deps) server whose one tool asks three times,
for `elicit test --explore`. Run: .deps/venv/bin/python tests/servers/fastmcp_steps.py

Tool `book`:
  1. "Who is travelling?"  name (string, 1..20 characters), seats (integer 1..4)
  2. "Which class?"        cabin: economy | business | first
  3. "Confirm the booking" confirm (boolean), note (string up to 40, default "")
It returns one text block of compact JSON: {"step": N, "action": ..., ...}.

Its bug, on purpose: a decline at step 2 crashes the server (the process exits),
which `elicit test --explore` must report as a crash.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Literal

from fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

server = FastMCP("fastmcp-steps")


class Traveller(BaseModel):
    name: str = Field(min_length=1, max_length=20)
    seats: int = Field(ge=1, le=4)


class Cabin(BaseModel):
    cabin: Literal["economy", "business", "first"]


class Confirm(BaseModel):
    confirm: bool
    note: str = Field(default="", max_length=40)


def out(**kw) -> str:
    return json.dumps(kw, separators=(",", ":"))


@server.tool
async def book(ctx: Context, trip: str = "LIS-OSL") -> str:
    """Book a trip in three questions."""
    who = await ctx.elicit("Who is travelling?", Traveller)
    if who.action != "accept":
        return out(step=1, action=who.action)
    cabin = await ctx.elicit("Which class?", Cabin)
    if cabin.action == "decline":
        sys.stderr.write("fastmcp_steps: a decline at step 2 is not handled: exiting\n")
        sys.stderr.flush()
        os._exit(3)
    if cabin.action != "accept":
        return out(step=2, action=cabin.action)
    ok = await ctx.elicit("Confirm the booking", Confirm)
    if ok.action != "accept":
        return out(step=3, action=ok.action)
    return out(
        step=3,
        action="accept",
        trip=trip,
        name=who.data.name,
        seats=who.data.seats,
        cabin=cabin.data.cabin,
        confirm=ok.data.confirm,
        note=ok.data.note,
    )


if __name__ == "__main__":
    server.run("stdio", show_banner=False)
