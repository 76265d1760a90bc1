"""One InMemoryStore shared by tasks, threads and event loops (SEMANTICS.md §5.7 and L9)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any
from uuid import UUID

from lionmem import InMemoryStore, MemoryItem, MemoryQuery

EVERYTHING = MemoryQuery(limit=1_000_000)
JOIN_SECONDS = 60.0


async def order(store: InMemoryStore) -> list[UUID]:
    return [item.id for item in await store.search(EVERYTHING)]


def run_in_threads(
    workers: list[Callable[[], Coroutine[Any, Any, None]]],
) -> list[BaseException]:
    """Run each coroutine factory with asyncio.run in its own daemon thread; return their errors.

    Fails the calling test if a thread is still running after JOIN_SECONDS (a hang).
    """
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def body(worker: Callable[[], Coroutine[Any, Any, None]]) -> None:
        try:
            start.wait(timeout=JOIN_SECONDS)
            asyncio.run(worker())
        except BaseException as error:  # reported to the test thread, which fails on it
            errors.append(error)

    threads = [threading.Thread(target=body, args=(w,), daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=JOIN_SECONDS)
    alive = [thread.name for thread in threads if thread.is_alive()]
    assert not alive, f"threads still running after {JOIN_SECONDS}s: {alive}"
    return errors


def writer(
    store: InMemoryStore, batch: list[MemoryItem], started: threading.Event | None = None
) -> Callable[[], Coroutine[Any, Any, None]]:
    """Return a worker for ``run_in_threads`` that stores ``batch`` one item at a time.

    It sets ``started`` (if given) first, so a reader can wait until writing has begun.
    """

    async def work() -> None:
        if started is not None:
            started.set()
        for item in batch:
            await store.store(item)

    return work


# ---------------------------------------------------------------- one event loop


async def test_gathered_stores_return_ids_in_submission_order() -> None:
    """gather of 200 store() calls returns the ids in submission order."""
    store = InMemoryStore()
    items = [MemoryItem(content=n) for n in range(200)]
    assert await asyncio.gather(*(store.store(i) for i in items)) == [i.id for i in items]


async def test_gathered_stores_keep_submission_order() -> None:
    """After gather of 200 store() calls, the insertion order is the submission order."""
    store = InMemoryStore()
    items = [MemoryItem(content=n) for n in range(200)]
    await asyncio.gather(*(store.store(i) for i in items))
    assert await order(store) == [i.id for i in items]


async def test_tasks_storing_and_searching_lose_nothing() -> None:
    """200 tasks, each storing then searching, leave all 200 items, in submission order."""
    store = InMemoryStore()
    items = [MemoryItem(content=f"item {n}", tags=[str(n % 3)]) for n in range(200)]

    async def store_then_search(item: MemoryItem) -> list[MemoryItem]:
        await store.store(item)
        return await store.search(MemoryQuery(tags=item.tags, limit=1_000_000))

    found = await asyncio.gather(*(store_then_search(i) for i in items))
    assert await order(store) == [i.id for i in items]
    assert all(item in hits for item, hits in zip(items, found, strict=True))


async def test_searches_during_stores_see_a_growing_prefix() -> None:
    """Searches interleaved with stores each see a prefix of the final order, never shrinking."""
    store = InMemoryStore()
    items = [MemoryItem(content=n) for n in range(200)]
    calls: list[Coroutine[Any, Any, Any]] = []
    for item in items:
        calls.append(store.store(item))
        calls.append(store.search(EVERYTHING))
    outcomes = await asyncio.gather(*calls)
    final = [i.id for i in items]
    lengths = []
    for seen in outcomes[1::2]:
        ids = [i.id for i in seen]
        assert ids == final[: len(ids)]
        lengths.append(len(ids))
    assert lengths == sorted(lengths)
    assert lengths[-1] == 200


async def test_gathered_replacements_leave_the_last_submitted() -> None:
    """gather of 49 replacements of one id leaves one entry: the last submitted object."""
    store = InMemoryStore()
    first = MemoryItem(content=0)
    versions = [first, *(MemoryItem(id=first.id, content=n) for n in range(1, 49))]
    await asyncio.gather(*(store.store(v) for v in versions))
    assert [i.content for i in await store.search(EVERYTHING)] == [48]
    assert await store.retrieve(first.id) is versions[-1]


def test_store_survives_sequential_event_loops() -> None:
    """One store is used by successive asyncio.run() calls, each with a new loop."""
    store = InMemoryStore()
    items = [MemoryItem(content=n) for n in range(3)]
    for item in items:
        asyncio.run(store.store(item))
    assert asyncio.run(order(store)) == [i.id for i in items]


# ---------------------------------------------------------------- threads with their own loops


def test_eight_threads_with_own_loops_lose_nothing() -> None:
    """8 threads, each with its own event loop, storing 300 items each, keep all 2400."""
    store = InMemoryStore()
    batches = [[MemoryItem(content=(t, n)) for n in range(300)] for t in range(8)]

    assert run_in_threads([writer(store, b) for b in batches]) == []
    final = asyncio.run(order(store))
    assert sorted(final) == sorted(i.id for b in batches for i in b)


def test_each_threads_items_keep_their_relative_order() -> None:
    """Items stored by one thread appear in the final order in the order that thread stored them."""
    store = InMemoryStore()
    batches = [[MemoryItem(content=(t, n)) for n in range(200)] for t in range(4)]

    assert run_in_threads([writer(store, b) for b in batches]) == []
    final = asyncio.run(order(store))
    for batch in batches:
        mine = {i.id for i in batch}
        assert [i for i in final if i in mine] == [i.id for i in batch]


def test_searches_in_other_threads_see_prefixes() -> None:
    """A thread searching while 4 threads store always sees a prefix of the final order."""
    store = InMemoryStore()
    batches = [[MemoryItem(content=(t, n)) for n in range(300)] for t in range(4)]
    snapshots: list[list[UUID]] = []
    writing = threading.Event()

    async def reader() -> None:
        writing.wait(timeout=JOIN_SECONDS)
        for _ in range(200):
            snapshots.append(await order(store))
            await asyncio.sleep(0)

    assert run_in_threads([*(writer(store, b, started=writing) for b in batches), reader]) == []
    final = asyncio.run(order(store))
    assert len(final) == 1200
    assert all(seen == final[: len(seen)] for seen in snapshots)
    lengths = [len(seen) for seen in snapshots]
    assert lengths == sorted(lengths)


def test_threads_replacing_the_same_ids_keep_one_entry_each() -> None:
    """8 threads storing versions of the same 50 ids leave 50 entries, each one of its versions."""
    store = InMemoryStore()
    ids = [MemoryItem().id for _ in range(50)]
    batches = [[MemoryItem(id=i, content=(t, n)) for n, i in enumerate(ids)] for t in range(8)]

    assert run_in_threads([writer(store, b) for b in batches]) == []
    final = asyncio.run(store.search(EVERYTHING))
    assert sorted(i.id for i in final) == sorted(ids)
    versions = {(b.id, id(b)) for batch in batches for b in batch}
    assert all((i.id, id(i)) in versions for i in final)


def test_threads_retrieving_while_others_store_find_every_stored_item() -> None:
    """Retrieves in other threads find every item once it is stored, never a wrong one."""
    store = InMemoryStore()
    items = [MemoryItem(content=n) for n in range(400)]
    stored_up_to = [0]
    wrong: list[UUID] = []

    async def write() -> None:
        for n, item in enumerate(items):
            await store.store(item)
            stored_up_to[0] = n + 1

    async def read() -> None:
        for _ in range(400):
            known = stored_up_to[0]
            for item in items[:known][-5:]:
                if await store.retrieve(item.id) is not item:
                    wrong.append(item.id)
            await asyncio.sleep(0)

    assert run_in_threads([write, read, read]) == []
    assert wrong == []


class StoringContent:
    """A content whose ``str()`` stores more items into the store being searched."""

    def __init__(self, store: InMemoryStore, extra: list[MemoryItem]) -> None:
        self.store = store
        self.extra = extra

    def __str__(self) -> str:
        for item in self.extra:
            stored = self.store.store(item)
            try:
                stored.send(None)
            except StopIteration:
                continue
            raise AssertionError("store() awaited")  # pragma: no cover - it never awaits
        self.extra = []
        return "Harbor that stores"


async def test_items_stored_during_a_search_are_left_to_the_next_search() -> None:
    """A search sees the items stored when it began, even when a content's str() stores more."""
    store = InMemoryStore()
    first = [MemoryItem(content=f"Harbor {n}") for n in range(100)]
    extra = [MemoryItem(content=f"Harbor late {n}") for n in range(10)]
    first[50] = MemoryItem(content=StoringContent(store, extra))
    for item in first:
        await store.store(item)
    assert await store.search(MemoryQuery(text="harbor", limit=-1)) == first[:-1]
    assert await store.search(MemoryQuery(text="harbor", limit=10**6)) == first + extra
