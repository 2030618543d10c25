"""The elicit_mcp module's edges, run by tests/it/sdk_resolvers.rs with PYTHONPATH=python and
ELICIT_BINARY set to the freshly built binary. Prints one JSON object of what happened; the
test asserts on it.

    python_module_checks.py WORKDIR
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
import time

import elicit_mcp

FORM = {
    "message": "Region?",
    "requestedSchema": {
        "type": "object",
        "properties": {"region": {"type": "string"}},
        "required": ["region"],
    },
}


class Recorder(io.TextIOBase):
    """sys.stderr, recorded: what the module relays from elicit."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)


async def wait_until(what: str, cond, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while not cond():
        if time.monotonic() > deadline:
            raise SystemExit("waited in vain for " + what)
        await asyncio.sleep(0.02)


def alive(pid: int) -> bool:
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except FileNotFoundError:
        return False


async def main() -> None:
    work = sys.argv[1]
    real = os.environ["ELICIT_BINARY"]
    out = {}

    # Scripted answers, through the module-level function.
    out["answered"] = await elicit_mcp.resolve(FORM, answers=["region=apac"])

    # A bad answer: elicit's own words in the exception.
    try:
        await elicit_mcp.resolve(FORM, answers=["nosuchfield=1"], no_input=True)
        out["bad_answer"] = None
    except elicit_mcp.ElicitError as e:
        out["bad_answer"] = {"type": type(e).__name__, "message": str(e), "returncode": e.returncode}

    # No binary: ELICIT_BINARY wrong, then an explicit binary that is not there.
    os.environ["ELICIT_BINARY"] = os.path.join(work, "missing", "elicit")
    try:
        await elicit_mcp.resolve(FORM)
        out["env_missing"] = None
    except elicit_mcp.ElicitNotFound as e:
        out["env_missing"] = {"message": str(e), "is_file_not_found": isinstance(e, FileNotFoundError)}
    del os.environ["ELICIT_BINARY"]
    try:
        await elicit_mcp.Elicit(binary=os.path.join(work, "missing", "elicit")).resolve(FORM)
        out["binary_missing"] = None
    except elicit_mcp.ElicitNotFound as e:
        out["binary_missing"] = str(e)
    # A bare name is looked up on PATH only: a file of that name in the working directory (a
    # cloned repository's `./elicit`) is never taken; one in a PATH folder is.
    repo, folder = os.path.join(work, "repo"), os.path.join(work, "bin")
    for where, name in ((repo, "elicit-planted"), (folder, "elicit-on-path")):
        os.makedirs(where)
        with open(os.path.join(where, name), "w") as f:
            f.write("#!/bin/sh\necho planted\n")
        os.chmod(os.path.join(where, name), 0o755)
    saved_path, saved_dir = os.environ["PATH"], os.getcwd()
    os.environ["PATH"] = folder + os.pathsep + saved_path
    os.chdir(repo)
    try:
        bare = {}
        for name in ("elicit-planted", "elicit-on-path"):
            os.environ["ELICIT_BINARY"] = name
            try:
                bare[name] = elicit_mcp.find_elicit_bin()
            except elicit_mcp.ElicitNotFound as e:
                bare[name] = "not found: %s" % e
        out["bare_name"] = bare
    finally:
        os.chdir(saved_dir)
        os.environ["PATH"] = saved_path
        del os.environ["ELICIT_BINARY"]
    # Nothing set and no wheel installed here (the source tree's module): where it looked.
    try:
        out["found"] = elicit_mcp.find_elicit_bin()
    except elicit_mcp.ElicitNotFound as e:
        out["not_found"] = str(e)

    # Bounded: nobody answers the page within the timeout, and the answer is cancel.
    started = time.monotonic()
    result = await elicit_mcp.Elicit(binary=real, ui="browser", no_open=True, timeout=1).resolve(FORM)
    out["timed_out"] = {"result": result, "seconds": round(time.monotonic() - started, 1)}

    # Two at once wait their turns (one terminal, one person): two 1-second runs take two.
    started = time.monotonic()
    both = await asyncio.gather(
        *[elicit_mcp.Elicit(binary=real, ui="browser", no_open=True, timeout=1).resolve(FORM) for _ in range(2)]
    )
    out["two_at_once"] = {"results": both, "seconds": round(time.monotonic() - started, 1)}

    # Cancelled while the page waits: elicit is ended, not left behind. A wrapper records
    # elicit's pid, then becomes elicit.
    pidfile = os.path.join(work, "elicit.pid")
    wrapper = os.path.join(work, "elicit-wrapper")
    argsfile = os.path.join(work, "elicit.args")
    with open(wrapper, "w") as f:
        f.write(
            "#!/bin/sh\necho $$ > '%s'\nprintf '%%s\\n' \"$@\" > '%s'\nexec '%s' \"$@\"\n"
            % (pidfile, argsfile, real)
        )
    os.chmod(wrapper, 0o755)
    recorder = Recorder()
    saved, sys.stderr = sys.stderr, recorder
    try:
        task = asyncio.ensure_future(
            elicit_mcp.Elicit(binary=wrapper, ui="browser", no_open=True).resolve(FORM)
        )
        await wait_until("the page's address", lambda: "answer on the page " in recorder.text)
        pid = int(open(pidfile).read())
        running = alive(pid)
        out["args"] = open(argsfile).read().split()
        task.cancel()
        try:
            await task
            out["cancelled"] = "not cancelled"
        except asyncio.CancelledError:
            await wait_until("elicit to end", lambda: not alive(pid))
            out["cancelled"] = {"was_running": running, "ended": not alive(pid)}
    finally:
        sys.stderr = saved
    out["relayed"] = recorder.text

    # The callback keeps one elicit per client session: two elicitations, one process. A
    # cancelled one ends it; the next elicitation starts another.
    class Session:
        pass

    class Context:
        session = Session()

    pids = os.path.join(work, "session.pids")
    counting = os.path.join(work, "elicit-counting")
    with open(counting, "w") as f:
        f.write("#!/bin/sh\necho $$ >> '%s'\nexec '%s' \"$@\"\n" % (pids, real))
    os.chmod(counting, 0o755)
    answering = elicit_mcp.Elicit(binary=counting, answers=["region=emea"])
    actions = [(await answering.callback(Context(), FORM)).content for _ in range(2)]
    started = len(open(pids).read().split())
    os.remove(pids)
    asking = elicit_mcp.Elicit(binary=counting, ui="browser", no_open=True, timeout=1)
    context = Context()
    recorder = Recorder()
    saved, sys.stderr = sys.stderr, recorder
    try:
        task = asyncio.ensure_future(asking.callback(context, FORM))
        await wait_until("the page's address", lambda: "answer on the page " in recorder.text)
        first_pid = int(open(pids).read().split()[0])
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        await wait_until("elicit to end", lambda: not alive(first_pid))
        after = await asking.callback(context, FORM)
    finally:
        sys.stderr = saved
    out["session"] = {
        "contents": actions,
        "processes_for_two": started,
        "cancel_ended_it": not alive(first_pid),
        "after": after.action,
        "processes_after_cancel": len(open(pids).read().split()),
    }
    await answering.aclose()
    await asking.aclose()

    # `python -m elicit_mcp` runs the binary (here: ELICIT_BINARY's).
    os.environ["ELICIT_BINARY"] = real
    main = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elicit_mcp", "--version", stdout=asyncio.subprocess.PIPE
    )
    version, _ = await asyncio.wait_for(main.communicate(), 30)
    out["main"] = version.decode().strip()

    # The SDK's result type comes back from the callback.
    import mcp.types

    result = await elicit_mcp.Elicit(binary=real, answers=["decline"]).callback(None, FORM)
    out["callback_type"] = "%s.%s" % (type(result).__module__, type(result).__name__)
    out["callback_is_sdk_type"] = isinstance(result, mcp.types.ElicitResult)
    out["callback_action"] = result.action
    print(json.dumps(out), flush=True)


asyncio.run(main())
