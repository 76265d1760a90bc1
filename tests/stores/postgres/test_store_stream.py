"""``PostgresMemoryStore.store_stream``: an iterable stored in one transaction, read a chunk at a time."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from collections.abc import Iterator
from uuid import uuid4

import asyncpg
import pytest

from lionmem import (
    InMemoryStore,
    MemoryAdapterError,
    MemoryAdapterUnavailable,
    MemoryItem,
    MemoryQuery,
)
from lionmem.stores.postgres import PostgresMemoryStore, UnrepresentableValueError
from tests.postgres_support import Cluster

CHUNK = 1000
"""The items the store reads between two statements (``_BATCH``)."""


class Boom(Exception):
    """Raised by a test's iterable or callback half-way."""


class Halt(BaseException):
    """Not an Exception, as KeyboardInterrupt is not (which pytest itself would stop on)."""


def dumps(items: list[MemoryItem]) -> list[dict[str, object]]:
    return [item.model_dump() for item in items]


async def everything(store: PostgresMemoryStore) -> list[MemoryItem]:
    return [item async for item in store.items()]


def database_of(dsn: str) -> str:
    return dsn.rsplit("/", 1)[1]


def end_open_transactions(cluster: Cluster, database: str) -> None:
    """Terminate the sessions of ``database`` that are inside a transaction (the stream's)."""
    cluster.psql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE datname = current_database() AND state = 'idle in transaction'",
        database,
    )


async def test_stores_every_item_in_order_and_returns_the_count(postgres_dsn: str) -> None:
    """Every yielded item is stored, in order, equal field by field; the count is returned."""
    items = [
        MemoryItem(content=f"n{i}", tags=[str(i % 3)], metadata={"i": i, "f": -0.0})
        for i in range(2500)
    ]
    async with PostgresMemoryStore(postgres_dsn) as store:
        assert await store.store_stream(iter(items)) == 2500
        stored = await everything(store)
        assert stored == items
        assert dumps(stored) == dumps(items)
        assert await store.count() == 2500
        assert await store.search(MemoryQuery(tags=["2"], limit=3)) == [
            items[2],
            items[5],
            items[8],
        ]


async def test_an_empty_iterable_stores_nothing(postgres_dsn: str) -> None:
    """Nothing to read: 0, and the items already stored stay."""
    kept = MemoryItem(content="kept")
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(kept)
        assert await store.store_stream(iter([])) == 0
        assert await everything(store) == [kept]


async def test_the_iterable_is_read_lazily_on_the_event_loops_thread(postgres_dsn: str) -> None:
    """At item 2,500 of 3,000 at most two chunks of items are alive: nothing is listed first."""
    alive: list[weakref.ref[MemoryItem]] = []
    seen_alive: list[int] = []
    threads: set[int] = set()

    def lazy() -> Iterator[MemoryItem]:
        for i in range(3000):
            threads.add(threading.get_ident())
            if i == 2500:
                gc.collect()
                seen_alive.append(sum(ref() is not None for ref in alive))
            item = MemoryItem(content=i, metadata={"pad": "x" * 100})
            alive.append(weakref.ref(item))
            yield item
            del item

    async with PostgresMemoryStore(postgres_dsn) as store:
        assert await store.store_stream(lazy()) == 3000
        assert [item.content async for item in store.items()] == list(range(3000))
    assert len(seen_alive) == 1
    assert seen_alive[0] <= 2 * CHUNK
    assert threads == {threading.get_ident()}


async def test_an_error_from_the_iterable_rolls_back_and_is_raised_as_it_is(
    postgres_dsn: str,
) -> None:
    """The iterable's own exception (not a MemoryAdapterError) comes out; nothing of the stream
    is stored, though a first chunk was written; the items stored before stay."""
    kept = MemoryItem(content="kept")
    raised = Boom("the source broke")

    def failing() -> Iterator[MemoryItem]:
        yield from (MemoryItem(content=i) for i in range(1500))
        raise raised

    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(kept)
        with pytest.raises(Boom) as caught:
            await store.store_stream(failing())
        assert caught.value is raised
        assert (caught.value.__cause__, caught.value.__context__) == (None, None)
        assert await everything(store) == [kept]
        assert await store.count() == 1


async def test_an_outage_the_iterable_raises_does_not_fail_the_writes_behind_it(
    postgres_dsn: str,
) -> None:
    """A ``MemoryAdapterUnavailable`` from the items (another store they are read from is
    down) is the stream's own error: the writes queued behind it run, as after any other."""
    raised = MemoryAdapterUnavailable("the source store is down")

    def failing() -> Iterator[MemoryItem]:
        yield from (MemoryItem(content=i) for i in range(1500))
        raise raised

    behind = [MemoryItem(content=f"behind {n}") for n in range(3)]
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.open()
        stream = asyncio.create_task(store.store_stream(failing()))
        await asyncio.sleep(0)  # the stream holds the store's writes
        queued = [asyncio.create_task(store.store(item)) for item in behind]
        deleted = asyncio.create_task(store.delete(uuid4()))
        with pytest.raises(MemoryAdapterUnavailable) as caught:
            await stream
        assert caught.value is raised
        assert [await task for task in queued] == [item.id for item in behind]
        assert await deleted is False
        assert await everything(store) == behind


async def test_a_stream_cancelled_while_its_iterable_fails_ends_cancelled(
    postgres_dsn: str,
) -> None:
    """An iterable that sees its caller being cancelled and stops with an exception of its own
    (as the command line's reader does after Ctrl-C): the rollback is interrupted by the
    cancellation, which goes on to the caller; nothing of the stream is stored."""

    def stopping() -> Iterator[MemoryItem]:
        yield from (MemoryItem(content=i) for i in range(1500))
        task = asyncio.current_task()
        assert task is not None
        task.cancel()  # delivered at the store's next await, the rollback
        raise Boom("stopped")

    async with PostgresMemoryStore(postgres_dsn) as store:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.ensure_future(store.store_stream(stopping()))
        assert await store.count() == 0


async def test_an_unrepresentable_item_aborts_without_a_callback(postgres_dsn: str) -> None:
    """A value JSON cannot keep raises UnrepresentableValueError naming it; nothing is stored."""
    items = [MemoryItem(content=i) for i in range(1200)]
    items += [MemoryItem(content=float("nan")), MemoryItem(content="b")]
    async with PostgresMemoryStore(postgres_dsn) as store:
        with pytest.raises(UnrepresentableValueError, match=r"MemoryItem\.content") as caught:
            await store.store_stream(items)
        assert caught.value.field == "content"
        assert await store.count() == 0


async def test_the_callback_gets_each_unrepresentable_item_and_the_rest_is_stored(
    postgres_dsn: str,
) -> None:
    """With ``on_unrepresentable`` a refused item is handed over (when it is read) and skipped;
    the others commit, and only they are counted."""

    class Note(MemoryItem):
        pass

    bad = MemoryItem(content={"k": float("inf")})
    sub = Note(content="a subclass")
    items = [MemoryItem(content=i) for i in range(1100)]
    stream = [*items[:5], bad, *items[5:1050], sub, *items[1050:]]
    seen: list[tuple[MemoryItem, str]] = []
    async with PostgresMemoryStore(postgres_dsn) as store:
        stored = await store.store_stream(
            stream, on_unrepresentable=lambda item, error: seen.append((item, error.field))
        )
        assert (stored, seen) == (1100, [(bad, "content['k']"), (sub, "__class__")])
        assert await everything(store) == items


async def test_an_exception_from_the_callback_rolls_back_and_is_raised_as_it_is(
    postgres_dsn: str,
) -> None:
    """The callback may refuse too: its exception aborts the whole stream, unchanged."""

    def refuse(item: MemoryItem, error: UnrepresentableValueError) -> None:
        raise Boom(error.field)

    items = [MemoryItem(content=i) for i in range(1200)] + [MemoryItem(content=float("nan"))]
    async with PostgresMemoryStore(postgres_dsn) as store:
        with pytest.raises(Boom, match=r"^content$"):
            await store.store_stream(items, on_unrepresentable=refuse)
        assert await store.count() == 0


async def test_a_non_item_is_a_type_error_and_nothing_is_stored(postgres_dsn: str) -> None:
    """Anything but a MemoryItem in the stream raises TypeError and rolls back."""
    items: list[object] = [MemoryItem(content=i) for i in range(1100)] + [{"content": "b"}]
    async with PostgresMemoryStore(postgres_dsn) as store:
        with pytest.raises(
            TypeError, match=r"^store_stream\(\) takes MemoryItem items, got a dict"
        ):
            await store.store_stream(items)  # type: ignore[arg-type]  # the wrong type is the point
        assert await store.count() == 0


async def test_repeated_ids_across_chunks_keep_the_first_place_and_the_last_value(
    postgres_dsn: str,
) -> None:
    """Within a chunk and across chunks, as successive ``store`` calls on InMemoryStore give."""
    ids = [uuid4() for _ in range(700)]
    before = [MemoryItem(id=ids[n], content=f"before {n}") for n in range(0, 700, 50)]
    stream = [
        MemoryItem(id=ids[(i * 3) % 700], content=i, tags=[str(i)], created_at=float(i))
        for i in range(2600)
    ]
    reference = InMemoryStore()
    async with PostgresMemoryStore(postgres_dsn) as store:
        for item in before:
            await store.store(item)
            await reference.store(item)
        for item in stream:
            await reference.store(item)
        assert await store.store_stream(stream) == 2600
        expected = await reference.search(MemoryQuery(limit=10_000))
        assert len(expected) == 700
        assert dumps(await everything(store)) == dumps(expected)


async def test_other_connections_see_nothing_until_the_commit(
    postgres_server: Cluster, postgres_dsn: str
) -> None:
    """At item 1,500 the first chunk is written in the open transaction, and another connection
    still counts only the item stored before the stream."""
    database = database_of(postgres_dsn)
    seen: list[tuple[str, str]] = []

    def watched() -> Iterator[MemoryItem]:
        for i in range(2000):
            if i == 1500:
                count = postgres_server.psql("SELECT count(*) FROM lionmem_items", database)
                writing = postgres_server.psql(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND state = 'idle in transaction' AND backend_xid IS NOT NULL",
                    database,
                )
                seen.append((count, writing))
            yield MemoryItem(content=i)

    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(MemoryItem(content="before"))
        assert await store.store_stream(watched()) == 2000
        assert (seen, await store.count()) == ([("1", "1")], 2001)


async def test_another_namespace_is_untouched(postgres_dsn: str) -> None:
    """The same ids streamed into namespace b leave namespace a's items as they were."""
    theirs = [MemoryItem(content=f"a{i}") for i in range(1200)]
    ours = [MemoryItem(id=item.id, content=f"b{i}") for i, item in enumerate(theirs)]
    async with (
        PostgresMemoryStore(postgres_dsn, namespace="a") as a,
        PostgresMemoryStore(postgres_dsn, namespace="b") as b,
    ):
        await a.store_many(theirs)
        assert await b.store_stream(ours) == 1200
        assert dumps(await everything(a)) == dumps(theirs)
        assert dumps(await everything(b)) == dumps(ours)


async def test_a_closed_store_refuses_the_stream_before_reading_it(postgres_dsn: str) -> None:
    """After close, store_stream raises MemoryAdapterUnavailable and pulls nothing."""
    pulled: list[int] = []

    def counting() -> Iterator[MemoryItem]:
        pulled.append(1)
        yield MemoryItem(content="x")

    store = PostgresMemoryStore(postgres_dsn)
    await store.open()
    await store.close()
    with pytest.raises(MemoryAdapterUnavailable, match="is closed"):
        await store.store_stream(counting())
    assert pulled == []


async def test_an_unreachable_server_fails_before_the_stream_is_read() -> None:
    """No connection: MemoryAdapterUnavailable, and the iterable is never touched."""
    pulled: list[int] = []

    def counting() -> Iterator[MemoryItem]:
        pulled.append(1)
        yield MemoryItem(content="x")

    store = PostgresMemoryStore("postgresql://postgres@127.0.0.1:1/none", connect_timeout=1.0)
    with pytest.raises(MemoryAdapterUnavailable):
        await store.store_stream(counting())
    assert pulled == []
    await store.close()


async def test_a_write_the_database_refuses_mid_stream_is_final_and_rolls_back(
    postgres_server: Cluster, postgres_dsn: str
) -> None:
    """A statement refused after items were read raises MemoryAdapterError at once: the chunk
    holding the refused item was read, nothing after it, and nothing of the stream is kept."""
    pulled: list[int] = []

    def numbered() -> Iterator[MemoryItem]:
        for i in range(3000):
            pulled.append(i)
            yield MemoryItem(content="boom" if i == 1500 else i)

    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(MemoryItem(content="kept"))
        postgres_server.psql(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.content = '\"boom\"' THEN RAISE EXCEPTION 'refused by a trigger'; END IF; "
            "RETURN NEW; END $$; CREATE TRIGGER refuse BEFORE INSERT ON lionmem_items "
            "FOR EACH ROW EXECUTE FUNCTION refuse()",
            database_of(postgres_dsn),
        )
        with pytest.raises(MemoryAdapterError, match="refused by a trigger") as caught:
            await store.store_stream(numbered())
        assert not isinstance(caught.value, MemoryAdapterUnavailable)
        assert (pulled, await store.count()) == (list(range(2 * CHUNK)), 1)


async def test_a_connection_lost_mid_stream_is_not_retried(
    postgres_server: Cluster, postgres_dsn: str
) -> None:
    """The stream's session is terminated while the iterable is read: MemoryAdapterUnavailable,
    nothing of the stream is stored (a retry would have committed the items after the loss),
    and the same store works again."""
    database = database_of(postgres_dsn)
    pulled: list[int] = []

    def numbered() -> Iterator[MemoryItem]:
        for i in range(3000):
            if i == 1500:
                end_open_transactions(postgres_server, database)
            pulled.append(i)
            yield MemoryItem(content=i)

    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(MemoryItem(content="kept"))
        with pytest.raises(MemoryAdapterUnavailable):
            await store.store_stream(numbered())
        assert (pulled, await store.count()) == (list(range(2 * CHUNK)), 1)
        await store.store(MemoryItem(content="after"))
        assert [item.content async for item in store.items()] == ["kept", "after"]


@pytest.mark.parametrize("error", [Boom, Halt])
async def test_the_iterables_exception_is_raised_even_when_the_connection_is_lost_too(
    postgres_server: Cluster, postgres_dsn: str, error: type[BaseException]
) -> None:
    """The stream's session is terminated and then the iterable raises: its own exception comes
    out (not a failed rollback's MemoryAdapterUnavailable), nothing is stored, the store works."""
    database = database_of(postgres_dsn)

    def numbered() -> Iterator[MemoryItem]:
        for i in range(3000):
            if i == 1500:
                end_open_transactions(postgres_server, database)
                raise error
            yield MemoryItem(content=i)

    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(MemoryItem(content="kept"))
        with pytest.raises(error):
            await store.store_stream(numbered())
        assert await store.count() == 1
        await store.store(MemoryItem(content="after"))
        assert [item.content async for item in store.items()] == ["kept", "after"]


async def test_a_stream_cancelled_while_it_begins_leaves_a_clean_connection(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled during its BEGIN, the stream raises CancelledError, reads nothing, and its
    connection goes back to the pool without asyncpg reporting an unmanaged transaction."""
    execute = asyncpg.Connection.execute
    begun = asyncio.Event()

    async def slow_begin(self: asyncpg.Connection, query: str, *args: object) -> str:
        if query.startswith("BEGIN"):
            begun.set()
            await asyncio.sleep(0.2)
        return await execute(self, query, *args)  # type: ignore[no-any-return]  # asyncpg is untyped

    reported: list[str] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reported.append(context["message"]))
    pulled: list[int] = []

    def numbered() -> Iterator[MemoryItem]:
        for i in range(10):
            pulled.append(i)
            yield MemoryItem(content=i)

    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(MemoryItem(content="kept"))
        monkeypatch.setattr(asyncpg.Connection, "execute", slow_begin)
        task = asyncio.ensure_future(store.store_stream(numbered()))
        await begun.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        monkeypatch.undo()
        assert (pulled, await store.count()) == ([], 1)
    loop.set_exception_handler(None)
    assert reported == []


async def test_a_first_bulk_stream_gives_the_planner_statistics(postgres_server: Cluster) -> None:
    """A stream of 1,000 items or more into a never-analysed table analyses it, as store_many."""
    database = postgres_server.fresh_database()
    reltuples = "SELECT reltuples FROM pg_class WHERE oid = 'lionmem_items'::regclass"
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        # Autovacuum could analyse the table first; keep it away from this one.
        postgres_server.psql("ALTER TABLE lionmem_items SET (autovacuum_enabled = false)", database)
        await store.store_stream(MemoryItem(content=n) for n in range(999))
        assert postgres_server.psql(reltuples, database) == "-1"
        await store.store_stream(MemoryItem(content=n) for n in range(1000))
        assert postgres_server.psql(reltuples, database) == "1999"
