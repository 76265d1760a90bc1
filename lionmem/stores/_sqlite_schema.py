"""The SQLite store's file format: tables, version checks, migrations and the text-index rebuild.

A lionmem database carries ``PRAGMA application_id`` = ``APPLICATION_ID`` and its schema version
in ``PRAGMA user_version``. Opening a file checks both before changing anything: an empty file is
initialised, an older lionmem file is migrated (all steps in one transaction), and anything else
(another application's database, a file written by a newer lionmem, a file that is not SQLite)
raises ``IncompatibleDatabaseError`` with the reason.

Tables (version 2):

``items``
    One row per item. ``seq`` (the rowid) is the insertion order; replacing an item keeps it.
    ``id`` is the canonical UUID string, ``created_at`` the ``repr()`` of the float (a REAL
    column would turn ``-0.0`` into ``0``), ``metadata``/``content``/``tags`` are JSON, and
    ``text`` is ``str(content).lower()`` as computed by Python.
``item_tags``
    The distinct tags of each item, keyed ``(tag, seq)`` so one tag's items come out in order.
    This table, ``item_fields`` and ``items_text`` hold the items up to ``indexed_seq``.
``item_fields``
    Each top-level metadata entry as ``(key, canonical value, seq)``: the SQL pre-filter for
    equality filters (``_sqlite_codec.canonical``), confirmed in Python on the decoded item.
``items_text``
    A contentless FTS5 ``trigram`` index (``case_sensitive 1``, so it folds nothing) of ``text``.
    It is maintained from Python, not by triggers, because a NUL must be replaced first.
``lionmem_meta``
    Key/value facts about the file; ``unicode_version`` is the Unicode database that lowered
    ``text``. When this Python's differs, ``text`` and ``items_text`` are recomputed on open.
    ``deleted_seq`` (absent until a delete) is the highest ``seq`` ever deleted: a new item's
    ``seq`` is above it and above every stored one, so positions are never reused.
    ``indexed_seq`` (version 2) is the highest ``seq`` the three indexes cover: the items above it
    (the tail) are found by reading their rows, and are indexed in batches (``index_tail``).

Every write, a migration included, runs inside ``transaction``: all of it or none of it.
"""

from __future__ import annotations

import contextlib
import sqlite3
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

from lionmem.errors import IncompatibleDatabaseError, MemoryAdapterError
from lionmem.stores._sqlite_codec import EncodedItem, fields_of, fts_text, lowered_text, read_json

__all__ = [
    "APPLICATION_ID",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "Entries",
    "IncompatibleDatabaseError",
    "delete_text",
    "entries_of",
    "index_tail",
    "indexed_upto",
    "insert_text",
    "prepare",
    "rollback",
    "snapshot",
    "transaction",
]

APPLICATION_ID = 0x4C4D454D  # "LMEM": marks a lionmem file in the SQLite header.

_V1 = (
    """
    CREATE TABLE lionmem_meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE items (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        metadata TEXT NOT NULL,
        content TEXT NOT NULL,
        tags TEXT NOT NULL,
        text TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE item_tags (
        tag TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (tag, seq)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX item_tags_by_seq ON item_tags (seq)",
    """
    CREATE TABLE item_fields (
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (key, value, seq)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX item_fields_by_seq ON item_fields (seq, key)",
    """
    CREATE VIRTUAL TABLE items_text USING fts5(
        text, content='', tokenize='trigram case_sensitive 1'
    )
    """,
)


def _migrate_to_1(conn: sqlite3.Connection) -> None:
    for statement in _V1:
        conn.execute(statement)
    conn.execute(
        "INSERT INTO lionmem_meta (key, value) VALUES ('unicode_version', ?)",
        (unicodedata.unidata_version,),
    )


def _migrate_to_2(conn: sqlite3.Connection) -> None:
    # A version-1 file indexed every item as it was written.
    conn.execute(
        "INSERT INTO lionmem_meta (key, value) "
        "SELECT 'indexed_seq', CAST(coalesce(max(seq), 0) AS TEXT) FROM items"
    )


# MIGRATIONS[n] takes a version-n file to version n + 1. They all run in one transaction.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_migrate_to_1, _migrate_to_2]
SCHEMA_VERSION = len(MIGRATIONS)


def rollback(conn: sqlite3.Connection) -> None:
    """End an open transaction after an error, keeping that error the one that is raised."""
    if conn.in_transaction:
        # SQLite may have rolled back already, or refuse now; the original error matters more.
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection, begin: str = "BEGIN IMMEDIATE") -> Iterator[None]:
    """Run the block in one write transaction: committed at the end, rolled back on any error."""
    conn.execute(begin)
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def snapshot(conn: sqlite3.Connection) -> contextlib.AbstractContextManager[None]:
    """Run the block's reads in one read transaction, so they all see the same state."""
    return transaction(conn, "BEGIN")


def insert_text(conn: sqlite3.Connection, seq: int, text: str) -> None:
    """Index ``text`` for the item at ``seq``."""
    conn.execute("INSERT INTO items_text (rowid, text) VALUES (?, ?)", (seq, fts_text(text)))


def delete_text(conn: sqlite3.Connection, seq: int, text: str) -> None:
    """Remove the index entries of the item at ``seq``, whose indexed text was ``text``."""
    # A contentless table forgets its values; 'delete' must be given exactly what was indexed.
    conn.execute(
        "INSERT INTO items_text (items_text, rowid, text) VALUES ('delete', ?, ?)",
        (seq, fts_text(text)),
    )


def indexed_upto(conn: sqlite3.Connection, where: str) -> int:
    """Return ``indexed_seq``: the items up to it are in the indexes, those above are not."""
    row = conn.execute("SELECT value FROM lionmem_meta WHERE key = 'indexed_seq'").fetchone()
    try:
        return int(row[0])
    except (TypeError, ValueError):
        msg = f"SQLite database {where} is damaged: lionmem_meta holds no valid indexed_seq row"
        raise MemoryAdapterError(msg) from None


class Entries(NamedTuple):
    """What the tag and metadata indexes hold for one item, and the JSON it comes from."""

    tags: str
    metadata: str
    tag_set: frozenset[str]
    fields: tuple[tuple[str, str], ...]


def entries_of(encoded: EncodedItem) -> Entries:
    """The index entries of ``encoded``, without its content (kept for indexing, not held whole)."""
    return Entries(encoded.tags, encoded.metadata, encoded.tag_set, encoded.fields)


def index_tail(
    conn: sqlite3.Connection, where: str, batch: int, known: Mapping[str, Entries]
) -> bool:
    """Index up to ``batch`` items of the tail, in order; return whether more remain.

    ``known`` holds the entries of some items by id; one whose JSON equals the row's gives the
    row's index entries without decoding it. Run inside a write transaction. A row whose JSON is
    damaged raises ``ValueError`` and nothing of this batch is indexed.
    """
    upto = indexed_upto(conn, where)
    rows = conn.execute(
        "SELECT seq, text, tags, metadata, id FROM items WHERE seq > ? ORDER BY seq LIMIT ?",
        (upto, batch),
    ).fetchall()
    if not rows:
        return False
    tags: list[tuple[str, int]] = []
    fields: list[tuple[str, str, int]] = []
    for seq, _text, tags_json, metadata_json, item_id in rows:
        encoded = known.get(item_id)
        if encoded is not None and encoded.tags == tags_json and encoded.metadata == metadata_json:
            tags.extend((tag, seq) for tag in encoded.tag_set)
            fields.extend((key, value, seq) for key, value in encoded.fields)
            continue
        tag_list, metadata = read_json(tags_json), read_json(metadata_json)
        if type(metadata) is not dict or type(tag_list) is not list:
            msg = f"the stored row at position {seq} is malformed"
            raise ValueError(msg)
        if not all(type(tag) is str for tag in tag_list):
            msg = f"the stored tags at position {seq} are malformed"
            raise ValueError(msg)
        tags.extend((tag, seq) for tag in set(tag_list))
        fields.extend((key, value, seq) for key, value in fields_of(metadata))
    conn.executemany(
        "INSERT INTO items_text (rowid, text) VALUES (?, ?)",
        [(row[0], fts_text(row[1])) for row in rows],
    )
    conn.executemany("INSERT INTO item_tags (tag, seq) VALUES (?, ?)", tags)
    conn.executemany("INSERT INTO item_fields (key, value, seq) VALUES (?, ?, ?)", fields)
    conn.execute("UPDATE lionmem_meta SET value = ? WHERE key = 'indexed_seq'", (str(rows[-1][0]),))
    return len(rows) == batch


def _identify(conn: sqlite3.Connection, where: str) -> int | None:
    """Return the file's schema version, or ``None`` for an empty file; raise if it is foreign."""
    try:
        application_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        (objects,) = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        if exc.sqlite_errorcode == sqlite3.SQLITE_NOTADB:
            msg = f"{where} is not a SQLite database file"
            raise IncompatibleDatabaseError(msg) from exc
        raise
    if application_id == 0 and version == 0 and objects == 0:
        return None
    if application_id != APPLICATION_ID:
        msg = (
            f"{where} is a SQLite database but not a lionmem one "
            f"(application_id {application_id:#010x}, {objects} schema objects); "
            "lionmem opens only files it created"
        )
        raise IncompatibleDatabaseError(msg)
    if version > SCHEMA_VERSION:
        msg = (
            f"{where} was written by a newer lionmem (file format version {version}; this "
            f"version reads up to {SCHEMA_VERSION}): upgrade lionmem to open it"
        )
        raise IncompatibleDatabaseError(msg)
    if version < 1:
        msg = f"{where} carries the lionmem mark but an invalid file format version {version}"
        raise IncompatibleDatabaseError(msg)
    return int(version)


def _rebuild_text(conn: sqlite3.Connection, where: str) -> None:
    """Recompute ``text`` and its index with this Python's ``str.lower()``."""
    upto = indexed_upto(conn, where)
    last = -1
    while True:
        rows = conn.execute(
            "SELECT seq, content, text FROM items WHERE seq > ? ORDER BY seq LIMIT 1000", (last,)
        ).fetchall()
        if not rows:
            break
        for seq, content, old in rows:
            new = lowered_text(read_json(content))
            if new != old:
                conn.execute("UPDATE items SET text = ? WHERE seq = ?", (new, seq))
                if seq <= upto:
                    delete_text(conn, seq, old)
                    insert_text(conn, seq, new)
        last = rows[-1][0]
    conn.execute(
        "UPDATE lionmem_meta SET value = ? WHERE key = 'unicode_version'",
        (unicodedata.unidata_version,),
    )


def _current(conn: sqlite3.Connection, where: str) -> bool:
    """Return whether the file needs nothing: latest version and this Unicode version."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA_VERSION:
        return False
    row = conn.execute("SELECT value FROM lionmem_meta WHERE key = 'unicode_version'").fetchone()
    if row is None:
        msg = f"SQLite database {where} is damaged: lionmem_meta has no unicode_version row"
        raise MemoryAdapterError(msg)
    indexed_upto(conn, where)  # present and valid, or the file is damaged
    return bool(row[0] == unicodedata.unidata_version)


def prepare(conn: sqlite3.Connection, where: str, *, wal: bool) -> None:
    """Check the file, switch it to WAL, and bring it to the current format (one transaction).

    Nothing is written to a file that is not lionmem's, or is newer than this library.
    """
    # One read transaction, so every fact comes from one snapshot: another process may be
    # creating the schema meanwhile (each statement on its own would see a different state).
    conn.execute("BEGIN")
    try:
        version = _identify(conn, where)
        up_to_date = version is not None and _current(conn, where)
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    if wal:
        # Outside a transaction, as SQLite requires; it changes only the journal mode.
        conn.execute("PRAGMA journal_mode = WAL")
    if up_to_date:
        return
    with transaction(conn):
        # Another process may have initialised or migrated the file meanwhile: look again.
        version = _identify(conn, where) or 0
        for step in MIGRATIONS[version:]:
            step(conn)
        if version < SCHEMA_VERSION:
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID:d}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION:d}")
        if not _current(conn, where):
            _rebuild_text(conn, where)
