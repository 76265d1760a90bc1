"""``python -m lionmem``: the ``lionmem`` command (``lionmem.cli.main``)."""

from __future__ import annotations

from lionmem.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
