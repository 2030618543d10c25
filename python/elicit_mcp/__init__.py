"""elicit's resolvers for Python MCP clients, in one line.

    from mcp.client import Client
    from elicit_mcp import elicitation_callback

    async with Client(server, elicitation_callback=elicitation_callback) as client:
        await client.call_tool("deploy", {})          # every form is asked with elicit

and for fastmcp, ``fastmcp.Client(server, elicitation_handler=elicit_mcp.elicitation_handler)``.

Each elicitation is handed to the ``elicit`` binary installed by the same package (no second
implementation): its params go in on stdin, the ElicitResult comes back on stdout. elicit asks
at the terminal when there is one, else on a local browser page, or answers from scripted
answers and answer rules; the same environment variables as the command apply (ELICIT_ANSWERS,
ELICIT_UI, ELICIT_NO_INPUT, ELICIT_NO_OPEN, ELICIT_BROWSER). ``Elicit(...)`` sets them per
client instead. ELICIT_BINARY names another binary (a development build, for one).

The binary runs as an asyncio subprocess, so the event loop goes on while a person answers;
every elicitation is bounded in time (``timeout``, 10 minutes unless told: past it the answer
is cancel). The callback and the handler keep one ``elicit --lines`` for each client session,
started at its first elicitation: every later elicitation of that session goes to the same
process, so the browser page opened for the first shows the next ones on the same tab. It
ends with the session (or the Python process), and starts again if it died. A cancelled
callback ends that process (``--lines`` cannot withdraw the one elicitation it is asking), so
the next elicitation starts a new one. ``resolve()`` runs one ``elicit`` per elicitation.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._find import ElicitError, ElicitNotFound, find_elicit_bin

__all__ = [
    "Elicit",
    "ElicitError",
    "ElicitNotFound",
    "elicitation_callback",
    "elicitation_handler",
    "find_elicit_bin",
    "resolve",
]

#: How long a person may take unless told (seconds); past it elicit answers cancel.
DEFAULT_TIMEOUT = 600.0
# What elicit may take past its own --timeout to print the cancel and exit before it is
# ended: it answers at once when its time is up, so this is generous.
_GRACE = 15.0
# The last lines of elicit's stderr kept for an error's message.
_STDERR_TAIL = 20
# The longest line read from elicit (an ElicitResult, or a line of its stderr).
_LINE_LIMIT = 16 * 1024 * 1024
# Runs being ended after a cancellation, kept referenced until they are gone.
_reaping: set = set()
# One elicitation at a time per event loop: a person has one terminal (two elicits reading it
# at once would take each other's keys) and answers one form at a time; a server's concurrent
# requests wait their turn, each still bounded by its own timeout.
_turns: "weakref.WeakKeyDictionary[Any, asyncio.Lock]" = weakref.WeakKeyDictionary()


def _turn() -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    lock = _turns.get(loop)
    if lock is None:
        lock = _turns[loop] = asyncio.Lock()
    return lock


class Elicit:
    """A resolver with its settings: each one is one of elicit's flags, and None leaves the
    flag out, so the environment variable of the same flag (read by elicit itself) applies.

    answers       scripted answers, each as ``-a`` takes it: ``"region=apac"``, ``"accept"``,
                  ``"decline"``, a JSON object of values
    answers_file  an answer-rules file or a cassette (``--answers``; env ELICIT_ANSWERS)
    ui            ``"auto"`` (the terminal when there is one, else the page), ``"terminal"``,
                  ``"browser"`` (``--ui``; env ELICIT_UI)
    no_input      never ask a person (``--no-input``; env ELICIT_NO_INPUT)
    no_open       print the page's address on stderr instead of opening a browser
                  (``--no-open``; env ELICIT_NO_OPEN)
    browser       the command that opens the page and URLs (``--browser``; env ELICIT_BROWSER)
    server        the server's name, shown to the person and matched by answer rules' ``server``;
                  by default the name the server gave the SDK (its ``serverInfo``)
    timeout       seconds a person may take; past them the answer is cancel (``--timeout``)
    binary        the elicit binary (default: ELICIT_BINARY, else the package's own)
    args          any other arguments for elicit
    env           variables added to elicit's environment
    """

    def __init__(
        self,
        *,
        answers: Optional[Sequence[str]] = None,
        answers_file: Optional[str] = None,
        ui: Optional[str] = None,
        no_input: Optional[bool] = None,
        no_open: Optional[bool] = None,
        browser: Optional[str] = None,
        server: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        binary: Optional[str] = None,
        args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
    ) -> None:
        if isinstance(answers, str):
            answers = [answers]
        if not timeout or timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds, got %r" % (timeout,))
        self.answers = list(answers or [])
        self.answers_file = answers_file
        self.ui = ui
        self.no_input = no_input
        self.no_open = no_open
        self.browser = browser
        self.server = server
        self.timeout = float(timeout)
        self.binary = binary
        self.args = list(args)
        self.env = dict(env or {})
        # The long-lived `elicit --lines` of each client session (its key).
        self._runs: "weakref.WeakKeyDictionary[Any, _LinesRun]" = weakref.WeakKeyDictionary()

    def command(self, lines: bool = False) -> List[str]:
        """The command line that resolves one elicitation read from stdin (with ``lines``:
        one per line, for as long as stdin stays open)."""
        cmd = [self.binary or find_elicit_bin()]
        for answer in self.answers:
            cmd += ["--answer", answer]
        if self.answers_file is not None:
            cmd += ["--answers", os.fspath(self.answers_file)]
        if self.ui is not None:
            cmd += ["--ui", self.ui]
        if self.no_input:
            cmd.append("--no-input")
        if self.no_open:
            cmd.append("--no-open")
        if self.browser is not None:
            cmd += ["--browser", self.browser]
        cmd += ["--timeout", "%dms" % max(1, int(self.timeout * 1000))]
        # A client killed meanwhile (no cancellation reaches elicit then) leaves nothing behind.
        cmd.append("--exit-with-parent")
        cmd += self.args
        if lines:
            cmd.append("--lines")
        cmd.append("-")
        return cmd

    def _environment(self) -> Optional[Dict[str, str]]:
        if not self.env:
            return None
        env = dict(os.environ)
        env.update(self.env)
        return env

    async def resolve(self, params: Any, server: Optional[str] = None) -> Dict[str, Any]:
        """Resolves one elicitation (its params: a dict, or an SDK's params model) and returns
        the ElicitResult as a dict: ``{"action": "accept", "content": {...}}``, ``decline`` or
        ``cancel`` (a person who dismisses the form, or no answer within ``timeout``).

        Raises ElicitNotFound when there is no binary, ElicitError when elicit fails (bad
        answers, no way to ask with ``no_input``, CI with no terminal...). Elicitations of one
        event loop are resolved one at a time.
        """
        async with _turn():
            return await self._resolve(params, server)

    async def _resolve(self, params: Any, server: Optional[str]) -> Dict[str, Any]:
        document = json.dumps(_with_server(_params_dict(params), self.server, server)).encode("utf-8")
        proc = await _start(self.command(), self._environment())
        relay = proc.stderr is not None
        tail: List[str] = []
        try:
            out = await asyncio.wait_for(
                _communicate(proc, document, tail, relay), self.timeout + _GRACE
            )
        except asyncio.TimeoutError:
            _end(proc)
            raise ElicitError(
                "elicit gave no result within %gs (its own limit was %gs) and was ended"
                % (self.timeout + _GRACE, self.timeout),
                stderr="".join(tail),
            ) from None
        except BaseException:
            # Cancelled (the server withdrew the request, the session closed) or failed:
            # elicit must not stay behind with a prompt or a page up.
            _end(proc)
            raise
        stderr = "".join(tail)
        if proc.returncode != 0:
            said = [line.strip() for line in stderr.splitlines() if line.strip()]
            raise ElicitError(
                "elicit failed (exit status %s)%s"
                % (proc.returncode, ": " + " / ".join(said[-3:]) if said else ""),
                returncode=proc.returncode,
                stderr=stderr,
            )
        try:
            result = json.loads(out.decode("utf-8"))
        except ValueError:
            raise ElicitError(
                "elicit printed no ElicitResult: %r" % out[:200], returncode=0, stderr=stderr
            ) from None
        if not isinstance(result, dict) or result.get("action") not in ("accept", "decline", "cancel"):
            raise ElicitError("elicit printed no ElicitResult: %r" % out[:200], 0, stderr)
        return result

    async def _resolve_in_session(self, context: Any, params: Any) -> Dict[str, Any]:
        """Resolves with the session's long-lived elicit (one page for the whole session);
        with no session to tie it to (no context), as ``resolve()`` does."""
        session = getattr(context, "session", None)
        try:
            run = self._runs.get(session) if session is not None else None
        except TypeError:  # a session that cannot be weakly referenced
            session = None
            run = None
        if session is None:
            return await self.resolve(params, _server_name(context))
        if run is None:
            run = _LinesRun(self)
            self._runs[session] = run
            # The session gone (closed and dropped): its elicit goes with it.
            weakref.finalize(session, run.end)
        document = _with_server(_params_dict(params), self.server, _server_name(context))
        async with _turn():
            return await run.ask(document)

    async def aclose(self) -> None:
        """Ends the long-lived elicit of every session of this resolver (they also end with
        their session, and with the Python process)."""
        for run in list(self._runs.values()):
            run.end()
        self._runs.clear()

    async def callback(self, context: Any, params: Any) -> Any:
        """The Python SDK's ``elicitation_callback(context, params)``: returns the SDK's
        ``ElicitResult`` (the mcp package's own type), or, when elicit cannot resolve it (no
        binary, bad answers, nobody to ask), the SDK's ``ErrorData`` with the reason, which the
        SDK sends the server as a JSON-RPC error (-32603)."""
        try:
            result = await self._resolve_in_session(context, params)
        except ElicitError as e:
            return _sdk_error(e)
        return _sdk_result(result)

    async def handler(self, message: str, response_type: Any, params: Any, context: Any) -> Any:
        """fastmcp's ``elicitation_handler(message, response_type, params, context)``: returns
        an ElicitResult with the action, which fastmcp passes on as it is."""
        result = await self._resolve_in_session(context, params)
        return _sdk_result(result)


async def _start(cmd: List[str], env: Optional[Dict[str, str]]) -> Any:
    """Starts elicit with piped stdin and stdout. Every elicit the module runs starts here.
    On Windows elicit draws its form on stderr, which must be the console: it is left alone;
    elsewhere elicit draws on the terminal itself, and stderr is piped to be relayed."""
    relay = sys.platform != "win32"
    try:
        return await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if relay else None,
            env=env,
            limit=_LINE_LIMIT,
        )
    except FileNotFoundError as e:
        raise ElicitNotFound("cannot run elicit (%s): %s" % (cmd[0], e)) from e
    except PermissionError as e:
        raise ElicitError("cannot run elicit (%s): %s" % (cmd[0], e)) from e


class _LinesRun:
    """One ``elicit --lines`` for a client session: started at the first elicitation (again
    if it died), asked one elicitation at a time as a JSON-RPC request line, each answer
    matched to its request by id."""

    def __init__(self, resolver: Elicit) -> None:
        self.resolver = resolver
        self.proc: Any = None
        self.relay: Any = None
        self.tail: List[str] = []
        self.asked = 0
        self.lock = asyncio.Lock()

    async def _running(self) -> Any:
        if self.proc is None or self.proc.returncode is not None:
            self.proc = await _start(self.resolver.command(lines=True), self.resolver._environment())
            self.tail = []
            self.relay = None
            if self.proc.stderr is not None:
                self.relay = asyncio.ensure_future(_relay_stderr(self.proc.stderr, self.tail))
        return self.proc

    async def ask(self, document: Dict[str, Any]) -> Dict[str, Any]:
        async with self.lock:
            proc = await self._running()
            self.asked += 1
            request_id = "elicit-mcp-%d" % self.asked
            line = json.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": document}
            )
            timeout = self.resolver.timeout
            try:
                reply = await asyncio.wait_for(self._exchange(proc, line), timeout + _GRACE)
            except asyncio.TimeoutError:
                self.end()
                raise ElicitError(
                    "elicit gave no result within %gs (its own limit was %gs) and was ended"
                    % (timeout + _GRACE, timeout),
                    stderr="".join(self.tail),
                ) from None
            except BaseException:
                # Cancelled (the server withdrew the request, the session closed) or failed:
                # --lines cannot withdraw the one elicitation it asks, so this elicit ends,
                # and the next elicitation starts another.
                self.end()
                raise
            if not reply:
                raise await self._died(proc)
            return self._result(reply, request_id)

    async def _exchange(self, proc: Any, line: str) -> bytes:
        try:
            proc.stdin.write(line.encode("utf-8") + b"\n")
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            return b""  # elicit stopped reading: its exit status says why
        try:
            return await proc.stdout.readline()
        except ValueError:  # a line over the limit
            self.end()
            raise ElicitError("elicit printed a result over %d bytes" % _LINE_LIMIT) from None

    async def _died(self, proc: Any) -> ElicitError:
        try:
            await asyncio.wait_for(proc.wait(), _GRACE)
            if self.relay is not None:
                await asyncio.wait_for(self.relay, _GRACE)
        except asyncio.TimeoutError:
            self.end()
        stderr = "".join(self.tail)
        said = [line.strip() for line in stderr.splitlines() if line.strip()]
        return ElicitError(
            "elicit failed (exit status %s)%s"
            % (proc.returncode, ": " + " / ".join(said[-3:]) if said else ""),
            returncode=proc.returncode,
            stderr=stderr,
        )

    def _result(self, reply: bytes, request_id: str) -> Dict[str, Any]:
        try:
            message = json.loads(reply.decode("utf-8"))
        except ValueError:
            message = None
        if not isinstance(message, dict) or message.get("id") != request_id:
            self.end()
            raise ElicitError(
                "elicit printed no reply to elicitation %s: %r" % (request_id, reply[:200]),
                stderr="".join(self.tail),
            )
        error = message.get("error")
        if isinstance(error, dict):
            text = str(error.get("message", "")).splitlines()
            raise ElicitError(
                "elicit failed: %s" % (text[0] if text else "no reason given"),
                stderr="".join(self.tail),
            )
        result = message.get("result")
        if not isinstance(result, dict) or result.get("action") not in ("accept", "decline", "cancel"):
            raise ElicitError("elicit printed no ElicitResult: %r" % reply[:200], stderr="".join(self.tail))
        return result

    def end(self) -> None:
        """Ends this elicit (the page closes with it); the next elicitation starts another."""
        proc, self.proc = self.proc, None
        if proc is not None:
            try:
                _end(proc)
            except RuntimeError:  # no running loop (a finalizer at exit): end it at once
                if proc.returncode is None:
                    try:
                        proc.kill()
                    except ProcessLookupError:
                        pass


async def _relay_stderr(stream: Any, tail: List[str]) -> None:
    """Relays elicit's stderr line by line, keeping the last lines for an error's message."""
    while True:
        try:
            line = await stream.readline()
        except ValueError:  # a line over the limit: dropped
            continue
        if not line:
            return
        text = line.decode("utf-8", "replace")
        tail.append(text)
        del tail[:-_STDERR_TAIL]
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


async def _communicate(proc: Any, document: bytes, tail: List[str], relay: bool) -> bytes:
    async def feed() -> None:
        try:
            proc.stdin.write(document)
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # elicit stopped reading: its exit status says why
        finally:
            proc.stdin.close()

    tasks = [feed(), proc.stdout.read()]
    if relay:
        tasks.append(_relay_stderr(proc.stderr, tail))
    done = await asyncio.gather(*tasks)
    await proc.wait()
    return done[1]


def _end(proc: Any) -> None:
    """Ends a running elicit: SIGTERM first, so it puts the terminal back and closes its
    page, then a kill if it lingers. Runs on a task of its own, since the caller may be a
    cancelled task that can await nothing more."""
    if proc.returncode is not None:
        return
    try:
        proc.terminate()
    except ProcessLookupError:
        return

    async def reap() -> None:
        try:
            await asyncio.wait_for(proc.wait(), 3)
        except asyncio.TimeoutError:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
            await proc.wait()

    task = asyncio.get_running_loop().create_task(reap())
    _reaping.add(task)
    task.add_done_callback(_reaping.discard)


def _params_dict(params: Any) -> Dict[str, Any]:
    """An elicitation's params as they go on the wire (camelCase, `_meta`)."""
    if hasattr(params, "model_dump"):
        return params.model_dump(by_alias=True, mode="json", exclude_none=True)
    if isinstance(params, Mapping):
        return dict(params)
    raise TypeError("expected elicitation params (a dict or an SDK model), got %r" % type(params))


# Where elicit reads the server's name in an elicitation's params (`_meta`, as 2026-07-28
# servers stamp it): the header a person sees, and the `server` of answer rules.
_SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


def _with_server(document: Dict[str, Any], chosen: Optional[str], known: Optional[str]) -> Dict[str, Any]:
    """The params with the server's name in `_meta`: the one chosen (the `server` option)
    replaces any; the one the SDK knows fills in when the server stamped none."""
    meta = document.get("_meta")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not (chosen or known):
        return document
    meta = dict(meta)
    if chosen:
        meta[_SERVER_INFO_META] = {"name": chosen}
    elif not isinstance(meta.get(_SERVER_INFO_META), dict):
        meta[_SERVER_INFO_META] = {"name": known}
    document["_meta"] = meta
    return document


def _server_name(context: Any) -> Optional[str]:
    """The name the server gave itself, from the SDK's request context."""
    try:
        info = context.session.server_info
        name = getattr(info, "name", None)
        return name if isinstance(name, str) and name else None
    except Exception:
        return None


def _sdk_result(result: Dict[str, Any]) -> Any:
    try:
        from mcp.types import ElicitResult
    except ImportError:
        return result
    return ElicitResult.model_validate(result)


def _sdk_error(error: Exception) -> Any:
    try:
        from mcp.types import INTERNAL_ERROR, ErrorData
    except ImportError:
        raise error from None
    return ErrorData(code=INTERNAL_ERROR, message=str(error))


_default = Elicit()


async def elicitation_callback(context: Any, params: Any) -> Any:
    """For the Python SDK: ``Client(server, elicitation_callback=elicitation_callback)`` (or
    ``ClientSession(..., elicitation_callback=...)``), with elicit's defaults and the ELICIT_*
    environment. ``Elicit(...).callback`` sets options."""
    return await _default.callback(context, params)


async def elicitation_handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
    """For fastmcp: ``fastmcp.Client(server, elicitation_handler=elicitation_handler)``.
    ``Elicit(...).handler`` sets options."""
    return await _default.handler(message, response_type, params, context)


async def resolve(params: Any, **options: Any) -> Dict[str, Any]:
    """Resolves one elicitation's params with elicit and returns the ElicitResult as a dict;
    ``options`` are ``Elicit``'s."""
    return await Elicit(**options).resolve(params)
