"""The ``lionmem`` command: memory data from the shell (``lionmem --help`` lists the commands).

``main(argv)`` parses the arguments, runs one command and returns its exit status: 0 when the
work is done, 1 when the work found a problem (invalid lines, a failed case, no such item),
2 for a usage error or a store that cannot be opened. ``python -m lionmem`` calls the same
``main``. Store selection (``--db``, ``--namespace``) lives in ``lionmem.cli._store`` so that
other front ends open stores the same way. Terminal tables, progress bars and ``validate``
need the ``cli`` extra (``pip install 'lionmem[cli]'``); ``import lionmem`` imports none of this.
"""

from __future__ import annotations

from lionmem.cli._main import build_parser, main

__all__ = ["build_parser", "main"]
