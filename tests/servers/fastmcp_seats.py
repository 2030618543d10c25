"""A FastMCP (PyPI `fastmcp` 4.2.3) server whose form and failures change with its environment.

Run with the pinned venv:  .deps/venv/bin/python tests/servers/fastmcp_seats.py  (stdio)

Tools:
  reserve  ctx.elicit for {seats: int, 1 <= seats <= SEATS_MAX} (env SEATS_MAX, default 5),
           then returns "reserved N"; with env SEATS_LOCKED set it raises a ValueError after
           the answer, which FastMCP logs as a boxed (rich) traceback on stderr.
"""

from __future__ import annotations

import os

from fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

server = FastMCP("fastmcp-seats")


def _locked(account: int) -> None:
    raise ValueError(f"the ledger is locked for account {account}")


@server.tool
async def reserve(ctx: Context) -> str:
    """Ask how many seats, then reserve them."""
    most = int(os.environ.get("SEATS_MAX", "5"))

    class Seats(BaseModel):
        seats: int = Field(ge=1, le=most, description="How many seats")

    result = await ctx.elicit("How many seats?", response_type=Seats)
    if result.action != "accept":
        return result.action
    if os.environ.get("SEATS_LOCKED"):
        _locked(7)
    return f"reserved {result.data.seats}"


if __name__ == "__main__":
    server.run(show_banner=False)
