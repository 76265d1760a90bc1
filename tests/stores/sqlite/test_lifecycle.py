"""SQLiteMemoryStore's lifecycle decisions: fork, stores never closed, cancellation, group commit."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest

from lionmem import MemoryItem, MemoryQuery
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable
from lionmem.stores import _sqlite_codec, sqlite
from lionmem.stores.sqlite import SQLiteMemoryStore, Synchronous
from tests.stores.sqlite.support import EVERYTHING, contents, fill, inserts_held, raw


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteMemoryStore]:
    async with SQLiteMemoryStore(tmp_path / "memory.db") as opened:
        yield opened


@contextmanager
def worker_held(store: SQLiteMemoryStore) -> Iterator[threading.Event]:
    """Keep the store's worker thread busy until the yielded event is set (or the block ends)."""
    release = threading.Event()
    loop = asyncio.get_running_loop()
    blocker = loop.create_task(store._call(lambda conn: release.wait(10)))
    try:
        yield release
    finally:
        release.set()
        blocker.cancel() if not blocker.done() else None


async def commits_of(store: SQLiteMemoryStore) -> list[str]:
    """Start recording the statements the writer connection runs; returns the live list."""
    seen: list[str] = []
    await store._call(lambda conn: conn.set_trace_callback(seen.append))
    return seen


# ---------------------------------------------------------------- fork


def _in_child(job: object) -> str:
    """Fork; run ``job()`` (returning a report string) in the child; return the child's report."""
    assert callable(job)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child process
        os.close(read_end)
        try:
            report = str(job())
        except BaseException as exc:  # reported to the parent, which asserts on it
            report = f"raised {exc!r}"
        os.write(write_end, report.encode())
        os._exit(0)
    os.close(write_end)
    deadline = time.monotonic() + 30
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung")
        time.sleep(0.01)
    with os.fdopen(read_end, "rb") as pipe:
        return pipe.read().decode()


async def _child_uses(store: SQLiteMemoryStore, path: Path, item_id: UUID) -> str:
    steps = []
    calls = (
        store.count(),
        store.retrieve(item_id),
        store.search(MemoryQuery()),
        store.store(MemoryItem(content="through the parent's store")),
    )
    for call in calls:
        try:
            await call
        except MemoryAdapterUnavailable as exc:
            steps.append("fork" if "os.fork()" in str(exc) else str(exc))
    await store.close()
    try:
        await store.count()
    except MemoryAdapterUnavailable as exc:
        steps.append("closed" if "closed" in str(exc) else str(exc))
    async with SQLiteMemoryStore(path) as own:
        found = await own.retrieve(item_id)
        await own.store(MemoryItem(content="from the child"))
    steps.append(f"own store: {found.content if found else None}")
    return ", ".join(steps)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
def test_a_store_used_before_fork_is_unavailable_in_the_child(
    tmp_path: Path, synchronous: Synchronous
) -> None:
    """In a forked child, the parent's store raises at once (no hang), a write too (at NORMAL it
    would otherwise use the parent's direct connection); a new store works there."""
    path = tmp_path / "memory.db"
    store = SQLiteMemoryStore(path, synchronous=synchronous)
    item = MemoryItem(content="parent")
    asyncio.run(store.store(item))
    report = _in_child(lambda: asyncio.run(_child_uses(store, path, item.id)))
    assert report == "fork, fork, fork, fork, closed, own store: parent"

    async def parent() -> list[object]:
        found = await contents(store, EVERYTHING)
        await store.close()
        return found

    assert asyncio.run(parent()) == ["parent", "from the child"]


async def _child_uses_the_extras(store: SQLiteMemoryStore, item_id: UUID) -> str:
    async def drain() -> None:
        async for _item in store.items():
            pass

    steps = []
    calls = (
        store.open(),
        store.store_many([MemoryItem(content="many")]),
        store.store_stream([MemoryItem(content="streamed")]),
        store.delete(item_id),
        drain(),
    )
    for call in calls:
        try:
            await call
        except MemoryAdapterUnavailable as exc:
            steps.append("fork" if "os.fork()" in str(exc) else str(exc))
    return ", ".join(steps)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_every_extra_of_a_store_used_before_fork_is_unavailable_in_the_child(
    tmp_path: Path,
) -> None:
    """open, store_many, store_stream, delete and items raise in the child too (none hangs);
    the parent's file is untouched by the child."""
    path = tmp_path / "memory.db"
    store = SQLiteMemoryStore(path)
    item = MemoryItem(content="parent")
    asyncio.run(store.store(item))
    report = _in_child(lambda: asyncio.run(_child_uses_the_extras(store, item.id)))
    assert report == "fork, fork, fork, fork, fork"

    async def parent() -> list[object]:
        found = await contents(store, EVERYTHING)
        await store.close()
        return found

    assert asyncio.run(parent()) == ["parent"]


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_store_never_used_before_fork_works_in_the_child(tmp_path: Path) -> None:
    """A store that had opened nothing when the process forked belongs to whichever uses it."""
    store = SQLiteMemoryStore(tmp_path / "memory.db")

    async def child() -> str:
        async with store:
            await store.store(MemoryItem(content="child"))
            return str(await contents(store, EVERYTHING))

    assert _in_child(lambda: asyncio.run(child())) == "['child']"


# ---------------------------------------------------------------- stores never closed


def _lionmem_threads(directory: Path) -> list[str]:
    return [
        t.name for t in threading.enumerate() if t.name.startswith(f"lionmem-sqlite {directory}")
    ]


def test_dropped_stores_close_their_files_and_end_their_threads(tmp_path: Path) -> None:
    """A store dropped without close() is finalized: its connections close, its thread ends."""

    async def open_and_drop() -> None:
        for n in range(30):
            store = SQLiteMemoryStore(tmp_path / f"{n}.db")
            await store.store(MemoryItem(content=n))
            assert await store.count() == 1

    asyncio.run(open_and_drop())
    gc.collect()
    deadline = time.monotonic() + 10
    while _lionmem_threads(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _lionmem_threads(tmp_path) == []
    # The last connection to close removes the WAL, so no connection was left open.
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(f"{n}.db" for n in range(30))
    assert [raw(tmp_path / f"{n}.db", "SELECT content FROM items") for n in (0, 29)] == [
        [("0",)],
        [("29",)],
    ]


async def test_a_store_in_use_is_not_finalized(tmp_path: Path) -> None:
    """Writes queued on a store nobody references any more still complete."""
    path = tmp_path / "memory.db"
    waiting = [SQLiteMemoryStore(path).store(MemoryItem(content=n)) for n in range(5)]
    gc.collect()
    await asyncio.gather(*waiting)
    assert raw(path, "SELECT count(*) FROM items") == [(5,)]


# ---------------------------------------------------------------- cancellation


async def test_a_store_cancelled_before_it_starts_is_not_written(store: SQLiteMemoryStore) -> None:
    """Cancelling store() while it waits for the worker withdraws it; the others are written."""
    with worker_held(store) as release:
        withdrawn = asyncio.ensure_future(store.store(MemoryItem(content="withdrawn")))
        kept = asyncio.ensure_future(store.store(MemoryItem(content="kept")))
        await asyncio.sleep(0)
        withdrawn.cancel()
        release.set()
        await kept
    with pytest.raises(asyncio.CancelledError):
        await withdrawn
    assert await contents(store, EVERYTHING) == ["kept"]


async def test_a_delete_cancelled_before_it_starts_deletes_nothing(
    store: SQLiteMemoryStore,
) -> None:
    """The same rule holds for every operation the worker runs."""
    item = MemoryItem(content="stays")
    await store.store(item)
    with worker_held(store) as release:
        withdrawn = asyncio.ensure_future(store.delete(item.id))
        await asyncio.sleep(0)
        withdrawn.cancel()
        release.set()
    await asyncio.gather(withdrawn, return_exceptions=True)
    assert await store.retrieve(item.id) == item


async def test_a_store_cancelled_during_its_commit_stays_committed(
    store: SQLiteMemoryStore,
) -> None:
    """Once its write has begun, cancelling the caller cannot undo it: the item is stored."""
    async with inserts_held(store) as (entered, release):
        task = asyncio.ensure_future(store.store(MemoryItem(content="committed")))
        assert await asyncio.to_thread(entered.wait, 10)
        task.cancel()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert await contents(store, EVERYTHING) == ["committed"]


async def test_a_read_after_a_cancelled_write_waits_for_it(store: SQLiteMemoryStore) -> None:
    """While a write whose caller was cancelled still runs, reads wait for it (the worker runs
    them after it), so reading the item tells whether it was written; then reads are answered
    in the caller's thread again."""
    item = MemoryItem(content="committed")
    async with inserts_held(store) as (entered, release):
        task = asyncio.ensure_future(store.store(item))
        assert await asyncio.to_thread(entered.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        read = asyncio.ensure_future(store.retrieve(item.id))
        counted = asyncio.ensure_future(store.count())
        await asyncio.sleep(0)  # answered here, they would be done now, before the write ends
        release.set()
        found = (await read, await counted)
    with worker_held(store):
        await asyncio.sleep(0)  # the worker is held now: a read sent there would wait
        again = await asyncio.wait_for(store.retrieve(item.id), 5)
    assert (found, again) == ((item, 1), item)


async def test_a_read_made_right_after_the_cancellation_waits_for_the_write(
    store: SQLiteMemoryStore,
) -> None:
    """A read made at once after ``cancel()``, before the cancelled task has run again, waits
    for the write still running as well: it sees the item."""
    item = MemoryItem(content="committed")
    async with inserts_held(store) as (entered, release):
        task = asyncio.ensure_future(store.store(item))
        assert await asyncio.to_thread(entered.wait, 10)
        release_later = threading.Timer(0.2, release.set)
        release_later.start()
        task.cancel()
        found = await store.retrieve(item.id)  # made before the cancelled task has run again
        release_later.join()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert found == item


async def test_a_stop_iteration_raised_in_the_worker_is_a_runtime_error(tmp_path: Path) -> None:
    """A StopIteration from the caller's code run in the worker (``on_unrepresentable``), which
    an asyncio future refuses, reaches the caller as the RuntimeError a coroutine raising it
    gives, caused by it; the stream is rolled back and the store goes on."""
    raised = StopIteration("from the callback")

    def skip(item: MemoryItem, error: Exception) -> None:
        raise raised

    async with SQLiteMemoryStore(tmp_path / "m.db") as store:
        items = [MemoryItem(content="ok"), MemoryItem(content=float("nan"))]
        with pytest.raises(RuntimeError, match="StopIteration raised") as caught:
            await asyncio.wait_for(store.store_stream(items, on_unrepresentable=skip), 10)
        assert caught.value.__cause__ is raised
        assert await store.count() == 0
        await store.store(MemoryItem(content="after"))
        assert await store.count() == 1


@pytest.mark.parametrize("call", ["count", "open", "close", "delete", "search", "retrieve"])
async def test_the_store_used_by_its_own_streams_items_says_so(tmp_path: Path, call: str) -> None:
    """The items of store_stream, read in the store's worker thread, that call the store get an
    error saying so, which the stream raises as their own (rolled back), instead of a call that
    waits for itself forever (reads too, whether or not the caller-thread reader would have
    answered in time); the store can then be closed."""
    store = SQLiteMemoryStore(tmp_path / "m.db")
    await store.open()
    calls: dict[str, Callable[[], Coroutine[Any, Any, object]]] = {
        "count": store.count,
        "open": store.open,
        "close": store.close,
        "delete": lambda: store.delete(uuid4()),
        "search": lambda: store.search(MemoryQuery()),
        "retrieve": lambda: store.retrieve(uuid4()),
    }

    def items() -> Iterator[MemoryItem]:
        yield MemoryItem(content="a")
        asyncio.run(calls[call]())
        yield MemoryItem(content="b")

    with pytest.raises(MemoryAdapterError, match="was called from its own worker thread"):
        await asyncio.wait_for(store.store_stream(items()), 10)
    assert await store.count() == 0
    await asyncio.wait_for(store.close(), 10)


async def test_a_cancelled_close_still_closes(tmp_path: Path) -> None:
    """close() cancelled while it waits still closes the file once the worker reaches it."""
    store = SQLiteMemoryStore(tmp_path / "memory.db")
    await store.store(MemoryItem(content="x"))
    with worker_held(store) as release:
        closing = asyncio.ensure_future(store.close())
        await asyncio.sleep(0)
        closing.cancel()
        release.set()
    await asyncio.gather(closing, return_exceptions=True)
    deadline = time.monotonic() + 10
    while (tmp_path / "memory.db-wal").exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert not (tmp_path / "memory.db-wal").exists()
    with pytest.raises(MemoryAdapterUnavailable, match="closed"):
        await store.count()


async def test_a_close_during_another_close_waits_until_the_store_is_closed(
    tmp_path: Path,
) -> None:
    """close() called while another close() waits for queued operations, in the same loop or in
    another thread's, returns only once those have completed and the file is closed."""
    store = SQLiteMemoryStore(tmp_path / "memory.db")
    await store.store(MemoryItem(content="first"))
    with worker_held(store) as release:
        queued = asyncio.ensure_future(store.store(MemoryItem(content="queued")))
        first = asyncio.ensure_future(store.close())
        await asyncio.sleep(0)
        second = asyncio.ensure_future(store.close())
        third = asyncio.ensure_future(asyncio.to_thread(lambda: asyncio.run(store.close())))
        await asyncio.sleep(0.1)
        early = [task.done() for task in (queued, first, second, third)]
        release.set()
        await asyncio.gather(second, third)
        late = [queued.done(), first.done(), (tmp_path / "memory.db-wal").exists()]
    await first
    assert (early, late) == ([False] * 4, [True, True, False])
    assert raw(tmp_path / "memory.db", "SELECT content FROM items ORDER BY seq") == [
        ('"first"',),
        ('"queued"',),
    ]


# ---------------------------------------------------------------- group commit


async def test_writes_queued_together_share_one_commit(store: SQLiteMemoryStore) -> None:
    """Eight stores queued while the worker is busy are committed by one transaction."""
    seen = await commits_of(store)
    with worker_held(store) as release:
        writes = [asyncio.ensure_future(store.store(MemoryItem(content=n))) for n in range(8)]
        await asyncio.sleep(0)
        release.set()
        await asyncio.gather(*writes)
    assert seen.count("COMMIT") == 1
    assert await contents(store, EVERYTHING) == list(range(8))


async def test_a_refused_write_fails_alone_in_its_group(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """A write the file refuses fails by itself; the writes queued with it are committed."""
    raw(
        tmp_path / "memory.db",
        "CREATE TRIGGER refuse BEFORE INSERT ON items WHEN NEW.content = '\"bad\"' "
        "BEGIN SELECT RAISE(ABORT, 'refused'); END",
    )
    with worker_held(store) as release:
        writes = [
            asyncio.ensure_future(store.store(MemoryItem(content="a"))),
            asyncio.ensure_future(
                store.store_many([MemoryItem(content="b"), MemoryItem(content="bad")])
            ),
            asyncio.ensure_future(store.store(MemoryItem(content="c"))),
        ]
        await asyncio.sleep(0)
        release.set()
        outcomes = await asyncio.gather(*writes, return_exceptions=True)
    assert [type(outcome) for outcome in outcomes] == [UUID, MemoryAdapterError, UUID]
    assert await contents(store, EVERYTHING) == ["a", "c"]


async def test_a_delete_between_writes_keeps_submission_order(store: SQLiteMemoryStore) -> None:
    """Only writes queued next to each other are grouped, so a delete between them stays between."""
    first = MemoryItem(content="first")
    again = MemoryItem(id=first.id, content="again")
    with worker_held(store) as release:
        calls = [
            asyncio.ensure_future(store.store(first)),
            asyncio.ensure_future(store.delete(first.id)),
            asyncio.ensure_future(store.store(again)),
            asyncio.ensure_future(store.delete(first.id)),
        ]
        await asyncio.sleep(0)
        release.set()
        outcomes = await asyncio.gather(*calls)
    assert outcomes == [first.id, True, first.id, True]
    assert await store.count() == 0


# ---------------------------------------------------------------- reads in the caller's thread


async def test_reads_are_answered_while_the_worker_is_busy(store: SQLiteMemoryStore) -> None:
    """retrieve and search do not wait for the worker (they read on their own connection);
    count, which SQLite cannot interrupt, is answered by the worker once it is free."""
    item = MemoryItem(content="here", tags=["t"])
    await store.store(item)
    with worker_held(store) as release:
        assert await asyncio.wait_for(store.retrieve(item.id), 5) == item
        assert await asyncio.wait_for(contents(store, MemoryQuery(tags=["t"])), 5) == ["here"]
        counted = asyncio.ensure_future(store.count())
        done, _ = await asyncio.wait([counted], timeout=0.1)
        assert not done
        release.set()
        assert await asyncio.wait_for(counted, 5) == 1


async def test_the_reader_never_waits_for_a_lock(store: SQLiteMemoryStore) -> None:
    """The connection that reads in the caller's thread has no busy timeout: it never waits."""
    await store.open()
    reader = store._connections.reader
    assert reader is not None
    assert reader.execute("PRAGMA busy_timeout").fetchone() == (0,)
    assert reader.execute("PRAGMA query_only").fetchone() == (1,)


async def test_a_read_that_meets_a_lock_is_answered_by_the_worker(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """A read whose connection finds the file locked is run by the worker instead, exactly."""
    item = MemoryItem(content="x")
    await store.store(item)
    # The reader's place is taken by a connection to a file another connection holds locked.
    holder = sqlite3.connect(tmp_path / "locked.db", isolation_level=None)
    holder.execute("CREATE TABLE items (seq)")
    holder.execute("BEGIN EXCLUSIVE")
    locked = sqlite3.connect(
        tmp_path / "locked.db", timeout=0, check_same_thread=False, factory=sqlite._Reader
    )
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        locked.execute("SELECT 1 FROM items")
    reader, store._connections.reader = store._connections.reader, locked
    try:
        assert await store.retrieve(item.id) == item
        assert await contents(store, EVERYTHING) == ["x"]
        assert await store.count() == 1
    finally:
        store._connections.reader = reader
        locked.close()
        holder.execute("ROLLBACK")
        holder.close()


async def test_a_read_interrupted_here_is_answered_by_the_worker(store: SQLiteMemoryStore) -> None:
    """A read stopped on the reader connection (as past its time budget) is run again, exactly."""
    await fill(store, *(MemoryItem(content=f"n{n}") for n in range(50)))
    reader = store._connections.reader
    assert reader is not None
    reader.set_progress_handler(lambda: 1, 1)
    assert await contents(store, MemoryQuery(text="n4")) == [
        "n4",
        *(f"n{n}" for n in range(40, 50)),
    ]
    assert await store.count() == 50


@contextmanager
def decoding_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[bool, str]]]:
    """Note, for each stored row decoded, whether the caller's (main) thread decoded it, and the
    content it held."""
    decoded: list[tuple[bool, str]] = []
    real = _sqlite_codec.decode_row

    def noting(row: Sequence[Any]) -> MemoryItem:
        item = real(row)
        decoded.append((threading.current_thread() is threading.main_thread(), item.content))
        return item

    monkeypatch.setattr(sqlite, "decode_row", noting)
    yield decoded


async def test_a_read_past_its_time_stops_before_the_next_row(
    store: SQLiteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python looks at the read's time before decoding each row, so a read past its budget gives
    way to the worker even where SQLite ran too few steps to interrupt it."""
    items = [MemoryItem(content=f"n{n}") for n in range(3)]
    await fill(store, *items)
    monkeypatch.setattr(sqlite, "_BUDGET_SECONDS", -1.0)  # every read is past its time at once
    with decoding_threads(monkeypatch) as decoded:
        assert await contents(store, EVERYTHING) == ["n0", "n1", "n2"]
        assert await store.retrieve(items[1].id) == items[1]
    assert decoded == [(False, "n0"), (False, "n1"), (False, "n2"), (False, "n1")]


async def test_a_long_row_is_decoded_by_the_worker(
    store: SQLiteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored row longer than the reader may decode within its time (its texts, in characters)
    sends the read to the worker; shorter rows are decoded in the caller's thread."""
    long = "x" * 100_000  # past the 32,768 characters the docs give
    await fill(store, MemoryItem(content="short"), MemoryItem(content=long))
    short_item, long_item = await store.search(EVERYTHING)
    with decoding_threads(monkeypatch) as decoded:
        assert await store.retrieve(short_item.id) == short_item
        assert await store.retrieve(long_item.id) == long_item
        assert await contents(store, EVERYTHING) == ["short", long]
    # The search decoded the short row here, then gave way at the long one: the worker read both.
    assert decoded == [
        (True, "short"),
        (False, long),
        (True, "short"),
        (False, "short"),
        (False, long),
    ]


async def test_a_read_meeting_a_long_value_goes_to_the_worker_before_loading_it(
    store: SQLiteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checking one stored value is one step for SQLite, however long it is: a read that meets a
    value past the reader's length (4 bytes a character of the budget), even in a row it then
    skips, is stopped before loading it and answered by the worker."""
    long = "y" * 200_000
    await fill(store, *(MemoryItem(content=long) for _ in range(3)), MemoryItem(content="a zz"))
    with decoding_threads(monkeypatch) as decoded:
        assert await contents(store, MemoryQuery(text="zz")) == ["a zz"]
    assert decoded == [(False, "a zz")]
    (short,) = await store.search(MemoryQuery(text="zz"))
    with decoding_threads(monkeypatch) as decoded:
        assert await store.retrieve(short.id) == short
    assert decoded == [(True, "a zz")]  # a read that meets no long value stays here


async def test_a_read_while_another_thread_reads_goes_to_the_worker(
    store: SQLiteMemoryStore,
) -> None:
    """The reader connection in use elsewhere is not waited for: the worker answers."""
    item = MemoryItem(content="x")
    await store.store(item)
    with store._connections.reader_lock:
        assert await asyncio.wait_for(store.retrieve(item.id), 5) == item
