"""What a command reports when it cannot do its work: one line for a person, and the exit status.

``CommandError`` is a problem the user fixes before trying again (a missing file, a bad
argument, a store that cannot be opened); ``main`` prints its message on one line and exits
with ``USAGE``. Commands return ``OK`` when the work is done and ``PROBLEM`` when the work
itself found something wrong (invalid lines, a failed case, an id with no item).
"""

from __future__ import annotations

from typing import Final

__all__ = ["OK", "PROBLEM", "USAGE", "CommandError", "require_extra"]

OK: Final = 0
PROBLEM: Final = 1
USAGE: Final = 2


class CommandError(Exception):
    """A problem a person can act on; its message is one line naming it."""


def require_extra(module: str, extra: str = "cli") -> None:
    """Raise ``CommandError`` naming the extra to install when ``module`` cannot be imported."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        msg = f"this command needs the '{extra}' extra: pip install 'lionmem[{extra}]'"
        raise CommandError(msg)
