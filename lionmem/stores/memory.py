"""InMemoryStore: the in-process reference store, exact to lionagi 0.36.0 (SEMANTICS.md §5).

What it matches: ``store`` returns ``item.id``, appends a new id and replaces an existing one in
place; ``retrieve`` returns the stored object itself; ``search`` applies text, then tags, then
filters, then ``results[:limit]``, over the items in insertion order, and returns the live
objects. Where lionmem deliberately differs (SEMANTICS.md §9): only ``MemoryItem`` (or a subclass)
is stored (L5); ``retrieve`` takes a ``UUID`` or a UUID string and gives ``None`` for anything
else (L6); ``search`` takes a ``MemoryQuery`` (L7); a positive limit stops the scan once it is
reached and ``limit=0`` returns at once (L8); one store is safe across tasks, threads and event
loops (L9).

Layout (issue 7: as fast as CPython allows). The items live in one ``dict`` from id to item. A
dict keeps insertion order, and assigning to an existing key keeps its place: that is exactly
the reference's order (first insertion; a replacement stays where it was). So ``store`` is one
dictionary assignment, ``retrieve`` one lookup, and the store's own memory is the dict's table.
Items are never removed, so the position of an id never changes.

Text cache. For each position, the cache holds the content string it last saw there and that
string's ``str.lower()``. It is used only while the item at that position holds that very
object (``is``), which is then a plain ``str``: immutable, and returned unchanged by ``str()``, so
its lowered text is still right. Any other content (a ``dict`` or ``list``, which may change in
place, or a ``str`` subclass, which may override ``__str__``) goes through ``str(content).lower()``
on every search, as in the reference; a reassigned content is a different object and misses the
cache. So changes made after ``store`` are always seen. Text searches fill the cache as they
go; it costs two list slots per position plus the lowered copies, and keeps the last string it
saw at a position alive until a search sees that position again.

Scanning. A search copies the items stored when it started out of the dict a chunk at a time
(chunks sized to what a positive limit still needs). For text, a first walk compares each
item's content with the cached string and tests the cached lowered text; no user code runs
there, so it may look at items past the limit without any observable effect. The walk is one
call into C (``lionmem/_speedups.c``), which reads ``content`` straight from the item's ``__dict__``
when the item's type reads it from there too, and hands any other item back as a miss;
``_walk_cached`` is the same walk in Python, its specification and its stand-in where the C
module was not built. Tags and filters
then run, in order, on those text matches, up to the limit. From the first item whose content is
not its cached string, the rest of the chunk is evaluated with every rule and the cache
refreshed: its leading exact-``str`` contents lowered and tested in C (their ``str()`` runs no
user code), then, from the first other content on, item by item, each content read just before
its text is tested, as in the reference. Tags and filters alone are evaluated item by item
straight from the dict.

Concurrency: the methods never await, so within one event loop each call runs whole, in
submission order. Across threads, a write is one dict assignment (atomic under the GIL). If
another thread adds an item while a search reads the dict, the dict's iterator refuses to go on;
the search then resumes at the same position. A search sees the items stored when it started (a
prefix of the insertion order); an item replaced by another thread during a search is seen as
either its old or its new object. The cache's two lists are read together by ``zip``, one
position per step of C code (no other thread runs within a step; the C walk reads them in one
step), and written under a lock in an order that never shows a string with another string's
lowered text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress, count, islice, repeat
from operator import attrgetter, contains, is_, is_not, length_hint
from typing import Any
from uuid import UUID

from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = ["InMemoryStore"]

_FIRST_CHUNK = 64
_MAX_CHUNK = 2048
_CONTENT = attrgetter("content")
_UNSEEN: Any = object()  # a position the cache holds nothing for: no content is this object


class _TextCache:
    """Per position: the content string last seen there, and its ``str.lower()``."""

    __slots__ = ("lock", "lowered", "sources")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sources: list[Any] = []
        self.lowered: list[Any] = []

    def reserve(self, size: int) -> None:
        """Make room for ``size`` positions."""
        if len(self.sources) < size:
            with self.lock:
                missing = size - len(self.sources)
                if missing > 0:
                    self.lowered.extend(repeat(_UNSEEN, missing))
                    self.sources.extend(repeat(_UNSEEN, missing))

    def update(self, positions: Sequence[int], strings: list[str], lows: list[str]) -> None:
        """Remember the strings a scan found at ``positions``, with their lowered texts.

        Each position is first marked unseen, then given its lowered text, then its string, so a
        reader sees either a miss or a string with its own lowered text.
        """
        first, last = positions[0], positions[-1]
        with self.lock:
            sources, lowered = self.sources, self.lowered
            if last - first + 1 == len(positions):  # one run of positions: three steps in C
                sources[first : last + 1] = repeat(_UNSEEN, len(positions))
                lowered[first : last + 1] = lows
                sources[first : last + 1] = strings
                return
            for position, source, low in zip(positions, strings, lows, strict=True):
                sources[position] = _UNSEEN
                lowered[position] = low
                sources[position] = source


def _zip_from(
    sources: list[Any], lowered: list[Any], chunk: Iterable[MemoryItem], start: int
) -> Iterator[tuple[Any, Any, MemoryItem]]:
    """``(cached string, its lowered text, item)`` for the items of ``chunk``, at ``start`` on.

    One step of ``zip`` reads the three in C, with no other Python thread running between.
    The cache's lists are longer than any chunk, so the walk ends with ``chunk``.
    """
    sources_from = iter(sources)
    lowered_from = iter(lowered)
    sources_from.__setstate__(start)  # type: ignore[attr-defined]  # list iterators have it
    lowered_from.__setstate__(start)  # type: ignore[attr-defined]  # list iterators have it
    return zip(sources_from, lowered_from, chunk, strict=False)


def _walk_cached(  # noqa: PLR0913, PLR0917 -- the C scan's signature: positional, for one fast call
    chunk: Iterable[MemoryItem],
    sources: list[Any],
    lowered: list[Any],
    start: int,
    needle: str,
    needed: int,
) -> tuple[list[MemoryItem], MemoryItem | None]:
    """The items of ``chunk`` (at ``start`` on) that hold their cached string and whose cached lowered text has ``needle``.

    Stops at the first item whose content is not its cached string, returned as missed, or
    once ``needed`` matches are found (-1: never). The C module ``lionmem._speedups`` does the
    same walk in one step, reading ``content`` straight from the item's ``__dict__`` where that
    is what ``item.content`` gives; this is its specification and its stand-in when it is not
    built.
    """
    hits: list[MemoryItem] = []
    for cached, low, item in _zip_from(sources, lowered, chunk, start):
        if item.content is not cached:
            return hits, item
        if needle in low:
            hits.append(item)
            if len(hits) == needed:
                break
    return hits, None


_scan_cached: Callable[
    [Iterable[MemoryItem], list[Any], list[Any], int, str, int],
    tuple[list[MemoryItem], MemoryItem | None],
]
try:
    from lionmem._speedups import scan as _c_scan

    _scan_cached = _c_scan
except ImportError:  # not built (no C compiler where it was installed): the same walk in Python
    _scan_cached = _walk_cached


class _Search:
    """One search's predicates: the lowered needle ("" for none), the wanted tags, the filters, the limit."""

    __slots__ = ("conditions", "limit", "needle", "rest", "wanted")

    def __init__(
        self,
        needle: str,
        wanted: set[str] | None,
        conditions: list[tuple[str, Any]] | None,
        limit: int,
    ) -> None:
        self.needle = needle
        self.wanted = wanted
        self.conditions = conditions
        self.limit = limit
        self.rest = wanted is not None or conditions is not None  # predicates after text

    def keep(self, item: MemoryItem) -> bool:
        """Tags, then filters, for one item, as the reference evaluates them."""
        if self.wanted is not None and self.wanted.isdisjoint(item.tags):
            return False
        if self.conditions is not None:
            metadata = item.metadata
            for key, value in self.conditions:
                if not metadata.get(key) == value:  # noqa: SIM201 -- the truth of ==, as the reference; __ne__ may disagree
                    return False
        return True


class InMemoryStore:
    """The default ``MemoryStore``: an ordered dict of ``MemoryItem`` with substring, tag and filter search."""

    __slots__ = ("_cache", "_items")

    def __init__(self) -> None:
        self._items: dict[UUID, MemoryItem] = {}
        self._cache = _TextCache()

    def __getstate__(self) -> list[MemoryItem]:
        return list(self._items.values())

    def __setstate__(self, state: list[MemoryItem]) -> None:
        self._items = {item.id: item for item in state}
        self._cache = _TextCache()

    async def store(self, item: MemoryItem) -> UUID:
        """Store ``item`` itself (no copy), replacing any item with its id in place; return ``item.id``."""
        if type(item) is not MemoryItem and not isinstance(item, MemoryItem):
            hint = "; store the items one at a time" if isinstance(item, list | tuple) else ""
            msg = f"store() takes a MemoryItem (or a subclass), got {type(item).__qualname__}{hint}"
            raise TypeError(msg)
        key = item.id
        self._items[key] = item
        return key

    async def retrieve(self, item_id: UUID | str) -> MemoryItem | None:
        """Return the stored object with this id (a UUID or any string ``uuid.UUID()`` parses), else ``None``."""
        if isinstance(item_id, UUID):
            return self._items.get(item_id)
        if isinstance(item_id, str):
            try:
                key = UUID(item_id)
            except ValueError:
                return None
            return self._items.get(key)
        return None

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        """Return the stored objects matching ``query``, in insertion order, cut as ``[:query.limit]``.

        ``text`` (when truthy) matches when ``text.lower()`` is in ``str(content).lower()``;
        ``tags`` (when truthy) match when the item carries at least one of them; ``filters``
        (when truthy) match when ``metadata.get(key) == value`` for every key, in order.
        """
        if type(query) is not MemoryQuery and not isinstance(query, MemoryQuery):
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
        tags = query.tags
        filters = query.filters
        if not text and not tags and not filters:
            return _first(self._items, limit)
        search = _Search(
            text.lower() if text else "",  # a non-empty text never lowers to ""
            set(tags) if tags else None,
            list(filters.items()) if filters else None,
            limit,
        )
        if search.needle:
            return _scan_text(self._items, self._cache, search)
        return _scan(self._items, search)


def _first(items: dict[UUID, MemoryItem], limit: int) -> list[MemoryItem]:
    """All items, in order, cut as ``[:limit]`` (``limit`` is not 0)."""
    while True:
        try:
            if 0 < limit < len(items):
                return list(islice(items.values(), limit))
            return list(items.values())[:limit]
        except RuntimeError:  # another thread added an item during the copy: copy again
            continue


def _iterate_from(items: dict[UUID, MemoryItem], position: int) -> Iterator[MemoryItem]:
    """A fresh iterator over the dict's items, advanced to ``position`` (in C, without copying).

    Another thread may add an item between ``iter()`` and the skip, and the new iterator then
    refuses to go on; nothing has been evaluated yet, so make it again.
    """
    while True:
        source = iter(items.values())
        try:
            next(islice(source, position, position), None)
        except RuntimeError:
            continue
        return source


def _take(
    items: dict[UUID, MemoryItem], source: Iterator[MemoryItem], position: int, count: int
) -> tuple[Iterator[MemoryItem], list[MemoryItem]]:
    """Copy ``count`` items from ``position`` on (where ``source`` stands) in one step of C code.

    If another thread added an item since ``source`` was made, the dict's iterator refuses to go
    on; a new iterator then starts at ``position`` and the copy is made again.
    """
    while True:
        try:
            return source, list(islice(source, count))
        except RuntimeError:
            source = _iterate_from(items, position)


def _offset_in(items: dict[UUID, MemoryItem], start: int, count: int, item: MemoryItem) -> int:
    """The offset of ``item``'s id among the ``count`` ids from position ``start`` (rare: a resume)."""
    key = item.id
    while True:
        try:
            keys = list(islice(items, start, start + count))
        except RuntimeError:  # another thread added an item during the copy: copy again
            continue
        for offset, candidate in enumerate(keys):
            if candidate is key or candidate == key:
                return offset
        return count - 1  # cannot happen: the item was read from these positions


def _next_size(limit: int, found: int, scanned: int) -> int:
    """Items for the next chunk: about what a positive limit still needs, else the most."""
    if limit < 0:
        return _MAX_CHUNK
    needed = limit - found
    # Scanned items per match so far (no match yet: assume half of one), and a margin.
    estimate = needed * scanned // found if found else needed * scanned * 2
    return max(_FIRST_CHUNK, min(_MAX_CHUNK, estimate + estimate // 8 + 8))


def _scan(items: dict[UUID, MemoryItem], search: _Search) -> list[MemoryItem]:
    """Tags and/or filters, item by item, stopping once a positive limit is reached."""
    wanted, conditions, limit = search.wanted, search.conditions, search.limit
    results: list[MemoryItem] = []
    total = len(items)
    done = 0
    size = _FIRST_CHUNK if limit > 0 else _MAX_CHUNK
    known = total  # the dict's size, read before `source` is made
    source = iter(items.values())
    while done < total:
        count = min(size, total - done)
        item: MemoryItem | None = None
        try:
            for item in islice(source, count):
                if wanted is not None and wanted.isdisjoint(item.tags):
                    continue
                if conditions is not None:
                    metadata = item.metadata
                    for key, value in conditions:
                        if not metadata.get(key) == value:  # noqa: SIM201 -- the truth of ==, as the reference
                            break
                    else:
                        results.append(item)
                        if len(results) == limit:
                            return results
                    continue
                results.append(item)
                if len(results) == limit:
                    return results
        except RuntimeError:
            if len(items) == known:  # the dict did not grow: the error is the item's own
                raise
            # Another thread added an item, so the dict's iterator stopped before giving the
            # next one. Every item up to `item` has been evaluated: resume just after it.
            if item is not None:
                done += _offset_in(items, done, count, item) + 1
            known = len(items)
            source = _iterate_from(items, done)
            continue
        done += count
        size = _next_size(limit, len(results), done)
    return results[:limit] if limit < 0 else results


def _scan_text(
    items: dict[UUID, MemoryItem], cache: _TextCache, search: _Search
) -> list[MemoryItem]:
    """Text, then tags and filters, in effect item by item, stopping once a positive limit is reached."""
    needle, limit, rest = search.needle, search.limit, search.rest
    results: list[MemoryItem] = []
    total = len(items)
    cache.reserve(total)
    done = 0
    size = _FIRST_CHUNK if limit > 0 else _MAX_CHUNK
    # The dict's size, read before `source` is made: if it grew in between, the checks below
    # see a change and read the chunk again, which is harmless.
    known = len(items)
    source = iter(items.values())
    while done < total:
        count = min(size, total - done)
        # Without other predicates, the text matches still needed (-1: all of them).
        needed = limit - len(results) if limit > 0 and not rest else -1
        ahead = length_hint(source)  # items the dict's iterator has yet to give
        try:
            hits, missed = _scan_cached(
                islice(source, count), cache.sources, cache.lowered, done, needle, needed
            )
            if len(hits) == needed:
                return [*results, *hits]
        except RuntimeError:
            if len(items) == known:  # the dict did not grow: the error is the item's own
                raise
            # Another thread added an item: nothing observable has run for this chunk yet, so
            # read it again with a new iterator.
            known = len(items)
            source = _iterate_from(items, done)
            continue
        if missed is not None:
            # The iterator's count of what is left tells how many items were read, unless
            # another thread has grown the dict since (its count is then unreliable): in that
            # case read the chunk again, as nothing observable has run yet.
            seen = ahead - length_hint(source) - 1
            if len(items) != known:
                known = len(items)
                source = _iterate_from(items, done)
                continue
        # Every item before `missed` held its cached string: only cached text was read, so
        # nothing the user can observe has run. Now the other predicates, in order.
        if _collect(hits, search, results):
            return results
        if missed is not None:
            # From `missed` on, contents are not all their cached strings: every rule, item by
            # item, for the rest of the chunk (refreshing the cache).
            source, tail = _take(items, source, done + seen + 1, count - seen - 1)
            if _evaluate([missed, *tail], done + seen, cache, search, results):
                return results
        elif len(items) != known:
            # The chunk was read whole before another thread grew the dict; go on from the
            # next position with a new iterator.
            known = len(items)
            source = _iterate_from(items, done + count)
        done += count
        size = _next_size(limit, len(results), done)
    return results[:limit] if limit < 0 else results


def _evaluate(
    chunk: list[MemoryItem],
    start: int,
    cache: _TextCache,
    search: _Search,
    results: list[MemoryItem],
) -> bool:
    """Every rule, in order, for ``chunk`` (at position ``start``), refreshing the cache; True once the limit is reached.

    The contents are read first. The leading ones that are exact ``str`` are lowered and tested
    in C, where no user code can run (``str()`` of a plain string is the string itself), so the
    results and their order are the reference's. From the first other content on, items are
    read and evaluated one by one, in order: its ``str()`` may run user code, even code that
    changes a later item.
    """
    contents = list(map(_CONTENT, chunk))
    plain = len(contents)
    if not all(map(is_, map(type, contents), repeat(str))):
        plain = next(compress(count(), map(is_not, map(type, contents), repeat(str))))
    if plain:
        strings = contents[:plain]
        lows = list(map(str.lower, strings))
        cache.update(range(start, start + plain), strings, lows)
        if _collect(compress(chunk, map(contains, lows, repeat(search.needle))), search, results):
            return True
    return plain < len(chunk) and _evaluate_each(
        chunk[plain:], start + plain, cache, search, results
    )


def _collect(hits: Iterable[MemoryItem], search: _Search, results: list[MemoryItem]) -> bool:
    """Append the text matches ``hits`` that pass the tags and filters, in order; True once the limit is reached."""
    limit, rest = search.limit, search.rest
    for hit in hits:
        if rest and not search.keep(hit):
            continue
        results.append(hit)
        if len(results) == limit:
            return True
    return False


def _evaluate_each(
    chunk: list[MemoryItem],
    start: int,
    cache: _TextCache,
    search: _Search,
    results: list[MemoryItem],
) -> bool:
    """Every rule for each item of ``chunk`` in turn, reading its content just before its text."""
    needle, limit, rest = search.needle, search.limit, search.rest
    # What to remember, in three lists (tuples would be tracked by the garbage collector).
    positions: list[int] = []
    strings: list[str] = []
    lows: list[str] = []
    reached = False
    for position, (cached, cached_low, item) in enumerate(
        _zip_from(cache.sources, cache.lowered, chunk, start), start
    ):
        content = item.content
        if type(content) is not str:
            low = str(content).lower()
        elif content is cached:
            low = cached_low
        else:
            low = content.lower()
            positions.append(position)
            strings.append(content)
            lows.append(low)
        if needle not in low:
            continue
        if rest and not search.keep(item):
            continue
        results.append(item)
        if len(results) == limit:
            reached = True
            break
    if positions:
        cache.update(positions, strings, lows)
    return reached
