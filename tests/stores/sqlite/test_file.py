"""The SQLite store's file: its mark and version, migrations, foreign files and the text rebuild."""

from __future__ import annotations

import asyncio
import sqlite3
import types
import unicodedata
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from lionmem import MemoryItem, MemoryQuery
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable
from lionmem.stores import _sqlite_codec, _sqlite_schema, sqlite
from lionmem.stores.sqlite import IncompatibleDatabaseError, SQLiteMemoryStore, Synchronous
from tests.stores.sqlite.support import contents, dump, raw


async def make(path: Path, *items: MemoryItem) -> None:
    async with SQLiteMemoryStore(path) as store:
        await store.store_many(items)


async def pragma(store: SQLiteMemoryStore, name: str) -> object:
    # The store's own connection: journal mode is per file, synchronous is per connection.
    statement = {"synchronous": "PRAGMA synchronous", "journal_mode": "PRAGMA journal_mode"}[name]
    return await store._call(lambda conn: conn.execute(statement).fetchone()[0])


# ---------------------------------------------------------------- the mark and the settings


async def test_new_file_carries_the_lionmem_mark(tmp_path: Path) -> None:
    """A new file has lionmem's application_id and the current format version."""
    await make(tmp_path / "m.db")
    assert (
        raw(tmp_path / "m.db", "PRAGMA application_id"),
        raw(tmp_path / "m.db", "PRAGMA user_version"),
    ) == ([(_sqlite_schema.APPLICATION_ID,)], [(_sqlite_schema.SCHEMA_VERSION,)])


async def test_new_file_records_the_unicode_version(tmp_path: Path) -> None:
    """The file records which Unicode database lowered its text."""
    await make(tmp_path / "m.db")
    recorded = raw(
        tmp_path / "m.db", "SELECT value FROM lionmem_meta WHERE key = 'unicode_version'"
    )
    assert recorded == [(unicodedata.unidata_version,)]


async def test_file_uses_wal(tmp_path: Path) -> None:
    """The file is in WAL mode."""
    async with SQLiteMemoryStore(tmp_path / "m.db") as store:
        assert await pragma(store, "journal_mode") == "wal"


async def test_synchronous_is_full_by_default(tmp_path: Path) -> None:
    """Commits are fully synced by default (PRAGMA synchronous = 2)."""
    async with SQLiteMemoryStore(tmp_path / "m.db") as store:
        assert await pragma(store, "synchronous") == 2


async def test_synchronous_normal_when_asked(tmp_path: Path) -> None:
    """synchronous="NORMAL" sets PRAGMA synchronous = 1."""
    async with SQLiteMemoryStore(tmp_path / "m.db", synchronous="NORMAL") as store:
        assert await pragma(store, "synchronous") == 1


async def test_empty_file_is_initialised(tmp_path: Path) -> None:
    """A zero-byte file becomes a lionmem database."""
    (tmp_path / "m.db").write_bytes(b"")
    item = MemoryItem(content="x")
    await make(tmp_path / "m.db", item)
    async with SQLiteMemoryStore(tmp_path / "m.db") as store:
        assert dump(await store.retrieve(item.id)) == dump(item)


async def test_two_stores_initialising_one_file_at_once(tmp_path: Path) -> None:
    """Two stores opening a new file concurrently both succeed and see one another's writes."""
    one, two = SQLiteMemoryStore(tmp_path / "m.db"), SQLiteMemoryStore(tmp_path / "m.db")
    await asyncio.gather(one.open(), two.open())
    await asyncio.gather(one.store(MemoryItem(content=1)), two.store(MemoryItem(content=2)))
    counts = (await one.count(), await two.count())
    await asyncio.gather(one.close(), two.close())
    assert counts == (2, 2)


# ---------------------------------------------------------------- files that are not ours


async def test_non_sqlite_file_is_refused(tmp_path: Path) -> None:
    """A file that is not SQLite raises IncompatibleDatabaseError saying so."""
    (tmp_path / "notes.txt").write_bytes(b"just some text, long enough to have a header" * 4)
    with pytest.raises(IncompatibleDatabaseError, match="not a SQLite database"):
        await make(tmp_path / "notes.txt")


async def test_non_sqlite_file_is_left_unchanged(tmp_path: Path) -> None:
    """The refused file keeps its bytes."""
    content = b"just some text, long enough to have a header" * 4
    (tmp_path / "notes.txt").write_bytes(content)
    with pytest.raises(IncompatibleDatabaseError):
        await make(tmp_path / "notes.txt")
    assert (tmp_path / "notes.txt").read_bytes() == content


def _foreign(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (n INTEGER)")
    conn.execute("INSERT INTO invoices VALUES (1)")
    conn.commit()
    conn.close()


async def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    """Another application's SQLite database raises IncompatibleDatabaseError."""
    _foreign(tmp_path / "other.db")
    with pytest.raises(IncompatibleDatabaseError, match="not a lionmem one"):
        await make(tmp_path / "other.db")


async def test_foreign_sqlite_database_is_left_unchanged(tmp_path: Path) -> None:
    """The refused database keeps its bytes and its journal mode."""
    _foreign(tmp_path / "other.db")
    before = (tmp_path / "other.db").read_bytes()
    with pytest.raises(IncompatibleDatabaseError):
        await make(tmp_path / "other.db")
    assert (tmp_path / "other.db").read_bytes() == before
    assert raw(tmp_path / "other.db", "PRAGMA journal_mode") == [("delete",)]


async def test_newer_file_is_refused(tmp_path: Path) -> None:
    """A file with a higher format version raises IncompatibleDatabaseError naming both versions."""
    await make(tmp_path / "m.db")
    raw(tmp_path / "m.db", f"PRAGMA user_version = {_sqlite_schema.SCHEMA_VERSION + 1}")
    newer = _sqlite_schema.SCHEMA_VERSION + 1
    with pytest.raises(
        IncompatibleDatabaseError, match=f"version {newer}; this version reads up to"
    ):
        await make(tmp_path / "m.db")


async def test_incompatible_file_error_is_an_adapter_error(tmp_path: Path) -> None:
    """IncompatibleDatabaseError is a MemoryAdapterError."""
    _foreign(tmp_path / "other.db")
    with pytest.raises(MemoryAdapterError):
        await make(tmp_path / "other.db")


# ---------------------------------------------------------------- migrations


def _add_step(monkeypatch: pytest.MonkeyPatch, step: object) -> None:
    steps = [*_sqlite_schema.MIGRATIONS, step]
    monkeypatch.setattr(_sqlite_schema, "MIGRATIONS", steps)
    monkeypatch.setattr(_sqlite_schema, "SCHEMA_VERSION", len(steps))


async def test_older_file_is_migrated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening a file of the current version with a library one version newer applies the step
    and keeps the items."""
    item = MemoryItem(content="kept")
    await make(tmp_path / "m.db", item)
    newer = _sqlite_schema.SCHEMA_VERSION + 1
    _add_step(monkeypatch, lambda conn: conn.execute("CREATE TABLE extra (n INTEGER)"))
    async with SQLiteMemoryStore(tmp_path / "m.db") as store:
        found = await store.retrieve(item.id)
    assert (dump(found), raw(tmp_path / "m.db", "PRAGMA user_version")) == (
        dump(item),
        [(newer,)],
    )


async def test_failed_migration_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step that fails half-way leaves the file at its old version with no partial change."""
    await make(tmp_path / "m.db", MemoryItem(content="kept"))
    current = _sqlite_schema.SCHEMA_VERSION

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE extra (n INTEGER)")
        conn.execute("THIS IS NOT SQL")

    _add_step(monkeypatch, broken)
    with pytest.raises(MemoryAdapterError):
        await make(tmp_path / "m.db")
    tables = raw(tmp_path / "m.db", "SELECT name FROM sqlite_master WHERE name = 'extra'")
    assert (tables, raw(tmp_path / "m.db", "PRAGMA user_version")) == ([], [(current,)])


def _version_1_file(path: Path, items: list[MemoryItem]) -> None:
    """Write ``items`` as a version-1 file holds them: every item in all three indexes."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("BEGIN")
        _sqlite_schema.MIGRATIONS[0](conn)
        for seq, item in enumerate(items, start=1):
            e = _sqlite_codec.encode_item(item)
            conn.execute(
                "INSERT INTO items (seq, id, created_at, metadata, content, tags, text) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (seq, e.id, e.created_at, e.metadata, e.content, e.tags, e.text),
            )
            _sqlite_schema.insert_text(conn, seq, e.text)
            conn.executemany("INSERT INTO item_tags VALUES (?, ?)", [(t, seq) for t in e.tag_set])
            conn.executemany(
                "INSERT INTO item_fields VALUES (?, ?, ?)", [(k, v, seq) for k, v in e.fields]
            )
        conn.execute(f"PRAGMA application_id = {_sqlite_schema.APPLICATION_ID}")
        conn.execute("PRAGMA user_version = 1")
        conn.execute("COMMIT")
    finally:
        conn.close()


async def test_a_version_1_file_is_migrated_with_its_items_indexed(tmp_path: Path) -> None:
    """A version-1 file (every item indexed as written) opens as version 2 with every item
    recorded as indexed, so the indexes find them; items stored later are found too."""
    path = tmp_path / "v1.db"
    old = [
        MemoryItem(content="old alpha", tags=["t"], metadata={"k": 1}),
        MemoryItem(content="old beta", tags=["u"], metadata={"k": 2}),
    ]
    _version_1_file(path, old)
    new = MemoryItem(content="new alpha", tags=["t"], metadata={"k": 1})
    async with SQLiteMemoryStore(path) as store:
        await store.store(new)
        found = [
            await contents(store, MemoryQuery(text="alpha")),
            await contents(store, MemoryQuery(tags=["t"])),
            await contents(store, MemoryQuery(filters={"k": 1})),
            await contents(store, MemoryQuery(text="beta", tags=["u"], filters={"k": 2})),
        ]
        indexed = raw(path, "SELECT value FROM lionmem_meta WHERE key = 'indexed_seq'")
    assert (raw(path, "PRAGMA user_version"), indexed, found) == (
        [(2,)],
        [("2",)],
        [["old alpha", "new alpha"]] * 3 + [["old beta"]],
    )


# ---------------------------------------------------------------- the Unicode rebuild


async def test_text_is_relowered_when_the_unicode_version_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file lowered under another Unicode version is re-lowered on open, so search stays exact."""
    with monkeypatch.context() as old_python:
        # Pretend to be a Python whose lower() leaves these letters alone.
        old_python.setattr(_sqlite_codec, "lowered_text", str)
        old_python.setattr(
            _sqlite_schema, "unicodedata", types.SimpleNamespace(unidata_version="1.1.0")
        )
        await make(tmp_path / "m.db", MemoryItem(content="HELLO İstanbul"))
    assert raw(tmp_path / "m.db", "SELECT text FROM items") == [("HELLO İstanbul",)]
    async with SQLiteMemoryStore(tmp_path / "m.db") as store:
        found = await contents(store, MemoryQuery(text="hello i̇stanbul"))
    recorded = raw(
        tmp_path / "m.db", "SELECT value FROM lionmem_meta WHERE key = 'unicode_version'"
    )
    assert (found, recorded) == (["HELLO İstanbul"], [(unicodedata.unidata_version,)])


async def test_relowering_updates_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the rebuild the trigram index no longer finds the old lowered text."""
    with monkeypatch.context() as old_python:
        old_python.setattr(_sqlite_codec, "lowered_text", lambda content: "stale text")
        old_python.setattr(
            _sqlite_schema, "unicodedata", types.SimpleNamespace(unidata_version="1.1.0")
        )
        await make(tmp_path / "m.db", MemoryItem(content="fresh words"))
    async with SQLiteMemoryStore(tmp_path / "m.db") as store:
        stale = await contents(store, MemoryQuery(text="stale"))
        fresh = await contents(store, MemoryQuery(text="fresh"))
    assert (stale, fresh) == ([], ["fresh words"])


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_a_relative_path_is_taken_from_the_working_directory_at_construction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, synchronous: Synchronous
) -> None:
    """Every connection (the worker's, a caller's insert, a reader in another thread opened
    after the working directory changed) opens the file the path named at construction."""
    made, later = tmp_path / "made", tmp_path / "later"
    made.mkdir()
    later.mkdir()
    monkeypatch.chdir(made)
    store = SQLiteMemoryStore("m.db", synchronous=synchronous)
    monkeypatch.chdir(later)
    item = MemoryItem(content="kept")
    async with store:
        await store.store(item)
        monkeypatch.chdir(tmp_path)  # and again after the first connections were made
        elsewhere = await asyncio.to_thread(asyncio.run, store.search(MemoryQuery(limit=10)))
        assert [found.id for found in elsewhere] == [item.id]
        assert await store.retrieve(item.id) == item
    assert store.path == "m.db"
    assert (list(later.iterdir()), sorted(path.name for path in tmp_path.iterdir())) == (
        [],
        ["later", "made"],
    )
    assert [row[0] for row in raw(made / "m.db", "SELECT id FROM items")] == [str(item.id)]


async def test_a_parent_step_after_a_symbolic_link_leads_where_the_system_leads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``link/../m.db`` with ``link`` pointing into another directory names the file beside
    the link's target, as ``open()`` and the ``sqlite3`` command read it, not one beside the link."""
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real" / "sub")
    item = MemoryItem(content="kept")
    monkeypatch.chdir(tmp_path)
    for path in ("link/../m.db", str(tmp_path / "link" / ".." / "m.db")):
        async with SQLiteMemoryStore(path) as store:
            await store.store(item)
            assert await store.search(MemoryQuery(limit=10)) == [item]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]
        assert [row[0] for row in raw(tmp_path / "real" / "m.db", "SELECT id FROM items")] == [
            str(item.id)
        ]


# ---------------------------------------------------------------- the file moved away

MOVED = "the database file was deleted, moved or replaced since the store opened it"
OPENING = "the database file was deleted, moved or replaced while the store opened it"


def delete_files(path: Path) -> None:
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        (path.parent / name).unlink(missing_ok=True)


def replace_file(path: Path) -> None:
    other = path.with_name("other.db")
    other.write_bytes(b"")
    other.replace(path)


def rename_file(path: Path) -> None:
    path.replace(path.with_name("renamed.db"))


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
@pytest.mark.parametrize("move", [delete_files, replace_file, rename_file])
async def test_writes_are_refused_once_the_file_left_its_path(
    tmp_path: Path, synchronous: Synchronous, move: Callable[[Path], None]
) -> None:
    """Every write after the file was deleted, replaced or renamed raises, naming why, rather
    than being acknowledged into a file no open of the path will find."""
    path = tmp_path / "m.db"
    kept = MemoryItem(content="kept")
    async with SQLiteMemoryStore(path, synchronous=synchronous) as store:
        await store.store(kept)
        move(path)
        writes: dict[str, Callable[[], Awaitable[object]]] = {
            "store": lambda: store.store(MemoryItem(content="new")),
            "store replacing": lambda: store.store(kept),
            "store_many": lambda: store.store_many([MemoryItem(content="new")]),
            "store_stream": lambda: store.store_stream([MemoryItem(content="new")]),
            "delete": lambda: store.delete(kept.id),
        }
        for name, write in writes.items():
            with pytest.raises(MemoryAdapterUnavailable, match=MOVED) as raised:
                await write()
            assert "nothing was written" in str(raised.value), name
        # Reads answer from the file the store opened, which the refused writes left as it was.
        assert [await store.count(), await store.retrieve(kept.id)] == [1, kept]


async def test_a_store_opened_after_the_file_was_deleted_starts_a_new_file(tmp_path: Path) -> None:
    """The refusal belongs to the store that lost its file: a new store on the path works."""
    path = tmp_path / "m.db"
    async with SQLiteMemoryStore(path) as store:
        await store.store(MemoryItem(content="gone"))
        delete_files(path)
        with pytest.raises(MemoryAdapterUnavailable, match=MOVED):
            await store.store(MemoryItem(content="refused"))
    fresh = MemoryItem(content="fresh")
    async with SQLiteMemoryStore(path) as store:
        await store.store(fresh)
        assert await store.search(MemoryQuery()) == [fresh]


@pytest.mark.parametrize("move", [delete_files, replace_file])
async def test_a_file_moved_while_the_store_opens_it_takes_no_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, move: Callable[[Path], None]
) -> None:
    """The file the writer opened is the one checked, whenever the path changes after: deleted
    before the store's other connections open the path, the open fails (they never make a new
    file there); replaced, the open fails too, naming why (reads would disagree)."""
    path = tmp_path / "m.db"
    await make(path)
    read_mark = _sqlite_schema.indexed_upto

    def moved_first(conn: sqlite3.Connection, where: str) -> int:
        move(path)
        return read_mark(conn, where)

    monkeypatch.setattr(sqlite, "indexed_upto", moved_first)
    with pytest.raises(MemoryAdapterUnavailable) as raised:
        async with SQLiteMemoryStore(path) as store:
            await store.store(MemoryItem(content="lost"))
    expected = "unable to open database file" if move is delete_files else OPENING
    assert expected in str(raised.value)


async def test_a_file_replaced_while_the_store_opens_it_is_not_read_in_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replaced after the writer opened the old file and before the reader opened the path,
    the open fails rather than read two files (the worker the old, the caller's thread the new);
    the next call opens the file then at the path, and every read agrees."""
    path = tmp_path / "m.db"
    await make(path, MemoryItem(content="old"))
    newer = MemoryItem(content="new")
    await make(tmp_path / "new.db", newer)
    read_mark = _sqlite_schema.indexed_upto

    def replaced_first(conn: sqlite3.Connection, where: str) -> int:
        (tmp_path / "new.db").replace(path)
        monkeypatch.setattr(sqlite, "indexed_upto", read_mark)
        return read_mark(conn, where)

    monkeypatch.setattr(sqlite, "indexed_upto", replaced_first)
    store = SQLiteMemoryStore(path, synchronous="NORMAL")
    with pytest.raises(MemoryAdapterUnavailable, match=OPENING):
        await store.open()
    async with store:
        found = [await store.count(), await store.search(MemoryQuery(limit=10))]
        assert found == [1, [newer]]
        assert [item async for item in store.items()] == [newer]
        assert await store.retrieve(newer.id) == newer


async def test_a_stream_whose_file_moved_while_it_ran_is_not_committed(tmp_path: Path) -> None:
    """A store_stream checks the file again before its commit: moved while the items were
    read, the stream is rolled back and refused, as a write made then would be."""
    path = tmp_path / "m.db"

    def items() -> Iterator[MemoryItem]:
        yield MemoryItem(content="first")
        rename_file(path)
        yield MemoryItem(content="second")

    async with SQLiteMemoryStore(path) as store:
        await store.open()
        with pytest.raises(MemoryAdapterUnavailable, match=MOVED):
            await store.store_stream(items())
        assert await store.count() == 0


async def test_a_path_turned_into_a_link_loop_is_found_moved(tmp_path: Path) -> None:
    """A symbolic link the store opened the file through, replaced by a loop of links, leads
    to no file: writes are refused as for a removed link."""
    target = tmp_path / "real.db"
    path = tmp_path / "m.db"
    path.symlink_to(target)
    async with SQLiteMemoryStore(path) as store:
        await store.store(MemoryItem(content="kept"))
        path.unlink()
        path.symlink_to(tmp_path / "loop")
        (tmp_path / "loop").symlink_to(path)
        with pytest.raises(MemoryAdapterUnavailable, match=MOVED):
            await store.store(MemoryItem(content="lost"))


async def test_a_memory_database_has_no_file_to_lose() -> None:
    """``:memory:`` has no path to check: its writes go on as before."""
    async with SQLiteMemoryStore(":memory:") as store:
        await store.store(MemoryItem(content="a"))
        await store.store(MemoryItem(content="b"))
        assert await store.count() == 2
