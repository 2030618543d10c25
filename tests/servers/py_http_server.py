"""tests/servers/py_elicit_server.py (PyPI `mcp`) served over Streamable HTTP on 127.0.0.1.

Usage: .deps/venv/bin/python tests/servers/py_http_server.py PORT
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_elicit_server  # noqa: E402  (after the path is set)

py_elicit_server.server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
