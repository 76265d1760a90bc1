"""InMemoryStore: the in-process reference store, exact to lionagi 0.36.0 (SEMANTICS.md §5).

What it matches: ``store`` returns ``item.id``, appends a new id and replaces an existing one in
place; ``retrieve`` returns the stored object itself; ``search`` applies text, then tags, then
filters, then ``results[:limit]``, over the items in insertion order, and returns the live
objects. Where lionmem deliberately differs (SEMANTICS.md §9): only ``MemoryItem`` (or a subclass)
is stored (L5); ``retrieve`` takes a ``UUID`` or a UUID string and gives ``None`` for anything
else (L6); ``search`` takes a ``MemoryQuery`` (L7); a positive limit stops the scan once it is
reached and ``limit=0`` returns at once (L8); one store is safe across tasks, threads and event
loops (L9).

Concurrency: the methods never await, so within one event loop each call runs whole, in
submission order. Across threads the underlying ``Pile`` takes a ``threading.Lock`` around each
write only. A search walks the items that were stored when it started (a prefix of the insertion
order); an item replaced by another thread during the search is seen as either its old or its
new object.
"""

from __future__ import annotations

from itertools import islice
from typing import Any
from uuid import UUID

from lionmem.pile import Pile
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """The default ``MemoryStore``: a ``Pile`` of ``MemoryItem`` with substring, tag and filter search."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: Pile[MemoryItem] = Pile(item_type=MemoryItem)

    async def store(self, item: MemoryItem) -> UUID:
        """Store ``item`` itself (no copy), replacing any item with its id in place; return ``item.id``."""
        if not isinstance(item, MemoryItem):
            hint = "; store the items one at a time" if isinstance(item, list | tuple) else ""
            msg = f"store() takes a MemoryItem (or a subclass), got {type(item).__qualname__}{hint}"
            raise TypeError(msg)
        self._items.include(item)
        return item.id

    async def retrieve(self, item_id: UUID | str) -> MemoryItem | None:
        """Return the stored object with this id (a UUID or any string ``uuid.UUID()`` parses), else ``None``."""
        if isinstance(item_id, UUID):
            key = item_id
        elif isinstance(item_id, str):
            try:
                key = UUID(item_id)
            except ValueError:
                return None
        else:
            return None
        return self._items.get(key)

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        """Return the stored objects matching ``query``, in insertion order, cut as ``[:query.limit]``.

        ``text`` (when truthy) matches when ``text.lower()`` is in ``str(content).lower()``;
        ``tags`` (when truthy) match when the item carries at least one of them; ``filters``
        (when truthy) match when ``metadata.get(key) == value`` for every key, in order.
        """
        if not isinstance(query, MemoryQuery):
            msg = (
                f"search() takes a MemoryQuery, got {type(query).__qualname__}; "
                "build one with MemoryQuery(text=..., tags=..., filters=..., limit=...)"
            )
            if isinstance(query, dict):
                msg += " or MemoryQuery.model_validate(the_dict)"
            raise TypeError(msg)
        limit = query.limit
        if limit == 0:
            return []
        text = query.text
        needle = text.lower() if text else None
        tags = query.tags
        wanted = set(tags) if tags else None
        filters = query.filters
        conditions = list(filters.items()) if filters else None
        if needle is None and wanted is None and conditions is None:
            if 0 < limit < len(self._items):
                return list(islice(self._items, limit))
            return self._items.values()[:limit]
        return _scan(self._items, needle, wanted, conditions, limit)


def _scan(
    items: Pile[MemoryItem],
    needle: str | None,
    wanted: set[str] | None,
    conditions: list[tuple[str, Any]] | None,
    limit: int,
) -> list[MemoryItem]:
    # Per item, the predicates run in the reference's order (text, tags, filters), so str() is
    # called on every item scanned, as the reference does, until a positive limit is reached.
    results: list[MemoryItem] = []
    for item in items:
        if needle is not None and needle not in str(item.content).lower():
            continue
        if wanted is not None and wanted.isdisjoint(item.tags):
            continue
        if conditions is not None and not _filters_hold(item.metadata, conditions):
            continue
        results.append(item)
        if len(results) == limit:
            break
    return results[:limit] if limit < 0 else results


def _filters_hold(metadata: dict[str, Any], conditions: list[tuple[str, Any]]) -> bool:
    # Keys in the filters' order, stopping at the first miss, as the reference's all() does.
    for key, value in conditions:  # noqa: SIM110 -- a loop costs a fraction of all() over a generator
        if not metadata.get(key) == value:  # noqa: SIM201 -- the reference takes the truth of ==; __ne__ may disagree
            return False
    return True
