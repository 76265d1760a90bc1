"""What a command reports when it cannot do its work: one line for a person, and the exit status.

``CommandError`` is a problem the user fixes before trying again (a missing file, a bad
argument, a store that cannot be opened); ``main`` prints its message on one line and exits
with ``USAGE``. Commands return ``OK`` when the work is done and ``PROBLEM`` when the work
itself found something wrong (invalid lines, a failed case, an id with no item).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "OK",
    "PROBLEM",
    "USAGE",
    "CommandError",
    "missing",
    "open_file",
    "refuse_empty",
    "refuse_trailing_slash",
    "require_extra",
    "validation_message",
]

OK: Final = 0
PROBLEM: Final = 1
USAGE: Final = 2


class CommandError(Exception):
    """A problem a person can act on; its message is one line naming it."""


def missing(module: str) -> bool:
    """Return whether ``module`` (a top-level package) cannot be imported here."""
    return importlib.util.find_spec(module) is None


def require_extra(module: str) -> None:
    """Raise ``CommandError`` naming the ``cli`` extra when ``module`` cannot be imported."""
    if missing(module):
        msg = "this command needs the 'cli' extra: pip install 'lionmem[cli]'"
        raise CommandError(msg)


def validation_message(error: ValidationError) -> str:
    """Return a pydantic ValidationError on one line: ``field: message`` parts joined by ``;``."""
    parts = []
    for problem in error.errors(include_url=False):
        where = ".".join(str(part) for part in problem["loc"])
        parts.append(f"{where}: {problem['msg']}" if where else problem["msg"])
    return "; ".join(parts)


def refuse_empty(name: str, kind: str, option: str = "") -> None:
    """Raise ``CommandError`` when the file path ``name`` (given as ``option``, if any) is empty,
    which ``pathlib.Path`` would read as the working directory."""
    if not name:
        msg = f"{option or 'the file name'} is empty: give the path of a {kind}"
        raise CommandError(msg)


def refuse_trailing_slash(
    name: str, kind: str, option: str = "", error: type[Exception] = CommandError
) -> None:
    """Raise ``error`` when the file path ``name`` (given as ``option``, if any) ends in a slash,
    ``/.`` or ``/..`` (or is ``.`` or ``..``).

    Such a path names a directory: POSIX tools refuse it as a file (ENOTDIR, EISDIR), while
    ``pathlib.Path`` and ``os.path.abspath`` drop the slash (and ``/.``) and would name a file.
    ``kind`` names what the path should be ("database file").
    """
    last = name.rpartition("/")[2]
    if not name or last not in ("", ".", ".."):
        return
    given = f"{option} {name}" if option else name
    if "/" not in name:  # . or ..: a directory whatever the file system holds
        msg = f"{given} is a directory, not a {kind}"
    else:
        msg = f"{given} ends in '/{last}', so it names a directory; give the path of a {kind}"
    raise error(msg)


def open_file(name: str, kind: str) -> BinaryIO:
    """Open file ``name`` for reading bytes, or raise the ``CommandError`` that says why not.

    ``kind`` names what the file should hold ("JSON Lines file"), for the message about a directory.
    """
    refuse_empty(name, kind)
    path = Path(name)
    if path.is_dir():
        msg = f"{name} is a directory, not a {kind}"
        raise CommandError(msg)
    refuse_trailing_slash(name, kind)
    try:
        return path.open("rb")
    except FileNotFoundError:
        msg = f"{name}: no such file"
        raise CommandError(msg) from None
    except OSError as error:
        msg = f"{name}: cannot read it ({error.strerror})"
        raise CommandError(msg) from None
