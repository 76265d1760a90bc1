"""At ``synchronous=NORMAL``, a new item is inserted in the caller's thread when nothing must wait.

Whatever could wait (a lock held elsewhere, a replacement, a checkpoint due) goes to the worker,
as every write does at ``FULL``; errors are those of the worker; the WAL stays bounded.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from lionmem import MemoryItem
from lionmem.errors import MemoryAdapterUnavailable
from lionmem.stores import sqlite
from lionmem.stores.sqlite import SQLiteMemoryStore, Synchronous
from tests.stores.sqlite.support import EVERYTHING, contents, dump, inserts_held, raw


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteMemoryStore]:
    async with SQLiteMemoryStore(tmp_path / "memory.db", synchronous="NORMAL") as opened:
        yield opened


async def traced(store: SQLiteMemoryStore) -> list[tuple[bool, str]]:
    """Start recording, on every connection, each statement that writes to ``items``, with
    whether it ran in this (the event loop's) thread; returns the live list."""
    seen: list[tuple[bool, str]] = []
    here = threading.get_ident()

    def record(statement: str) -> None:
        if statement.startswith(("INSERT INTO items ", "UPDATE items ")):
            seen.append((threading.get_ident() == here, " ".join(statement.split()[:3])))

    await store._configure(lambda conn: conn.set_trace_callback(record))
    return seen


async def test_a_new_item_is_inserted_in_the_caller_s_thread(
    store: SQLiteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One INSERT, in the event loop's thread; nothing is sent to the worker."""
    seen = await traced(store)
    sent = 0
    submit = store._worker.submit_batch

    def counting(runner: Any, payload: Any) -> asyncio.Future[Any]:
        nonlocal sent
        sent += 1
        return submit(runner, payload)

    monkeypatch.setattr(store._worker, "submit_batch", counting)
    item = MemoryItem(content="here", tags=["t"], metadata={"k": 1})
    assert await store.store(item) == item.id
    assert (seen, sent) == ([(True, "INSERT INTO items")], 0)
    assert dump(await store.retrieve(item.id)) == dump(item)


async def test_a_replacement_goes_to_the_worker(store: SQLiteMemoryStore) -> None:
    """A stored id is not replaced in the caller's thread: the worker's transaction does it."""
    item = MemoryItem(content="old")
    await store.store(item)
    seen = await traced(store)
    replaced = item.model_copy(update={"content": "new"})
    await store.store(replaced)
    assert seen == [
        (True, "INSERT INTO items"),  # its id is stored already: it inserts nothing
        (False, "INSERT INTO items"),  # the worker's insert finds it stored too,
        (False, "INSERT INTO items"),  # and so does its transaction, which then replaces it
        (False, "UPDATE items SET"),
    ]
    assert [dump(await store.retrieve(item.id)), await store.count()] == [dump(replaced), 1]


@pytest.mark.parametrize("synchronous", ["FULL", "EXTRA"])
async def test_a_syncing_store_never_writes_in_the_caller_s_thread(
    tmp_path: Path, synchronous: Synchronous
) -> None:
    """At FULL and EXTRA a commit waits for the disk: every write runs in the worker."""
    async with SQLiteMemoryStore(tmp_path / "memory.db", synchronous=synchronous) as store:
        seen = await traced(store)
        for n in range(3):
            await store.store(MemoryItem(content=n))
        assert store._connections.direct is None
        assert seen == [(False, "INSERT INTO items")] * 3


async def test_a_held_write_lock_sends_the_write_to_the_worker(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """A write that meets another connection's lock does not wait in the loop: the worker waits
    for the lock while the loop runs on, then commits it; no error."""
    await store.store(MemoryItem(content="before"))
    seen = await traced(store)
    holder = sqlite3.connect(tmp_path / "memory.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        writing = asyncio.ensure_future(store.store(MemoryItem(content="after")))
        ticks = 0
        for _ in range(20):
            await asyncio.sleep(0.01)
            ticks += 1
        assert (ticks, writing.done()) == (20, False)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    await asyncio.wait_for(writing, 10)
    assert seen == [(True, "INSERT INTO items"), (False, "INSERT INTO items")]
    assert await contents(store, EVERYTHING) == ["before", "after"]


async def test_the_direct_connection_in_use_sends_the_write_to_the_worker(
    store: SQLiteMemoryStore,
) -> None:
    """Another thread using the direct connection is not waited for: the worker writes."""
    seen = await traced(store)
    with store._connections.direct_lock:
        await asyncio.wait_for(store.store(MemoryItem(content="x")), 10)
    assert seen == [(False, "INSERT INTO items")]


async def test_a_store_cancelled_after_its_insert_is_stored(store: SQLiteMemoryStore) -> None:
    """store() inserts, then lets the loop run once; cancelled there, the item is stored."""
    written = asyncio.ensure_future(store.store(MemoryItem(content="written")))
    await asyncio.sleep(0)  # the insert is done and the store yields
    written.cancel()
    with pytest.raises(asyncio.CancelledError):
        await written
    assert await contents(store, EVERYTHING) == ["written"]


async def test_a_store_after_a_cancelled_one_still_running_waits_for_it(
    store: SQLiteMemoryStore,
) -> None:
    """A store() cancelled while the worker runs it still completes; a store() called after it
    is not inserted here ahead of it, so the later value of the id is the one that stays."""
    first = MemoryItem(content="v1, cancelled")
    async with inserts_held(store) as (entered, release):
        with store._connections.direct_lock:  # in use: this store() goes to the worker
            cancelled = asyncio.ensure_future(store.store(first))
            assert await asyncio.to_thread(entered.wait, 10)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        later = asyncio.ensure_future(store.store(first.model_copy(update={"content": "v2"})))
        await asyncio.sleep(0)  # inserted here, it would be stored now, before v1
        release.set()
        await later
    assert await contents(store, EVERYTHING) == ["v2"]


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_writes_commit_in_the_order_of_the_calls(
    tmp_path: Path, synchronous: Synchronous
) -> None:
    """A store() called after a write still queued in the worker waits its turn: no later call
    overtakes an earlier one, whether it could insert in the caller's thread or not."""
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path, synchronous=synchronous) as store:
        a, b, c = (MemoryItem(content=name) for name in "abc")
        await asyncio.gather(store.store(a), store.store_many([b]))
        await asyncio.gather(store.store_many([c]), store.store(MemoryItem(content="d")))
        deleted = MemoryItem(content="deleted")
        await asyncio.gather(store.store(deleted), store.delete(deleted.id))
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # the first store() below must wait for the worker

        async def release() -> None:
            await asyncio.sleep(0)
            other.rollback()

        first = MemoryItem(content="v1")
        await asyncio.gather(
            store.store(first), release(), store.store(first.model_copy(update={"content": "v2"}))
        )
        other.close()
        found = await contents(store, EVERYTHING)
        gone = await store.retrieve(deleted.id)
    assert (found, gone) == (["a", "b", "c", "d", "v2"], None)


async def test_a_store_called_before_close_is_stored(tmp_path: Path) -> None:
    """A store() called before close() is written, as the worker would write it; one called
    after it raises the closed error."""
    store = SQLiteMemoryStore(tmp_path / "memory.db", synchronous="NORMAL")
    await store.open()
    await asyncio.gather(store.store(MemoryItem(content="early")), store.close())
    with pytest.raises(MemoryAdapterUnavailable, match="is closed"):
        await store.store(MemoryItem(content="late"))
    assert raw(tmp_path / "memory.db", "SELECT content FROM items") == [('"early"',)]


def _wal_frames(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return (wal.stat().st_size - 32) // (4096 + 24)


@pytest.mark.parametrize("checkpoints", [True, False])
async def test_the_wal_stays_bounded_under_many_direct_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checkpoints: bool
) -> None:
    """Inserts in the caller's thread never checkpoint; the worker does, every CHECKPOINT_WRITES
    of them, so the WAL stops growing (without those checkpoints it grows with every write).

    The worker's own automatic checkpoints (after its commits) are switched off, so that only
    the checkpoints after CHECKPOINT_WRITES inserts can bound the WAL.
    """
    if not checkpoints:
        monkeypatch.setattr(sqlite, "CHECKPOINT_WRITES", 10**9)
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path, synchronous="NORMAL") as store:
        await store._call(lambda conn: conn.execute("PRAGMA wal_autocheckpoint = 0"))
        for n in range(4000):
            await store.store(MemoryItem(content=f"item {n}", tags=["t"], metadata={"n": n}))
        frames = _wal_frames(path)
        assert await store.count() == 4000
    if checkpoints:
        assert frames < 1500  # about 3 frames per write, 300 writes between checkpoints
    else:
        assert frames > 6000  # 2 to 3 frames per write, none checkpointed


async def test_a_checkpoint_waits_for_a_reader_so_that_the_wal_starts_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader of another connection (another process alike) still on an older snapshot when
    the worker checkpoints is waited for, briefly: the checkpoint reaches the end of the WAL,
    and the next write starts the WAL again from its beginning instead of growing it (a reader
    reading without pause would otherwise keep the WAL growing)."""
    monkeypatch.setattr(sqlite, "_CHECKPOINT_WAIT_MS", 10_000)  # ample for a loaded machine
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path, synchronous="NORMAL") as store:
        await store._call(lambda conn: conn.execute("PRAGMA wal_autocheckpoint = 0"))
        await store.store_many([MemoryItem(content=f"a {n}") for n in range(50)])
        reader = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM items").fetchone()  # holds this snapshot
        for n in range(50):
            await store.store(MemoryItem(content=f"b {n}"))
        ends = threading.Timer(0.01, reader.commit)  # the reader is done 10 ms later
        ends.start()
        await store._call(sqlite._checkpoint_wal)
        ends.join()
        reader.close()
        await store.store(MemoryItem(content="after"))
        (_, frames, _) = raw(path, "PRAGMA wal_checkpoint(PASSIVE)")[0]
        assert await store.count() == 101
    assert frames < 10  # the one write since the checkpoint, not 150 frames and more


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_a_full_disk_fails_as_the_worker_reports_it(
    tmp_path: Path, synchronous: Synchronous
) -> None:
    """A full disk (SQLite's page limit reached) raises MemoryAdapterUnavailable and stores
    nothing; once space is back, the next write succeeds."""
    async with SQLiteMemoryStore(tmp_path / "memory.db", synchronous=synchronous) as store:
        await store.store(MemoryItem(content="first"))
        (pages,) = raw(tmp_path / "memory.db", "PRAGMA page_count")[0]
        await store._configure(lambda conn: conn.execute(f"PRAGMA max_page_count = {pages}"))
        with pytest.raises(MemoryAdapterUnavailable, match="database or disk is full"):
            await store.store(MemoryItem(content="x" * 50_000))
        assert await contents(store, EVERYTHING) == ["first"]
        await store._configure(lambda conn: conn.execute("PRAGMA max_page_count = 1073741823"))
        await store.store(MemoryItem(content="second"))
        assert await contents(store, EVERYTHING) == ["first", "second"]


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_a_read_only_database_fails_as_the_worker_reports_it(
    tmp_path: Path, synchronous: Synchronous
) -> None:
    """A database that refuses writes raises MemoryAdapterUnavailable naming it read-only."""
    async with SQLiteMemoryStore(tmp_path / "memory.db", synchronous=synchronous) as store:
        await store.store(MemoryItem(content="first"))
        await store._configure(lambda conn: conn.execute("PRAGMA query_only = 1"))
        with pytest.raises(MemoryAdapterUnavailable, match="readonly database"):
            await store.store(MemoryItem(content="refused"))
        assert await contents(store, EVERYTHING) == ["first"]


async def test_many_tasks_and_threads_write_at_once(tmp_path: Path) -> None:
    """Tasks of several event loops in several threads write new items at once: every item is
    stored exactly once, each writer's in its own order, and the tail is indexed as it grows."""
    path = tmp_path / "memory.db"
    store = SQLiteMemoryStore(path, synchronous="NORMAL")
    await store.open()

    async def writer(name: str) -> None:
        for n in range(150):
            await store.store(MemoryItem(content=f"{name} {n}", tags=[name]))

    def thread(name: str) -> None:
        async def tasks() -> None:
            await asyncio.gather(*(writer(f"{name}{k}") for k in range(3)))

        asyncio.run(tasks())

    threads = [threading.Thread(target=thread, args=(name,)) for name in "abc"]
    for started in threads:
        started.start()
    await asyncio.gather(*(writer(f"loop{k}") for k in range(3)))
    for started in threads:
        await asyncio.to_thread(started.join, 30)
    found = [item.content for item in await store.search(EVERYTHING)]
    await store.close()
    names = [f"{name}{k}" for name in ("a", "b", "c", "loop") for k in range(3)]
    assert sorted(found) == sorted(f"{name} {n}" for name in names for n in range(150))
    for name in names:
        assert [text for text in found if text.split()[0] == name] == [
            f"{name} {n}" for n in range(150)
        ]
    unindexed = raw(
        path,
        "SELECT count(*) FROM items WHERE seq > "
        "(SELECT CAST(value AS INTEGER) FROM lionmem_meta WHERE key = 'indexed_seq')",
    )
    assert unindexed == [(0,)]  # close() indexed what was left
