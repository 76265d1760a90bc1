"""Any lionmem ``MemoryStore`` as a lionagi 0.36 ``MemoryStore``: ``Branch(memory=LionagiMemoryStore(store))``.

The wrapper takes lionagi ``MemoryItem`` and ``MemoryQuery`` objects, stores lionmem copies in the
wrapped store and gives back new lionagi ``MemoryItem`` instances, with lionagi's ``lion_class``.
Search gives lionagi ``InMemoryStore``'s results, in its order, wherever the wrapped store does
(every lionmem store does), negative limits included: a store that refuses them is asked for every
match and the wrapper cuts the list as lionagi does. Values no lionmem item can hold (a subclass,
NaN ``created_at``, non-string metadata keys, ...) are refused at ``store()`` with
``UnrepresentableValueError`` naming the field; nothing is written. An ``ExternalMemoryStore``
stays one (its manifest passes through). docs/lionagi.md is the user guide.
"""

from __future__ import annotations

import math
import sys
from collections.abc import AsyncIterator, Iterable, Mapping
from types import TracebackType
from typing import Any, Self, overload
from uuid import UUID

from pydantic import ValidationError

from lionmem._messages import place_in_batch
from lionmem.errors import UnrepresentableValueError, UnsupportedMemoryQuery
from lionmem.protocol import ExternalMemoryStore, MemoryStore
from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

try:
    import lionagi.protocols.memory as _lionagi_memory
except ModuleNotFoundError as exc:
    # Only lionagi itself missing names the extra; a dependency lionagi lacks shows its own error.
    if exc.name is None or exc.name.partition(".")[0] != "lionagi":
        raise
    msg = "lionmem.integrations.lionagi needs lionagi: pip install 'lionmem[lionagi]'"
    raise ModuleNotFoundError(msg, name="lionagi") from exc

LionagiItem = _lionagi_memory.MemoryItem
LionagiQuery = _lionagi_memory.MemoryQuery

__all__ = ["ExternalLionagiMemoryStore", "LionagiMemoryStore"]

_LIONAGI_CLASS: str = LionagiItem.class_name(full=True)  # what its lion_class check compares with
# Larger than any store's size, and within every backend's integer range (SQL bigint): asking
# for this many results is asking for all of them.
_ALL = sys.maxsize
_ANY_ID = UUID(int=0)


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _type_name(value: object) -> str:
    return _qualified(type(value))


def _refuse(field: str, value: object, reason: str) -> UnrepresentableValueError:
    return UnrepresentableValueError(field, type(value).__qualname__, reason)


def _to_lionmem(item: object, position: int | None = None) -> MemoryItem:
    """The lionmem copy of a lionagi item (``position`` in a batch), or an error naming what it cannot keep."""
    if type(item) is not LionagiItem:
        if isinstance(item, LionagiItem):
            raise _refuse(
                "__class__",
                item,
                "the store gives items back as lionagi MemoryItem, so a subclass (its class and "
                "its extra fields) would not round-trip; store a lionagi MemoryItem",
            )
        hint = (
            "; store it on the wrapped store itself"
            if isinstance(item, MemoryItem)
            else "; use store_many() for several items"
            if isinstance(item, list | tuple) and position is None
            else ""
        )
        msg = (
            f"store() takes a lionagi MemoryItem ({_qualified(LionagiItem)}), "
            f"got {_type_name(item)}{hint}"
            if position is None
            else f"store_many() takes lionagi MemoryItems ({_qualified(LionagiItem)}), "
            f"got {_type_name(item)} at position {position}{hint}"
        )
        raise TypeError(msg)
    created_at = item.created_at
    if type(created_at) is not float or not math.isfinite(created_at):
        raise _refuse(
            "created_at",
            created_at,
            f"{created_at!r}: created_at must be a finite float (NaN and infinity do not round-trip)",
        )
    metadata = item.metadata
    if type(metadata) is not dict:
        raise _refuse("metadata", metadata, "metadata must be a plain dict")
    for key in metadata:
        if type(key) is not str:
            raise UnrepresentableValueError(
                f"metadata[{key!r}]",
                f"dict key of type {type(key).__qualname__}",
                "metadata keys must be plain strings, as in every JSON object",
            )
    named = metadata.get("lion_class", _LIONAGI_CLASS)
    if type(named) is not str or named != _LIONAGI_CLASS:
        raise _refuse(
            "metadata['lion_class']",
            named,
            f"{named!r}: items come back naming lionagi's class "
            f"({_LIONAGI_CLASS!r}), so another lion_class would not round-trip",
        )
    tags = item.tags
    if type(tags) is not list:
        raise _refuse("tags", tags, "tags must be a list of strings")
    for index, tag in enumerate(tags):
        if type(tag) is not str:
            raise _refuse(f"tags[{index}]", tag, "tags must be plain strings")
    try:
        return MemoryItem(
            id=item.id, created_at=created_at, metadata=metadata, content=item.content, tags=tags
        )
    except ValidationError as exc:  # what the checks above leave: an id given to model_construct
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "metadata"
        raise _refuse(field, error["input"], error["msg"]) from exc


def _to_lionagi(item: MemoryItem) -> LionagiItem:
    """A new lionagi item equal field by field to ``item``, with lionagi's ``lion_class``."""
    metadata = item.metadata
    if "lion_class" in metadata and metadata["lion_class"] != _LIONAGI_CLASS:
        metadata = {**metadata, "lion_class": _LIONAGI_CLASS}
    item_id = item.id
    if type(item_id) is not UUID:  # a driver's UUID subclass
        item_id = UUID(int=item_id.int)
    return LionagiItem(
        id=item_id,
        created_at=item.created_at,
        metadata=metadata,
        content=item.content,
        tags=item.tags,
    )


def _query(query: object, limit: int | None = None) -> MemoryQuery:
    """The lionmem query asking what ``query`` asks, with ``limit`` instead of its own if given."""
    if isinstance(query, LionagiQuery | MemoryQuery):
        wanted = query.limit if limit is None else limit
        if isinstance(wanted, int) and wanted > _ALL:  # anything else is for validation to refuse
            wanted = _ALL  # no store holds more; some backends cannot count further
        return MemoryQuery(text=query.text, tags=query.tags, filters=query.filters, limit=wanted)
    msg = (
        f"search() takes a lionagi MemoryQuery ({_qualified(LionagiQuery)}), got "
        f"{_type_name(query)}; build one with MemoryQuery(text=..., tags=..., filters=..., limit=...)"
    )
    raise TypeError(msg)


class LionagiMemoryStore:
    """A lionmem ``MemoryStore`` as lionagi sees one: lionagi items and queries in, lionagi items out.

    ``LionagiMemoryStore(store)`` is an :class:`ExternalLionagiMemoryStore` (with the wrapped
    store's ``manifest``) when ``store`` is an ``ExternalMemoryStore``. Closing the wrapper closes
    the wrapped store.
    """

    __slots__ = ("_store",)
    _store: MemoryStore

    @overload
    def __new__(cls, store: ExternalMemoryStore) -> ExternalLionagiMemoryStore: ...
    @overload
    def __new__(cls, store: MemoryStore) -> LionagiMemoryStore: ...
    def __new__(cls, store: MemoryStore) -> LionagiMemoryStore:
        # All of the construction is here (no __init__), so type checkers read these overloads.
        if isinstance(store, type):  # a class has the methods a MemoryStore is checked for
            name = store.__qualname__
            msg = (
                f"{cls.__qualname__} wraps a store instance, got the class {name}; call it "
                f"first, e.g. {cls.__qualname__}({name}())"
            )
            raise TypeError(msg)
        if isinstance(store, LionagiMemoryStore | _lionagi_memory.InMemoryStore):
            msg = f"{type(store).__qualname__} already takes lionagi items: pass it to lionagi directly"
            raise TypeError(msg)
        if not isinstance(store, MemoryStore):
            msg = f"LionagiMemoryStore wraps a lionmem MemoryStore, got {_type_name(store)}"
            raise TypeError(msg)
        external = isinstance(store, ExternalMemoryStore)
        if issubclass(cls, ExternalLionagiMemoryStore) and not external:
            msg = (
                f"{cls.__qualname__} wraps an ExternalMemoryStore (one with a manifest), "
                f"got {_type_name(store)}; use LionagiMemoryStore"
            )
            raise TypeError(msg)
        self = object.__new__(
            ExternalLionagiMemoryStore if external and cls is LionagiMemoryStore else cls
        )
        self._store = store
        return self

    @property
    def wrapped(self) -> MemoryStore:
        """The lionmem store this wrapper reads and writes."""
        return self._store

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._store!r})"

    def __reduce__(self) -> tuple[type[LionagiMemoryStore], tuple[MemoryStore], object]:
        # Copies and pickles rebuild a wrapper of the same class, with the attributes a subclass
        # added, around the wrapped store: copy.copy shares it (as a copy of lionagi's own store
        # shares its items), copy.deepcopy and pickle copy it (if it can be copied).
        return (type(self), (self._store,), self.__getstate__())

    # -- lionagi's MemoryStore --------------------------------------------------------------

    async def store(self, item: LionagiItem) -> UUID:
        """Store a copy of ``item`` (replacing the item with its id, in place); return ``item.id``."""
        await self._store.store(_to_lionmem(item))
        return item.id

    async def retrieve(self, item_id: UUID | str) -> LionagiItem | None:
        """Return a new lionagi item equal to the stored one, or ``None``."""
        if not isinstance(item_id, UUID):
            try:
                item_id = UUID(item_id)  # any form uuid.UUID() parses, as lionagi's store reads it
            except (TypeError, ValueError, AttributeError):  # not a string, or not a UUID in it
                # The store is still asked (for any id; the answer is not used; one more
                # round trip for a non-id), so that a closed store raises as it does for an id.
                await self._store.retrieve(_ANY_ID)
                return None
        found = await self._store.retrieve(item_id)
        return None if found is None else _to_lionagi(found)

    async def search(self, query: LionagiQuery | MemoryQuery) -> list[LionagiItem]:
        """Return new lionagi items for the matches, as lionagi's ``InMemoryStore`` orders and cuts them."""
        asked = _query(query)
        if asked.limit >= 0:
            return [_to_lionagi(found) for found in await self._store.search(asked)]
        try:
            found_items = await self._store.search(asked)
        except UnsupportedMemoryQuery as exc:
            if "limit" not in exc.rejected_keys:
                raise
            # lionagi cuts all the matches as results[:limit]: ask for all of them and do the same.
            found_items = (await self._store.search(_query(query, _ALL)))[: asked.limit]
        return [_to_lionagi(found) for found in found_items]

    # -- the wrapped store's extras ---------------------------------------------------------

    def _extra(self, name: str) -> Any:
        method = getattr(self._store, name, None)
        if method is None:
            msg = f"{type(self._store).__qualname__} has no {name}(), so this wrapper cannot forward it"
            raise AttributeError(msg)
        return method

    async def store_many(self, items: Iterable[LionagiItem]) -> list[UUID]:
        """Store copies of several items; every item is checked before anything is written.

        One transaction where the wrapped store has ``store_many``; otherwise one ``store`` each.
        """
        if isinstance(items, LionagiItem | MemoryItem | Mapping | str | bytes):
            # Each would iterate as something else: an item's fields, a mapping's keys, characters.
            hint = (
                "; use store() for one item"
                if isinstance(items, LionagiItem | MemoryItem)
                else "; pass its values()"
                if isinstance(items, Mapping)
                else ""
            )
            msg = (
                f"store_many() takes an iterable of lionagi MemoryItems ({_qualified(LionagiItem)}), "
                f"got {_type_name(items)}{hint}"
            )
            raise TypeError(msg)
        batch = list(items)
        copies = []
        for position, item in enumerate(batch):
            try:
                copies.append(_to_lionmem(item, position))
            except UnrepresentableValueError as exc:
                place_in_batch(exc, "store_many", position, item)
                raise
        many = getattr(self._store, "store_many", None)
        if many is not None:
            await many(copies)
        else:
            for copy in copies:
                await self._store.store(copy)
        return [item.id for item in batch]

    async def delete(self, item_id: UUID | str) -> bool:
        """Delete the item with this id; return whether there was one (wrapped store's ``delete``)."""
        return bool(await self._extra("delete")(item_id))

    async def count(self) -> int:
        """Return the number of stored items (wrapped store's ``count``)."""
        return int(await self._extra("count")())

    async def items(self, **options: Any) -> AsyncIterator[LionagiItem]:
        """Yield every item as a new lionagi item, in the wrapped store's ``items()`` order."""
        async for item in self._extra("items")(**options):
            yield _to_lionagi(item)

    # -- lifecycle --------------------------------------------------------------------------

    async def close(self) -> None:
        """Close the wrapped store (if it can be closed)."""
        close = getattr(self._store, "close", None)
        if close is not None:
            await close()

    async def __aenter__(self) -> Self:
        enter = getattr(self._store, "__aenter__", None)
        if enter is not None:
            await enter()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        leave = getattr(self._store, "__aexit__", None)
        if leave is not None:
            await leave(exc_type, exc, traceback)
        else:
            await self.close()


class ExternalLionagiMemoryStore(LionagiMemoryStore):
    """A :class:`LionagiMemoryStore` over an ``ExternalMemoryStore``: it is one too."""

    __slots__ = ()

    _store: ExternalMemoryStore

    @property
    def manifest(self) -> MemoryAdapterManifest:
        """The wrapped store's ADR-0093 manifest."""
        return self._store.manifest
