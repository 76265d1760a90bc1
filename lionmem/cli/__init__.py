"""The ``lionmem`` command: memory data from the shell (``lionmem --help`` lists the commands).

``main(argv)`` parses the arguments, runs one command and returns its exit status: 0 when the
work is done, 1 when the work found a problem (invalid lines, a failed case, no such item),
2 for a usage error or a store that cannot be opened, 130 for Ctrl-C. ``python -m lionmem``
calls the same ``main``. Store selection (``--db``, ``--namespace``) lives in
``lionmem.cli._store`` so that other front ends open stores the same way. Terminal tables,
progress bars and ``validate`` need the ``cli`` extra (``pip install 'lionmem[cli]'``);
``import lionmem`` imports none of this, and ``import lionmem.cli`` only this module, so that a
Ctrl-C while Python loads the command is answered like one during it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

__all__ = ["build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``lionmem`` command with ``argv`` (default ``sys.argv[1:]``); return its exit status."""
    try:
        from lionmem.cli._main import main as run

        return run(argv)
    except KeyboardInterrupt:  # before the command started (it answers one during it itself)
        if sys.stderr is not None:
            print("lionmem: interrupted", file=sys.stderr)
        return 130


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of every ``lionmem`` command."""
    from lionmem.cli._main import build_parser as build

    return build()
