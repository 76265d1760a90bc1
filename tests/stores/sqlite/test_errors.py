"""How SQLiteMemoryStore reports failures: locks, interruptions, refusals and damaged data."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from lionmem import MemoryItem, MemoryQuery
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable
from lionmem.stores.sqlite import SQLiteMemoryStore, _translate, _wal_blocked
from tests.stores.sqlite.support import dump, raw


@pytest.fixture(params=["FULL", "NORMAL"])
async def store(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[SQLiteMemoryStore]:
    """A store at FULL (every write in the worker) or NORMAL (new items inserted here)."""
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path, busy_timeout=0.05, synchronous=request.param) as opened:
        yield opened


@contextlib.contextmanager
def _write_lock_held(path: Path) -> Iterator[None]:
    """Hold the file's write lock from another connection for the duration of the block."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.rollback()
        conn.close()


# ---------------------------------------------------------------- locks


async def test_write_lock_held_too_long_raises_unavailable(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """A write lock held past the busy timeout and the retries raises MemoryAdapterUnavailable."""
    with (
        _write_lock_held(tmp_path / "memory.db"),
        pytest.raises(MemoryAdapterUnavailable, match="database is locked"),
    ):
        await store.store(MemoryItem())


async def test_writes_grouped_behind_a_held_lock_wait_for_it_once(tmp_path: Path) -> None:
    """Writes queued together that meet a lock held past the busy timeout all raise after the
    group's own retries (three attempts at the lock in all), not after one round each."""
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path, busy_timeout=0.05) as store:
        await store.store(MemoryItem(content="first"))
        attempts: list[str] = []
        await store._call(lambda conn: conn.set_trace_callback(attempts.append))
        release = threading.Event()
        with _write_lock_held(path):
            blocker = asyncio.ensure_future(store._call(lambda conn: release.wait(10)))
            writes = [asyncio.ensure_future(store.store(MemoryItem(content=n))) for n in range(4)]
            await asyncio.sleep(0.01)
            release.set()
            outcomes = await asyncio.gather(*writes, return_exceptions=True)
            await blocker
        await store._call(lambda conn: conn.set_trace_callback(None))
        count = await store.count()
    assert [type(outcome) for outcome in outcomes] == [MemoryAdapterUnavailable] * 4
    assert (attempts, count) == (["BEGIN IMMEDIATE"] * 3, 1)


async def test_writes_committed_one_by_one_wait_for_a_lock_once(tmp_path: Path) -> None:
    """When a grouped transaction fails for another reason (a trigger refuses one write) and the
    writes committed one by one then meet a lock held past the busy timeout, the first of them
    waits it out and the rest fail with it, never sent to the file to wait again."""
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path, busy_timeout=0.05) as store:
        await store.store(MemoryItem(content="first"))
        raw(
            path,
            "CREATE TRIGGER refuse BEFORE INSERT ON items WHEN new.content = '\"refused\"' "
            "BEGIN SELECT RAISE(ABORT, 'no'); END",
        )
        other = sqlite3.connect(path, isolation_level=None, timeout=0, check_same_thread=False)
        statements: list[str] = []

        def trace(statement: str) -> None:
            statements.append(statement)
            if "ROLLBACK" in statements and not other.in_transaction:
                other.execute("BEGIN IMMEDIATE")  # taken as the first write alone starts

        await store._call(lambda conn: conn.set_trace_callback(trace))
        release = threading.Event()
        blocker = asyncio.ensure_future(store._call(lambda conn: release.wait(10)))
        items = [MemoryItem(content=c) for c in (0, "refused", 2, 3)]
        writes = [asyncio.ensure_future(store.store(item)) for item in items]
        await asyncio.sleep(0.01)
        release.set()
        outcomes = await asyncio.gather(*writes, return_exceptions=True)
        await blocker
        await store._call(lambda conn: conn.set_trace_callback(None))
        other.rollback()
        other.close()
        count = await store.count()
    end = statements.index("ROLLBACK")

    def sent(part: list[str]) -> list[object]:
        return [item.content for item in items if any(str(item.id) in s for s in part)]

    assert [type(outcome) for outcome in outcomes] == [MemoryAdapterUnavailable] * 4
    # The group stops at the refused write; alone, the first write meets the lock.
    assert (sent(statements[:end]), sent(statements[end + 1 :]), count) == ([0, "refused"], [0], 1)


async def test_locked_write_stores_nothing(store: SQLiteMemoryStore, tmp_path: Path) -> None:
    """The write that met the lock left nothing behind."""
    with _write_lock_held(tmp_path / "memory.db"), pytest.raises(MemoryAdapterUnavailable):
        await store.store(MemoryItem())
    assert await store.count() == 0


async def test_store_is_usable_after_the_lock_is_released(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """Once the other writer lets go, writes succeed again."""
    with _write_lock_held(tmp_path / "memory.db"), pytest.raises(MemoryAdapterUnavailable):
        await store.store(MemoryItem())
    item = MemoryItem(content="after")
    await store.store(item)
    assert dump(await store.retrieve(item.id)) == dump(item)


async def test_reads_go_on_while_another_process_writes(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """In WAL mode a held write lock does not block retrieve or search."""
    item = MemoryItem(content="readable")
    await store.store(item)
    with _write_lock_held(tmp_path / "memory.db"):
        found = await store.retrieve(item.id)
        hits = await store.search(MemoryQuery(text="readable"))
    assert (dump(found), [hit.id for hit in hits]) == (dump(item), [item.id])


async def test_write_waits_for_a_short_lock(tmp_path: Path) -> None:
    """A lock released within the busy timeout delays the write instead of failing it."""
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        locked, release = threading.Event(), threading.Event()

        def hold_lock() -> None:
            with _write_lock_held(path):
                locked.set()
                release.wait(timeout=10)

        holder = threading.Thread(target=hold_lock)
        holder.start()
        locked.wait(timeout=10)
        write = asyncio.ensure_future(store.store(MemoryItem(content="waited")))
        await asyncio.sleep(0.05)  # give the write time to start waiting (it may wait 5 s)
        release.set()
        await write
        holder.join()
        assert await store.count() == 1


async def test_unavailable_error_chains_the_sqlite_error(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """The native sqlite3 error is the __cause__."""
    with (
        _write_lock_held(tmp_path / "memory.db"),
        pytest.raises(MemoryAdapterUnavailable) as caught,
    ):
        await store.store(MemoryItem())
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)


async def test_a_file_whose_wal_cannot_be_opened_says_what_sqlite_needs(tmp_path: Path) -> None:
    """A stored file SQLite cannot open because its -wal file cannot be made (here a directory
    stands in its place, as read-only storage would refuse it) is unavailable, saying why; a
    missing directory is not given that reason."""
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        await store.store(MemoryItem(content="kept"))
    (tmp_path / "memory.db-wal").mkdir()
    with pytest.raises(MemoryAdapterUnavailable) as caught:
        await SQLiteMemoryStore(path).count()
    assert str(caught.value) == (
        f"SQLite database {str(path)!r} is unavailable: unable to open database file (SQLite "
        "opens a WAL database, even to read it, only where it can create or open its -wal and "
        "-shm files beside it: on read-only storage, copy the file to a writable directory)"
    )
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    missing = tmp_path / "no such directory" / "memory.db"
    with pytest.raises(MemoryAdapterUnavailable) as caught:
        await SQLiteMemoryStore(missing).count()
    assert str(caught.value) == (
        f"SQLite database {str(missing)!r} is unavailable: unable to open database file"
    )


@pytest.mark.parametrize(
    ("code", "message"),
    [
        (sqlite3.SQLITE_CANTOPEN, "unable to open database file"),
        (sqlite3.SQLITE_READONLY, "attempt to write a readonly database"),
    ],
)
def test_the_wal_reason_is_given_for_either_error_sqlite_gives(
    tmp_path: Path, code: int, message: str
) -> None:
    """SQLite reports companions it cannot make as "unable to open" or (the -shm file, in a
    directory another user cannot write) "attempt to write a readonly database": both get the
    reason when the companions are blocked, and neither when they are not."""
    path = tmp_path / "memory.db"
    path.write_bytes(b"")
    error = sqlite3.OperationalError(message)
    error.sqlite_errorcode = code
    fine = _translate(error, repr(str(path)), str(path))
    (tmp_path / "memory.db-wal").mkdir()
    blocked = _translate(error, repr(str(path)), str(path))
    assert (type(fine), str(fine)) == (
        MemoryAdapterUnavailable,
        f"SQLite database {str(path)!r} is unavailable: {message}",
    )
    assert (type(blocked), str(blocked)) == (
        MemoryAdapterUnavailable,
        f"SQLite database {str(path)!r} is unavailable: {message} (SQLite opens a WAL database, "
        "even to read it, only where it can create or open its -wal and -shm files beside it: "
        "on read-only storage, copy the file to a writable directory)",
    )


def test_the_wal_reason_is_given_only_where_it_applies(tmp_path: Path) -> None:
    """The -wal/-shm reason is named for a file whose companions cannot be used, not for a
    file whose companions are fine or absent (another cause, such as no descriptor left)."""
    path = tmp_path / "memory.db"
    path.write_bytes(b"")
    assert not _wal_blocked(str(path))
    (tmp_path / "memory.db-shm").write_bytes(b"")
    assert not _wal_blocked(str(path))
    (tmp_path / "memory.db-wal").mkdir()
    assert _wal_blocked(str(path))
    assert not _wal_blocked(str(tmp_path / "absent.db"))


# ---------------------------------------------------------------- interruptions and refusals


async def test_interrupted_statement_raises_unavailable(store: SQLiteMemoryStore) -> None:
    """A statement SQLite interrupts raises MemoryAdapterUnavailable, not an empty result."""
    await store.store(MemoryItem(content="x"))
    await store._configure(lambda conn: conn.set_progress_handler(lambda: 1, 1))
    with pytest.raises(MemoryAdapterUnavailable, match="interrupted"):
        await store.search(MemoryQuery())


async def test_refused_write_raises_adapter_error(store: SQLiteMemoryStore, tmp_path: Path) -> None:
    """A write the database refuses (a trigger aborts it) raises MemoryAdapterError."""
    await store.open()
    raw(
        tmp_path / "memory.db",
        "CREATE TRIGGER refuse BEFORE INSERT ON items BEGIN SELECT RAISE(ABORT, 'no'); END",
    )
    with pytest.raises(MemoryAdapterError, match="no"):
        await store.store(MemoryItem())


async def test_refused_write_leaves_no_partial_rows(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """A refusal in the middle of a batch rolls the whole batch back, side tables included."""
    await store.open()
    raw(
        tmp_path / "memory.db",
        "CREATE TRIGGER refuse BEFORE INSERT ON items WHEN new.content = '\"bad\"' "
        "BEGIN SELECT RAISE(ABORT, 'no'); END",
    )
    with pytest.raises(MemoryAdapterError):
        await store.store_many(
            [MemoryItem(content="good", tags=["t"], metadata={"k": 1}), MemoryItem(content="bad")]
        )
    counts = [
        raw(tmp_path / "memory.db", f"SELECT count(*) FROM {table}")[0][0]
        for table in ("items", "item_tags", "item_fields")
    ]
    assert counts == [0, 0, 0]


# ---------------------------------------------------------------- damaged data


async def _damage(store: SQLiteMemoryStore, path: Path, column: str, value: str) -> MemoryItem:
    item = MemoryItem(content="intact", metadata={"k": 1})
    await store.store(item)
    raw(path, f"UPDATE items SET {column} = ?", value)
    return item


# JSON nested deeper than Python's parser can go (writes refuse anything deeper than MAX_DEPTH).
_DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("content", "{not json"),
        ("metadata", "[1, 2]"),
        ("tags", '"x"'),
        ("created_at", "soon"),
        *((column, _DEEP) for column in ("content", "metadata", "tags")),
    ],
)
async def test_damaged_row_fails_retrieve(
    store: SQLiteMemoryStore, tmp_path: Path, column: str, value: str
) -> None:
    """A row that does not decode into a valid MemoryItem raises MemoryAdapterError naming it."""
    item = await _damage(store, tmp_path / "memory.db", column, value)
    with pytest.raises(MemoryAdapterError, match=str(item.id)):
        await store.retrieve(item.id)


@pytest.mark.parametrize("value", ["{not json", _DEEP])
async def test_damaged_row_fails_search(
    store: SQLiteMemoryStore, tmp_path: Path, value: str
) -> None:
    """A search meeting a damaged row raises MemoryAdapterError instead of skipping it."""
    await _damage(store, tmp_path / "memory.db", "content", value)
    with pytest.raises(MemoryAdapterError, match="malformed"):
        await store.search(MemoryQuery())


@pytest.mark.parametrize("column", ["metadata", "tags"])
async def test_too_deep_json_fails_a_search_that_reads_it(
    store: SQLiteMemoryStore, tmp_path: Path, column: str
) -> None:
    """Tags or metadata nested deeper than Python can parse fail the tag or filter search that
    reads them, and items(), with MemoryAdapterError saying they are malformed."""
    if column == "tags":  # the tail's SQL looks for the tag's text first: the row holds it
        value, query = '["t",' + _DEEP + "]", MemoryQuery(tags=["t"])
    else:
        value, query = '{"k":' + _DEEP + "}", MemoryQuery(filters={"k": 1})
    await _damage(store, tmp_path / "memory.db", column, value)
    with pytest.raises(MemoryAdapterError, match=f"{column} of item .* malformed"):
        await store.search(query)
    with pytest.raises(MemoryAdapterError, match="malformed"):
        _ = [item async for item in store.items()]


async def test_damaged_metadata_fails_filtered_search(
    store: SQLiteMemoryStore, tmp_path: Path
) -> None:
    """Metadata that is not a JSON object fails a filtered search that reads it."""
    await _damage(store, tmp_path / "memory.db", "metadata", '[{"k":1}]')
    with pytest.raises(MemoryAdapterError, match="not a JSON object"):
        await store.search(MemoryQuery(filters={"k": 1}))


async def test_damaged_schema_fails_every_call(store: SQLiteMemoryStore, tmp_path: Path) -> None:
    """A file whose schema is damaged raises MemoryAdapterError saying it is damaged."""
    item = MemoryItem()
    await store.store(item)
    conn = sqlite3.connect(tmp_path / "memory.db", isolation_level=None)
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET sql = 'CREATE TABLE items (' WHERE name = 'items'")
    conn.execute(f"PRAGMA schema_version = {version + 1}")
    conn.close()
    with pytest.raises(MemoryAdapterError, match="damaged"):
        await store.retrieve(item.id)
