"""SQLiteMemoryStore: durable, exact memory in one SQLite file, with nothing to install.

Semantics: the same results, in the same order, as ``InMemoryStore`` for every non-negative
limit (insertion order, replacement in place, ``needle.lower() in str(content).lower()``, any-of
tags, Python ``==`` filters). Items come back as new ``MemoryItem`` objects equal field by field to
what was stored; values JSON cannot give back exactly are refused before anything is written
(``UnrepresentableValueError``). As an ADR-0093 external store it rejects a negative ``limit``
(``UnsupportedMemoryQuery``) instead of slicing, and answers ``limit=0`` with ``[]`` at once.

Lifecycle (ADR-0093 D4):

* Connection: one ``sqlite3`` connection, opened on the first operation (or on ``async with``)
  in the store's own worker thread; every database call runs there, so the event loop never
  waits on SQLite. Operations run one at a time in submission order, so one instance is safe for
  concurrent tasks, threads and event loops.
* Close: ``await store.close()`` (or leaving ``async with``) waits for submitted operations,
  then closes the connection; it is idempotent. Later calls raise ``MemoryAdapterUnavailable``.
* Durability: every write commits before it returns, in WAL mode with ``synchronous=FULL`` by
  default, so an acknowledged write survives ``kill -9`` and power loss.
* Timeouts and retries: SQLite's busy timeout is ``busy_timeout`` seconds (default 5.0, Python's
  own default: a commit takes milliseconds, so ordinary contention never comes near it, while a
  stuck writer surfaces within seconds). A whole operation that still meets "database is locked"
  (a lock wait that timed out, or a WAL snapshot that went stale) is rolled back and retried
  ``_RETRIES`` times after 50 ms and 200 ms with jitter; every operation is safe to retry (writes
  are upserts by id). Then ``MemoryAdapterUnavailable`` is raised.
* Scope: one file is one namespace, fixed at construction. Several processes may share it.
* Duplicate ids: storing an id that exists replaces the item in place (last write wins).
* Errors: transport failures (cannot open, I/O error, disk full, read-only, locked,
  interrupted) raise ``MemoryAdapterUnavailable``; a damaged file or row, or a write the database
  refuses (a constraint or trigger), raises ``MemoryAdapterError``; a file that is not lionmem's or
  is newer raises ``IncompatibleDatabaseError``. SQLite's own exceptions are chained as causes.

Store-specific extras (not part of the ``MemoryStore`` protocol): ``store_many``, ``delete``,
``count`` and the async iterator ``items()``.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterable
from functools import partial
from types import TracebackType
from typing import Literal, Self, TypeVar
from uuid import UUID

from pydantic import ValidationError

from lionmem._coercions import uuid_key
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable
from lionmem.guard import check_query
from lionmem.stores._sqlite_codec import (
    EncodedItem,
    UnrepresentableValueError,
    decode_item,
    encode_item,
)
from lionmem.stores._sqlite_query import SearchDraft, plan_search
from lionmem.stores._sqlite_schema import (
    IncompatibleDatabaseError,
    delete_text,
    insert_text,
    prepare,
    rollback,
    transaction,
)
from lionmem.stores._sqlite_worker import Worker, WorkerStopped
from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = [
    "MANIFEST",
    "IncompatibleDatabaseError",
    "SQLiteMemoryStore",
    "UnrepresentableValueError",
]

MANIFEST = MemoryAdapterManifest(
    adapter="lionmem.sqlite",
    native_item_fields=frozenset({"id", "created_at", "metadata", "content", "tags"}),
    dropped_item_fields=frozenset(),
    supported_filters=frozenset(),
    supports_any_filter_key=True,
    search_consistency="immediate",
    retrieve_fidelity="full",
    search_fidelity="full",
    search_returns_tags=True,
    preserves_metadata=True,
    search_semantics="reference",
)
"""What every SQLiteMemoryStore declares (ADR-0093 D1): every field kept exactly, any filter key,
writes visible to search at once, and InMemoryStore's search results for every accepted query."""

_T = TypeVar("_T")
Synchronous = Literal["EXTRA", "FULL", "NORMAL"]

_RETRIES = 2
_BACKOFF = (0.05, 0.2)
_PAGE = 256

# SQLite result codes (primary, the low byte) that mean the database could not be reached or
# written for a reason outside the data: the operation may succeed later or elsewhere.
_UNAVAILABLE = {
    sqlite3.SQLITE_BUSY,
    sqlite3.SQLITE_LOCKED,
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_FULL,
    sqlite3.SQLITE_READONLY,
    sqlite3.SQLITE_PERM,
    sqlite3.SQLITE_NOLFS,
    sqlite3.SQLITE_PROTOCOL,
    sqlite3.SQLITE_AUTH,
    sqlite3.SQLITE_INTERRUPT,
}
_RETRYABLE = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_SELECT = "SELECT id, created_at, metadata, content, tags FROM items"


def _primary(exc: sqlite3.Error) -> int:
    return int(getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF


def _translate(exc: sqlite3.Error, where: str) -> MemoryAdapterError:
    code = _primary(exc)
    if code in _UNAVAILABLE:
        return MemoryAdapterUnavailable(f"SQLite database {where} is unavailable: {exc}")
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return MemoryAdapterError(f"SQLite database {where} is damaged: {exc}")
    return MemoryAdapterError(f"SQLite database {where} failed: {exc}")


def _key(item_id: object) -> str | None:
    """The stored form of an id (a UUID or any string ``uuid.UUID()`` parses), else ``None``."""
    key = uuid_key(item_id)
    return None if key is None else str(key)


def _require_item(item: object) -> MemoryItem:
    if type(item) is MemoryItem:
        return item
    if isinstance(item, MemoryItem):
        reason = (
            "SQLiteMemoryStore gives items back as plain MemoryItem, so a subclass would not "
            "round-trip; convert it to a MemoryItem first"
        )
        raise UnrepresentableValueError("__class__", type(item).__qualname__, reason)
    hint = "; use store_many() for several items" if isinstance(item, list | tuple) else ""
    msg = f"store() takes a MemoryItem, got {type(item).__qualname__}{hint}"
    raise TypeError(msg)


def _decode_row(row: tuple[str, str, str, str, str]) -> MemoryItem:
    try:
        return decode_item(*row)
    except (ValueError, TypeError, ValidationError) as exc:
        msg = f"the stored row of item {row[0]!r} is malformed: {exc}"
        raise MemoryAdapterError(msg) from exc


class SQLiteMemoryStore:
    """A ``MemoryStore`` (ADR-0093 ``ExternalMemoryStore``) kept in one SQLite file.

    ``path`` is a file path (created if absent; its directory must exist) or ``":memory:"`` for
    a private in-memory database that lives as long as the store.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "FULL",
        busy_timeout: float = 5.0,
    ) -> None:
        if synchronous not in ("EXTRA", "FULL", "NORMAL"):
            msg = f"synchronous must be 'EXTRA', 'FULL' or 'NORMAL', got {synchronous!r}"
            raise ValueError(msg)
        if not busy_timeout >= 0:
            msg = f"busy_timeout must be a non-negative number of seconds, got {busy_timeout!r}"
            raise ValueError(msg)
        self._path = os.fspath(path)
        self._synchronous = synchronous
        self._busy_timeout = float(busy_timeout)
        self._conn: sqlite3.Connection | None = None
        self._worker = Worker(f"lionmem-sqlite {self._path}")

    @property
    def manifest(self) -> MemoryAdapterManifest:
        """The ADR-0093 manifest: the same for every instance (``MANIFEST``)."""
        return MANIFEST

    @property
    def path(self) -> str:
        """The database path given at construction."""
        return self._path

    def __repr__(self) -> str:
        return f"SQLiteMemoryStore({self._path!r})"

    # -- the worker thread ------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        memory = self._path == ":memory:"
        conn = sqlite3.connect(
            self._path,
            timeout=self._busy_timeout,
            isolation_level=None,
            check_same_thread=True,
        )
        try:
            prepare(conn, repr(self._path), wal=not memory)
            # Constants from a fixed set, never caller text.
            conn.execute(f"PRAGMA synchronous = {self._synchronous}")
            conn.execute("PRAGMA temp_store = MEMORY")
        except BaseException:
            conn.close()
            raise
        return conn

    def _run(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``operation`` in the worker thread, opening the file first if needed."""
        for attempt in range(_RETRIES + 1):
            try:
                if self._conn is None:
                    self._conn = self._connect()
                return operation(self._conn)
            except sqlite3.Error as exc:
                if self._conn is not None:
                    rollback(self._conn)
                if _primary(exc) in _RETRYABLE and attempt < _RETRIES:
                    time.sleep(_BACKOFF[attempt] * (1 + random.random()))
                    continue
                raise _translate(exc, repr(self._path)) from exc
        raise AssertionError  # pragma: no cover - the loop returns or raises

    async def _call(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        try:
            future = self._worker.submit(partial(self._run, operation))
        except WorkerStopped:
            msg = f"{self!r} is closed"
            raise MemoryAdapterUnavailable(msg) from None
        return await future

    # -- lifecycle --------------------------------------------------------------------------

    async def open(self) -> None:
        """Open (and if needed create or migrate) the file now instead of on the first call."""
        await self._call(lambda conn: None)

    async def close(self) -> None:
        """Wait for submitted operations, then close the database; idempotent."""
        try:
            future = self._worker.submit(self._close_connection, last=True)
        except WorkerStopped:
            return
        await future

    def _close_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    async def __aenter__(self) -> Self:
        try:
            await self.open()
        except BaseException:
            await self.close()  # ``async with`` calls no __aexit__ when entering fails
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    # -- the MemoryStore protocol -----------------------------------------------------------

    async def store(self, item: MemoryItem) -> UUID:
        """Store ``item`` (replacing an item with its id in place), commit, and return its id.

        The item is encoded when ``store`` is called: later changes to the object are not seen.
        """
        encoded = encode_item(_require_item(item))
        await self._call(lambda conn: _write(conn, (encoded,)))
        return item.id

    async def retrieve(self, item_id: UUID | str) -> MemoryItem | None:
        """Return a new ``MemoryItem`` equal to the stored one, or ``None`` (also for a non-id)."""
        key = _key(item_id)
        if key is None:
            return None
        row = await self._call(
            lambda conn: conn.execute(_SELECT + " WHERE id = ?", (key,)).fetchone()
        )
        return None if row is None else _decode_row(row)

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        """Return up to ``query.limit`` matching items in insertion order, as InMemoryStore does.

        Raises ``UnsupportedMemoryQuery`` for a negative limit; ``limit=0`` returns ``[]`` at once.
        """
        if not check_query(query, MANIFEST):
            return []  # limit=0: known without reading the file
        limit = query.limit
        draft = plan_search(query)
        if draft is None:
            return []
        return await self._call(partial(_search, draft=draft, limit=limit))

    # -- store-specific extras --------------------------------------------------------------

    async def store_many(self, items: Iterable[MemoryItem]) -> list[UUID]:
        """Store several items in one transaction: all of them, or (on any error) none.

        Every item is checked and encoded before anything is written. A repeated id is stored
        once, at its first position, holding its last value, as successive ``store`` calls would.
        """
        batch = [_require_item(item) for item in items]
        encoded = tuple(encode_item(item) for item in batch)
        if encoded:
            await self._call(lambda conn: _write(conn, encoded))
        return [item.id for item in batch]

    async def delete(self, item_id: UUID | str) -> bool:
        """Delete the item with this id; return whether there was one."""
        key = _key(item_id)
        if key is None:
            return False
        return await self._call(lambda conn: _delete(conn, key))

    async def count(self) -> int:
        """Return the number of stored items."""
        row = await self._call(lambda conn: conn.execute("SELECT count(*) FROM items").fetchone())
        return int(row[0])

    async def items(self, *, batch_size: int = _PAGE) -> AsyncIterator[MemoryItem]:
        """Yield every item in insertion order, reading ``batch_size`` rows per worker call.

        Not a snapshot: each batch is read when it is needed, so an item stored meanwhile is
        yielded at the end, a replaced one in its place with its new value, and a deleted one
        not yet reached is skipped.
        """
        if batch_size < 1:
            msg = f"batch_size must be at least 1, got {batch_size!r}"
            raise ValueError(msg)
        last = -1
        while True:
            rows = await self._call(partial(_page, after=last, size=batch_size))
            for _seq, item in rows:
                yield item
            if len(rows) < batch_size:
                return
            last = rows[-1][0]


# -- operations, run in the worker thread ---------------------------------------------------


def _write(conn: sqlite3.Connection, batch: tuple[EncodedItem, ...]) -> None:
    with transaction(conn):
        for encoded in batch:
            _upsert(conn, encoded)


def _upsert(conn: sqlite3.Connection, e: EncodedItem) -> None:
    found = conn.execute("SELECT seq, text FROM items WHERE id = ?", (e.id,)).fetchone()
    if found is None:
        cursor = conn.execute(
            "INSERT INTO items (id, created_at, metadata, content, tags, text) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (e.id, e.created_at, e.metadata, e.content, e.tags, e.text),
        )
        seq = cursor.lastrowid
        assert seq is not None  # an INSERT into a rowid table always sets it
        insert_text(conn, seq, e.text)
    else:
        seq, old_text = found
        conn.execute(
            "UPDATE items SET created_at = ?, metadata = ?, content = ?, tags = ?, text = ? "
            "WHERE seq = ?",
            (e.created_at, e.metadata, e.content, e.tags, e.text, seq),
        )
        if old_text != e.text:
            delete_text(conn, seq, old_text)
            insert_text(conn, seq, e.text)
        conn.execute("DELETE FROM item_tags WHERE seq = ?", (seq,))
        conn.execute("DELETE FROM item_fields WHERE seq = ?", (seq,))
    conn.executemany(
        "INSERT INTO item_tags (tag, seq) VALUES (?, ?)", [(tag, seq) for tag in e.tag_set]
    )
    conn.executemany(
        "INSERT INTO item_fields (key, value, seq) VALUES (?, ?, ?)",
        [(key, value, seq) for key, value in e.fields],
    )


def _delete(conn: sqlite3.Connection, key: str) -> bool:
    with transaction(conn):
        found = conn.execute("SELECT seq, text FROM items WHERE id = ?", (key,)).fetchone()
        if found is not None:
            seq, text = found
            delete_text(conn, seq, text)
            conn.execute("DELETE FROM item_tags WHERE seq = ?", (seq,))
            conn.execute("DELETE FROM item_fields WHERE seq = ?", (seq,))
            conn.execute("DELETE FROM items WHERE seq = ?", (seq,))
    return found is not None


_decode_json = json.JSONDecoder().decode


def _search(conn: sqlite3.Connection, draft: SearchDraft, limit: int) -> list[MemoryItem]:
    plan = draft.finish(lambda sql, params: int(conn.execute(sql, params).fetchone()[0]))
    if plan is None:
        return []
    confirm = plan.confirm
    results: list[MemoryItem] = []
    cursor = conn.execute(plan.sql, plan.params)
    # Fetch only the rows still needed; when Python rejects some (filters SQL could only
    # pre-select), fetch twice as many next time. Rows SQLite has not stepped to cost nothing.
    growth = 1
    try:
        while len(results) < limit:
            rows = cursor.fetchmany(min((limit - len(results)) * growth, _PAGE))
            if not rows:
                break
            growth *= 2
            for row in rows:
                if confirm:
                    try:
                        metadata = _decode_json(row[2])
                    except ValueError as exc:
                        msg = f"the stored metadata of item {row[0]!r} is malformed: {exc}"
                        raise MemoryAdapterError(msg) from exc
                    if not isinstance(metadata, dict):
                        msg = f"the stored metadata of item {row[0]!r} is not a JSON object"
                        raise MemoryAdapterError(msg)
                    if not all(metadata.get(key) == value for key, value in confirm):
                        continue
                results.append(_decode_row(row))
                if len(results) == limit:
                    break
    finally:
        # Ends the statement, so this connection stops holding a WAL read snapshot.
        cursor.close()
    return results


def _page(conn: sqlite3.Connection, after: int, size: int) -> list[tuple[int, MemoryItem]]:
    rows = conn.execute(
        "SELECT seq, id, created_at, metadata, content, tags FROM items "
        "WHERE seq > ? ORDER BY seq LIMIT ?",
        (after, size),
    ).fetchall()
    return [(row[0], _decode_row(row[1:])) for row in rows]
