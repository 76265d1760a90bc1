"""``lionmem mcp`` with some of its HTTP limits changed, so tests need not wait for the real ones.

Run as ``python -m tests.mcp.short_deadlines NAME=VALUE... -- ARGUMENTS...`` from the repository
root: each ``NAME`` is a limit of ``lionmem.mcp._http`` (``HEAD_SECONDS``, ``BODY_SECONDS``,
``SESSION_IDLE_SECONDS``, ``MAX_SESSIONS``), ``ARGUMENTS`` are those of ``lionmem mcp``.
"""

from __future__ import annotations

import sys

from lionmem.cli import main
from lionmem.mcp import _http

LIMITS = {"HEAD_SECONDS", "BODY_SECONDS", "SESSION_IDLE_SECONDS", "MAX_SESSIONS"}

if __name__ == "__main__":
    split = sys.argv.index("--")
    for setting in sys.argv[1:split]:
        name, _, value = setting.partition("=")
        assert name in LIMITS, f"not a limit of lionmem.mcp._http: {name}"
        setattr(_http, name, int(value) if name == "MAX_SESSIONS" else float(value))
    raise SystemExit(main(["mcp", *sys.argv[split + 1 :]]))
