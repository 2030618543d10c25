"""Finding the `elicit` binary that the elicit-mcp wheel installed, as ruff finds its own."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from typing import Optional


class ElicitError(RuntimeError):
    """elicit could not resolve the elicitation: it failed (``returncode``, its last words in
    ``stderr``), printed no result, or took longer than allowed."""

    def __init__(self, message: str, returncode: Optional[int] = None, stderr: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class ElicitNotFound(ElicitError, FileNotFoundError):
    """No `elicit` binary: nowhere this module looks (the message says where), or the one
    named by ELICIT_BINARY or ``binary`` is not there."""


def find_elicit_bin() -> str:
    """The path of the `elicit` binary: `ELICIT_BINARY` when set, else the one the wheel
    installed beside this module (the environment's scripts folder, the base prefix's, a
    `pip install --prefix` or `--target` layout, the user scheme's).

    Raises ElicitNotFound, naming every place looked at, when there is none.
    """
    override = os.environ.get("ELICIT_BINARY")
    if override:
        # A bare name is looked up on PATH only, as the npm package's spawn does: never a file
        # of that name in the working directory (a cloned repository's `./elicit`).
        if _is_bare_name(override):
            found = _on_path(override)
        else:
            found = override if os.path.isfile(override) else None
        if found:
            return found
        raise ElicitNotFound(
            "ELICIT_BINARY is set to %r, which is not a file%s. Unset it to use the elicit "
            "binary installed with the elicit-mcp package."
            % (override, " on PATH" if _is_bare_name(override) else "")
        )

    exe = "elicit" + (sysconfig.get_config_var("EXE") or "")
    module = os.path.dirname(os.path.abspath(__file__))
    if sys.platform == "win32":
        above = _join(_matching_parents(module, "Lib/site-packages/elicit_mcp"), "Scripts")
    else:
        above = _join(_matching_parents(module, "lib/python*/site-packages/elicit_mcp"), "bin")
    targets = [
        # The scripts folder of this Python (a venv's bin/, Scripts/ on Windows).
        sysconfig.get_path("scripts"),
        # The base prefix's, for a venv whose package came from its base.
        sysconfig.get_path("scripts", vars={"base": sys.base_prefix}),
        # Above the package: `pip install --prefix`, `uv run --with`.
        above,
        # Beside the package: `pip install --target DIR` puts scripts in DIR/bin.
        _join(_matching_parents(module, "elicit_mcp"), "bin"),
        # The user scheme: `pip install --user` (~/.local/bin).
        _user_scripts(),
    ]
    seen = []
    for target in targets:
        if not target or target in seen:
            continue
        seen.append(target)
        path = os.path.join(target, exe)
        if os.path.isfile(path):
            return path
    raise ElicitNotFound(
        "Could not find the elicit binary that the elicit-mcp package installs. Looked in:\n"
        + "\n".join(" - %s" % t for t in seen)
        + "\nReinstall elicit-mcp (pip install --force-reinstall elicit-mcp), or set "
        "ELICIT_BINARY to the path of an elicit binary."
    )


def _is_bare_name(name: str) -> bool:
    return os.sep not in name and not (os.altsep and os.altsep in name)


def _on_path(name: str) -> Optional[str]:
    """`name` found in PATH's absolute folders: not in the working directory, which Windows'
    lookup (and an empty or relative PATH entry) would try."""
    folders = [
        d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d)
    ]
    if sys.platform != "win32":
        return shutil.which(name, path=os.pathsep.join(folders)) if folders else None
    suffixes = [""] + [e for e in os.environ.get("PATHEXT", ".COM;.EXE;.BAT;.CMD").split(";") if e]
    for folder in folders:
        for suffix in suffixes:
            path = os.path.join(folder, name + suffix)
            if os.path.isfile(path):
                return path
    return None


def _matching_parents(path: Optional[str], match: str) -> Optional[str]:
    """`path` with `match` (`/`-separated, `*` wildcards, compared case-insensitively)
    trimmed from its end, or None when it does not end so."""
    from fnmatch import fnmatch

    if not path:
        return None
    parts = path.split(os.sep)
    match_parts = match.split("/")
    if len(parts) < len(match_parts):
        return None
    if not all(
        fnmatch(part.lower(), want.lower())
        for part, want in zip(reversed(parts), reversed(match_parts))
    ):
        return None
    return os.sep.join(parts[: -len(match_parts)])


def _join(path: Optional[str], *parts: str) -> Optional[str]:
    return os.path.join(path, *parts) if path else None


def _user_scripts() -> Optional[str]:
    if sys.version_info >= (3, 10):
        scheme = sysconfig.get_preferred_scheme("user")
    elif os.name == "nt":
        scheme = "nt_user"
    elif sys.platform == "darwin" and getattr(sys, "_framework", None):
        scheme = "osx_framework_user"
    else:
        scheme = "posix_user"
    try:
        return sysconfig.get_path("scripts", scheme=scheme)
    except KeyError:
        return None
