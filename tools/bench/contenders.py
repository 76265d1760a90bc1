"""One adapter per contender: how to fill it, and the call each benchmark operation makes.

Every operation is an ``async`` callable taking one argument, awaited in the same loop by
``timing``; the adapters only prepare those callables and their arguments (untimed). The floors
are what a careful programmer would write by hand with no library: an ``async def`` doing one
dict operation for ``store``/``retrieve``, and one specialised single-pass loop per search that
stops after ``limit`` matches (a non-positive limit scans everything, then slices). They share
lionmem's item objects, so both walk the very same memory.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol
from uuid import UUID

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from tools.bench.workload import ItemSpec, QuerySpec

__all__ = ["CONTENDERS", "Call", "Contender", "Floor", "LangGraph", "Lionagi", "Lionmem"]

AsyncFn = Callable[[Any], Awaitable[Any]]
Call = tuple[AsyncFn, Any]
"""An async function and the argument each call passes it."""

NAMESPACE = ("bench",)


class Contender(Protocol):
    """What the harness needs from a store under test."""

    name: str

    def fill(self, specs: Iterable[ItemSpec], shared: list[MemoryItem]) -> Callable[[], Any]:
        """Return a coroutine function that stores every item (the harness runs and traces it)."""
        ...

    def new_items(self, specs: list[ItemSpec]) -> list[Any]:
        """Build the arguments of ``len(specs)`` store calls, fresh objects each time (untimed)."""
        ...

    @property
    def store(self) -> AsyncFn:
        """The async function timed as ``store``."""
        ...

    @property
    def retrieve(self) -> AsyncFn:
        """The async function timed as ``retrieve``."""
        ...

    def key(self, item_id: UUID) -> Any:
        """The argument ``retrieve`` takes for this id."""
        ...

    def search(self, query: QuerySpec, n: int) -> Call | None:
        """The call timed for this search, or ``None`` when the contender has no equivalent."""
        ...

    def ids(self, found: Any) -> list[str]:
        """The ids of a search result, in order, to check that every contender agrees."""
        ...


class _Seam:
    """A store with ADR-0092's three methods, holding items of ``item_class``."""

    name: str

    def __init__(self, store: Any, item_class: Callable[..., Any], query_class: Callable[..., Any]):
        self._store: Any = store
        self._item_class = item_class
        self._query_class = query_class

    def fill(self, specs: Iterable[ItemSpec], shared: list[MemoryItem]) -> Callable[[], Any]:
        items = self._fill_items(specs, shared)
        store = self._store.store

        async def run() -> None:
            for item in items:
                await store(item)

        return run

    def _fill_items(self, specs: Iterable[ItemSpec], shared: list[MemoryItem]) -> list[Any]:
        return self.new_items(list(specs))

    def new_items(self, specs: list[ItemSpec]) -> list[Any]:
        make = self._item_class
        return [make(**spec.kwargs()) for spec in specs]

    @property
    def store(self) -> AsyncFn:
        method: AsyncFn = self._store.store
        return method

    @property
    def retrieve(self) -> AsyncFn:
        method: AsyncFn = self._store.retrieve
        return method

    def key(self, item_id: UUID) -> Any:
        return item_id

    def search(self, query: QuerySpec, n: int) -> Call | None:
        return self._store.search, self._query_class(**query.fields(n))

    def ids(self, found: Any) -> list[str]:
        return [str(item.id) for item in found]


class Lionmem(_Seam):
    """lionmem's ``InMemoryStore`` holding lionmem ``MemoryItem`` objects."""

    name = "lionmem"

    def __init__(self) -> None:
        super().__init__(InMemoryStore(), MemoryItem, MemoryQuery)

    def _fill_items(self, specs: Iterable[ItemSpec], shared: list[MemoryItem]) -> list[Any]:
        return shared  # the very objects the floor holds, so both walk the same memory


class Lionagi(_Seam):
    """lionagi 0.36.0's ``InMemoryStore`` holding lionagi ``MemoryItem`` objects."""

    name = "lionagi"

    def __init__(self) -> None:
        import lionagi

        super().__init__(lionagi.InMemoryStore(), lionagi.MemoryItem, lionagi.MemoryQuery)


class LangGraph:
    """LangGraph's ``InMemoryStore`` (one namespace; values hold content, tags and the metadata keys).

    Only the operations with the same meaning are timed: put, get, and a search with no query
    (LangGraph's ``query`` needs an embedding index and is ignored without one) and an equality
    ``filter`` over the value's keys. It has no substring text search, no tag match and no
    negative limit.
    """

    name = "langgraph"

    def __init__(self) -> None:
        from langgraph.store.memory import InMemoryStore as Store

        self._store = Store()

    def fill(self, specs: Iterable[ItemSpec], shared: list[MemoryItem]) -> Callable[[], Any]:
        pairs = self.new_items(list(specs))
        put = self.store

        async def run() -> None:
            for pair in pairs:
                await put(pair)

        return run

    def new_items(self, specs: list[ItemSpec]) -> list[Any]:
        return [
            (str(s.id), {"content": s.content, "tags": list(s.tags), **s.metadata}) for s in specs
        ]

    @property
    def store(self) -> AsyncFn:
        aput = self._store.aput

        async def put(pair: tuple[str, dict[str, Any]]) -> None:
            await aput(NAMESPACE, pair[0], pair[1])

        return put

    @property
    def retrieve(self) -> AsyncFn:
        aget = self._store.aget

        async def get(key: str) -> Any:
            return await aget(NAMESPACE, key)

        return get

    def key(self, item_id: UUID) -> Any:
        return str(item_id)

    def search(self, query: QuerySpec, n: int) -> Call | None:
        if not query.langgraph:
            return None
        fields = query.fields(n)
        asearch = self._store.asearch

        async def search(arg: tuple[dict[str, Any] | None, int]) -> Any:
            return await asearch(NAMESPACE, filter=arg[0], limit=arg[1])

        return search, (fields["filters"], fields["limit"])

    def ids(self, found: Any) -> list[str]:
        return [item.key for item in found]


class Floor:
    """The pure-Python floor: a dict keyed by id and one hand-specialised loop per search."""

    name = "floor"

    def __init__(self) -> None:
        self._data: dict[UUID, MemoryItem] = {}

    def fill(self, specs: Iterable[ItemSpec], shared: list[MemoryItem]) -> Callable[[], Any]:
        store = self.store

        async def run() -> None:
            for item in shared:
                await store(item)

        return run

    def new_items(self, specs: list[ItemSpec]) -> list[Any]:
        return [MemoryItem(**spec.kwargs()) for spec in specs]

    @property
    def store(self) -> AsyncFn:
        data = self._data

        async def store(item: MemoryItem) -> UUID:
            data[item.id] = item
            return item.id

        return store

    @property
    def retrieve(self) -> AsyncFn:
        data = self._data

        async def retrieve(key: UUID) -> MemoryItem | None:
            return data.get(key)

        return retrieve

    def key(self, item_id: UUID) -> Any:
        return item_id

    def search(self, query: QuerySpec, n: int) -> Call | None:
        fields = query.fields(n)
        limit: int = fields["limit"]
        text: str | None = fields["text"]
        tags: list[str] | None = fields["tags"]
        filters: dict[str, Any] | None = fields["filters"]
        values = self._data.values()
        if text is None and tags is None and filters is None:
            return _floor_all(values), limit
        if tags is None and filters is None:
            return _floor_text(values), (text.lower() if text else "", limit)
        if text is None and filters is None:
            return _floor_tags(values), (set(tags or ()), limit)
        if text is None and tags is None:
            return _floor_filters(values), (list((filters or {}).items()), limit)
        needle = text.lower() if text else ""
        conditions = list((filters or {}).items())
        return _floor_combined(values), (needle, set(tags or ()), conditions, limit)

    def ids(self, found: Any) -> list[str]:
        return [str(item.id) for item in found]


# The floors below are deliberately plain: one loop, one predicate, stop at `limit` matches.


def _floor_all(values: Iterable[MemoryItem]) -> AsyncFn:
    async def search(limit: int) -> list[MemoryItem]:
        out = []
        for item in values:
            out.append(item)
            if len(out) == limit:
                break
        return out[:limit] if limit < 0 else out

    return search


def _floor_text(values: Iterable[MemoryItem]) -> AsyncFn:
    async def search(arg: tuple[str, int]) -> list[MemoryItem]:
        needle, limit = arg
        out = []
        for item in values:
            if needle in str(item.content).lower():
                out.append(item)
                if len(out) == limit:
                    break
        return out[:limit] if limit < 0 else out

    return search


def _floor_tags(values: Iterable[MemoryItem]) -> AsyncFn:
    async def search(arg: tuple[set[str], int]) -> list[MemoryItem]:
        wanted, limit = arg
        out = []
        for item in values:
            if not wanted.isdisjoint(item.tags):
                out.append(item)
                if len(out) == limit:
                    break
        return out[:limit] if limit < 0 else out

    return search


def _floor_filters(values: Iterable[MemoryItem]) -> AsyncFn:
    async def search(arg: tuple[list[tuple[str, Any]], int]) -> list[MemoryItem]:
        conditions, limit = arg
        out = []
        for item in values:
            metadata = item.metadata
            for key, value in conditions:
                if not metadata.get(key) == value:  # noqa: SIM201 -- == exactly, as the reference; != may differ
                    break
            else:
                out.append(item)
                if len(out) == limit:
                    break
        return out[:limit] if limit < 0 else out

    return search


def _floor_combined(values: Iterable[MemoryItem]) -> AsyncFn:
    async def search(arg: tuple[str, set[str], list[tuple[str, Any]], int]) -> list[MemoryItem]:
        needle, wanted, conditions, limit = arg
        out = []
        for item in values:
            if needle not in str(item.content).lower() or wanted.isdisjoint(item.tags):
                continue
            metadata = item.metadata
            for key, value in conditions:
                if not metadata.get(key) == value:  # noqa: SIM201 -- == exactly, as the reference; != may differ
                    break
            else:
                out.append(item)
                if len(out) == limit:
                    break
        return out[:limit] if limit < 0 else out

    return search


CONTENDERS: dict[str, Callable[[], Contender]] = {
    "lionmem": Lionmem,
    "floor": Floor,
    "lionagi": Lionagi,
    "langgraph": LangGraph,
}
"""Every contender, in the order the tables show them."""
