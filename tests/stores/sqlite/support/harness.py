"""The conformance harness of SQLiteMemoryStore (ADR-0093 D2) over a temporary directory.

The stores run at the ``synchronous`` mode given (at ``NORMAL`` new items are inserted in the
caller's thread). Each ``reset`` closes the stores made so far and moves to a new, empty database file, so every
case (and every example of the reference-search profile) starts from an empty namespace. The
index is immediate, so ``make_search_index_visible`` does nothing. The faults are real SQLite
conditions reached through the engine itself:

* transport outage: every statement of every store is interrupted (``sqlite3_interrupt`` via a
  progress handler installed on each of a store's connections by its worker thread), as when the
  engine cannot proceed; a lock held past the busy timeout is tested separately;
* refused writes: triggers that ``RAISE(ABORT)`` on every insert and update of ``items``;
* malformed answers: a damaged file (the schema entry of ``items`` is cut short through
  ``writable_schema``), so SQLite answers every statement with "malformed database schema";
* foreign records: a row in another table of the same file, whose id is not a memory's.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path
from uuid import UUID, uuid4

from lionmem.stores.sqlite import SQLiteMemoryStore, Synchronous

BUSY_TIMEOUT = 0.05
"""Short, so that a case meeting a held lock fails over in well under a second."""


def _interrupt_everything(conn: sqlite3.Connection) -> None:
    conn.set_progress_handler(lambda: 1, 1)


class SQLiteHarness:
    """Makes SQLiteMemoryStores over fresh files in ``directory`` and breaks them on request."""

    def __init__(
        self, directory: Path, *, owned: bool = False, synchronous: Synchronous = "FULL"
    ) -> None:
        self.directory = directory
        self.synchronous: Synchronous = synchronous
        self.owned = owned  # close() then deletes the directory too
        self.generation = 0
        self.stores: list[SQLiteMemoryStore] = []
        self.unavailable = False

    @property
    def path(self) -> Path:
        """The database file of the current namespace."""
        return self.directory / f"conformance-{self.generation}.db"

    async def make_store(self) -> SQLiteMemoryStore:
        """Return a store over the current file (interrupted already if the transport is down)."""
        store = SQLiteMemoryStore(
            self.path, busy_timeout=BUSY_TIMEOUT, synchronous=self.synchronous
        )
        self.stores.append(store)
        if self.unavailable:
            await store._configure(_interrupt_everything)
        return store

    async def reset(self) -> None:
        """Close every store, forget every fault and move to a new empty file."""
        await self._close_stores()
        for leftover in self.directory.glob(f"conformance-{self.generation}.db*"):
            leftover.unlink()
        self.generation += 1
        self.unavailable = False

    async def make_search_index_visible(self) -> None:
        """Nothing to do: a committed write is searchable at once."""

    async def make_transport_unavailable(self) -> None:
        """Interrupt every statement of every store until the next reset."""
        self.unavailable = True
        for store in self.stores:
            # The store's own worker thread owns the connection; the hook runs there.
            await store._configure(_interrupt_everything)

    async def make_writes_rejected(self) -> None:
        """Make the file refuse every insert and update of an item until the next reset."""
        await self._open_file()
        self._execute(
            "CREATE TRIGGER refuse_insert BEFORE INSERT ON items "
            "BEGIN SELECT RAISE(ABORT, 'writes refused by the conformance harness'); END",
            "CREATE TRIGGER refuse_update BEFORE UPDATE ON items "
            "BEGIN SELECT RAISE(ABORT, 'writes refused by the conformance harness'); END",
        )

    async def make_responses_malformed(self) -> None:
        """Damage the file's schema, so that every statement on it fails as malformed."""
        await self._open_file()
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            (version,) = conn.execute("PRAGMA schema_version").fetchone()
            conn.execute("PRAGMA writable_schema = ON")
            conn.execute(
                "UPDATE sqlite_master SET sql = 'CREATE TABLE items (' WHERE name = 'items'"
            )
            # A new schema cookie makes every open connection reload (and choke on) the schema.
            conn.execute(f"PRAGMA schema_version = {int(version) + 1}")
        finally:
            conn.close()

    async def make_foreign_record(self) -> UUID:
        """Put a non-memory row with a fresh UUID into another table of the file."""
        await self._open_file()
        identity = uuid4()
        self._execute("CREATE TABLE IF NOT EXISTS foreign_notes (id TEXT PRIMARY KEY, body TEXT)")
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            conn.execute(
                "INSERT INTO foreign_notes (id, body) VALUES (?, 'not a memory')", (str(identity),)
            )
        finally:
            conn.close()
        return identity

    async def close(self) -> None:
        """Close every store made so far, and delete the directory if it is owned (idempotent)."""
        await self._close_stores()
        if self.owned:
            shutil.rmtree(self.directory, ignore_errors=True)

    async def _close_stores(self) -> None:
        stores, self.stores = self.stores, []
        for store in stores:
            await store.close()

    async def _open_file(self) -> None:
        # The file is created by the first store that opens it.
        store = SQLiteMemoryStore(self.path, busy_timeout=BUSY_TIMEOUT)
        await store.open()
        await store.close()

    def _execute(self, *statements: str) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None)
        try:
            for statement in statements:
                conn.execute(statement)
        finally:
            conn.close()


def harness() -> SQLiteHarness:
    """A harness over a new temporary directory, for ``python -m lionmem conformance``.

    From the repository root: ``python -m lionmem conformance tests.stores.sqlite.support.harness:harness``.
    """
    directory = Path(tempfile.mkdtemp(prefix="lionmem-sqlite-conformance-"))
    return SQLiteHarness(directory, owned=True)
