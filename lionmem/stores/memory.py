"""InMemoryStore: the in-process reference store, exact to lionagi 0.36.0 (SEMANTICS.md §5).

Why it is exact: the items live in one list in insertion order, a replacement takes its
predecessor's slot, and an index maps each id to its slot; that is the order of lionagi's Pile.
A search is one loop over the items stored when it began, applying to each item text
(``needle in str(content).lower()``), then tags (any of), then filters (all of ``==``): lionagi's
three passes fused into one, with the same matches in the same order; then ``results[:limit]``.
The items are the caller's objects (live).
Deliberate differences (SEMANTICS.md §9): only ``MemoryItem`` is stored (L5); ``retrieve`` takes
a UUID or UUID string, else gives ``None`` (L6); ``search`` takes a ``MemoryQuery`` (L7); a
positive limit stops the loop once reached, ``limit=0`` returns at once (L8). Thread safety (L9):
writes take a lock; slots are never removed, so a reader without the lock sees a prefix of the
insertion order, each slot holding its old or its new item, and never an error.
"""

from __future__ import annotations

import threading
from itertools import islice
from uuid import UUID

from lionmem._coercions import uuid_key
from lionmem._messages import received
from lionmem.guard import not_a_query
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """The default ``MemoryStore``: ``MemoryItem`` objects in insertion order, searched by text, tags and filters."""

    __slots__ = ("_index", "_items", "_lock")

    def __init__(self) -> None:
        self._items: list[MemoryItem] = []
        # An id's slot in _items, keyed by UUID.int: UUIDs are equal exactly when their ints
        # are, and an int hashes without running Python code.
        self._index: dict[int, int] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> list[MemoryItem]:
        return list(self._items)

    def __setstate__(self, state: list[MemoryItem]) -> None:
        self._items = list(state)
        self._index = {item.id.int: slot for slot, item in enumerate(state)}
        self._lock = threading.Lock()

    async def store(self, item: MemoryItem) -> UUID:
        """Store ``item`` itself (no copy), replacing any item with its id in place; return ``item.id``."""
        if not isinstance(item, MemoryItem):
            hint = "; store the items one at a time" if isinstance(item, list | tuple) else ""
            msg = f"store() takes a MemoryItem (or a subclass), got {received(item, MemoryItem)}{hint}"
            raise TypeError(msg)
        key = item.id
        number = key.int
        items = self._items
        index = self._index
        lock = self._lock
        lock.acquire()  # acquire/release: cheaper than `with` on the hottest path
        try:
            if number in index:
                items[index[number]] = item
            else:
                # The slot exists before the index names it, so a reader never misses it.
                items.append(item)
                index[number] = len(items) - 1
        finally:
            lock.release()
        return key

    async def retrieve(self, item_id: UUID | str) -> MemoryItem | None:
        """Return the stored object with this id (a UUID or any string ``uuid.UUID()`` parses), else ``None``."""
        key = item_id if type(item_id) is UUID else uuid_key(item_id)
        if key is None:
            return None
        slot = self._index.get(key.int)
        return None if slot is None else self._items[slot]

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        """Return the stored objects matching ``query``, in insertion order, cut as ``[:query.limit]``.

        ``text`` (when truthy) matches when ``text.lower()`` is in ``str(content).lower()``;
        ``tags`` (when truthy) match when the item carries at least one of them; ``filters``
        (when truthy) match when ``metadata.get(key) == value`` for every key, in order.
        """
        if not isinstance(query, MemoryQuery):
            raise not_a_query(query)
        limit = query.limit
        items = self._items
        if limit == 0:
            return []
        needle = query.text.lower() if query.text else None
        wanted = set(query.tags) if query.tags else None
        conditions = list(query.filters.items()) if query.filters else None
        if needle is None and wanted is None and conditions is None:
            return items[:limit]  # one copy, taken atomically: no predicate runs
        results: list[MemoryItem] = []
        for item in islice(items, len(items)):  # the items stored when the search began
            if needle is not None and needle not in str(item.content).lower():
                continue
            if wanted is not None and wanted.isdisjoint(item.tags):
                continue
            if conditions is not None:
                metadata = item.metadata
                for key, value in conditions:  # in order, stopping at the first miss
                    if not metadata.get(key) == value:  # noqa: SIM201 -- the truth of ==, as the reference; != may disagree
                        break
                else:  # every condition holds
                    results.append(item)
                    if len(results) == limit:
                        return results
                continue
            results.append(item)
            if len(results) == limit:
                return results
        return results[:limit] if limit < 0 else results
