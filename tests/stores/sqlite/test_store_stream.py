"""``SQLiteMemoryStore.store_stream``: an iterable stored in one transaction, consumed as it is written."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from lionmem import (
    MemoryAdapterError,
    MemoryAdapterUnavailable,
    MemoryItem,
    MemoryQuery,
    SQLiteMemoryStore,
)
from lionmem.stores.sqlite import UnrepresentableValueError


class Boom(Exception):
    """Raised by a test's iterable half-way."""


async def _everything(store: SQLiteMemoryStore) -> list[MemoryItem]:
    return [item async for item in store.items()]


async def test_stores_every_item_in_order_and_returns_the_count(tmp_path: Path) -> None:
    """Every yielded item is stored, in order, equal field by field; the count is returned."""
    items = [MemoryItem(content=f"n{i}", tags=[str(i % 3)], metadata={"i": i}) for i in range(600)]
    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        assert await store.store_stream(iter(items)) == 600
        assert await _everything(store) == items
        assert [i.model_dump() for i in await _everything(store)] == [i.model_dump() for i in items]
        assert await store.search(MemoryQuery(tags=["2"], limit=3)) == [
            items[2],
            items[5],
            items[8],
        ]


async def test_a_repeated_id_replaces_the_earlier_item_and_is_counted(tmp_path: Path) -> None:
    first, second = MemoryItem(content="first"), MemoryItem(content="second")
    again = first.model_copy(update={"content": "first, again"})
    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        await store.store(second)
        assert await store.store_stream([first, second, again]) == 3
        assert await _everything(store) == [second, again]


async def test_the_iterable_is_consumed_in_the_worker_thread_lazily(tmp_path: Path) -> None:
    """Items are pulled one at a time in another thread: nothing is listed up front."""
    threads: set[str] = set()

    def lazy() -> Iterator[MemoryItem]:
        for i in range(3):
            threads.add(threading.current_thread().name)
            yield MemoryItem(content=i)

    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        assert await store.store_stream(lazy()) == 3
    assert threading.current_thread().name not in threads
    assert len(threads) == 1


async def test_an_error_from_the_iterable_rolls_everything_back(tmp_path: Path) -> None:
    """The iterable's exception is raised and nothing of the stream is stored; older items stay."""
    kept = MemoryItem(content="kept")

    def failing() -> Iterator[MemoryItem]:
        yield from (MemoryItem(content=i) for i in range(500))
        raise Boom

    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        await store.store(kept)
        with pytest.raises(Boom):
            await store.store_stream(failing())
        assert await _everything(store) == [kept]
        assert await store.count() == 1


async def test_an_unrepresentable_item_aborts_without_a_callback(tmp_path: Path) -> None:
    """A value JSON cannot keep raises UnrepresentableValueError and nothing is stored."""
    items = [MemoryItem(content="a"), MemoryItem(content=float("nan")), MemoryItem(content="b")]
    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        with pytest.raises(UnrepresentableValueError, match=r"MemoryItem\.content"):
            await store.store_stream(items)
        assert await store.count() == 0


async def test_the_callback_gets_each_unrepresentable_item_and_the_rest_is_stored(
    tmp_path: Path,
) -> None:
    """With ``on_unrepresentable`` a refused item is handed over and skipped; the others commit."""
    bad = MemoryItem(content={"k": float("inf")})
    items = [MemoryItem(content="a"), bad, MemoryItem(content="b")]
    seen: list[tuple[MemoryItem, str]] = []
    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        stored = await store.store_stream(
            items, on_unrepresentable=lambda item, error: seen.append((item, error.field))
        )
        assert (stored, seen) == (2, [(bad, "content['k']")])
        assert await _everything(store) == [items[0], items[2]]


async def test_an_exception_from_the_callback_rolls_back(tmp_path: Path) -> None:
    """The callback may refuse too: its exception aborts the whole stream."""

    def refuse(item: MemoryItem, error: UnrepresentableValueError) -> None:
        raise Boom

    items = [MemoryItem(content="a"), MemoryItem(content=float("nan"))]
    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        with pytest.raises(Boom):
            await store.store_stream(items, on_unrepresentable=refuse)
        assert await store.count() == 0


async def test_a_non_item_is_a_type_error_and_nothing_is_stored(tmp_path: Path) -> None:
    """Anything but a MemoryItem in the stream raises TypeError and rolls back."""
    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        with pytest.raises(
            TypeError, match=r"^store_stream\(\) takes MemoryItem items, got a dict"
        ):
            await store.store_stream([MemoryItem(content="a"), {"content": "b"}])  # type: ignore[list-item]  # the wrong type is the point
        assert await store.count() == 0


async def test_other_connections_see_nothing_until_the_commit(tmp_path: Path) -> None:
    """While the stream is being written another connection reads the items stored before it."""
    seen: list[int] = []
    path = tmp_path / "s.db"

    def watched() -> Iterator[MemoryItem]:
        for i in range(200):
            if i == 100:
                with closing(sqlite3.connect(path)) as other, other:
                    seen.append(other.execute("SELECT count(*) FROM items").fetchone()[0])
            yield MemoryItem(content=i)

    async with SQLiteMemoryStore(path) as store:
        await store.store(MemoryItem(content="before"))
        assert await store.store_stream(watched()) == 200
        assert (seen, await store.count()) == ([1], 201)


async def test_a_closed_store_refuses_the_stream(tmp_path: Path) -> None:
    """After close, store_stream raises MemoryAdapterUnavailable and reads nothing."""
    pulled: list[int] = []

    def counting() -> Iterator[MemoryItem]:
        pulled.append(1)
        yield MemoryItem(content="x")

    store = SQLiteMemoryStore(tmp_path / "s.db")
    await store.open()
    await store.close()
    with pytest.raises(MemoryAdapterUnavailable, match="is closed"):
        await store.store_stream(counting())
    assert pulled == []


async def test_a_write_sqlite_refuses_mid_stream_is_final_and_rolls_back(tmp_path: Path) -> None:
    """A refused write after items were consumed is raised at once (no retry re-reads them)."""
    path = tmp_path / "s.db"
    pulled: list[int] = []

    def numbered() -> Iterator[MemoryItem]:
        for i in range(10):
            pulled.append(i)
            yield MemoryItem(content="boom" if i == 5 else i)

    async with SQLiteMemoryStore(path) as store:
        await store.store(MemoryItem(content="kept"))
        with closing(sqlite3.connect(path)) as other, other:
            other.execute(
                "CREATE TRIGGER refuse BEFORE INSERT ON items WHEN NEW.content = '\"boom\"' "
                "BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END"
            )
        with pytest.raises(MemoryAdapterError, match="refused by a trigger"):
            await store.store_stream(numbered())
        assert (pulled, await store.count()) == ([0, 1, 2, 3, 4, 5], 1)


async def test_a_locked_file_fails_before_the_stream_is_read(tmp_path: Path) -> None:
    """While another connection holds the write lock, the stream gives up unread."""
    path = tmp_path / "s.db"
    pulled: list[int] = []

    def counting() -> Iterator[MemoryItem]:
        pulled.append(1)
        yield MemoryItem(content="x")

    async with SQLiteMemoryStore(path, busy_timeout=0.05) as store:
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")
            with pytest.raises(MemoryAdapterUnavailable, match="locked"):
                await store.store_stream(counting())
            other.execute("ROLLBACK")
        assert (pulled, await store.count()) == ([], 0)


async def test_a_cancelled_stream_reads_no_further_and_stores_nothing(tmp_path: Path) -> None:
    """Cancelled while its iterable waits for the next item, store_stream reads no item after
    that one and rolls back: nothing is stored and the worker is free for the next call."""
    reached, cancelled = threading.Event(), threading.Event()
    pulled: list[int] = []

    def slow() -> Iterator[MemoryItem]:
        for n in range(500):
            if n == 3:
                reached.set()
                cancelled.wait(10)
            pulled.append(n)
            yield MemoryItem(content=n)

    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        task = asyncio.ensure_future(store.store_stream(slow()))
        assert await asyncio.to_thread(reached.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        cancelled.set()
        await store.store(MemoryItem(content="after"))
        found = [item.content for item in await _everything(store)]
    assert (pulled, found) == ([0, 1, 2, 3], ["after"])


async def test_a_stream_cancelled_in_its_callback_takes_no_further_item(tmp_path: Path) -> None:
    """Cancelled while ``on_unrepresentable`` handles item 1, store_stream asks the iterable for
    no item after it (one taken from a queue or a file would be lost) and stores nothing."""
    reached, cancelled = threading.Event(), threading.Event()
    pulled: list[int] = []

    def source() -> Iterator[MemoryItem]:
        for n in range(10):
            pulled.append(n)
            yield MemoryItem(content={1, 2} if n == 1 else n)

    def log(item: MemoryItem, error: UnrepresentableValueError) -> None:
        reached.set()
        cancelled.wait(10)

    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        task = asyncio.ensure_future(store.store_stream(source(), on_unrepresentable=log))
        assert await asyncio.to_thread(reached.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        cancelled.set()
        await store.store(MemoryItem(content="after"))  # queued behind the stream's job
        found = [item.content for item in await _everything(store)]
    assert (pulled, found) == ([0, 1], ["after"])


async def test_a_stream_cancelled_while_waiting_for_the_lock_is_not_begun_again(
    tmp_path: Path,
) -> None:
    """Cancelled while BEGIN IMMEDIATE waits out a lock, store_stream does not try again (two
    more busy timeouts) and asks its iterable for nothing."""
    path = tmp_path / "s.db"
    pulled: list[int] = []

    def source() -> Iterator[MemoryItem]:
        pulled.append(0)
        yield MemoryItem(content=0)

    async with SQLiteMemoryStore(path, busy_timeout=0.5) as store:
        attempts: list[str] = []
        waiting = threading.Event()

        def trace(statement: str) -> None:
            attempts.append(statement)
            waiting.set()

        await store._call(lambda conn: conn.set_trace_callback(trace))
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")
            task = asyncio.ensure_future(store.store_stream(source()))
            assert await asyncio.to_thread(waiting.wait, 10)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await store._call(lambda conn: conn.set_trace_callback(None))  # after the stream
            other.execute("ROLLBACK")
        count = await store.count()
    assert (attempts, pulled, count) == (["BEGIN IMMEDIATE"], [], 0)


async def test_a_sqlite_error_of_the_iterable_is_raised_as_it_is(tmp_path: Path) -> None:
    """An iterable reading another SQLite database may raise sqlite3 errors of its own: each is
    raised unchanged (not as this store's file failing), once, and nothing is stored."""
    own = sqlite3.OperationalError("database is locked")
    pulled: list[int] = []

    def from_elsewhere() -> Iterator[MemoryItem]:
        pulled.append(1)
        yield MemoryItem(content="first")
        raise own

    source = sqlite3.connect(tmp_path / "source.db")  # bound to this thread, read in the worker's
    with closing(source):
        source.execute("CREATE TABLE t (x)")
        source.execute("INSERT INTO t VALUES ('row')")
        async with SQLiteMemoryStore(tmp_path / "s.db") as store:
            with pytest.raises(sqlite3.OperationalError) as raised:
                await store.store_stream(from_elsewhere())
            with pytest.raises(sqlite3.ProgrammingError, match="same thread"):
                await store.store_stream(
                    MemoryItem(content=x) for (x,) in source.execute("SELECT x FROM t")
                )
            count = await store.count()
    assert (raised.value is own, pulled, count) == (True, [1], 0)


async def test_a_sqlite_error_of_the_iterable_keeps_its_context_and_cause(tmp_path: Path) -> None:
    """The iterable's error comes out with the context and the cause it was raised with, not
    with the store's own handling as its context."""
    lookup = KeyError("row")
    cause = ValueError("bad row")

    def handling() -> Iterator[MemoryItem]:
        yield MemoryItem(content="first")
        try:
            raise lookup
        except KeyError:
            raise sqlite3.OperationalError("while handling") from None

    def chained() -> Iterator[MemoryItem]:
        try:
            raise lookup
        except KeyError:
            raise sqlite3.DatabaseError("chained") from cause

    def plain() -> Iterator[MemoryItem]:
        try:
            raise lookup
        except KeyError:
            raise sqlite3.OperationalError("plain")  # noqa: B904 - the implicit context is tested

    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        with pytest.raises(sqlite3.OperationalError, match="plain") as implicit:
            await store.store_stream(plain())
        with pytest.raises(sqlite3.OperationalError, match="while handling") as suppressed:
            await store.store_stream(handling())
        with pytest.raises(sqlite3.DatabaseError, match="chained") as explicit:
            await store.store_stream(chained())
        count = await store.count()
    links = [
        (e.value.__context__, e.value.__cause__, e.value.__suppress_context__)
        for e in (implicit, suppressed, explicit)
    ]
    assert links == [(lookup, None, False), (lookup, None, True), (lookup, cause, True)]
    assert count == 0


async def test_a_sqlite_error_of_the_callback_is_raised_as_it_is(tmp_path: Path) -> None:
    """The same holds for ``on_unrepresentable``: its own SQLite error comes out unchanged."""
    own = sqlite3.IntegrityError("the log table refused the row")

    def log(item: MemoryItem, error: UnrepresentableValueError) -> None:
        raise own

    items = [MemoryItem(content="kept"), MemoryItem(content={1, 2})]
    async with SQLiteMemoryStore(tmp_path / "s.db") as store:
        with pytest.raises(sqlite3.IntegrityError) as raised:
            await store.store_stream(items, on_unrepresentable=log)
        count = await store.count()
    assert (raised.value is own, count) == (True, 0)
