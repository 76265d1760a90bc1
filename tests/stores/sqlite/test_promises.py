"""SQLiteMemoryStore keeps its promises under hostile input, damaged files and racing processes."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from pydantic import ValidationError

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable
from lionmem.stores import _sqlite_schema
from lionmem.stores.sqlite import SQLiteMemoryStore, Synchronous, UnrepresentableValueError
from tests.stores.sqlite.support import EVERYTHING, contents, fill, raw


@pytest.fixture(params=["FULL", "NORMAL"])
async def store(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[SQLiteMemoryStore]:
    """A store at FULL (every write in the worker) or NORMAL (new items inserted here)."""
    async with SQLiteMemoryStore(tmp_path / "memory.db", synchronous=request.param) as opened:
        yield opened


# ---------------------------------------------------------------- opening a fresh file in a race


@pytest.mark.parametrize("moment", range(1, 7))
def test_identity_is_read_from_one_snapshot(tmp_path: Path, moment: int) -> None:
    """Another process creating the schema between two reads of the identity is no foreign file.

    The other process's whole initialisation runs just before the ``moment``-th statement of
    this connection's check; if this connection holds the file then, the other one is refused
    (busy) and this one creates the schema itself.
    """
    path = tmp_path / "fresh.db"
    conn = sqlite3.connect(path, isolation_level=None, timeout=5)
    seen: list[str] = []

    def interlope(statement: str) -> None:
        seen.append(statement)
        if len(seen) != moment:
            return
        other = sqlite3.connect(path, isolation_level=None, timeout=0)
        try:
            _sqlite_schema.prepare(other, "other", wal=True)
        except sqlite3.OperationalError:
            pass  # the file was held: the check below is not interleaved at all
        finally:
            other.close()

    conn.set_trace_callback(interlope)
    try:
        _sqlite_schema.prepare(conn, "this", wal=True)
    finally:
        conn.set_trace_callback(None)
        conn.close()
    assert raw(path, "PRAGMA application_id") == [(_sqlite_schema.APPLICATION_ID,)]


# ---------------------------------------------------------------- a thousand filters


async def test_a_thousand_filter_keys_answer_as_the_reference(store: SQLiteMemoryStore) -> None:
    """A query with 1,000 filter keys is answered as InMemoryStore answers it, not refused."""
    everything = {f"k{n}": n for n in range(1000)}
    items = [
        MemoryItem(content="all", metadata=everything),
        MemoryItem(content="all but one", metadata={**everything, "k999": -1}),
        MemoryItem(content="none"),
    ]
    reference = InMemoryStore()
    await fill(store, *items)
    await fill(reference, *items)
    for query in (
        MemoryQuery(filters=everything),
        MemoryQuery(filters={f"k{n}": None for n in range(1000)}),
        MemoryQuery(
            filters={**{f"k{n}": n for n in range(500)}, **{f"z{n}": None for n in range(500)}}
        ),
    ):
        assert await contents(store, query) == await contents(reference, query)
    assert await contents(store, MemoryQuery(filters=everything)) == ["all"]


# ---------------------------------------------------------------- unvalidated items


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"id": "not-a-uuid"}, "id"),
        ({"id": 12}, "id"),
        ({"id": "5A3C0E8E-3C2B-4B9B-8A8A-1C2D3E4F5A6B"}, "id"),
        ({"metadata": {"lion_class": "SomethingElse"}}, "metadata['lion_class']"),
        ({"metadata": {"lion_class": 3}}, "metadata['lion_class']"),
    ],
)
async def test_an_unvalidated_item_is_refused_and_poisons_nothing(
    store: SQLiteMemoryStore, fields: dict[str, Any], field: str
) -> None:
    """An item built with model_construct that could not be read back is refused before writing."""
    kept = MemoryItem(content="kept")
    await store.store(kept)
    bad = MemoryItem.model_construct(**{"content": "bad", **fields})
    with pytest.raises(UnrepresentableValueError) as caught:
        await store.store(bad)
    assert caught.value.field == field
    with pytest.raises(UnrepresentableValueError):
        await store.store_many([MemoryItem(content="with it"), bad])
    assert await contents(store, EVERYTHING) == ["kept"]
    assert [item.content async for item in store.items()] == ["kept"]
    assert (await store.retrieve(kept.id)) == kept


class _ShoutingId(UUID):
    """A UUID whose str() is not the canonical text."""

    def __str__(self) -> str:
        return "ID-" + super().__str__().upper()


def _driver_uuid(value: UUID) -> UUID:
    """``value`` as the UUID subclass asyncpg returns, else as a plain subclass like it."""
    try:
        from asyncpg.pgproto.pgproto import UUID as AsyncpgUUID
    except ImportError:
        return _DriverId(int=value.int)
    driver: UUID = AsyncpgUUID(value.bytes)
    return driver


class _DriverId(UUID):
    """A database driver's UUID subclass, whose str() is the canonical text."""

    __slots__ = ()


@pytest.mark.parametrize("kind", ["own str()", "driver's"])
async def test_an_item_with_a_uuid_subclass_id_is_stored_by_its_value(
    store: SQLiteMemoryStore, kind: str
) -> None:
    """Validation keeps a UUID subclass as the id (asyncpg returns one); it is stored under its
    canonical text, never its own str(), and comes back as a plain UUID equal to it."""
    kept = MemoryItem(content="kept")
    await store.store(kept)
    ids = [UUID(int=12345 + n) for n in range(3)]
    odd = [_ShoutingId(int=i.int) if kind == "own str()" else _driver_uuid(i) for i in ids]
    assert all(type(i) is not UUID and i == j for i, j in zip(odd, ids, strict=True))
    await store.store(MemoryItem(id=odd[0], content="one"))
    await store.store_many([MemoryItem(id=odd[1], content="two")])
    await store.store_stream([MemoryItem(id=odd[2], content="three")])
    rows = raw(Path(store.path), "SELECT id FROM items ORDER BY rowid")
    assert [row[0] for row in rows] == [str(kept.id)] + [str(i) for i in ids]
    for i, content in zip(ids, ["one", "two", "three"], strict=True):
        got = await store.retrieve(i)
        assert got is not None
        assert (type(got.id), got.id, got.content) == (UUID, i, content)
        assert await store.retrieve(str(i)) is not None
    for i in odd:
        assert await store.retrieve(i) is not None
    assert await contents(store, EVERYTHING) == ["kept", "one", "two", "three"]
    assert await store.delete(odd[0]) is True
    assert await contents(store, EVERYTHING) == ["kept", "two", "three"]


async def test_a_uuid_subclass_finds_and_deletes_the_item_of_its_value(
    store: SQLiteMemoryStore,
) -> None:
    """retrieve and delete look an id up by its value, as InMemoryStore does, whatever its str()."""
    item = MemoryItem(content="found")
    await store.store(item)
    reference = InMemoryStore()
    await reference.store(item)
    found = await store.retrieve(_ShoutingId(int=item.id.int))
    expected = await reference.retrieve(_ShoutingId(int=item.id.int))
    deleted = await store.delete(_ShoutingId(int=item.id.int))
    assert found is not None
    assert expected is not None
    # MemoryItem's == compares ids only: the fields are compared one by one.
    assert found.model_dump() == expected.model_dump() == item.model_dump()
    assert (deleted, await store.count()) == (True, 0)


async def test_an_item_of_the_accepted_class_name_is_stored(store: SQLiteMemoryStore) -> None:
    """metadata.lion_class naming MemoryItem itself is what validation accepts, so it is stored."""
    item = MemoryItem(metadata={"lion_class": "lionmem.MemoryItem"})
    await store.store(item)
    assert await store.retrieve(item.id) == item


# ---------------------------------------------------------------- a damaged file


async def test_missing_meta_row_is_a_damaged_file(tmp_path: Path) -> None:
    """A file whose lionmem_meta row is gone raises the "damaged" MemoryAdapterError on every call."""
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        await store.store(MemoryItem(content="x"))
    raw(path, "DELETE FROM lionmem_meta")
    store = SQLiteMemoryStore(path)
    try:
        for _ in range(2):
            with pytest.raises(MemoryAdapterError, match="damaged") as caught:
                await store.count()
            assert not isinstance(caught.value, MemoryAdapterUnavailable)
    finally:
        await store.close()


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("path", "match"),
    [
        ("", "empty"),
        ("file:x?mode=memory", "URI"),
        ("file:notes.db", "URI"),
        ("dir\x00name.db", "NUL"),
    ],
)
def test_bad_paths_are_refused(path: str, match: str) -> None:
    """An empty path, a SQLite URI and a path with NUL raise a ValueError naming the problem."""
    with pytest.raises(ValueError, match=match):
        SQLiteMemoryStore(path)


async def test_a_path_that_merely_contains_file_colon_is_a_file(tmp_path: Path) -> None:
    """Only a path starting with ``file:`` reads as a URI; others are plain file names."""
    path = tmp_path / "my file:x?mode=memory.db"
    async with SQLiteMemoryStore(path) as store:
        await store.store(MemoryItem(content="durable"))
    assert path.exists()


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("5", TypeError),
        (True, TypeError),
        (None, TypeError),
        (float("inf"), ValueError),
        (-1, ValueError),
        (float("nan"), ValueError),
    ],
)
def test_bad_busy_timeout_is_refused(value: object, error: type[Exception]) -> None:
    """busy_timeout must be a finite non-negative number of seconds."""
    with pytest.raises(error, match="busy_timeout"):
        SQLiteMemoryStore(":memory:", busy_timeout=value)  # type: ignore[arg-type]  # wrong on purpose


@pytest.mark.parametrize(
    ("value", "error"),
    [(1.5, TypeError), ("10", TypeError), (True, TypeError), (0, ValueError), (-3, ValueError)],
)
async def test_bad_batch_size_is_refused(
    store: SQLiteMemoryStore, value: object, error: type[Exception]
) -> None:
    """items(batch_size=...) takes a positive int; anything else raises naming batch_size."""
    await store.store(MemoryItem(content="x"))
    with pytest.raises(error, match="batch_size"):
        async for _ in store.items(batch_size=value):  # type: ignore[arg-type]  # wrong on purpose
            pass


async def test_a_huge_batch_size_reads_everything_at_once(store: SQLiteMemoryStore) -> None:
    """A batch size past SQLite's integers reads every item in one batch instead of overflowing."""
    await fill(store, MemoryItem(content=1), MemoryItem(content=2))
    assert [item.content async for item in store.items(batch_size=10**20)] == [1, 2]


# ---------------------------------------------------------------- after close


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_every_call_after_close_is_unavailable(
    tmp_path: Path, synchronous: Synchronous
) -> None:
    """After close(), every operation raises MemoryAdapterUnavailable, even one known locally."""
    store = SQLiteMemoryStore(tmp_path / "memory.db", synchronous=synchronous)
    await store.store(MemoryItem(content="x"))
    await store.store(MemoryItem(content="y"))
    await store.close()
    calls = {
        "search limit 0": store.search(MemoryQuery(limit=0)),
        "search, surrogate": store.search(MemoryQuery(text="\ud800")),
        "search": store.search(MemoryQuery()),
        "retrieve junk": store.retrieve("junk"),
        "retrieve": store.retrieve(UUID(int=1)),
        "delete junk": store.delete("junk"),
        "store_many empty": store.store_many([]),
        "store": store.store(MemoryItem()),
        "count": store.count(),
        "open": store.open(),
    }
    for name, call in calls.items():
        with pytest.raises(MemoryAdapterUnavailable, match="closed"):
            await call
        assert name  # each call checked in turn
    with pytest.raises(MemoryAdapterUnavailable, match="closed"):
        async for _ in store.items():
            pass


# ---------------------------------------------------------------- items() and a reused position


async def test_items_yields_an_item_stored_after_the_last_was_deleted(
    store: SQLiteMemoryStore,
) -> None:
    """Deleting the last item, then storing one, while items() runs: the new one is yielded."""
    first, last, new = MemoryItem(content="a"), MemoryItem(content="b"), MemoryItem(content="c")
    await fill(store, first, last)
    walk = store.items(batch_size=1)
    seen = [(await anext(walk)).content, (await anext(walk)).content]
    assert await store.delete(last.id)
    await store.store(new)
    seen += [item.content async for item in walk]
    assert seen == ["a", "b", "c"]


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_positions_stay_increasing_across_reopen(
    tmp_path: Path, synchronous: Synchronous
) -> None:
    """The last position deleted is remembered in the file, so a reopened store does not reuse it."""
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path, synchronous=synchronous) as store:
        await fill(store, MemoryItem(content="a"), doomed := MemoryItem(content="b"))
        (before,) = raw(path, "SELECT seq FROM items WHERE id = ?", str(doomed.id))
        await store.delete(doomed.id)
    async with SQLiteMemoryStore(path, synchronous=synchronous) as store:
        await store.open()
        await store.store(fresh := MemoryItem(content="c"))
    (after,) = raw(path, "SELECT seq FROM items WHERE id = ?", str(fresh.id))
    assert after[0] > before[0]


# ---------------------------------------------------------------- deeply nested metadata text


def test_deeply_nested_metadata_string_is_a_validation_error() -> None:
    """Metadata given as JSON text nested past the recursion limit is a ValidationError."""
    deep = '{"a":' * 100_000 + "1" + "}" * 100_000
    with pytest.raises(ValidationError, match="metadata"):
        MemoryItem(metadata=deep)
    with pytest.raises(ValidationError, match="metadata"):
        MemoryItem.model_validate({"metadata": deep})
