"""``lionmem mcp`` with some of its limits changed, so tests need not wait for the real ones.

Run as ``python -m tests.mcp.short_deadlines NAME=VALUE... -- ARGUMENTS...`` from the repository
root: each ``NAME`` is a limit of ``lionmem.mcp._http`` (``HEAD_SECONDS``, ``BODY_SECONDS``,
``SESSION_IDLE_SECONDS``, ``MAX_SESSIONS``, ``STOP_GRACE``) or of ``lionmem.mcp._stdio``
(``END_WAIT``), ``ARGUMENTS`` are those of ``lionmem mcp``.
"""

from __future__ import annotations

import sys

from lionmem.cli import main
from lionmem.mcp import _http, _stdio

LIMITS = {
    "HEAD_SECONDS": _http,
    "BODY_SECONDS": _http,
    "SESSION_IDLE_SECONDS": _http,
    "MAX_SESSIONS": _http,
    "STOP_GRACE": _http,
    "END_WAIT": _stdio,
}


def run(arguments: list[str]) -> int:
    """Set the limits ``arguments`` give before ``--``, then run ``lionmem mcp`` with the rest."""
    split = arguments.index("--")
    for setting in arguments[:split]:
        name, _, value = setting.partition("=")
        assert name in LIMITS, f"not a limit this launcher sets: {name}"
        setattr(LIMITS[name], name, int(value) if name == "MAX_SESSIONS" else float(value))
    return main(["mcp", *arguments[split + 1 :]])


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
