"""The ``lionmem`` command: memory data from the shell (``lionmem --help`` lists the commands).

``main(argv)`` parses the arguments, runs one command and returns its exit status: 0 when the
work is done, 1 when the work found a problem (invalid lines, a failed case, no such item),
2 for a usage error or a store that cannot be opened, 130 for Ctrl-C. The ``lionmem`` script
and ``python -m lionmem`` call ``script``: ``main``, after which a signal changes nothing.
Store selection (``--db``, ``--namespace``) lives in ``lionmem.cli._store`` so that other front
ends open stores the same way. Terminal tables,
progress bars and ``validate`` need the ``cli`` extra (``pip install 'lionmem[cli]'``);
``import lionmem`` imports none of this, and ``import lionmem.cli`` only this module, so that a
Ctrl-C while Python loads the command is answered like one during it.
"""

from __future__ import annotations

import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

__all__ = ["build_parser", "main", "script"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``lionmem`` command with ``argv`` (default ``sys.argv[1:]``); return its exit status."""
    try:
        from lionmem.cli._main import main as run

        return run(argv)
    except KeyboardInterrupt:  # before the command started (it answers one during it itself)
        if sys.stderr is not None:
            print("lionmem: interrupted", file=sys.stderr)
        return 130


def script() -> int:
    """``main()`` for the ``lionmem`` process; return its exit status.

    Once the command has returned, its work is done and reported: SIGINT and SIGTERM are then
    ignored while the interpreter exits, instead of ending the process by the signal (status
    130 or 143, which would have a caller run the work again).
    """
    status = main()
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, signal.SIG_IGN)
    return status


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of every ``lionmem`` command."""
    from lionmem.cli._main import build_parser as build

    return build()
