"""``add``, ``get``, ``search``, ``count`` and ``delete``: one item or one query at a time.

Results are a table on a terminal and JSON Lines (each item's ``model_dump_json()``) when piped
or with ``--json``. ``KEY=JSON`` arguments (``--meta``, ``--filter``) take a JSON value after the
first ``=``: ``stars=4``, ``lang='"de"'``; each key once. ``get`` and ``delete`` exit 1 when no
item has the id. Ctrl-C while ``add`` or ``delete`` waits for its write (a locked database) does
not stop it: the store completes a write it has begun, so the command waits for the outcome and
reports it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import shlex
import signal
import sys
from collections.abc import Awaitable
from typing import Any, TypeVar
from uuid import UUID

from pydantic import ValidationError

from lionmem.cli._errors import OK, PROBLEM, CommandError, validation_message
from lionmem.cli._output import print_item, print_items, say, say_done
from lionmem.cli._signals import STOP, stopped_waiting
from lionmem.cli._store import add_store_arguments, run_on_store, store_method
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = ["parse_key_json", "register"]

_T = TypeVar("_T")
_JSON_OPENERS = frozenset('[{"')
_TOO_DEEP = "JSON nested too deeply to read"


# The most digits of an integer import's JSON parser (pydantic's) reads, whatever Python's limit.
_IMPORT_DIGITS = 4300


class _NotLionmemJson(ValueError):
    """A value Python's parser reads that import's does not: NaN or an infinity."""


class _TooManyDigits(ValueError):
    """An integer of more digits than import's parser reads, which Python's limit allows."""


def _no_constant(name: str) -> float:
    msg = f"{name} is not a JSON number"
    raise _NotLionmemJson(msg)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        msg = f"{text} is too large a number for a float"
        raise _NotLionmemJson(msg)
    return value


def _bounded(text: str) -> int:
    python = sys.get_int_max_str_digits()  # 0: no limit
    if (python == 0 or python > _IMPORT_DIGITS) and len(text.lstrip("-")) > _IMPORT_DIGITS:
        raise _TooManyDigits
    return int(text)  # Python's own limit, when lower, raises a plain ValueError


def _loads(text: str) -> Any:
    """``text`` as JSON, as ``import`` reads it: no NaN or infinities, no integer of more than
    ``_IMPORT_DIGITS`` digits (an item holding one could be stored, but never exported and
    imported again)."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite, parse_int=_bounded)


def _too_long(error: ValueError) -> str | None:
    """What to say of an integer too long for Python, or for import, to read (json raises a
    plain ValueError)."""
    if isinstance(error, _TooManyDigits):
        return (
            f"holds an integer of more than {_IMPORT_DIGITS} digits, more than import reads; "
            "write it as text, in JSON quotes"
        )
    if isinstance(error, json.JSONDecodeError | _NotLionmemJson):
        return None
    return (
        f"holds an integer of more than {sys.get_int_max_str_digits()} digits, more than Python "
        "reads (PYTHONINTMAXSTRDIGITS sets the limit); write it as text, in JSON quotes"
    )


def parse_key_json(text: str, option: str) -> tuple[str, Any]:
    """Split ``KEY=JSON`` into the key and the parsed JSON value, or raise ``CommandError``."""
    key, separator, value = text.partition("=")
    if not separator or not key:
        msg = f"{option} {text!r}: expected KEY=JSON, for example {option} stars=4"
        raise CommandError(msg)
    try:
        return key, _loads(value)
    except RecursionError:
        msg = f"{option} {key}=...: the value after '=' is {_TOO_DEEP}"
        raise CommandError(msg) from None
    except ValueError as error:
        reason = getattr(error, "msg", str(error))
        too_long = _too_long(error)
        if too_long is not None:
            msg = f"{option} {key}=...: the value after '=' {too_long}"
            raise CommandError(msg) from None
        if value.lstrip()[:1] in _JSON_OPENERS:
            # Meant as a JSON list, object or string: reading it as text would not help.
            where = ""
            if isinstance(error, json.JSONDecodeError):  # "starting at" ends some reasons
                where = f"{'' if reason.endswith(' at') else ' at'} column {error.colno}"
            msg = f"{option} {text!r}: the value after '=' is not valid JSON ({reason}{where})"
        else:
            quoted = shlex.quote(f"{key}={json.dumps(value, ensure_ascii=False)}")
            msg = (
                f"{option} {text!r}: the value after '=' is not JSON ({reason}); "
                f"write text in JSON quotes, for example {option} {quoted}"
            )
        raise CommandError(msg) from None


def _pairs(texts: list[str] | None, option: str) -> dict[str, Any]:
    """The ``KEY=JSON`` arguments of ``option`` as a dict; a key given twice is refused, as
    only one of its values could be kept."""
    pairs: dict[str, Any] = {}
    for text in texts or ():
        key, value = parse_key_json(text, option)
        if key in pairs:
            msg = f"{option} key {key!r} is given twice; give each key once"
            raise CommandError(msg)
        pairs[key] = value
    return pairs


def _uuid(text: str) -> UUID:
    try:
        return UUID(text)
    except ValueError:
        msg = f"{text!r} is not an item id (a UUID such as 12345678-1234-5678-1234-567812345678)"
        raise CommandError(msg) from None


def _add(args: argparse.Namespace) -> int:
    metadata = _pairs(args.meta, "--meta")
    if args.json:
        try:
            content: Any = _loads(args.content)
        except RecursionError:
            msg = f"--json: CONTENT is {_TOO_DEEP}"
            raise CommandError(msg) from None
        except ValueError as error:
            too_long = _too_long(error)
            msg = (
                f"--json: CONTENT {too_long}"
                if too_long is not None
                else f"--json: CONTENT is not JSON ({getattr(error, 'msg', error)})"
            )
            raise CommandError(msg) from None
    else:
        content = args.content
    try:
        item = MemoryItem(content=content, tags=args.tags or [], metadata=metadata)
    except ValidationError as error:
        raise CommandError(validation_message(error)) from None

    async def work(store: Any) -> int:
        await _outcome("add", store.store(item))
        say_done(item.id, f"stored {item.id}", "its id")
        return OK

    return run_on_store(args, work, create=True)


def _get(args: argparse.Namespace) -> int:
    item_id = _uuid(args.id)

    async def work(store: Any) -> int:
        item = await store.retrieve(item_id)
        if item is None:
            print(f"lionmem get: no item with id {item_id}", file=sys.stderr)
            return PROBLEM
        print_item(item, json_lines=args.json)
        return OK

    return run_on_store(args, work)


def _search(args: argparse.Namespace) -> int:
    if args.limit < 0:
        msg = f"--limit must be 0 or more, got {args.limit}"
        raise CommandError(msg)
    try:
        query = MemoryQuery(
            text=args.text,
            tags=args.tags or None,
            filters=_pairs(args.filters, "--filter") or None,
            limit=args.limit,
        )
    except ValidationError as error:
        raise CommandError(validation_message(error)) from None

    async def work(store: Any) -> int:
        print_items(await store.search(query), json_lines=args.json)
        return OK

    return run_on_store(args, work)


def _count(args: argparse.Namespace) -> int:
    async def work(store: Any) -> int:
        say(await store_method(store, "count")())
        return OK

    return run_on_store(args, work)


def _delete(args: argparse.Namespace) -> int:
    item_id = _uuid(args.id)

    async def work(store: Any) -> int:
        if not await _outcome("delete", store_method(store, "delete")(item_id)):
            print(f"lionmem delete: no item with id {item_id}", file=sys.stderr)
            return PROBLEM
        say_done(f"deleted {item_id}")
        return OK

    return run_on_store(args, work)


async def _outcome(command: str, write: Awaitable[_T]) -> _T:
    """Return the outcome of ``write``, the call that hands the command's one write to the
    store, even when the command is interrupted (Ctrl-C or SIGTERM) while it waits: the store
    completes a write it has begun, so saying "interrupted" would be false, and a retry would
    add the item again. The interruption is noted on stderr; a further Ctrl-C or SIGTERM is
    ignored until the command ends (it reports the outcome and closes the store), so none can
    misreport a write done."""
    handed, stopped = await stopped_waiting(write)
    if not stopped:
        return handed.result()
    task = asyncio.current_task()
    if task is not None:  # the interruption is handled here, not by the task's later awaits
        task.uncancel()
    print(
        f"lionmem {command}: {STOP.word}; waiting for the write the store has begun",
        file=sys.stderr,
    )
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return await handed


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="JSON Lines in full, even on a terminal"
    )


# ``commands`` is argparse's subparsers action, whose class argparse keeps private.
def register(commands: Any) -> None:
    """Add ``add``, ``get``, ``search``, ``count`` and ``delete`` to ``commands``."""
    add = commands.add_parser(
        "add", help="store one item and print its id", description="Store one item; print its id."
    )
    add.add_argument("content", metavar="CONTENT", help="the item's content (text)")
    add.add_argument("--tag", action="append", dest="tags", metavar="T", help="a tag (repeatable)")
    add.add_argument(
        "--meta",
        action="append",
        metavar="KEY=JSON",
        help=(
            "a metadata entry whose value is JSON, e.g. stars=4 or lang='\"de\"' "
            "(repeatable, each key once)"
        ),
    )
    add.add_argument(
        "--json", action="store_true", help="CONTENT is a JSON value (object, list, number...)"
    )
    add_store_arguments(add)
    add.set_defaults(handler=_add)

    get = commands.add_parser(
        "get", help="show the item with an id", description="Show the item with this id."
    )
    get.add_argument("id", metavar="ID")
    _json_flag(get)
    add_store_arguments(get)
    get.set_defaults(handler=_get)

    search = commands.add_parser(
        "search",
        help="items matching text, tags and metadata filters",
        description=(
            "Items matching every given condition, in insertion order: the text inside "
            "str(content) (both lower-cased by str.lower()), any of the tags, metadata equal "
            "to each filter (a missing key counts as null)."
        ),
    )
    search.add_argument(
        "--text", metavar="S", help="text found in str(content), both lower-cased by str.lower()"
    )
    search.add_argument(
        "--tag", action="append", dest="tags", metavar="T", help="any of these tags (repeatable)"
    )
    search.add_argument(
        "--filter",
        action="append",
        dest="filters",
        metavar="KEY=JSON",
        help="metadata KEY equal to the JSON value (repeatable, each key once; all must hold)",
    )
    search.add_argument(
        "--limit", type=int, default=20, metavar="N", help="at most N items (default 20)"
    )
    _json_flag(search)
    add_store_arguments(search)
    search.set_defaults(handler=_search)

    count = commands.add_parser(
        "count", help="print the number of items", description="Print the number of items."
    )
    add_store_arguments(count)
    count.set_defaults(handler=_count)

    delete = commands.add_parser(
        "delete", help="delete the item with an id", description="Delete the item with this id."
    )
    delete.add_argument("id", metavar="ID")
    add_store_arguments(delete)
    delete.set_defaults(handler=_delete)
