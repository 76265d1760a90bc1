"""PostgresMemoryStore's own behaviour: round trips, refusals, extras, lifecycle and bad input."""

from __future__ import annotations

import asyncio
import copy
import gc
import pickle
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from decimal import Decimal
from typing import Any
from uuid import UUID, uuid4

import asyncpg
import pytest

from lionmem import Branch, MemoryAdapterError, MemoryAdapterUnavailable, MemoryItem, MemoryQuery
from lionmem.errors import UnsupportedMemoryQuery
from lionmem.stores._postgres_query import SELECT
from lionmem.stores.postgres import SERVER_SETTINGS, PostgresMemoryStore, UnrepresentableValueError
from tests.differential import FILTERED, RAISING_FILTERS, outcome
from tests.postgres_support import Cluster
from tests.stores.shared import (
    one_item_for_many_is_refused,
    queries_changed_in_place_answer_as_in_memory,
)

UNREACHABLE = "postgresql://postgres@127.0.0.1:1/none"


def payload(item: MemoryItem | None) -> object:
    if item is None:
        return None
    return (str(item.id), item.created_at.hex(), repr(item.metadata), repr(item.content), item.tags)


async def test_every_field_round_trips_exactly(postgres_dsn: str) -> None:
    """Content, metadata, tags and created_at come back with the same values and types."""
    item = MemoryItem(
        content={"b": [1, 1.0, True, None, -0.0, 1e100, 10**30], "a": "NUL \x00 and \ufffd"},
        metadata={"z": 1, "a": {"nested": [False, 2.5]}, "\x00key": "v"},
        tags=["b", "a", "b", "\x00"],
        created_at=-0.0,
    )
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(item)
        got = await store.retrieve(item.id)
        assert payload(got) == payload(item)
        assert got is not None
        assert got is not item
        assert type(got.id) is UUID
        # str() of a dict escapes NUL, so only plain string content holds one to find.
        plain = MemoryItem(content="a\x00B\ufffd")
        await store.store(plain)
        for needle, expected in (("\x00b", [plain]), ("\ufffd", [item, plain]), ("\ufffdb", [])):
            found = await store.search(MemoryQuery(text=needle))
            assert [payload(i) for i in found] == [payload(i) for i in expected], needle


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ((1, 2), "content"),
        ({"k": {1, 2}}, "content['k']"),
        (float("nan"), "content"),
        ("\ud800", "content"),
        (OrderedDict(a=1), "content"),
        ({1: "int key"}, "content[1]"),
    ],
)
async def test_unrepresentable_values_are_refused_before_writing(
    postgres_dsn: str, content: object, field: str
) -> None:
    """A value JSON cannot give back exactly raises, naming the field; nothing is written."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        kept = MemoryItem(content="kept")
        await store.store(kept)
        with pytest.raises(UnrepresentableValueError) as caught:
            await store.store_many([MemoryItem(content="fine"), MemoryItem(content=content)])
        assert caught.value.field == field
        with pytest.raises(UnrepresentableValueError):
            await store.store(MemoryItem(content=content))
        assert [i.content async for i in store.items()] == ["kept"]


async def test_subclasses_and_non_items_are_refused(postgres_dsn: str) -> None:
    """A MemoryItem subclass is refused (it would not come back); a non-item is a TypeError."""

    class Note(MemoryItem):
        pass

    async with PostgresMemoryStore(postgres_dsn) as store:
        with pytest.raises(UnrepresentableValueError, match="__class__"):
            await store.store(Note(content="x"))
        with pytest.raises(TypeError, match="use store_many"):
            await store.store([MemoryItem(content="x")])  # type: ignore[arg-type]  # wrong on purpose
        await one_item_for_many_is_refused(store)
        assert await store.count() == 0


async def test_a_query_changed_in_place_is_answered_as_in_memory(postgres_dsn: str) -> None:
    """Tags and filter keys that are not strings, put in a query after it was validated."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        await queries_changed_in_place_answer_as_in_memory(store)


async def test_replacement_keeps_the_first_position(postgres_dsn: str) -> None:
    """Storing an existing id replaces the item in place; store_many does the same per id."""
    a, b, c = (MemoryItem(content=name) for name in "abc")
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store_many([a, b])
        await store.store(MemoryItem(id=a.id, content="a2"))
        ids = await store.store_many(
            [c, MemoryItem(id=b.id, content="b2"), MemoryItem(id=c.id, content="c2")]
        )
        assert ids == [c.id, b.id, c.id]
        assert [(i.id, i.content) async for i in store.items()] == [
            (a.id, "a2"),
            (b.id, "b2"),
            (c.id, "c2"),
        ]
        assert await store.count() == 3


async def test_store_many_is_one_transaction(postgres_server: Cluster) -> None:
    """A write the database refuses in the middle of store_many leaves nothing written."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        refuse_bad_content(postgres_server, database, "INSERT")
        items = [MemoryItem(content=str(n)) for n in range(1500)]
        items.insert(1200, MemoryItem(content="bad"))
        with pytest.raises(MemoryAdapterError, match="refused") as caught:
            await store.store_many(items)
        assert not isinstance(caught.value, MemoryAdapterUnavailable)
        assert isinstance(caught.value.__cause__, asyncpg.RaiseError)
        assert await store.count() == 0
        assert await store.store_many(items[:1200]) == [i.id for i in items[:1200]]
        assert await store.count() == 1200


async def test_a_long_store_many_keeps_order_ids_and_atomicity(postgres_dsn: str) -> None:
    """A store_many of several statements keeps the order, stores a repeated id once at its first
    position with its last value, and writes nothing when a late item is refused."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        items = [MemoryItem(content=n) for n in range(2100)]
        repeated = [MemoryItem(id=items[3].id, content="late"), *items[1600:1602]]
        assert await store.store_many([*items, *repeated]) == [i.id for i in [*items, *repeated]]
        expected = [("late" if n == 3 else n) for n in range(2100)]
        assert [i.content async for i in store.items()] == expected
        kept = await store.count()
        bad = [MemoryItem(content=f"new {n}") for n in range(2500)]
        bad.insert(2400, MemoryItem(content=float("nan")))
        with pytest.raises(UnrepresentableValueError) as caught:
            await store.store_many(bad)
        assert caught.value.field == "content"
        assert caught.value.__notes__ == [
            f"store_many(): the item at position 2400, id {bad[2400].id}; none of the items was "
            "written"
        ]
        assert await store.count() == kept == 2100
        assert await store.search(MemoryQuery(text="new ")) == []


async def test_delete_and_count(postgres_dsn: str) -> None:
    """delete says whether there was an item; count follows; a non-id deletes nothing."""
    item = MemoryItem(content="x")
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(item)
        assert await store.count() == 1
        assert await store.delete("not an id") is False
        assert await store.delete(str(item.id)) is True
        assert await store.delete(item.id) is False
        assert await store.retrieve(item.id) is None
        assert await store.count() == 0


async def test_retrieve_takes_uuid_strings_and_ignores_non_ids(postgres_dsn: str) -> None:
    """retrieve accepts a UUID or its string in any spelling; anything else gives None."""
    item = MemoryItem(content="x")
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(item)
        assert payload(await store.retrieve(str(item.id).upper())) == payload(item)
        assert await store.retrieve("nope") is None
        assert await store.retrieve(42) is None  # type: ignore[arg-type]  # wrong on purpose
        assert await store.retrieve(uuid4()) is None


async def test_items_pages_in_insertion_order(postgres_dsn: str) -> None:
    """items() yields every item once, in order, whatever the batch size; items stored during
    a sweep (with no other writer) before it reads its last page come at its end."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        first = [MemoryItem(content=n) for n in range(7)]
        await store.store_many(first)
        seen: list[object] = []
        async for item in store.items(batch_size=2):
            seen.append(item.content)
            if item.content == 2:
                await store.store(MemoryItem(content="late"))
                await store.delete(first[5].id)
        assert seen == [0, 1, 2, 3, 4, 6, "late"]
        # Deleted and stored again once yielded: a new item, at the end, as InMemoryStore says.
        again: list[object] = []
        async for item in store.items(batch_size=2):
            again.append(item.content)
            if again == [0]:
                assert await store.delete(first[0].id) is True
                await store.store(first[0])
        assert again == [0, 1, 2, 3, 4, 6, "late", 0]
        seen = [1, 2, 3, 4, 6, "late", 0]
        # A batch size beyond PostgreSQL's bigint reads everything at once, as SQLite's store.
        for huge in (2**63 - 1, 2**63, 2**80):
            assert [i.content async for i in store.items(batch_size=huge)] == seen
        for bad, error in ((0, ValueError), (-1, ValueError), (1.5, TypeError), ("5", TypeError)):
            with pytest.raises(error, match="batch_size"):
                async for _ in store.items(batch_size=bad):  # type: ignore[arg-type]  # wrong on purpose
                    pass


async def test_a_sweep_yields_every_item_committed_before_it_once(postgres_dsn: str) -> None:
    """While another host's store_stream transaction, begun before the sweep, commits during
    it, items() still yields every item committed before it began exactly once, in insertion
    order, and nothing twice."""
    stream_open, commit = threading.Event(), threading.Event()

    def slow_stream() -> Iterator[MemoryItem]:
        for n in range(1500):
            if n == 1200:  # the first 1,000 are written, not committed
                stream_open.set()
                commit.wait(30)
            yield MemoryItem(content=f"stream {n}")

    async def other_host() -> None:
        async with PostgresMemoryStore(postgres_dsn) as host:
            await host.store_stream(slow_stream())

    async with PostgresMemoryStore(postgres_dsn) as store:
        earlier = [MemoryItem(content=f"earlier {n}") for n in range(11)]
        await store.store_many(earlier)
        host = asyncio.ensure_future(asyncio.to_thread(asyncio.run, other_host()))
        assert await asyncio.to_thread(stream_open.wait, 30)
        earlier.append(MemoryItem(content="last before the sweep"))
        await store.store(earlier[-1])
        seen: list[object] = []
        async for item in store.items(batch_size=4):
            seen.append(item.content)
            if len(seen) == 6:
                commit.set()
                await asyncio.wait_for(host, 30)  # the stream's 1,500 items are committed
        before = [item.content for item in earlier]
        assert [content for content in seen if content in before] == before
        assert len(set(seen)) == len(seen)
        assert set(seen) - set(before) <= {f"stream {n}" for n in range(1500)}
        assert await store.count() == len(earlier) + 1500


after_search_page: list[Callable[[], Awaitable[None]]] = []
"""Run (each once, in order) by ``AfterSearchPage``, one after each page a search reads."""


class AfterSearchPage(asyncpg.Connection):  # type: ignore[misc]  # asyncpg is untyped
    """A connection that runs what ``after_search_page`` holds once a search page is read."""

    async def fetch(self, query: str, *args: object, **options: object) -> list[object]:
        rows: list[object] = await super().fetch(query, *args, **options)
        if query.startswith(SELECT) and after_search_page:
            await after_search_page.pop(0)()
        return rows


async def test_a_search_reads_all_its_pages_in_one_snapshot(postgres_dsn: str) -> None:
    """A search whose first page Python thins out (a Decimal filter, which only Python can
    compare) reads that page again with the further pages in one snapshot: an item deleted and
    stored again once the page read again is read shows once, at its old place, as in a search
    run before it (reading each page on its own, the search would show it twice)."""
    pool = await asyncpg.create_pool(
        postgres_dsn,
        min_size=0,
        max_size=4,
        server_settings=SERVER_SETTINGS,
        connection_class=AfterSearchPage,
    )
    try:
        async with PostgresMemoryStore(pool=pool) as store:
            pairs = [("n0", 0), ("x", 1), ("n1", 0), ("n2", 0), ("y", 1)]
            items = [MemoryItem(content=name, metadata={"k": k}) for name, k in pairs]
            await store.store_many(items)
            moved = items[1]

            async def first_page() -> None:
                pass

            async def store_again() -> None:
                assert await store.delete(moved.id) is True
                await store.store(moved)

            # The first page, read on its own, then the first page of the snapshot.
            after_search_page.extend([first_page, store_again])
            query = MemoryQuery(filters={"k": Decimal(1)}, limit=3)
            found = await store.search(query)
            assert after_search_page == []  # both ran, x moved after the snapshot began
            assert [item.content for item in found] == ["x", "y"]
            assert [item.content for item in await store.search(query)] == ["y", "x"]
    finally:
        after_search_page.clear()
        await pool.close()


async def test_limits_follow_adr_0093(postgres_dsn: str) -> None:
    """A negative limit is rejected, limit 0 gives [] without I/O, a huge limit gives all."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store_many([MemoryItem(content=n) for n in range(3)])
        with pytest.raises(UnsupportedMemoryQuery) as caught:
            await store.search(MemoryQuery(limit=-1))
        assert caught.value.rejected_keys == ("limit",)
        assert len(await store.search(MemoryQuery(limit=2**80))) == 3
        assert len(await store.search(MemoryQuery(limit=2))) == 2
        with pytest.raises(TypeError, match="MemoryQuery"):
            await store.search({"text": "x"})  # type: ignore[arg-type]  # wrong on purpose
        with pytest.raises(UnsupportedMemoryQuery, match="tags"):
            await store.search(MemoryQuery(tags=[str(n) for n in range(10_001)]))
    unreachable = PostgresMemoryStore(UNREACHABLE)
    assert await unreachable.search(MemoryQuery(limit=0)) == []


async def test_closed_store_raises_unavailable(postgres_dsn: str) -> None:
    """After close (idempotent), every call raises MemoryAdapterUnavailable."""
    store = PostgresMemoryStore(postgres_dsn)
    await store.store(MemoryItem(content="x"))
    await store.close()
    await store.close()
    for call in (
        store.store(MemoryItem(content="y")),
        store.retrieve(uuid4()),
        store.search(MemoryQuery()),
        store.count(),
    ):
        with pytest.raises(MemoryAdapterUnavailable, match="closed"):
            await call


async def test_close_waits_for_a_write_under_way(postgres_dsn: str) -> None:
    """A close() made while a write waits for a lock returns once that write has committed: the
    write succeeds and is stored, and calls after it raise MemoryAdapterUnavailable."""
    store = PostgresMemoryStore(postgres_dsn, namespace=f"close-{uuid4()}")
    await store.open()
    holder = await asyncpg.connect(postgres_dsn)
    item = MemoryItem(content="under way")
    try:
        async with holder.transaction():
            await holder.execute("LOCK TABLE lionmem_items IN EXCLUSIVE MODE")
            write = asyncio.create_task(store.store(item))
            await asyncio.sleep(0.2)
            closing = asyncio.create_task(store.close())
            await asyncio.sleep(0.2)
            waiting = (write.done(), closing.done())
    finally:
        await holder.close()
    await closing
    assert (waiting, await write) == ((False, False), item.id)
    with pytest.raises(MemoryAdapterUnavailable, match="closed"):
        await store.retrieve(item.id)
    async with PostgresMemoryStore(postgres_dsn, namespace=store.namespace) as reader:
        assert payload(await reader.retrieve(item.id)) == payload(item)


async def test_close_waits_for_the_writes_queued_behind_a_write_under_way(
    postgres_dsn: str,
) -> None:
    """Writes called before close(), still queued behind one that waits for a lock, are all
    run and committed before close() returns; none is refused as closed."""
    store = PostgresMemoryStore(postgres_dsn, namespace=f"close-{uuid4()}")
    await store.open()
    first, *queued = [MemoryItem(content=f"write {n}") for n in range(4)]
    holder = await asyncpg.connect(postgres_dsn)
    try:
        async with holder.transaction():
            await holder.execute("LOCK TABLE lionmem_items IN EXCLUSIVE MODE")
            writes: list[asyncio.Task[object]] = [asyncio.create_task(store.store(first))]
            await asyncio.sleep(0.1)
            writes.append(asyncio.create_task(store.store(queued[0])))
            writes.append(asyncio.create_task(store.store_many(queued[1:])))
            writes.append(asyncio.create_task(store.delete(first.id)))
            await asyncio.sleep(0.1)
            closing = asyncio.create_task(store.close())
            await asyncio.sleep(0.1)
            waiting = closing.done()
    finally:
        await holder.close()
    await closing
    results = await asyncio.gather(*writes)
    assert (waiting, results) == (
        False,
        [first.id, queued[0].id, [item.id for item in queued[1:]], True],
    )
    async with PostgresMemoryStore(postgres_dsn, namespace=store.namespace) as reader:
        assert [payload(item) async for item in reader.items()] == [payload(i) for i in queued]


async def test_a_close_during_another_close_returns_when_the_store_is_closed(
    postgres_dsn: str,
) -> None:
    """Two close() calls while a write waits for a lock both return once the write has
    committed and the pool is closed: neither waits out its timeout, neither returns early."""
    store = PostgresMemoryStore(postgres_dsn, namespace=f"close-{uuid4()}", command_timeout=20)
    await store.open()
    pool = store._pool
    holder = await asyncpg.connect(postgres_dsn)
    try:
        async with holder.transaction():
            await holder.execute("LOCK TABLE lionmem_items IN EXCLUSIVE MODE")
            write = asyncio.create_task(store.store(MemoryItem(content="under way")))
            await asyncio.sleep(0.1)
            first = asyncio.create_task(store.close())
            await asyncio.sleep(0.1)
            second = asyncio.create_task(store.close())
            await asyncio.sleep(0.1)
            waiting = (first.done(), second.done())
    finally:
        await holder.close()
    began = time.monotonic()
    await asyncio.wait_for(asyncio.gather(first, second, write), 10)
    assert (waiting, pool._closed, time.monotonic() - began < 5) == ((False, False), True, True)


async def test_close_waits_for_calls_made_while_the_store_connects(postgres_dsn: str) -> None:
    """Calls made before close(), while the store's first connection is being made, are
    answered (not failed as if the server were down); calls after close() are refused."""
    namespace = f"connecting-{uuid4()}"
    async with PostgresMemoryStore(postgres_dsn, namespace=namespace):
        pass  # the tables exist: the calls below only wait for their connections
    store = PostgresMemoryStore(postgres_dsn, namespace=namespace)
    items = [MemoryItem(content=f"early {n}") for n in range(4)]
    calls: list[asyncio.Task[Any]] = [
        asyncio.create_task(store.store(items[0])),
        asyncio.create_task(store.store_many(items[1:3])),
        asyncio.create_task(store.store_stream(iter(items[3:]))),
        asyncio.create_task(store.delete(uuid4())),
        asyncio.create_task(store.search(MemoryQuery(text="early"))),
        asyncio.create_task(store.count()),
    ]
    await asyncio.sleep(0)  # every call has started, and waits for a connection
    await store.close()
    stored, many, streamed, deleted, found, counted = await asyncio.gather(*calls)
    assert (stored, many, streamed, deleted) == (items[0].id, [i.id for i in items[1:3]], 1, False)
    # The reads ran beside the writes: each saw some of them, in insertion order.
    assert [payload(item) for item in found] == [
        payload(item) for item in items if item.id in {hit.id for hit in found}
    ]
    assert counted in range(5)
    with pytest.raises(MemoryAdapterUnavailable, match="is closed"):
        await store.count()
    async with PostgresMemoryStore(postgres_dsn, namespace=namespace) as reader:
        assert [payload(item) async for item in reader.items()] == [payload(i) for i in items]


@pytest.mark.parametrize(
    "duplicate", [copy.deepcopy, pickle.dumps, copy.copy], ids=["deepcopy", "pickle", "copy"]
)
def test_a_store_cannot_be_copied_and_says_so(duplicate: Callable[[Any], object]) -> None:
    """A store owns its pool: copying or pickling it (or a Branch that holds it: a shallow
    copy of a Branch shares its store) raises a TypeError naming the store and what to do."""
    store = PostgresMemoryStore(UNREACHABLE, namespace="notes")
    branch = Branch(memory=store)
    for value in (store, branch) if duplicate is not copy.copy else (store,):
        with pytest.raises(TypeError) as caught:
            duplicate(value)
        assert str(caught.value) == (
            "PostgresMemoryStore(namespace='notes') cannot be copied or pickled: it owns its "
            "connection pool; share it (one store serves any number of tasks of its event loop) "
            "or open another PostgresMemoryStore on the same database"
        )


async def test_closed_store_raises_for_calls_that_need_no_server() -> None:
    """A closed store refuses the calls it could answer without the server, instead of giving
    ``[]``, ``None`` or ``False`` as if it were open; an argument error is still reported first."""
    store = PostgresMemoryStore(UNREACHABLE)
    await store.close()
    for call in (
        store.search(MemoryQuery(limit=0)),
        store.search(MemoryQuery(text="\ud800")),  # the plan proves that nothing can match
        store.retrieve("not-an-id"),
        store.delete("not-an-id"),
        store.store_many([]),
    ):
        with pytest.raises(MemoryAdapterUnavailable, match="is closed"):
            await call
    with pytest.raises(UnsupportedMemoryQuery, match="limit"):
        await store.search(MemoryQuery(limit=-1))
    with pytest.raises(TypeError, match="MemoryItem"):
        await store.store_many([{"content": "x"}])  # type: ignore[list-item]  # wrong on purpose


async def test_a_pool_passed_in_stays_the_callers(postgres_dsn: str) -> None:
    """With pool=..., close() leaves the pool open; the caller's settings are used as they are."""
    pool = await asyncpg.create_pool(postgres_dsn, min_size=0, server_settings=SERVER_SETTINGS)
    try:
        async with PostgresMemoryStore(pool=pool, namespace="mine") as store:
            item = MemoryItem(content="pooled")
            await store.store(item)
        assert await pool.fetchval("SELECT count(*) FROM lionmem_items") == 1
        again = PostgresMemoryStore(pool=pool, namespace="mine")
        assert payload(await again.retrieve(item.id)) == payload(item)
    finally:
        await pool.close()


@pytest.mark.parametrize("how", ["never awaited", "closed"])
async def test_a_pool_passed_in_that_cannot_connect_is_a_programming_error(
    postgres_dsn: str, how: str
) -> None:
    """A pool passed in that was never awaited (asyncpg.create_pool(dsn) without await), or
    that its owner closed, raises MemoryAdapterError saying so at every call, also one that needs
    no connection: it is the caller's mistake, not an outage to wait out
    (MemoryAdapterUnavailable)."""
    pool = asyncpg.create_pool(postgres_dsn, min_size=0)
    if how == "closed":
        await pool
        await pool.close()
        expected = "the pool passed in is closed: its owner closed it while the store still uses it"
    else:
        expected = (
            "the pool passed in is not initialized: pass the pool that "
            "await asyncpg.create_pool(...) returns, not the un-awaited call"
        )
    store = PostgresMemoryStore(pool=pool)
    # Calls that need no connection to answer ([] for limit=0, None and False for a non-id,
    # [] for nothing to store) are refused all the same.
    calls: list[Callable[[], Awaitable[object]]] = [
        store.count,
        store.open,
        lambda: store.search(MemoryQuery(limit=0)),
        lambda: store.retrieve("not an id"),
        lambda: store.delete("not an id"),
        lambda: store.store_many([]),
    ]
    for call in calls:
        with pytest.raises(MemoryAdapterError) as caught:
            await call()
        assert type(caught.value) is MemoryAdapterError
        assert str(caught.value) == expected
    await store.close()


@pytest.mark.parametrize("where", ["pool", "database"])
async def test_a_pool_passed_in_that_commits_asynchronously_is_refused(
    postgres_server: Cluster, where: str
) -> None:
    """A pool whose sessions run with synchronous_commit=off (set by the pool, or by the
    database the pool takes its defaults from) would make acknowledged writes losable: the store
    refuses it on first use, before creating anything; 'local' still waits for the disk."""
    database = postgres_server.fresh_database()
    settings = {"synchronous_commit": "off"} if where == "pool" else None
    if where == "database":
        postgres_server.psql(f"ALTER DATABASE {database} SET synchronous_commit = off")
    dsn = postgres_server.dsn(database)
    pool = await asyncpg.create_pool(dsn, min_size=0, max_size=2, server_settings=settings)
    try:
        store = PostgresMemoryStore(pool=pool)
        calls = (store.open, lambda: store.store(MemoryItem(content="x")), store.count)
        for call in calls:
            with pytest.raises(MemoryAdapterError, match="synchronous_commit=off") as caught:
                await call()
            assert not isinstance(caught.value, MemoryAdapterUnavailable)
            assert "SERVER_SETTINGS" in str(caught.value)
            assert caught.value.__cause__ is None
        await store.close()
        assert await pool.fetchval("SELECT to_regclass('lionmem_items') IS NULL") is True
    finally:
        await pool.close()
    local = {"synchronous_commit": "local"}
    async with (
        asyncpg.create_pool(dsn, min_size=0, max_size=2, server_settings=local) as pool,
        PostgresMemoryStore(pool=pool) as store,
    ):
        await store.store(MemoryItem(content="kept"))
        assert await store.count() == 1


@pytest.mark.parametrize("where", ["pool", "database"])
async def test_a_pool_passed_in_whose_index_scans_sample_is_refused(
    postgres_server: Cluster, where: str
) -> None:
    """A pool whose sessions run with gin_fuzzy_search_limit set (by the pool, or by the
    database) would have GIN index scans return a random subset of their rows: the store
    refuses it on first use, naming the setting, before creating anything."""
    database = postgres_server.fresh_database()
    # The throwaway cluster commits asynchronously by default: the pool sets what the store needs.
    settings = {"synchronous_commit": "on"}
    if where == "pool":
        settings["gin_fuzzy_search_limit"] = "10"
    else:
        postgres_server.psql(f"ALTER DATABASE {database} SET gin_fuzzy_search_limit = 10")
    pool = await asyncpg.create_pool(
        postgres_server.dsn(database), min_size=0, max_size=2, server_settings=settings
    )
    try:
        store = PostgresMemoryStore(pool=pool)
        with pytest.raises(MemoryAdapterError, match="gin_fuzzy_search_limit=10") as caught:
            await store.count()
        assert "SERVER_SETTINGS" in str(caught.value)
        assert await pool.fetchval("SELECT to_regclass('lionmem_items') IS NULL") is True
    finally:
        await pool.close()


async def test_searches_stay_exact_whatever_the_databases_gin_fuzzy_search_limit(
    postgres_server: Cluster,
) -> None:
    """The store's own sessions turn off the sampling of GIN index scans that a database
    default of gin_fuzzy_search_limit would turn on: text, tag and metadata searches that read
    the indexes find every match."""
    database = postgres_server.fresh_database()
    postgres_server.psql(f"ALTER DATABASE {database} SET gin_fuzzy_search_limit = 10")
    items = [
        MemoryItem(
            content=f"note {n} zebra" if n % 50 == 0 else f"note {n}",
            tags=[f"t{n % 97}"],
            metadata={"user": n % 200},
        )
        for n in range(10_000)
    ]
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store_many(items)
        postgres_server.psql("VACUUM ANALYZE lionmem_items", database)
        found = [
            len(await store.search(query))
            for query in (
                MemoryQuery(text="zebra", limit=10_000),
                MemoryQuery(tags=["t5"], limit=10_000),
                MemoryQuery(filters={"user": 3}, limit=10_000),
            )
        ]
    assert found == [200, 104, 50]


async def test_own_connections_commit_synchronously(postgres_dsn: str) -> None:
    """The store's own sessions use synchronous_commit=on, custom plans, the random-read cost
    of cached or solid-state storage and the filters' measured cost, whatever the server's
    defaults."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        settings = await store._call(
            lambda conn: conn.fetchrow(
                "SELECT current_setting('synchronous_commit'), current_setting('plan_cache_mode'), "
                "current_setting('random_page_cost'), current_setting('cpu_operator_cost')"
            )
        )
        assert tuple(settings) == ("on", "force_custom_plan", "1.1", "0.05")
        fuzzy = await store._call(
            lambda conn: conn.fetchval("SELECT current_setting('gin_fuzzy_search_limit')")
        )
        assert fuzzy == "0"


async def test_concurrent_tasks_share_one_store(postgres_dsn: str) -> None:
    """Tasks writing through one store at once lose nothing."""
    async with PostgresMemoryStore(postgres_dsn, max_size=4) as store:
        items = [MemoryItem(content=n) for n in range(200)]
        await asyncio.gather(*(store.store(item) for item in items))
        assert await store.count() == 200
        assert {i.id async for i in store.items()} == {i.id for i in items}


async def test_a_call_from_another_event_loop_is_refused_at_once(postgres_dsn: str) -> None:
    """A thread running its own loop gets MemoryAdapterError, not a wait; the first loop goes on."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        item = MemoryItem(content="first loop")
        await store.store(item)

        def elsewhere() -> str:
            with pytest.raises(MemoryAdapterError, match="another event loop") as raised:
                asyncio.run(store.count())
            return str(raised.value)

        message = await asyncio.wait_for(asyncio.to_thread(elsewhere), 30)
        assert message.endswith("open one store per event loop")
        assert await store.retrieve(item.id) == item


async def test_every_call_from_another_event_loop_is_refused_while_a_write_runs(
    postgres_server: Cluster,
) -> None:
    """While the first loop's store() is committing, each call from a thread running its own
    loop (store() too, which would join the commit under way) is refused at once; none of them
    writes anything, and the first loop's write commits."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        postgres_server.psql(
            "CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM pg_sleep(2); RETURN NEW; END $$; "
            "CREATE TRIGGER stall BEFORE INSERT ON lionmem_items "
            "FOR EACH ROW WHEN (NEW.content = '\"slow\"') EXECUTE FUNCTION stall()",
            database,
        )
        slow = asyncio.ensure_future(store.store(MemoryItem(content="slow")))
        await asyncio.sleep(0.2)  # its commit is under way

        async def sweep() -> list[MemoryItem]:
            return [item async for item in store.items()]

        calls: list[Callable[[], Awaitable[object]]] = [
            lambda: store.store(MemoryItem(content="elsewhere")),
            lambda: store.store_many([MemoryItem(content="elsewhere")]),
            lambda: store.store_stream([MemoryItem(content="elsewhere")]),
            lambda: store.delete(uuid4()),
            lambda: store.retrieve(uuid4()),
            lambda: store.retrieve("not an id"),
            lambda: store.search(MemoryQuery()),
            lambda: store.search(MemoryQuery(limit=0)),
            store.count,
            sweep,
            store.open,
        ]

        def elsewhere() -> list[str]:
            outcomes = []
            for call in calls:
                try:
                    asyncio.run(asyncio.wait_for(call(), 5))
                except MemoryAdapterError as exc:
                    outcomes.append(str(exc))
                except TimeoutError:
                    outcomes.append("waited")
                else:
                    outcomes.append("answered")
            return outcomes

        outcomes = await asyncio.wait_for(asyncio.to_thread(elsewhere), 60)
        refused = (
            f"{store!r} is used on another event loop than its first call's; asyncpg "
            "connections belong to one event loop: open one store per event loop"
        )
        assert outcomes == [refused] * len(calls)
        assert not slow.done()  # every call came while the first loop's write was under way
        await slow
        assert [item.content async for item in store.items()] == ["slow"]


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({}, ValueError, "exactly one"),
        ({"dsn": "postgresql://x", "pool": object()}, ValueError, "exactly one"),
        ({"pool": "postgresql://x"}, TypeError, "pool must be an asyncpg.Pool, got str"),
        ({"dsn": b"postgresql://x"}, TypeError, "dsn must be a str"),
        ({"dsn": "postgresql://x/gr\udcfcn"}, ValueError, "dsn holds a lone surrogate"),
        ({"dsn": "postgresql://x", "namespace": 1}, TypeError, "namespace must be a str"),
        ({"dsn": "postgresql://x", "namespace": "\udc80"}, ValueError, "surrogate"),
        ({"dsn": "postgresql://x", "max_size": 0}, ValueError, "max_size"),
        ({"dsn": "postgresql://x", "max_size": 2**18}, ValueError, "max_size must be .* 262,143"),
        ({"dsn": "postgresql://x", "max_size": 10**9}, ValueError, "most connections"),
        ({"dsn": "postgresql://x", "connect_timeout": 0}, ValueError, "connect_timeout"),
        ({"dsn": "postgresql://x", "command_timeout": -1}, ValueError, "command_timeout"),
        (
            {"dsn": "postgresql://x", "connect_timeout": 10**400},
            ValueError,
            "^connect_timeout must be a positive number of seconds, got an int too large for a "
            "float$",
        ),
        (
            {"dsn": "postgresql://x", "command_timeout": 2**1024},
            ValueError,
            "^command_timeout must be a positive number of seconds, got an int too large for a "
            "float$",
        ),
        (
            {"dsn": "postgresql://x", "command_timeout": 10**5000},
            ValueError,
            "^command_timeout must be a positive number of seconds, got an int too large for a "
            "float$",
        ),
        (
            {"dsn": "postgresql://x", "connect_timeout": -(10**5000)},
            ValueError,
            "^connect_timeout must be a positive number of seconds, got an int too large for a "
            "float$",
        ),
        (
            {"dsn": "postgresql://x", "connect_timeout": -2},
            ValueError,
            "^connect_timeout must be a positive number of seconds, got -2$",
        ),
    ],
)
def test_bad_arguments_are_refused(
    arguments: dict[str, object], error: type[Exception], message: str
) -> None:
    """Each bad constructor argument raises a clear error naming it."""
    with pytest.raises(error, match=message):
        PostgresMemoryStore(**arguments)  # type: ignore[arg-type]  # wrong on purpose


async def test_unreachable_server_raises_unavailable() -> None:
    """Nothing listening at the DSN: every call raises MemoryAdapterUnavailable, never None or []."""
    store = PostgresMemoryStore(UNREACHABLE, connect_timeout=1)
    for call in (
        store.retrieve(uuid4()),
        store.search(MemoryQuery()),
        store.store(MemoryItem(content="x")),
    ):
        with pytest.raises(MemoryAdapterUnavailable) as caught:
            await call
        assert isinstance(caught.value.__cause__, OSError)
    await store.close()


async def test_a_server_that_does_not_answer_raises_unavailable_saying_so() -> None:
    """A listening socket that never answers: MemoryAdapterUnavailable naming connect_timeout,
    not a message ending in an empty reason (asyncpg's TimeoutError carries none)."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        store = PostgresMemoryStore(
            f"postgresql://postgres@127.0.0.1:{port}/x", connect_timeout=0.5
        )
        with pytest.raises(MemoryAdapterUnavailable) as caught:
            await store.count()
        await store.close()
    assert isinstance(caught.value.__cause__, TimeoutError)
    assert str(caught.value) == (
        "PostgreSQL at the configured DSN is unavailable: no connection within connect_timeout "
        "(0.5 s): the server did not answer"
    )


async def test_a_pool_whose_connections_all_stay_busy_raises_unavailable_saying_so(
    postgres_dsn: str,
) -> None:
    """Every connection of the pool checked out for longer than connect_timeout: the error
    says the pool was busy, not that the server did not answer."""
    pool = await asyncpg.create_pool(
        postgres_dsn, min_size=1, max_size=1, server_settings=SERVER_SETTINGS
    )
    try:
        store = PostgresMemoryStore(pool=pool, connect_timeout=0.3)
        async with pool.acquire():
            with pytest.raises(MemoryAdapterUnavailable) as caught:
                await store.count()
        assert str(caught.value) == (
            "PostgreSQL at the store's pool is unavailable: no connection within "
            "connect_timeout (0.3 s): every connection of the pool (1) stayed busy (more calls "
            "at once than the pool has connections, or calls that hold one for long)"
        )
        assert await store.count() == 0  # once the connection is back, the store answers
        await store.close()
    finally:
        await pool.close()


async def test_stores_writing_the_same_ids_in_opposite_orders_both_succeed(
    postgres_server: Cluster,
) -> None:
    """Two stores (two hosts) each write two existing items, in opposite orders, each holding
    its first row for a while: PostgreSQL aborts one for the deadlock, the store runs it again,
    and both calls succeed, the items keeping their positions."""
    database = postgres_server.fresh_database()
    dsn = postgres_server.dsn(database)
    async with PostgresMemoryStore(dsn) as one, PostgresMemoryStore(dsn) as two:
        a, b = MemoryItem(content="a"), MemoryItem(content="b")
        await one.store_many([a, b])
        postgres_server.psql(
            "CREATE SEQUENCE attempts; "  # nextval survives the rollback of an aborted statement
            "CREATE FUNCTION hold() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN PERFORM nextval('attempts'); "
            "IF NEW.content LIKE '%first%' THEN PERFORM pg_sleep(0.3); END IF; "
            "RETURN NEW; END $$; "
            "CREATE TRIGGER hold BEFORE UPDATE ON lionmem_items "
            "FOR EACH ROW EXECUTE FUNCTION hold()",
            database,
        )

        def rename(item: MemoryItem, content: str) -> MemoryItem:
            return item.model_copy(update={"content": content})

        await asyncio.gather(
            one.store_many([rename(a, "one first"), rename(b, "one second")]),
            two.store_many([rename(b, "two first"), rename(a, "two second")]),
        )
        ids = [item.id async for item in one.items()]
    # Four row updates, and those of the write PostgreSQL aborted and the store ran again.
    assert int(postgres_server.psql("SELECT last_value FROM attempts", database)) > 4
    assert ids == [a.id, b.id]


@pytest.mark.parametrize(("deadlocks", "outcome"), [(5, "written"), (6, "unavailable")])
async def test_an_operation_aborted_for_a_deadlock_runs_again_a_few_times(
    postgres_dsn: str, deadlocks: int, outcome: str
) -> None:
    """An operation PostgreSQL aborts for a deadlock runs again, up to five times after the
    first; a sixth deadlock raises MemoryAdapterUnavailable naming it."""
    attempts = 0

    async def operation(conn: asyncpg.Connection) -> str:
        nonlocal attempts
        attempts += 1
        if attempts <= deadlocks:
            raise asyncpg.exceptions.DeadlockDetectedError("deadlock detected")
        return "written"

    async with PostgresMemoryStore(postgres_dsn) as store:
        try:
            result = await store._call(operation)
        except MemoryAdapterUnavailable as exc:
            result = f"unavailable: {exc}"
    if outcome == "unavailable":
        outcome = "unavailable: PostgreSQL at the configured DSN is unavailable: deadlock detected"
    assert (result, attempts) == (outcome, min(deadlocks + 1, 6))


async def test_a_role_with_table_privileges_only_writes_every_way(
    postgres_server: Cluster,
) -> None:
    """A role granted no more than reading and writing lionmem's two tables (a migration role
    owns them) stores one item, several, a long batch and a stream: writes need no privilege
    on the numbering sequence."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as owner:
        await owner.open()
    postgres_server.psql(
        "CREATE ROLE tables_only LOGIN; GRANT USAGE ON SCHEMA public TO tables_only; "
        "GRANT SELECT, INSERT, UPDATE, DELETE ON lionmem_items, lionmem_meta TO tables_only",
        database,
    )
    pool = await asyncpg.create_pool(
        postgres_server.dsn(database), user="tables_only", server_settings=SERVER_SETTINGS
    )
    try:
        async with PostgresMemoryStore(pool=pool) as store:
            await store.store(MemoryItem(content="one"))
            await store.store_many([MemoryItem(content="two"), MemoryItem(content="three")])
            await store.store_many([MemoryItem(content=n) for n in range(1001)])
            await store.store_stream(MemoryItem(content=n) for n in range(3))
            await asyncio.gather(*(store.store(MemoryItem(content=n)) for n in range(4)))
            assert await store.count() == 1 + 2 + 1001 + 3 + 4
    finally:
        await pool.close()
        postgres_server.psql("DROP OWNED BY tables_only; DROP ROLE tables_only", database)


async def test_concurrent_stores_commit_together(postgres_dsn: str) -> None:
    """store() calls made while a commit runs share the next transaction (one xmin)."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        items = [MemoryItem(content=n) for n in range(40)]
        assert await asyncio.gather(*(store.store(item) for item in items)) == [i.id for i in items]
        transactions = await store._call(
            lambda conn: conn.fetchval("SELECT count(DISTINCT xmin::text) FROM lionmem_items")
        )
        assert 1 <= transactions < 40
        assert [i.content async for i in store.items()] == list(range(40))


async def test_concurrent_writes_of_one_id_end_with_the_last_called(postgres_dsn: str) -> None:
    """store(), store_many() and delete() of one id gathered at once take effect in call order,
    as in InMemoryStore and SQLiteMemoryStore: the last one called decides (ten rounds)."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        for _ in range(10):
            first = MemoryItem(content="v0")
            second = MemoryItem(id=first.id, content="v1")
            last = MemoryItem(id=first.id, content="v2")
            await asyncio.gather(store.store(first), store.store(second), store.store_many([last]))
            assert payload(await store.retrieve(first.id)) == payload(last)
            gone = MemoryItem(content="b")
            _, stored, found = await asyncio.gather(
                store.store(MemoryItem(content="a")), store.store(gone), store.delete(gone.id)
            )
            assert (stored, found) == (gone.id, True)
            assert await store.retrieve(gone.id) is None
            back = MemoryItem(content="c")
            await store.store(back)
            _, found, stored = await asyncio.gather(
                store.store(MemoryItem(content="d")), store.delete(back.id), store.store(back)
            )
            assert (found, stored) == (True, back.id)
            assert payload(await store.retrieve(back.id)) == payload(back)


async def test_concurrent_writes_keep_call_order_and_store_batches(postgres_dsn: str) -> None:
    """Writes of every kind gathered at once are inserted in call order; the store() calls
    between two other writes still share one transaction."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        await asyncio.gather(
            store.store(MemoryItem(content="s0")),
            store.store_many([MemoryItem(content="m0"), MemoryItem(content="m1")]),
            store.store(MemoryItem(content="s1")),
            store.store(MemoryItem(content="s2")),
            store.store_stream(iter([MemoryItem(content="t0")])),
            store.store(MemoryItem(content="s3")),
            store.store(MemoryItem(content="s4")),
        )
        rows = await store._call(
            lambda conn: conn.fetch("SELECT content, xmin::text FROM lionmem_items ORDER BY seq")
        )
        groups: dict[str, list[str]] = {}
        for content, transaction in rows:
            groups.setdefault(transaction, []).append(content)
        assert list(groups.values()) == [
            ['"s0"'],
            ['"m0"', '"m1"'],
            ['"s1"', '"s2"'],
            ['"t0"'],
            ['"s3"', '"s4"'],
        ]


def refuse_bad_content(cluster: Cluster, database: str, events: str) -> None:
    """Make the database refuse (on ``events``) a row whose content is the string "bad"."""
    cluster.psql(
        "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN IF NEW.content = '\"bad\"' THEN RAISE EXCEPTION 'refused'; END IF; "
        f"RETURN NEW; END $$; CREATE TRIGGER refuse BEFORE {events} ON lionmem_items "
        "FOR EACH ROW EXECUTE FUNCTION refuse()",
        database,
    )


async def test_a_refused_store_fails_only_its_own_call(postgres_server: Cluster) -> None:
    """Among concurrent store() calls, the one the database refuses raises; the others commit."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.open()
        refuse_bad_content(postgres_server, database, "INSERT")
        items = [MemoryItem(content=str(n)) for n in range(10)]
        items.insert(5, MemoryItem(content="bad"))
        outcomes = await asyncio.gather(*(store.store(i) for i in items), return_exceptions=True)
        assert [type(o).__name__ for o in outcomes] == ["UUID"] * 5 + ["MemoryAdapterError"] + [
            "UUID"
        ] * 5
        assert [i.content async for i in store.items()] == [str(n) for n in range(10)]


async def test_a_refused_store_fails_even_when_a_later_call_stores_its_id(
    postgres_server: Cluster,
) -> None:
    """Two waiting store() calls of one id are not folded into one row: the first, refused by
    the database, raises; the second commits, as the two calls made one after the other do."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.open()
        refuse_bad_content(postgres_server, database, "INSERT OR UPDATE")
        first = MemoryItem(content="first")
        bad, good = (first.model_copy(update={"content": c}) for c in ("bad", "good"))
        outcomes = await asyncio.gather(
            store.store(first), store.store(bad), store.store(good), return_exceptions=True
        )
        assert [type(o).__name__ for o in outcomes] == ["UUID", "MemoryAdapterError", "UUID"]
        assert [i.content async for i in store.items()] == ["good"]


async def test_a_statement_past_command_timeout_raises_unavailable(
    postgres_server: Cluster,
) -> None:
    """A write the server does not finish within command_timeout raises MemoryAdapterUnavailable
    (the statement is cancelled, nothing is written) and the store goes on working."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database), command_timeout=0.5) as store:
        postgres_server.psql(
            "CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN IF NEW.content = '\"slow\"' THEN PERFORM pg_sleep(5); END IF; "
            "RETURN NEW; END $$; "
            "CREATE TRIGGER stall BEFORE INSERT ON lionmem_items "
            "FOR EACH ROW EXECUTE FUNCTION stall()",
            database,
        )
        with pytest.raises(MemoryAdapterUnavailable) as caught:
            await store.store(MemoryItem(content="slow"))
        assert str(caught.value) == (
            "PostgreSQL at the configured DSN is unavailable: "
            "a statement ran past command_timeout (0.5 s)"
        )
        await store.store(MemoryItem(content="fast"))
        assert [i.content async for i in store.items()] == ["fast"]


async def test_a_statement_past_command_timeout_runs_once_and_keeps_the_pool(
    postgres_server: Cluster,
) -> None:
    """A statement past command_timeout is ended and raised, not taken for a lost connection:
    it is not run a second time (which doubled the wait and could write twice) and the other
    pooled connections are kept, not replaced (only the write's own is closed, its server
    process ended, so that it cannot take effect after later writes)."""
    database = postgres_server.fresh_database()
    attempts = "SELECT last_value FROM attempts"
    async with PostgresMemoryStore(postgres_server.dsn(database), command_timeout=0.5) as store:
        postgres_server.psql(
            "CREATE SEQUENCE attempts; "  # nextval survives the rollback of a cancelled statement
            "CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN IF NEW.content = '\"slow\"' THEN PERFORM nextval('attempts'); "
            "PERFORM pg_sleep(5); END IF; RETURN NEW; END $$; "
            "CREATE TRIGGER stall BEFORE INSERT ON lionmem_items "
            "FOR EACH ROW EXECUTE FUNCTION stall()",
            database,
        )

        async def backends() -> set[int]:
            # Holds three pooled connections at once, so that each reports its server process.
            async def pid(conn: asyncpg.Connection) -> int:
                return int(await conn.fetchval("SELECT pg_backend_pid() FROM pg_sleep(0.1)"))

            return set(await asyncio.gather(*(store._call(pid) for _ in range(3))))

        before = await backends()
        with pytest.raises(MemoryAdapterUnavailable, match="ran past command_timeout"):
            await store.store(MemoryItem(content="slow"))
        assert postgres_server.psql(attempts, database) == "1"
        assert len(await backends() & before) == 2
        assert await store.count() == 0


@pytest.mark.parametrize(
    "damage",
    ["'[1]'", "repeat('[', 100000) || repeat(']', 100000)"],
    ids=["not an object", "nested deeper than Python parses"],
)
async def test_a_malformed_row_keeps_the_decoding_error_as_its_cause(
    postgres_server: Cluster, damage: str
) -> None:
    """A stored row whose metadata is not a JSON object, or JSON nested deeper than Python can
    parse, raises MemoryAdapterError naming the item, from search (decoded inside the store's
    operation) as from retrieve, with the decoding error as its cause, which says what is
    wrong with it."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        item = MemoryItem(content="kept")
        await store.store(item)
        postgres_server.psql(f"UPDATE lionmem_items SET metadata = {damage}", database)
        for call in (lambda: store.retrieve(item.id), lambda: store.search(MemoryQuery())):
            with pytest.raises(MemoryAdapterError, match=f"the stored row of item '{item.id}'"):
                await call()
            with pytest.raises(MemoryAdapterError) as caught:
                await call()
            assert caught.value.__cause__ is not None
            assert not isinstance(caught.value.__cause__, MemoryAdapterError)


async def test_a_lost_connection_without_a_message_is_named_by_its_type(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection lost with an exception that carries no message (ConnectionResetError())
    raises MemoryAdapterUnavailable naming that exception, not a timeout that did not happen."""

    async def reset(self: asyncpg.Connection, query: str, *args: object) -> object:
        raise ConnectionResetError

    async with PostgresMemoryStore(postgres_dsn) as store:
        monkeypatch.setattr(asyncpg.Connection, "fetchval", reset)
        with pytest.raises(MemoryAdapterUnavailable) as caught:
            await store.count()
        assert str(caught.value) == (
            "PostgreSQL at the configured DSN is unavailable: ConnectionResetError"
        )
        assert isinstance(caught.value.__cause__, ConnectionResetError)
        monkeypatch.undo()
        assert await store.count() == 0  # the next call works


async def test_a_delete_refused_by_a_connection_the_server_ended_says_so(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connection that took the server's farewell refuses the next statement with asyncpg's
    own state error; delete (not run again) names the ended connection, not concurrent use."""
    state = "cannot switch to state 11; another operation (2) is in progress"

    async def refuse(self: asyncpg.Connection, query: str, *args: object) -> object:
        raise asyncpg.exceptions.InternalClientError(state)

    async with PostgresMemoryStore(postgres_dsn) as store:
        monkeypatch.setattr(asyncpg.Connection, "fetchval", refuse)
        with pytest.raises(MemoryAdapterUnavailable) as caught:
            await store.delete(uuid4())
        assert str(caught.value) == (
            "PostgreSQL at the configured DSN is unavailable: the server ended the connection "
            f"(asyncpg: {state})"
        )
        monkeypatch.undo()
        assert await store.delete(uuid4()) is False  # the next call works


async def test_a_connection_the_server_ended_while_idle_is_replaced(postgres_dsn: str) -> None:
    """The server ending a pooled connection while it is idle (pg_terminate_backend, as
    idle_session_timeout or an administrator does) is a lost connection: whatever the
    connection read of it before its socket closed, the next call runs on a new connection."""
    admin = await asyncpg.connect(postgres_dsn)
    try:
        async with PostgresMemoryStore(postgres_dsn, namespace="ended", max_size=1) as store:
            answers = []
            for attempt in range(20):
                await store.count()  # one pooled connection, idle now
                ended = await admin.fetchval(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE application_name = 'lionmem' AND datname = current_database()"
                )
                await asyncio.sleep(0.001 * (attempt % 3))
                answers.append((ended, await store.count()))
    finally:
        await admin.close()
    assert answers == [(1, 0)] * 20


async def test_a_store_dropped_unclosed_ends_the_connections_of_its_pool(
    postgres_dsn: str,
) -> None:
    """A store dropped without close() ends the connections of the pool it made once it is
    collected (the server sees them go); a pool passed in stays the caller's, open."""
    mine = (
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE application_name = 'lionmem' AND datname = current_database()"
    )
    admin = await asyncpg.connect(postgres_dsn)
    settings = {**SERVER_SETTINGS, "application_name": "caller"}
    pool = await asyncpg.create_pool(postgres_dsn, min_size=1, max_size=1, server_settings=settings)
    try:
        store = PostgresMemoryStore(postgres_dsn, namespace="dropped", max_size=3)
        await asyncio.gather(*(store.count() for _ in range(3)))
        given = PostgresMemoryStore(pool=pool, namespace="given")
        await given.count()
        assert await admin.fetchval(mine) >= 1
        del store, given
        gc.collect()
        for _ in range(100):
            if await admin.fetchval(mine) == 0:
                break
            await asyncio.sleep(0.05)
        assert await admin.fetchval(mine) == 0
        assert await pool.fetchval("SELECT 1") == 1
    finally:
        await pool.close()
        await admin.close()


async def test_a_store_collected_in_another_thread_ends_its_connections_on_its_loop(
    postgres_dsn: str,
) -> None:
    """The collector may free a dropped store in any thread: its pool's connections are still
    ended, by the loop they belong to (a transport is not touched from another thread, which
    asyncio's debug mode refuses)."""
    asyncio.get_running_loop().set_debug(True)
    mine = (
        "SELECT count(*) FROM pg_stat_activity "
        "WHERE application_name = 'lionmem' AND datname = current_database()"
    )
    admin = await asyncpg.connect(postgres_dsn)
    try:
        holder = [PostgresMemoryStore(postgres_dsn, namespace="elsewhere", max_size=2)]
        await asyncio.gather(*(holder[0].count() for _ in range(2)))
        assert await admin.fetchval(mine) >= 1

        def drop() -> None:
            holder.clear()
            gc.collect()

        await asyncio.to_thread(drop)
        for _ in range(100):
            if await admin.fetchval(mine) == 0:
                break
            await asyncio.sleep(0.05)
        assert await admin.fetchval(mine) == 0
    finally:
        await admin.close()


@pytest.mark.parametrize(("query", "expected"), RAISING_FILTERS)
async def test_an_error_of_the_querys_own_value_is_raised_where_the_reference_raises_it(
    postgres_dsn: str, query: MemoryQuery, expected: object
) -> None:
    """A filter value whose == raises (Decimal('sNaN') against a stored number) raises that
    error, as InMemoryStore does: it is the caller's value, not a failure of the database. The
    filters after it do not narrow the rows it is compared with."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store_many(FILTERED)
        assert await outcome(store.search(query)) == expected
        assert await store.count() == len(FILTERED)


async def test_a_first_bulk_load_gives_the_planner_statistics(postgres_server: Cluster) -> None:
    """A store_many of 1,000 items or more into a never-analysed table analyses it once."""
    database = postgres_server.fresh_database()
    reltuples = "SELECT reltuples FROM pg_class WHERE oid = 'lionmem_items'::regclass"
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        # Autovacuum could analyse the table first; keep it away from this one.
        postgres_server.psql("ALTER TABLE lionmem_items SET (autovacuum_enabled = false)", database)
        await store.store_many([MemoryItem(content=n) for n in range(999)])
        assert postgres_server.psql(reltuples, database) == "-1"
        await store.store_many([MemoryItem(content=n) for n in range(1000)])
        assert postgres_server.psql(reltuples, database) == "1999"


async def test_a_first_bulk_load_into_recreated_tables_gives_them_statistics(
    postgres_server: Cluster,
) -> None:
    """lionmem's tables are dropped under a store that analysed them: the store creates them
    again, and the first bulk load into the new table analyses it too."""
    database = postgres_server.fresh_database()
    reltuples = "SELECT reltuples FROM pg_class WHERE oid = 'lionmem_items'::regclass"
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store_many([MemoryItem(content=n) for n in range(1000)])
        assert postgres_server.psql(reltuples, database) == "1000"
        postgres_server.psql("DROP TABLE lionmem_items, lionmem_meta", database)
        assert await store.count() == 0
        postgres_server.psql("ALTER TABLE lionmem_items SET (autovacuum_enabled = false)", database)
        await store.store_many([MemoryItem(content=n) for n in range(1200)])
        assert postgres_server.psql(reltuples, database) == "1200"


@pytest.mark.parametrize("method", ["store_many", "store_stream"])
async def test_a_first_bulk_load_during_a_vacuum_returns_once_written(
    postgres_server: Cluster, method: str
) -> None:
    """Another session holds the lock a VACUUM or ANALYZE holds (as the VACUUM ANALYZE the docs
    suggest after a large load would): a first bulk load still returns its result once its items
    are committed, instead of waiting for that lock past command_timeout and then raising
    MemoryAdapterUnavailable for a write that was committed."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database), command_timeout=1.0) as store:
        # Autovacuum could analyse the table first; keep it away from this one.
        postgres_server.psql("ALTER TABLE lionmem_items SET (autovacuum_enabled = false)", database)
        holder = await asyncpg.connect(postgres_server.dsn(database))
        try:
            async with holder.transaction():
                await holder.execute("LOCK TABLE lionmem_items IN SHARE UPDATE EXCLUSIVE MODE")
                items = [MemoryItem(content=n) for n in range(1000)]
                if method == "store_many":
                    assert await store.store_many(items) == [i.id for i in items]
                else:
                    assert await store.store_stream(iter(items)) == 1000
                assert await store.count() == 1000
        finally:
            await holder.close()
        reltuples = "SELECT reltuples FROM pg_class WHERE oid = 'lionmem_items'::regclass"
        assert postgres_server.psql(reltuples, database) == "-1"  # skipped, not waited for
        await store.store_many([MemoryItem(content=n) for n in range(1000)])
        assert postgres_server.psql(reltuples, database) == "2000"  # the next bulk load analyses


async def test_a_failed_analysis_does_not_fail_the_committed_load(
    postgres_server: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection is lost during the first bulk load's ANALYZE, after its commit: store_many
    still returns the ids of the items it wrote, and the next bulk load analyses the table."""
    execute = asyncpg.Connection.execute

    async def lose_analyze(self: asyncpg.Connection, query: str, *args: object) -> str:
        if query.startswith("ANALYZE"):
            raise asyncpg.ConnectionDoesNotExistError("connection lost during ANALYZE")
        return await execute(self, query, *args)  # type: ignore[no-any-return]  # asyncpg is untyped

    database = postgres_server.fresh_database()
    reltuples = "SELECT reltuples FROM pg_class WHERE oid = 'lionmem_items'::regclass"
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        postgres_server.psql("ALTER TABLE lionmem_items SET (autovacuum_enabled = false)", database)
        monkeypatch.setattr(asyncpg.Connection, "execute", lose_analyze)
        items = [MemoryItem(content=n) for n in range(1000)]
        assert await store.store_many(items) == [i.id for i in items]
        monkeypatch.undo()
        assert await store.count() == 1000
        assert postgres_server.psql(reltuples, database) == "-1"
        await store.store_many([MemoryItem(content=n) for n in range(1000)])
        assert postgres_server.psql(reltuples, database) == "2000"


async def test_a_store_cancelled_while_it_waits_for_its_batch_is_not_written(
    postgres_server: Cluster,
) -> None:
    """store(x) waits behind a commit under way and is cancelled; its caller then deletes x
    (nothing to delete). x must not be written afterwards by the batch it was waiting for; the
    store queued beside it still commits."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        postgres_server.psql(
            "CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN IF NEW.content = '\"slow\"' THEN PERFORM pg_sleep(0.3); END IF; "
            "RETURN NEW; END $$; "
            "CREATE TRIGGER stall BEFORE INSERT ON lionmem_items "
            "FOR EACH ROW EXECUTE FUNCTION stall()",
            database,
        )
        kept, dropped = MemoryItem(content="kept"), MemoryItem(content="cancelled")
        slow = asyncio.ensure_future(store.store(MemoryItem(content="slow")))
        await asyncio.sleep(0.05)  # its commit is under way
        queued = asyncio.ensure_future(store.store(kept))
        cancelled = asyncio.ensure_future(store.store(dropped))
        await asyncio.sleep(0.05)
        assert [task.done() for task in (slow, queued, cancelled)] == [False, False, False]
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        assert await store.delete(dropped.id) is False
        await asyncio.gather(slow, queued)
        assert await store.retrieve(dropped.id) is None
        assert [i.content async for i in store.items()] == ["slow", "kept"]


STALL_OR_REFUSE = (
    "CREATE FUNCTION stall() RETURNS trigger LANGUAGE plpgsql AS "
    "$$ BEGIN IF NEW.content LIKE '\"slow%' THEN PERFORM pg_sleep(0.3); END IF; "
    "IF NEW.content = '\"bad\"' THEN PERFORM pg_sleep(0.2); RAISE EXCEPTION 'refused'; END IF; "
    "RETURN NEW; END $$; "
    "CREATE TRIGGER stall BEFORE INSERT ON lionmem_items FOR EACH ROW EXECUTE FUNCTION stall()"
)


async def test_a_store_cancelled_while_its_refused_batch_runs_is_not_retried(
    postgres_server: Cluster,
) -> None:
    """store(x) is in a batch under way when its caller cancels it; the database then refuses
    the batch (for another item), which is retried row by row: x is not written by that retry,
    the other items are, and the refused one fails its own call."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        postgres_server.psql(STALL_OR_REFUSE, database)
        dropped = MemoryItem(content="cancelled")
        slow = asyncio.ensure_future(store.store(MemoryItem(content="slow")))
        await asyncio.sleep(0.05)  # its commit is under way; the next three wait for it
        bad = asyncio.ensure_future(store.store(MemoryItem(content="bad")))
        cancelled = asyncio.ensure_future(store.store(dropped))
        other = asyncio.ensure_future(store.store(MemoryItem(content="other")))
        await slow
        await asyncio.sleep(0.05)  # the batch of the three is under way (bad takes 0.2 s)
        assert [task.done() for task in (bad, cancelled, other)] == [False] * 3
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        outcomes = await asyncio.gather(bad, other, return_exceptions=True)
        assert [type(o).__name__ for o in outcomes] == ["MemoryAdapterError", "UUID"]
        assert await store.retrieve(dropped.id) is None
        assert [i.content async for i in store.items()] == ["slow", "other"]


async def test_a_store_cancelled_by_a_sibling_just_answered_is_not_written(
    postgres_server: Cluster,
) -> None:
    """A caller whose store() was just committed cancels a sibling's store(x) still waiting for
    the next batch (as a TaskGroup does when one task fails): the next batch starts before x's
    caller runs again, and must still leave x out. Its caller then deletes x (nothing to
    delete); x is not written afterwards."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        postgres_server.psql(STALL_OR_REFUSE, database)
        dropped = MemoryItem(content="cancelled")
        siblings: list[asyncio.Task[UUID]] = []

        async def first() -> None:
            await store.store(MemoryItem(content="slow-a"))
            siblings[0].cancel()  # right after its own write is acknowledged

        slow = asyncio.ensure_future(store.store(MemoryItem(content="slow")))
        await asyncio.sleep(0.05)  # its commit is under way
        answered = asyncio.ensure_future(first())
        await slow
        await asyncio.sleep(0.05)  # the batch of slow-a is under way (it takes 0.3 s)
        siblings.append(asyncio.ensure_future(store.store(dropped)))
        await asyncio.sleep(0.01)
        assert [task.done() for task in (answered, siblings[0])] == [False, False]
        with pytest.raises(asyncio.CancelledError):
            await siblings[0]
        assert await store.delete(dropped.id) is False
        await answered
        assert await store.retrieve(dropped.id) is None
        assert [i.content async for i in store.items()] == ["slow", "slow-a"]


async def test_many_cancelled_stores_leave_the_others_in_order(postgres_server: Cluster) -> None:
    """Thousands of store() calls wait behind a commit and every other one is cancelled: the
    rest are written, in call order, and the cancelled ones are not."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        postgres_server.psql(STALL_OR_REFUSE, database)
        slow = asyncio.ensure_future(store.store(MemoryItem(content="slow")))
        await asyncio.sleep(0.05)  # its commit is under way
        tasks = [asyncio.ensure_future(store.store(MemoryItem(content=n))) for n in range(3000)]
        await asyncio.sleep(0.01)
        for task in tasks[1::2]:
            task.cancel()
        outcomes = await asyncio.gather(slow, *tasks, return_exceptions=True)
        assert sum(isinstance(o, asyncio.CancelledError) for o in outcomes) == 1500
        assert [i.content async for i in store.items()] == ["slow", *range(0, 3000, 2)]


async def test_a_write_cancelled_while_it_waits_for_its_turn_is_not_run(
    postgres_server: Cluster,
) -> None:
    """store_many() and delete() called while a store() commits wait for it; cancelled while
    they wait, they never run, and the writes called after them still do, in order."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        postgres_server.psql(STALL_OR_REFUSE, database)
        kept = MemoryItem(content="kept")
        await store.store(kept)
        slow = asyncio.ensure_future(store.store(MemoryItem(content="slow")))
        await asyncio.sleep(0.05)  # its commit is under way
        many = asyncio.ensure_future(store.store_many([MemoryItem(content="cancelled")]))
        delete = asyncio.ensure_future(store.delete(kept.id))
        after = asyncio.ensure_future(store.store(MemoryItem(content="after")))
        await asyncio.sleep(0.05)
        assert [task.done() for task in (slow, many, delete, after)] == [False] * 4
        many.cancel()
        delete.cancel()
        outcomes = await asyncio.gather(slow, many, delete, after, return_exceptions=True)
        assert [type(o).__name__ for o in outcomes] == [
            "UUID",
            "CancelledError",
            "CancelledError",
            "UUID",
        ]
        assert [i.content async for i in store.items()] == ["kept", "slow", "after"]


@pytest.mark.parametrize("setting", ["lock_timeout", "statement_timeout"])
async def test_a_lock_wait_ended_by_the_servers_timeout_is_unavailability(
    postgres_dsn: str, setting: str
) -> None:
    """A wait for a lock another session holds, ended by the server's lock_timeout or
    statement_timeout (set for the pool's connections), is the server being too slow for now:
    MemoryAdapterUnavailable, as the store's own command_timeout gives, not a refusal."""
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(MemoryItem(content="kept"))
    pool = await asyncpg.create_pool(
        postgres_dsn, min_size=0, max_size=2, server_settings={**SERVER_SETTINGS, setting: "200"}
    )
    holder = await asyncpg.connect(postgres_dsn)
    try:
        async with PostgresMemoryStore(pool=pool) as store:
            async with holder.transaction():
                await holder.execute("LOCK TABLE lionmem_items IN ACCESS EXCLUSIVE MODE")
                calls: list[Callable[[], Awaitable[object]]] = [
                    store.count,
                    lambda: store.store(MemoryItem(content="waits")),
                ]
                for call in calls:
                    with pytest.raises(MemoryAdapterUnavailable, match="canceling statement"):
                        await call()
            assert await store.count() == 1
    finally:
        await holder.close()
        await pool.close()
