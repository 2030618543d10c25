"""`python -m elicit_mcp ARGS`: runs the package's elicit binary with ARGS."""

from __future__ import annotations

import os
import sys

from ._find import ElicitNotFound, find_elicit_bin


def _run() -> None:
    try:
        elicit = find_elicit_bin()
    except ElicitNotFound as e:
        sys.stderr.write("elicit-mcp: %s\n" % e)
        sys.exit(1)
    if sys.platform == "win32":
        import subprocess

        try:
            sys.exit(subprocess.run([elicit, *sys.argv[1:]]).returncode)
        except KeyboardInterrupt:
            sys.exit(130)
    os.execv(elicit, [elicit, *sys.argv[1:]])


if __name__ == "__main__":
    _run()
