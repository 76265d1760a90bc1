"""The memory tools over any store: arguments checked, the store called, results bounded.

``MemoryTools.call(name, arguments)`` validates the arguments against the tool's input schema
(the generated document the client was shown), builds the ``MemoryItem`` or ``MemoryQuery``,
awaits the store, and returns the structured result with its JSON text. Arguments holding many
values are checked in a worker thread (two at most at once), so the event loop goes on serving
other clients. Every failure becomes an error result naming the problem; only an unknown tool
name raises (``UnknownToolError``), since that is a protocol error, not a tool error. A result
never exceeds the server's response cap: see ``lionmem.mcp._bounds``. Nothing here imports
the MCP SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import math
import re
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import anyio
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as JsonSchemaError
from pydantic import ValidationError
from pydantic_core import to_json
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from lionmem._formats import format_checker
from lionmem._threads import start_thread
from lionmem.errors import (
    MemoryAdapterError,
    MemoryAdapterUnavailable,
    UnknownToolError,
    UnsupportedMemoryQuery,
)
from lionmem.mcp._bounds import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LIMIT,
    ENVELOPE,
    MAX_NESTING,
    OMITTED_ENTRY,
    RETRIEVE_NESTING,
    SEARCH_NESTING,
    check_limits,
    cost,
    error_chars,
    json_bytes,
    nesting,
    result_size,
)
from lionmem.mcp._documents import ToolDocument, tool_documents
from lionmem.protocol import MemoryStore
from lionmem.stores._sqlite_codec import plain_json
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = ["MemoryTools", "ToolResult"]

_log = logging.getLogger("lionmem.mcp")
_MAX_REPORTED = 5
_PROBLEM_CHARS = 300
"""The most of one problem an error shows: a problem quotes the value at fault, of any size."""
_INLINE_VALUES = 500
"""Arguments holding more JSON values than this are checked against the schema off the loop."""
_CHECK_SLOTS = 2
"""How many such checks run at once; the others wait their turn without taking a thread."""

Structured = dict[str, Any]

_EVERY_PROPERTY = ("additionalProperties", "unevaluatedProperties")
"""Keywords that give every property a schema (unless they are false)."""


class _Refused(Exception):
    """A call the server refuses, with the message the client gets."""


class _Unsendable(Exception):
    """An item that JSON cannot carry unchanged, with the problem."""


@dataclass(frozen=True)
class ToolResult:
    """What a tool call answers: structured content (``None`` for an error) and its text."""

    structured: Structured | None
    text: str
    is_error: bool


def _too_deep(what: str, depth: int, where: str, around: int) -> str:
    return (
        f"{what} nests {depth} levels deep (arrays and objects, the item itself included); at "
        f"most {MAX_NESTING - around} can be sent back in {where}, which MCP clients read at "
        f"most {MAX_NESTING} levels deep"
    )


def _dump(item: MemoryItem) -> dict[str, Any]:
    return item.model_dump(mode="json")


def _sendable(item: MemoryItem) -> dict[str, Any]:
    """``item`` as the JSON value it is sent as; ``_Unsendable`` if that cannot be it unchanged.

    ``memory_store`` refuses an item that cannot be, but a program may have stored one directly
    holding what the serializer refuses (a lone surrogate, bytes that are not UTF-8, an unknown
    object), or what it would write changed: NaN or an infinity (as null), a dict key that is
    not a str, or a value JSON has no type for (a datetime, a Decimal or a UUID, as a string).
    """
    values = {"metadata": item.metadata, "content": item.content, "tags": item.tags}
    try:
        dumped = _dump(item)
        to_json(values, inf_nan_mode="constants")  # a lone surrogate fails only here
    except ValueError as exc:  # the serializer's errors, a circular or too deep value among them
        raise _Unsendable(str(exc)) from None
    # The walk, which names the path, only where the fast check finds something.
    problem = None if plain_json(values) else _changed(values)
    if problem is not None:
        raise _Unsendable(problem)
    return dumped


def _schema_problems(validator: Draft202012Validator, arguments: dict[str, Any]) -> str | None:
    # The most specific problems first: those of a field before those of the whole item. The
    # problems stream by, counted: only the first few are kept (as sorted()[:n] would pick
    # them), whatever the number of problems.
    count = 0

    def counted() -> Iterator[JsonSchemaError]:
        nonlocal count
        for error in validator.iter_errors(arguments):
            if error.validator == "unevaluatedProperties" and not _unknown_left(error, validator):
                continue
            count += 1
            yield error

    first = heapq.nsmallest(_MAX_REPORTED, counted(), key=_specific_first)
    if not first:
        return None
    shown = "; ".join(_cut(f"{_where(e.json_path)}: {e.message}", _PROBLEM_CHARS) for e in first)
    more = count - _MAX_REPORTED
    return shown + (f"; and {more} more" if more > 0 else "")


def _unknown_left(error: JsonSchemaError, validator: Draft202012Validator) -> bool:
    """Leave out of an ``unevaluatedProperties: false`` problem the properties the schema names;
    return whether any property is left to report.

    jsonschema counts a property as unevaluated when the ``allOf`` part naming it fails
    (``created_at`` of the wrong type fails the part that names ``metadata`` too); that failure
    is a problem of its own, and such a property is not unexpected.
    """
    if error.validator_value is not False or not isinstance(error.instance, dict):
        return True
    # The tool documents are bundled: every reference points into the document itself.
    resolver = Registry().resolver_with_root(DRAFT202012.create_resource(validator.schema))
    unknown = sorted(
        (key for key in error.instance if not _names(error.schema, key, resolver.lookup)), key=str
    )
    if not unknown:
        return False
    verb = "was" if len(unknown) == 1 else "were"
    listed = ", ".join(repr(key) for key in unknown)
    error.message = f"Unevaluated properties are not allowed ({listed} {verb} unexpected)"
    return True


def _names(schema: Any, key: str, lookup: Callable[[str], Any]) -> bool:
    """Whether ``schema`` gives property ``key`` a schema, itself or through a part that must hold
    (a ``$ref``, an ``allOf`` part), whether or not that part holds.

    A part that must hold and fails is a problem reported on its own. A property named only in a
    branch that need not hold (``anyOf``, ``oneOf``, ``if``/``then``/``else``) is not looked
    for: its branch may be left unused with nothing else failing, and then the property is
    unexpected indeed.
    """
    pending = [schema]
    seen: set[int] = set()
    while pending:
        node = pending.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if key in node.get("properties", {}):
            return True
        if any(re.search(pattern, key) for pattern in node.get("patternProperties", {})):
            return True
        if any(node.get(word, False) is not False for word in _EVERY_PROPERTY):
            return True
        if "$ref" in node:
            pending.append(lookup(node["$ref"]).contents)
        pending += node.get("allOf", [])
    return False


def _holds_many(value: Any, limit: int) -> bool:
    """Whether ``value`` holds more than ``limit`` values (dict entries and list items, nested);
    counting stops past ``limit``, so its cost is bounded whatever the size of ``value``."""
    count = 0
    pending = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, dict | list):
            count += len(current)
            if count > limit:
                return True
            pending.extend(current.values() if isinstance(current, dict) else current)
    return False


async def _check(
    validator: Draft202012Validator, arguments: dict[str, Any], slots: anyio.Semaphore
) -> str | None:
    """``_schema_problems`` of ``arguments``, in a thread of its own when they hold many values.

    jsonschema takes microseconds a value (far more a problem), which for a request at the
    size cap is seconds of the event loop. The thread holds one of ``slots`` until its check
    ends. A thread cannot be stopped: a call cancelled meanwhile returns at once and its check
    runs on to its end, slot held, in a daemon thread, which a stop of the server does not
    wait for.
    """
    if not _holds_many(arguments, _INLINE_VALUES):
        return _schema_problems(validator, arguments)
    await slots.acquire()
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str | None] = loop.create_future()

    def check() -> None:
        try:
            outcome: tuple[str | None, BaseException | None] = (
                _schema_problems(validator, arguments),
                None,
            )
        except BaseException as exc:  # handed to the caller, as a call in the loop would raise it
            outcome = (None, exc)
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(_checked, answer, outcome, slots)

    try:
        start_thread(threading.Thread(target=check, name="lionmem check", daemon=True))
    except BaseException:
        slots.release()
        raise
    return await answer


def _checked(
    answer: asyncio.Future[str | None],
    outcome: tuple[str | None, BaseException | None],
    slots: anyio.Semaphore,
) -> None:
    """On the loop, once a check's thread is done: free its slot, and answer its call unless
    that was cancelled."""
    slots.release()
    if answer.cancelled():
        return
    problems, error = outcome
    if error is not None:
        answer.set_exception(error)
    else:
        answer.set_result(problems)


def _specific_first(error: JsonSchemaError) -> tuple[int, list[tuple[int, int, str]]]:
    # Deeper paths first; list positions in numeric order (tags[2] before tags[10]).
    parts = [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in error.path]
    return (-len(parts), parts)


def _where(json_path: str) -> str:
    return "arguments" if json_path == "$" else json_path.removeprefix("$.")


_PLAIN_KEY = re.compile("^[a-zA-Z][a-zA-Z0-9_]*$")


def _key(key: str) -> str:
    """A key as the path of a schema problem writes it."""
    if _PLAIN_KEY.match(key):
        return f".{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"['{escaped}']"


def _changed(item: dict[str, Any]) -> str | None:
    """The problem of the first value in ``item`` that JSON would give back changed, if any.

    The values are those a program stored; tuples and sets are sent as arrays, in their order,
    and subclasses of str, int and float as the plain value they equal. JSON has no NaN or
    infinity (the SDK's JSON parsers read the literals ``NaN`` and ``Infinity``, which the
    server would write as null), no keys but strings, and no other types.
    """
    pending: list[tuple[str, Any]] = [(_key(key), item[key]) for key in reversed(item)]
    while pending:
        path, value = pending.pop()
        where = path.removeprefix(".")
        if isinstance(value, float) and not math.isfinite(value):
            return f"{where}: {value} is not a JSON number (JSON has no NaN or Infinity)"
        if isinstance(value, dict):
            for key in value:
                if not isinstance(key, str):
                    return (
                        f"{where}: the key {key!r} is not a string (JSON would give it back as one)"
                    )
            pending.extend((path + _key(key), value[key]) for key in reversed(value))
        elif not isinstance(value, str | int | float | list | tuple | set | frozenset | None):
            kind = type(value).__qualname__
            return f"{where}: JSON has no {kind} (it would come back as another type)"
        elif isinstance(value, list | tuple | set | frozenset):
            values = list(value)
            pending.extend(
                (f"{path}[{index}]", values[index]) for index in reversed(range(len(values)))
            )
    return None


def _pydantic_problems(error: ValidationError) -> str:
    """The first ``_MAX_REPORTED`` problems of ``error``, and how many more there are."""
    problems = error.errors(include_url=False, include_context=False, include_input=False)
    shown = "; ".join(
        _cut(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}", _PROBLEM_CHARS)
        for e in problems[:_MAX_REPORTED]
    )
    more = error.error_count() - _MAX_REPORTED
    return shown + (f"; and {more} more" if more > 0 else "")


def _cut(text: str, most: int) -> str:
    """``text``, or its first ``most`` characters and how long it was."""
    if len(text) <= most:
        return text
    return f"{text[:most]}… ({len(text)} characters in all)"


class MemoryTools:
    """The tools of one store: ``memory_store``, ``memory_retrieve`` and ``memory_search``, and
    ``memory_delete`` and ``memory_count`` when the store has ``delete`` and ``count``.

    ``max_limit`` caps every search's limit; ``max_bytes`` caps every response (see
    ``lionmem.mcp._bounds``). ``ValueError`` when the cap is too small for the limit. The tools
    answer tool calls only, so a cap under a server's list of tools is theirs to take
    (``create_server`` refuses it).
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        max_limit: int = DEFAULT_MAX_LIMIT,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        check_limits(max_limit, max_bytes)
        self._store = store
        self._check_slots = anyio.Semaphore(_CHECK_SLOTS)
        self.max_limit = max_limit
        self.max_bytes = max_bytes
        self.documents: tuple[ToolDocument, ...] = tuple(
            document
            for document in tool_documents()
            if document.requires is None or callable(getattr(store, document.requires, None))
        )
        formats = format_checker()
        self._validators = {
            document.name: Draft202012Validator(document.input_schema, format_checker=formats)
            for document in self.documents
        }
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[Structured]]] = {
            "memory_store": self._store_item,
            "memory_retrieve": self._retrieve,
            "memory_search": self._search,
            "memory_delete": self._delete,
            "memory_count": self._count,
        }

    async def call(self, name: str, arguments: dict[str, Any] | None) -> ToolResult:
        """Run tool ``name``; every failure is an error result, an unknown name ``UnknownToolError``."""
        validator = self._validators.get(name)
        if validator is None:
            listed = ", ".join(document.name for document in self.documents)
            msg = f"unknown tool {_cut(repr(name), _PROBLEM_CHARS)}; this server has {listed}"
            raise UnknownToolError(msg)
        try:
            arguments = {} if arguments is None else arguments
            problems = await _check(validator, arguments, self._check_slots)
            if problems is not None:
                raise _Refused(f"invalid arguments for {name}: {problems}")
            structured = await self._handlers[name](arguments)
        except _Refused as exc:
            return self._error(str(exc))
        except ValidationError as exc:
            return self._error(f"invalid arguments for {name}: {_pydantic_problems(exc)}")
        except UnsupportedMemoryQuery as exc:
            said = "; ".join([str(exc), *getattr(exc, "__notes__", ())])
            return self._error(f"the store cannot answer this query: {said}")
        except MemoryAdapterUnavailable as exc:
            return self._error(f"the store is unavailable, nothing was done: {exc}")
        except MemoryAdapterError as exc:
            return self._error(f"the store failed: {exc}")
        except Exception as exc:
            # The server must outlive any failure of a store or a value; the client learns what.
            _log.exception("%s failed", name)
            return self._error(f"{name} failed: {type(exc).__name__}: {exc}")
        return ToolResult(structured, to_json(structured).decode(), is_error=False)

    def _error(self, message: str) -> ToolResult:
        """An error result of ``message``, cut to fit the response cap if it must be."""
        if ENVELOPE + json_bytes(message) > self.max_bytes:
            message = _cut(message, error_chars(self.max_bytes))
        return ToolResult(None, message, is_error=True)

    def _fits(self, structured: Structured, what: str) -> Structured:
        size = result_size(structured)
        if size > self.max_bytes:
            msg = (
                f"{what} is {size} bytes as a response, over this server's cap of "
                f"{self.max_bytes} bytes; it is not sent cut short"
            )
            raise _Refused(msg)
        return structured

    async def _store_item(self, arguments: dict[str, Any]) -> Structured:
        item = MemoryItem.model_validate(arguments)
        # An item that cannot come back through this server unchanged is refused before it is
        # written: one holding NaN (each store would refuse it, or store null) or what JSON has
        # no form for (a caller in process may pass a lone surrogate), and one too large or too
        # deep, which a client's JSON parser would refuse in every search result holding it.
        try:
            dumped = _sendable(item)
        except _Unsendable as exc:
            raise _Refused(f"invalid arguments for memory_store: {exc}") from None
        self._fits({"item": dumped}, "the item")
        depth = nesting(dumped)
        if depth + SEARCH_NESTING > MAX_NESTING:
            raise _Refused(_too_deep("the item", depth, "a search result", SEARCH_NESTING))
        item_id = await self._store.store(item)
        return {"id": str(item_id)}

    async def _retrieve(self, arguments: dict[str, Any]) -> Structured:
        item_id = UUID(arguments["id"])
        item = await self._store.retrieve(item_id)
        if item is None:
            return {"item": None}
        try:
            dumped = _sendable(item)
        except _Unsendable as exc:
            raise _Refused(f"item {item_id} cannot be sent as JSON unchanged: {exc}") from None
        depth = nesting(dumped)  # a program may have stored it directly, past memory_store's check
        if depth + RETRIEVE_NESTING > MAX_NESTING:
            raise _Refused(_too_deep(f"item {item_id}", depth, "a response", RETRIEVE_NESTING))
        return self._fits({"item": dumped}, f"item {item_id}")

    async def _search(self, arguments: dict[str, Any]) -> Structured:
        limit = arguments.get("limit")
        if isinstance(limit, float):
            # The schema's integer is any number without a fraction (5.0, 1e30); the limit is
            # the integer it equals, however large, as 10**30 is, not a float the model refuses.
            arguments = {**arguments, "limit": int(limit)}
        query = MemoryQuery.model_validate(arguments)
        if query.limit < 0:
            msg = f"limit must be 0 or more, got {query.limit} (this server does not count from the end)"
            raise _Refused(msg)
        limit = min(query.limit, self.max_limit)
        if limit != query.limit:
            query = MemoryQuery.model_validate({**arguments, "limit": limit})
        hits = (await self._store.search(query))[:limit]
        items: list[dict[str, Any]] = []
        omitted: list[dict[str, Any]] = []
        structured: Structured = {"items": items, "limit": limit, "omitted": omitted}
        used = result_size(structured)
        # Room for an omitted entry is kept for every hit not yet placed, so the report of the
        # hits left out always fits (check_limits made sure it does for max_limit hits).
        for position, hit in enumerate(hits):
            later = len(hits) - position - 1
            try:
                dumped = _sendable(hit)  # stored past memory_store, it may hold what JSON cannot
            except _Unsendable:
                entry: dict[str, Any] = {"id": str(hit.id), "bytes": None}
            else:
                size = cost(dumped)
                deep = nesting(dumped) + SEARCH_NESTING > MAX_NESTING  # stored past memory_store
                if not deep and used + size + OMITTED_ENTRY * later <= self.max_bytes:
                    items.append(dumped)
                    used += size
                    continue
                entry = {"id": dumped["id"], "bytes": len(to_json(dumped))}
            omitted.append(entry)
            used += cost(entry)
        return self._fits(structured, "the search result")

    async def _delete(self, arguments: dict[str, Any]) -> Structured:
        delete: Callable[[UUID], Awaitable[bool]] = getattr(self._store, "delete")  # noqa: B009 -- listed only for stores that have it
        return {"deleted": bool(await delete(UUID(arguments["id"])))}

    async def _count(self, arguments: dict[str, Any]) -> Structured:
        count: Callable[[], Awaitable[int]] = getattr(self._store, "count")  # noqa: B009 -- listed only for stores that have it
        return {"count": int(await count())}
