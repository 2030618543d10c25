"""A FastMCP server with the 2026-07-28 tasks extension (PyPI `fastmcp-tasks` 4.1.4, SEP-2663),
written as a server author would: its eliciting tools run as tasks, whose questions the client
reads from `tasks/get` (status `input_required`, `inputRequests`) and answers with `tasks/update`
(`inputResponses`).

Run with the pinned venv:  .deps/venv-tasks/bin/python tests/servers/fastmcp_tasks_server.py
(stdio). Docket runs in-process on its `memory://` backend: no Redis server.

Every tool returns one text block of compact JSON, so a test can compare:
  {"action": "accept"|"decline"|"cancel", "content": ... | null}

Tools (run as a task when the client declares the extension):
  task_form     the guard pattern inside a task: asks for a name (and an age), then reports.
  task_steps    two questions in turn (a name, then a colour): two input_required rounds.
  task_only     asks for a name, and runs only as a task (mode "required"): a client that does
                not declare the extension gets -32021 (missing required client capability).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp_types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

server = FastMCP("fastmcp-tasks-test")
server.add_extension(TasksExtension(url="memory://"))


# Polled every 100 ms rather than FastMCP's 5 s, so a test does not wait.
_AS_TASK = TaskConfig(mode="optional", poll_interval=timedelta(milliseconds=100))
_ONLY_AS_TASK = TaskConfig(mode="required", poll_interval=timedelta(milliseconds=100))


def _echo(action: str, content: Any) -> str:
    return json.dumps({"action": action, "content": content}, separators=(",", ":"))


def _ask(
    key: str, message: str, properties: dict, required: list[str], state: str | None = None
) -> InputRequiredResult:
    return InputRequiredResult(
        request_state=state,
        input_requests={
            key: ElicitRequest(
                params=ElicitRequestFormParams(
                    message=message,
                    requested_schema={
                        "type": "object",
                        "properties": properties,
                        "required": required,
                    },
                )
            )
        },
    )


def _answer(ctx: Context, key: str) -> ElicitResult | None:
    answer = (ctx.input_responses or {}).get(key)
    if answer is None or isinstance(answer, ElicitResult):
        return answer
    return ElicitResult.model_validate(answer)


@server.tool(task=_AS_TASK)
async def task_form(ctx: Context) -> str | InputRequiredResult:
    """Ask for a name and an age, as a task."""
    answer = _answer(ctx, "profile")
    if answer is None:
        return _ask(
            "profile",
            "Your name and age, please",
            {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
            ["name"],
        )
    return _echo(answer.action, answer.content)


@server.tool(task=_AS_TASK)
async def task_steps(ctx: Context) -> str | InputRequiredResult:
    """Ask for a name, then a colour, as a task."""
    # Each leg sees only its own answers: the name asked in the first leg
    # travels to the second in the request state.
    if ctx.request_state is None:
        name = _answer(ctx, "name")
        if name is None:
            return _ask("name", "Your name?", {"name": {"type": "string"}}, ["name"])
        if name.action != "accept":
            return _echo(name.action, None)
        return _ask(
            "color",
            f"Hello {name.content['name']}: your colour?",
            {"color": {"type": "string", "enum": ["red", "green", "blue"]}},
            ["color"],
            state=name.content["name"],
        )
    color = _answer(ctx, "color")
    if color is None or color.action != "accept":
        return _echo(color.action if color else "cancel", None)
    return _echo("accept", {"name": ctx.request_state, "color": color.content["color"]})


@server.tool(task=_ONLY_AS_TASK)
async def task_only(ctx: Context) -> str | InputRequiredResult:
    """Ask for a name, only ever as a task."""
    answer = _answer(ctx, "name")
    if answer is None:
        return _ask("name", "Your name?", {"name": {"type": "string"}}, ["name"])
    return _echo(answer.action, answer.content)


if __name__ == "__main__":
    server.run("stdio", show_banner=False)
