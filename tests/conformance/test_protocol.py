"""MemoryStore: the structural protocol of SEMANTICS.md §4 and the cross-backend fence of ADR-0092 D2."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from uuid import UUID, uuid4

import pytest

from lionmem import InMemoryStore, MemoryItem, MemoryQuery, MemoryStore


class BareStore:
    """A minimal implementor that shares no code with InMemoryStore."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[str, object, list[str]]] = {}

    async def store(self, item: MemoryItem) -> UUID:
        self.rows[str(item.id)] = (str(item.id), item.content, list(item.tags))
        return UUID(str(item.id))

    async def retrieve(self, item_id: UUID) -> MemoryItem | None:
        row = self.rows.get(str(item_id))
        if row is None:
            return None
        return MemoryItem(id=row[0], content=row[1], tags=row[2])

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        return []


BACKENDS: list[Callable[[], MemoryStore]] = [InMemoryStore, BareStore]


@pytest.fixture(params=BACKENDS, ids=["InMemoryStore", "BareStore"])
def backend(request: pytest.FixtureRequest) -> MemoryStore:
    factory: Callable[[], MemoryStore] = request.param
    return factory()


# ---------------------------------------------------------------- the ADR-0092 D2 fence


def test_fence_runtime_shape(backend: MemoryStore) -> None:
    """isinstance(store, MemoryStore) is true."""
    assert isinstance(backend, MemoryStore)


async def test_fence_store_returns_the_item_id(backend: MemoryStore) -> None:
    """store() returns a UUID equal to item.id."""
    item = MemoryItem(content="c", tags=["t"])
    returned = await backend.store(item)
    assert isinstance(returned, UUID)
    assert returned == item.id


async def test_fence_retrieve_after_store_keeps_id_content_and_tags(backend: MemoryStore) -> None:
    """retrieve() after store() returns a MemoryItem with the same id, content and tags."""
    item = MemoryItem(content={"k": [1, "two"]}, tags=["a", "b"])
    await backend.store(item)
    found = await backend.retrieve(item.id)
    assert isinstance(found, MemoryItem)
    assert (found.id, found.content, found.tags) == (item.id, item.content, item.tags)


async def test_fence_unknown_id_is_none(backend: MemoryStore) -> None:
    """retrieve() of an id never stored returns None."""
    await backend.store(MemoryItem())
    assert await backend.retrieve(uuid4()) is None


async def test_fence_search_returns_a_list(backend: MemoryStore) -> None:
    """search() returns a list (its matching rules are not part of the fence)."""
    assert isinstance(await backend.search(MemoryQuery()), list)


# ---------------------------------------------------------------- §4 the protocol itself


def test_protocol_declares_exactly_three_async_methods() -> None:
    """MemoryStore declares store, retrieve and search, each a coroutine function, and nothing else."""
    declared = {
        name
        for name, value in vars(MemoryStore).items()
        if not name.startswith("_") and inspect.isfunction(value)
    }
    assert declared == {"store", "retrieve", "search"}
    assert all(inspect.iscoroutinefunction(vars(MemoryStore)[name]) for name in declared)


def test_isinstance_accepts_sync_methods() -> None:
    """The runtime check only looks for the attributes, so sync methods pass."""

    class Sync:
        def store(self) -> None: ...
        def retrieve(self) -> None: ...
        def search(self) -> None: ...

    assert isinstance(Sync(), MemoryStore)


def test_isinstance_accepts_non_callable_attributes() -> None:
    """Even store = 1, retrieve = 2, search = 3 satisfies the runtime check."""

    class Numbers:
        store = 1
        retrieve = 2
        search = 3

    assert isinstance(Numbers(), MemoryStore)


@pytest.mark.parametrize("missing", ["store", "retrieve", "search"])
def test_isinstance_rejects_a_missing_method(missing: str) -> None:
    """An object lacking one of the three attributes is not a MemoryStore."""
    attributes = {name: 1 for name in ("store", "retrieve", "search") if name != missing}
    partial = type("Partial", (), attributes)
    assert not isinstance(partial(), MemoryStore)


def test_protocol_cannot_be_instantiated() -> None:
    """MemoryStore() raises TypeError: protocols cannot be instantiated."""
    with pytest.raises(TypeError, match="Protocols cannot be instantiated"):
        MemoryStore()  # type: ignore[misc]  # instantiating the protocol is the error under test


def test_in_memory_store_is_a_structural_subclass() -> None:
    """issubclass(InMemoryStore, MemoryStore) is true without inheritance."""
    assert issubclass(InMemoryStore, MemoryStore)
    assert MemoryStore not in InMemoryStore.__mro__
