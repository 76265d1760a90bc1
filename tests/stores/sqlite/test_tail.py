"""The newest items, not indexed yet: searched exactly, indexed in batches, across reopenings."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lionmem import MemoryItem, MemoryQuery
from lionmem.errors import MemoryAdapterError
from lionmem.stores import sqlite
from lionmem.stores.sqlite import SQLiteMemoryStore, Synchronous
from tests.stores.sqlite.support import contents, raw


def indexed_seq(path: Path) -> int:
    return int(raw(path, "SELECT value FROM lionmem_meta WHERE key = 'indexed_seq'")[0][0])


@pytest.fixture(params=["indexed", "tail"])
async def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[SQLiteMemoryStore]:
    """A store whose items are indexed after every write, or never while it is open."""
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 0 if request.param == "indexed" else 10**9)
    async with SQLiteMemoryStore(tmp_path / "memory.db") as opened:
        yield opened


async def settled(store: SQLiteMemoryStore) -> SQLiteMemoryStore:
    """Wait until the worker has run what it queued (the indexing of the tail among it)."""
    await store.open()
    return store


async def test_a_tag_inside_another_tag_s_text_is_no_match(store: SQLiteMemoryStore) -> None:
    """A tag whose JSON text contains another tag's JSON text does not carry that tag."""
    await store.store(MemoryItem(content="quoted", tags=['x","y']))
    await store.store(MemoryItem(content="plain", tags=["y"]))
    await settled(store)
    assert await contents(store, MemoryQuery(tags=["y"])) == ["plain"]


async def test_a_nested_key_is_no_match_for_a_filter(store: SQLiteMemoryStore) -> None:
    """Filters look at top-level keys only, though a nested one has the same JSON text."""
    await store.store(MemoryItem(content="nested", metadata={"outer": {"k": "v", "n": 1}}))
    await store.store(MemoryItem(content="top", metadata={"k": "v", "n": 1}))
    await settled(store)
    found = [
        await contents(store, MemoryQuery(filters={"k": "v"})),
        await contents(store, MemoryQuery(filters={"n": True})),
    ]
    assert found == [["top"], ["top"]]


async def test_replacing_and_deleting_keep_every_search_exact(store: SQLiteMemoryStore) -> None:
    """A replaced item is found by its new text, tags and metadata only, a deleted one not at all."""
    first = MemoryItem(content="old words", tags=["old"], metadata={"v": 1})
    gone = MemoryItem(content="gone words", tags=["old"], metadata={"v": 1})
    await store.store_many([first, gone])
    await settled(store)
    replaced = first.model_copy(
        update={"content": "new words", "tags": ["new"], "metadata": {"v": 2}}
    )
    await store.store(replaced)
    assert await store.delete(gone.id)
    await settled(store)
    found = [
        await contents(store, MemoryQuery(text=text, tags=tags, filters=filters))
        for text, tags, filters in [
            ("words", None, None),
            ("old", None, None),
            (None, ["old"], None),
            (None, ["new"], None),
            (None, None, {"v": 1}),
            ("new", ["new"], {"v": 2}),
        ]
    ]
    assert found == [["new words"], [], [], ["new words"], [], ["new words"]]


async def test_indexed_items_come_before_the_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With some items indexed and newer ones not, a search gives both, in insertion order."""
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 3)
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        await store.store_many([MemoryItem(content=f"item {n}", tags=["t"]) for n in range(3)])
        await settled(store)
        await store.store_many([MemoryItem(content=f"item {n}", tags=["t"]) for n in range(3, 5)])
        split = indexed_seq(path)
        found = [
            await contents(store, MemoryQuery(text="item", limit=4)),
            await contents(store, MemoryQuery(tags=["t"])),
        ]
    expected = [f"item {n}" for n in range(5)]
    assert (split, found) == (3, [expected[:4], expected])


async def test_the_worker_indexes_the_tail_after_tail_items_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After TAIL_ITEMS writes the tail is indexed: into the text, tag and metadata indexes."""
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 3)
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        for n in range(2):
            await store.store(MemoryItem(content=f"item {n}", tags=["t"], metadata={"n": n}))
        before = indexed_seq(path)
        await store.store(MemoryItem(content="item 2", tags=["t"], metadata={"n": 2}))
        await settled(store)
        after = indexed_seq(path)
        rows = [
            raw(path, f"SELECT count(*) FROM {table}")[0][0]
            for table in ("item_tags", "item_fields")
        ]
        found = await contents(store, MemoryQuery(text="item", tags=["t"], filters={"n": 1}))
    assert (before, after, rows, found) == (0, 3, [3, 3], ["item 1"])


async def test_closing_indexes_the_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``close`` indexes what is left, so a file at rest has no tail."""
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 10**9)
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        await store.store_many([MemoryItem(content=f"item {n}") for n in range(5)])
        during = indexed_seq(path)
    assert (during, indexed_seq(path)) == (0, 5)


async def test_a_tail_left_by_another_store_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that was never closed leaves a tail; the next store counts it towards TAIL_ITEMS."""
    path = tmp_path / "memory.db"
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 10**9)
    dropped = SQLiteMemoryStore(path)
    await dropped.store_many([MemoryItem(content=f"item {n}") for n in range(2)])
    del dropped  # finalized: connections closed, nothing indexed
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 3)
    async with SQLiteMemoryStore(path) as store:
        left = indexed_seq(path)
        await store.store(MemoryItem(content="item 2"))
        await settled(store)
        after = indexed_seq(path)
        found = await contents(store, MemoryQuery(text="item"))
    assert (left, after, found) == (0, 3, ["item 0", "item 1", "item 2"])


async def test_a_damaged_row_in_the_tail_stops_indexing_but_not_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tail row whose JSON is damaged is not indexed (nor anything after it); writes go on,
    and a search that reads the row says its tags are damaged."""
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 2)
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        await store.store(MemoryItem(content="damaged", tags=["t"]))
        raw(path, """UPDATE items SET tags = '["t",1]'""")
        await store.store(MemoryItem(content="intact", tags=["t"]))
        await settled(store)
        stuck = indexed_seq(path)
        await store.store(MemoryItem(content="later"))
        count = await store.count()
        with pytest.raises(MemoryAdapterError, match=r"tags of item .* not a JSON list of strings"):
            await store.search(MemoryQuery(tags=["t"]))
        found = await contents(store, MemoryQuery(text="later"))
    assert (stuck, count, found) == (0, 3, ["later"])


async def test_a_store_with_a_too_deep_tail_row_closes(tmp_path: Path) -> None:
    """close() indexes the tail; a row there nested deeper than Python can parse stays in the
    tail, and the store still closes (its file can be opened again)."""
    path = tmp_path / "memory.db"
    store = SQLiteMemoryStore(path)
    await store.store(MemoryItem(content="damaged", tags=["t"]))
    await store.store(MemoryItem(content="intact"))
    raw(path, "UPDATE items SET tags = ? WHERE seq = 1", "[" * 100_000 + "]" * 100_000)
    await store.close()
    async with SQLiteMemoryStore(path) as again:
        found = await contents(again, MemoryQuery(text="intact"))
    assert (store._connections.writer, indexed_seq(path), found) == (None, 0, ["intact"])


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_items_waiting_to_be_indexed_are_not_held_in_memory(
    tmp_path: Path, synchronous: Synchronous
) -> None:
    """Until the tail is indexed the store keeps what indexing needs of each item it wrote
    (tags and metadata), not its content: twenty items of a megabyte each leave well under a
    megabyte behind."""
    async with SQLiteMemoryStore(tmp_path / "memory.db", synchronous=synchronous) as store:
        tracemalloc.start()
        try:
            for n in range(20):
                await store.store(MemoryItem(content=f"{n} " + "x" * 2**20, tags=["t"]))
            gc.collect()
            held, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert await store.count() == 20
    assert held < 2**20


async def test_indexing_commits_without_a_sync_and_writes_keep_theirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The indexes are derived data: their transaction runs at synchronous=NORMAL, and the
    store's own setting is back for every write after it."""
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 2)
    statements: list[str] = []
    async with SQLiteMemoryStore(tmp_path / "memory.db", synchronous="EXTRA") as store:
        await store._call(lambda conn: conn.set_trace_callback(statements.append))
        for n in range(2):
            await store.store(MemoryItem(content=f"item {n}", tags=["t"]))
        await settled(store)
        await store._call(lambda conn: conn.set_trace_callback(None))
        setting = await store._call(lambda conn: conn.execute("PRAGMA synchronous").fetchone()[0])
    pragmas = [n for n, statement in enumerate(statements) if statement.startswith("PRAGMA")]
    indexing = [n for n, statement in enumerate(statements) if "INSERT INTO item_tags" in statement]
    assert [statements[n] for n in pragmas] == [
        "PRAGMA synchronous = NORMAL",
        "PRAGMA synchronous = EXTRA",
    ]
    assert (pragmas[0] < indexing[0] < pragmas[1], setting) == (True, 3)


async def test_a_bulk_write_is_indexed_when_it_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """store_many and store_stream of TAIL_ITEMS items or more index the whole tail in their own
    transaction (the smaller writes before them included); smaller ones join the tail."""
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 4)
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        monkeypatch.setattr(store, "_index_tail", lambda: None)  # the worker's batches do nothing
        for n in range(3):
            await store.store(MemoryItem(content=f"single {n}", tags=["s"]))
        singles = indexed_seq(path)
        await store.store_many([MemoryItem(content=f"many {n}", tags=["m"]) for n in range(4)])
        after_many = indexed_seq(path)
        await store.store_stream(MemoryItem(content=f"small {n}") for n in range(3))
        after_small = indexed_seq(path)
        await store.store_stream(MemoryItem(content=f"stream {n}", tags=["t"]) for n in range(4))
        after_stream = indexed_seq(path)
        tags = raw(path, "SELECT tag, count(*) FROM item_tags GROUP BY tag ORDER BY tag")
        found = await contents(store, MemoryQuery(text="small"))
    assert (singles, after_many, after_small, after_stream) == (0, 7, 7, 14)
    assert [tuple(row) for row in tags] == [("m", 4), ("s", 3), ("t", 4)]
    assert found == ["small 0", "small 1", "small 2"]


@pytest.mark.parametrize("damage", ['["t",1]', "[" * 100_000 + "]" * 100_000])
async def test_a_bulk_write_over_a_damaged_tail_row_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """A damaged row in the tail (one nested deeper than Python can parse included) stops the
    bulk write's indexing at it, not the write."""
    monkeypatch.setattr(sqlite, "TAIL_ITEMS", 3)
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        monkeypatch.setattr(store, "_index_tail", lambda: None)
        await store.store(MemoryItem(content="damaged", tags=["t"]))
        raw(path, "UPDATE items SET tags = ?", damage)
        await store.store_many([MemoryItem(content=f"bulk {n}") for n in range(3)])
        count = await store.count()
        found = await contents(store, MemoryQuery(text="bulk"))
        stuck = indexed_seq(path)
    assert (count, found, stuck) == (4, ["bulk 0", "bulk 1", "bulk 2"], 0)
