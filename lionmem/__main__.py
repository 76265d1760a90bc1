"""``python -m lionmem``: the ``lionmem`` command (``lionmem.cli.script``)."""

from __future__ import annotations

from lionmem.cli import main, script

__all__ = ["main", "script"]

if __name__ == "__main__":
    raise SystemExit(script())
