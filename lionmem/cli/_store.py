"""Which store a command works on: ``--db`` (a SQLite file or a PostgreSQL address) and ``--namespace``.

``select_store`` turns the target into a store object without opening it; ``open_store`` also
opens it. Both raise ``StoreSelectionError`` with one line naming the problem: a directory given
as the file, a missing file where one is needed, a path the SQLite store refuses (a ``file:``
URI, a NUL), another application's database, a namespace given for a SQLite file (one file is
one namespace), an unreachable server, a missing extra.
The target defaults to ``$LIONMEM_DB``, else ``memory.db`` in the working directory. The
PostgreSQL store (``lionmem.stores.postgres``) is imported only when a ``postgresql://`` address
is given. Any other front end (the MCP server) selects its store through these functions;
``run_on_store`` runs one command's work on the selected store and closes it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lionmem.cli._errors import refuse_trailing_slash
from lionmem.cli._signals import run, stopped_waiting
from lionmem.errors import MemoryAdapterError

__all__ = [
    "DEFAULT_DB",
    "ENV_DB",
    "StoreSelectionError",
    "add_store_arguments",
    "describe_target",
    "is_postgres",
    "open_store",
    "run_on_store",
    "select_store",
    "store_method",
    "store_target",
    "target_source",
]

DEFAULT_DB = "memory.db"
ENV_DB = "LIONMEM_DB"
_POSTGRES = ("postgresql://", "postgres://")
_ADDRESS = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.-]*://")  # what reads as a URL, not a file path
_SHORTEST_HIDDEN_ANYWHERE = 6  # characters of a password hidden where a message repeats it unquoted


class StoreSelectionError(ValueError):
    """The store named by ``--db``/``--namespace`` cannot be used as given; one line says why."""


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--db`` and ``--namespace`` to ``parser`` (a command that works on a store)."""
    group = parser.add_argument_group("store")
    group.add_argument(
        "--db",
        metavar="PATH|URL",
        help=(
            f"a SQLite file or a postgresql:// address (default: ${ENV_DB}, else {DEFAULT_DB} "
            "in the working directory)"
        ),
    )
    group.add_argument(
        "--namespace",
        metavar="NAME",
        help="the namespace inside a PostgreSQL database (a SQLite file has none: use another file)",
    )


def store_target(db: str | None) -> str:
    """Return the store target: ``db`` if given, else ``$LIONMEM_DB``, else ``memory.db``.

    An empty ``db`` is refused (``--db "$UNSET"``) rather than taken for no ``--db``, and so is
    a ``db`` or ``$LIONMEM_DB`` of blanks only (a file of that name is surely not meant)."""
    if db == "":
        msg = (
            f"--db is empty: give a SQLite file or a postgresql:// address (without --db the "
            f"store is ${ENV_DB}, else {DEFAULT_DB})"
        )
        raise StoreSelectionError(msg)
    target = db if db is not None else os.environ.get(ENV_DB) or DEFAULT_DB
    if not target.strip():
        msg = f"{target_source(db)} is blank ({target!r}): give a SQLite file or a postgresql:// address"
        raise StoreSelectionError(msg)
    return target


def target_source(db: str | None) -> str:
    """How a message names where the store target came from (``store_target``): ``--db``,
    ``$LIONMEM_DB``, or the default."""
    if db is not None:
        return "--db"
    if os.environ.get(ENV_DB):
        return f"${ENV_DB}"
    return "the default --db"


def is_postgres(target: str) -> bool:
    """Return whether ``target`` is a PostgreSQL address rather than a SQLite path (the scheme
    in any case, as the driver reads it)."""
    return target[: len(_POSTGRES[0])].lower().startswith(_POSTGRES)


def describe_target(target: str) -> str:
    """Return ``target`` fit for a message: an address (PostgreSQL's, or any ``scheme://``)
    without its password.

    Whatever a driver could take for the password is hidden: from the first ``:`` after the
    scheme to the last ``@`` before the query, and to the last ``@`` of all (an unencoded
    password may hold ``/``, ``?`` or ``@``), and the value of every parameter whose name ends
    in ``password`` (``sslpassword`` too, however the name is cased or percent-encoded) in the
    query read from the first ``?`` and from after that ``@``. Where these readings disagree,
    more is hidden than the password.
    """
    if not _ADDRESS.match(target):
        return target
    shown, last = [], 0
    for start, end in _merged(_password_spans(target)):
        shown += [target[last:start], "***"]
        last = end
    return "".join([*shown, target[last:]])


def _password_spans(target: str) -> list[tuple[int, int]]:
    """Where the text a driver could read as the password of ``target`` starts and ends."""
    begin = target.find("://") + 3
    first_query = target.find("?", begin)
    spans = []
    for at in {target.rfind("@", begin, first_query if first_query >= 0 else len(target)),
               target.rfind("@", begin)}:  # fmt: skip
        colon = target.find(":", begin, max(at, begin))
        if colon >= 0:
            spans.append((colon + 1, at))
        query = target.find("?", max(at, begin))
        for offset in {query, first_query} - {-1}:
            spans += _password_values(target, offset + 1)
    return spans


def _password_values(target: str, start: int) -> list[tuple[int, int]]:
    """The spans of the values of ``password`` parameters in the query starting at ``start``."""
    spans = []
    for pair in re.finditer(r"[^&#]*", target[start:]):
        key, equals, _ = pair.group().partition("=")
        if equals and unquote(key).lower().endswith("password"):  # sslpassword too
            spans.append((start + pair.start() + len(key) + 1, start + pair.end()))
    return spans


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(span for span in spans if span[0] < span[1]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _passwords(target: str) -> list[str]:
    """The texts that may be the password of a PostgreSQL address, as written and decoded,
    longest first."""
    found = [target[start:end] for start, end in _password_spans(target)]
    return sorted({*found, *map(unquote, found)} - {""}, key=len, reverse=True)


def select_store(
    target: str, *, namespace: str | None = None, create: bool = True, given_as: str = "--db"
) -> Any:
    """Return the (unopened) store ``target`` names.

    ``create=False`` refuses a SQLite path where no file exists yet, or an empty file, so a
    command that only reads does not leave an empty database behind a mistyped name. Messages
    name the target as ``given_as`` gave it (``target_source``).
    """
    if is_postgres(target):
        return _postgres(target, namespace)
    if _ADDRESS.match(target) and not target.startswith("file:"):  # a SQLite URI: _sqlite says
        msg = (
            f"{given_as} {describe_target(target)} reads as an address lionmem does not take: give "
            "a postgresql:// (or postgres://) address, nothing before it, or a SQLite file path"
        )
        raise StoreSelectionError(msg)
    if namespace is not None:
        msg = (
            f"--namespace {namespace!r}: a SQLite file has no namespaces (one file is one "
            "namespace); use another --db file instead"
        )
        raise StoreSelectionError(msg)
    return _sqlite(target, create=create, given_as=given_as)


async def open_store(
    target: str, *, namespace: str | None = None, create: bool = True, given_as: str = "--db"
) -> Any:
    """Return the store ``target`` names, opened; the caller closes it (``async with`` works)."""
    store = select_store(target, namespace=namespace, create=create, given_as=given_as)
    try:
        await store.open()
    except (MemoryAdapterError, OSError) as exc:
        await store.close()
        raise StoreSelectionError(_one_line(exc, target)) from exc
    return store


def _one_line(exc: BaseException, target: str) -> str:
    shown = describe_target(target)
    text = str(exc).replace(target, shown)
    if is_postgres(target):
        # The driver may quote the password, or a piece of one it split at a '/' or '@'; a
        # password repeated unquoted is hidden as a whole word, and only when it is too long
        # to be an ordinary word of the message ("pass" in "password authentication failed").
        for password in _passwords(target):
            for piece in sorted({password, *re.split(r"[/?#@:]", password)} - {""}, key=len)[::-1]:
                text = text.replace(repr(piece), "'***'")
                if len(piece) >= _SHORTEST_HIDDEN_ANYWHERE:
                    text = re.sub(rf"(?<![\w%]){re.escape(piece)}(?![\w%])", "***", text)
    text = " ".join(text.split()) or type(exc).__name__
    if shown in text or repr(shown) in text:
        return text
    return f"cannot open {shown}: {text}"


def _sqlite(target: str, *, create: bool, given_as: str) -> Any:
    from lionmem.stores.sqlite import SQLiteMemoryStore

    if target.startswith("file:"):
        msg = (
            f"{given_as} {target} reads as a SQLite URI, which lionmem does not take; "
            f"a file of that name is ./{target}"
        )
        raise StoreSelectionError(msg)
    try:  # the path as given: Path() would make ./file:x a URI again
        store = SQLiteMemoryStore(target)
    except (ValueError, TypeError) as exc:  # a path no file can have (a NUL in it)
        raise StoreSelectionError(_one_line(exc, target)) from exc
    if target == ":memory:":
        return store
    path = Path(target)
    if path.is_dir():
        msg = f"{given_as} {target} is a directory; give the path of a database file, e.g. {path / DEFAULT_DB}"
        raise StoreSelectionError(msg)
    refuse_trailing_slash(target, "database file", given_as, StoreSelectionError)
    if not path.exists():
        if not create:
            msg = f"no lionmem database at {target} (lionmem add or lionmem import creates one)"
            raise StoreSelectionError(msg)
        if not path.parent.is_dir():
            msg = f"{given_as} {target}: the directory {path.parent} does not exist"
            raise StoreSelectionError(msg)
    elif not path.is_file():  # a device or a named pipe: SQLite says only "disk I/O error"
        msg = f"{given_as} {target} is not a regular file; give the path of a database file"
        raise StoreSelectionError(msg)
    elif not create and _empty_file(path):
        msg = (
            f"no lionmem database at {target}: the file is empty "
            "(lionmem add or lionmem import creates one)"
        )
        raise StoreSelectionError(msg)
    return store


def _empty_file(path: Path) -> bool:
    """Whether ``path`` is a zero-byte regular file with no write-ahead log beside it (SQLite
    would turn it into a new database)."""
    wal = path.with_name(path.name + "-wal")
    try:
        return path.is_file() and path.stat().st_size == 0 and not wal.exists()
    except OSError:
        return False


def _postgres(target: str, namespace: str | None) -> Any:
    try:
        module = importlib.import_module("lionmem.stores.postgres")
    except ImportError as exc:
        if exc.name == "lionmem.stores.postgres":
            msg = "this lionmem has no PostgreSQL store (lionmem.stores.postgres is missing)"
        elif "lionmem[" in str(exc):
            msg = " ".join(str(exc).split())
        else:
            msg = f"PostgreSQL needs the 'postgres' extra: pip install 'lionmem[postgres]' ({exc})"
        raise StoreSelectionError(msg) from exc
    options = {} if namespace is None else {"namespace": namespace}
    try:
        return module.PostgresMemoryStore(target, **options)
    except (ValueError, TypeError) as exc:
        raise StoreSelectionError(_one_line(exc, target)) from exc


def store_method(store: Any, name: str) -> Callable[..., Any]:
    """Return ``store.<name>``, or raise ``StoreSelectionError`` when the store has no such operation."""
    method = getattr(store, name, None)
    if not callable(method):
        msg = f"{type(store).__name__} has no {name}(), which this command needs"
        raise StoreSelectionError(msg)
    return method  # type: ignore[no-any-return]  # getattr on Any gives Any


def run_on_store(
    args: argparse.Namespace, work: Callable[[Any], Awaitable[int]], *, create: bool = False
) -> int:
    """Open the store the arguments select, run ``work`` on it, close it, return its status."""

    target = store_target(args.db)
    given_as = target_source(args.db)
    if target == ":memory:":
        msg = (
            f"{given_as} :memory: is a database that ends with the command: nothing stored in it "
            "is kept, nothing is found; give a file"
        )
        raise StoreSelectionError(msg)

    async def go() -> int:
        store = await open_store(target, namespace=args.namespace, create=create, given_as=given_as)
        try:
            status = await work(store)
        except BaseException:
            await store.close()
            raise
        return await _closed_after(store, status)

    return run(go())


async def _closed_after(store: Any, status: int) -> int:
    """Close ``store`` once the command's work is done and reported, and return ``status``.

    Ctrl-C or SIGTERM while it closes (a checkpoint of a large write can take seconds) ends the
    command at once with that status, as the work's report said: what it did is committed, and
    the store's files are consistent whenever the process ends.
    """
    _, stopped = await stopped_waiting(store.close())
    task = asyncio.current_task()
    if stopped and task is not None:  # the stop is handled here: the work's status stands
        task.uncancel()
    return status
