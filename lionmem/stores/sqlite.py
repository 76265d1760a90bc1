"""SQLiteMemoryStore: durable, exact memory in one SQLite file, with nothing to install.

Results equal ``InMemoryStore``'s for every non-negative limit; items come back equal field by
field; a value JSON cannot give back exactly is refused before anything is written. A negative
``limit`` raises ``UnsupportedMemoryQuery``; ``limit=0`` gives ``[]`` without reading the file.

Lifecycle (ADR-0093 D4; reasons and numbers in docs/sqlite-operations.md):

* Connections: a writer in the store's worker thread, and a read-only reader that answers reads
  in the caller's thread when it can without waiting (no busy timeout, a 2 ms budget). At
  ``synchronous=NORMAL``, whose commits do not sync, a third connection inserts a new item in the
  caller's thread in the same way (no busy timeout, never a checkpoint). Everything else runs in
  the worker, so the event loop never waits on a sync or a lock. Writes queued together share
  one commit (waiting up to 1 ms for the writers the previous commit answered); each is
  acknowledged after it. A write of fewer than ``TAIL_ITEMS`` items stores the rows only; the
  worker adds the newest items to the text, tag and metadata indexes in batches, and searches
  read the few rows not indexed yet. A bigger write indexes the tail in its own transaction.
* Durability: WAL with ``synchronous=FULL`` by default; an acknowledged write survives
  ``kill -9`` and power loss. Busy waits last ``busy_timeout`` seconds; a locked operation is
  retried twice (50 ms, 200 ms, with jitter), then raises ``MemoryAdapterUnavailable``.
* Close: ``close()`` (or leaving ``async with``) waits for queued operations and is idempotent;
  every later call raises ``MemoryAdapterUnavailable``. A store dropped unclosed is finalized:
  its connections close and its thread ends.
* Cancellation: an operation cancelled before the worker starts it is not run (a stream, before
  its commit: it reads no further item and rolls back); once its commit has begun, it completes,
  and later calls (reads included) wait for it.
* Fork: in a child forked after the store was used, every call raises
  ``MemoryAdapterUnavailable``; open a new store there.
* Errors: transport failures raise ``MemoryAdapterUnavailable``; a damaged file or a refused
  write ``MemoryAdapterError``; a foreign or newer file ``IncompatibleDatabaseError``.

Extras beyond the protocol: ``store_many``, ``store_stream``, ``delete``, ``count`` and
``items()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import random
import sqlite3
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import chain
from pathlib import Path
from types import TracebackType
from typing import Literal, NoReturn, Self, TypeVar, cast
from uuid import UUID

from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable
from lionmem.guard import check_query
from lionmem.stores._arguments import (
    encoded_batch,
    page_size,
    require_item,
    require_items,
    stored_key,
)
from lionmem.stores._sqlite_codec import (
    EncodedItem,
    UnrepresentableValueError,
    decode_row,
    encode_item,
    read_json,
)
from lionmem.stores._sqlite_query import SearchDraft, SearchPlan, plan_search
from lionmem.stores._sqlite_schema import (
    Entries,
    IncompatibleDatabaseError,
    delete_text,
    entries_of,
    index_tail,
    indexed_upto,
    insert_text,
    prepare,
    rollback,
    snapshot,
    transaction,
)
from lionmem.stores._sqlite_worker import Outcome, Worker, WorkerReentered, WorkerStopped
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
_C = TypeVar("_C", bound=sqlite3.Connection)
Synchronous = Literal["EXTRA", "FULL", "NORMAL"]

_RETRIES = 2
_BACKOFF = (0.05, 0.2)
_PAGE = 256
# A read in the caller's thread that runs longer than this is interrupted and run by the worker;
# SQLite checks the clock every _BUDGET_STEPS virtual-machine steps, Python before each row it
# decodes. A row longer than _BUDGET_CHARS (its texts, in characters; JSON decodes at about
# 50,000 a millisecond) is decoded by the worker.
_BUDGET_SECONDS = 0.002
_BUDGET_STEPS = 1000
_BUDGET_CHARS = 32_768
_BUDGET_BYTES = 4 * _BUDGET_CHARS  # the longest value the reader loads: the UTF-8 of as many
_MISSED = object()
_NO_FILE = (-1, -1)
_STORE = "SQLiteMemoryStore"
TAIL_ITEMS = 128
"""Items written after which the worker indexes the tail; a write this big indexes it itself."""
_INDEX_BATCH = 1000
_CHECKPOINT_WAIT_MS = 50
CHECKPOINT_WRITES = 300
"""Writes in the caller's thread (which never checkpoint) after which such writes pause until the
worker has checkpointed the WAL, so that the WAL stays bounded."""
_MAX_BATCH = 2**62
_MAX_BUSY_TIMEOUT = 2_147_483  # SQLite takes the timeout in milliseconds, as a C int

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


def _translate(exc: sqlite3.Error, where: str, file: str | None = None) -> MemoryAdapterError:
    """The lionmem error for ``exc``; ``file``: the store's file, named when it cannot be opened."""
    code = _primary(exc)
    # Unable to open, or (a directory another user cannot write) "attempt to write a readonly
    # database" for a -shm file it could not make.
    blocked = code in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY)
    if blocked and file is not None and _wal_blocked(file):
        msg = (
            f"SQLite database {where} is unavailable: {exc} (SQLite opens a WAL database, even "
            "to read it, only where it can create or open its -wal and -shm files beside it: on "
            "read-only storage, copy the file to a writable directory)"
        )
        return MemoryAdapterUnavailable(msg)
    if code in _UNAVAILABLE:
        return MemoryAdapterUnavailable(f"SQLite database {where} is unavailable: {exc}")
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return MemoryAdapterError(f"SQLite database {where} is damaged: {exc}")
    return MemoryAdapterError(f"SQLite database {where} failed: {exc}")


def _wal_blocked(file: str) -> bool:
    """Whether ``file`` exists but its -wal or -shm file cannot be made or used beside it: the
    directory is not writable (read-only storage), or one of them is not a file this process
    can read and write."""
    if not os.path.isfile(file):
        return False
    if not os.access(os.path.dirname(file) or ".", os.W_OK):
        return True
    for companion in (file + "-wal", file + "-shm"):
        exists = os.path.lexists(companion)
        if exists and not (os.path.isfile(companion) and os.access(companion, os.R_OK | os.W_OK)):
            return True
    return False


def _locked(exc: BaseException) -> bool:
    """Whether ``exc`` reports a lock held past the busy timeout and the retries."""
    cause = exc.__cause__
    return (
        isinstance(exc, MemoryAdapterUnavailable)
        and isinstance(cause, sqlite3.Error)
        and _primary(cause) in _RETRYABLE
    )


def _checked_path(path: str | os.PathLike[str]) -> str:
    text = os.fspath(path)
    if not isinstance(text, str):
        msg = f"path must be a str or an os.PathLike of str, got {type(text).__qualname__}"
        raise TypeError(msg)
    if not text:
        msg = "path is empty (SQLite would open a private temporary database); give a file path"
        raise ValueError(msg)
    if "\x00" in text:
        msg = f"path {text!r} holds a NUL character, which no file name can hold"
        raise ValueError(msg)
    if text.startswith("file:"):
        msg = (
            f"path {text!r} reads as a SQLite URI, which SQLiteMemoryStore does not take: give a "
            "file path (./file:... names a file of that name) or ':memory:'"
        )
        raise ValueError(msg)
    return text


class _Reader(sqlite3.Connection):
    """The connection that reads in callers' threads; a read on it stops at its ``deadline``."""

    deadline = 0.0

    def over_budget(self) -> bool:
        return time.perf_counter() > self.deadline


class _GiveWay(Exception):
    """A read on the reader ran out of its budget: the worker runs it again."""


def _spend(conn: sqlite3.Connection, row: tuple[str, ...]) -> None:
    """Before Python decodes ``row``: on the reader, give way to the worker once the read is past
    its deadline, or for a row too long to decode within the budget."""
    if isinstance(conn, _Reader) and (conn.over_budget() or sum(map(len, row)) > _BUDGET_CHARS):
        raise _GiveWay


class _Connections:
    """The store's connections. Its finalizer holds this, never the store itself.

    ``writer`` is used only in the worker thread. ``reader`` (absent for ``":memory:"``) answers
    reads in the caller's thread while ``reader_lock`` can be taken without waiting; its progress
    handler interrupts a statement once ``deadline`` has passed. ``direct`` (only for a file at
    ``synchronous=NORMAL``) inserts new items in the caller's thread while ``direct_lock`` can be
    taken without waiting.
    """

    __slots__ = ("direct", "direct_lock", "reader", "reader_lock", "writer")

    def __init__(self) -> None:
        self.writer: sqlite3.Connection | None = None
        self.reader: _Reader | None = None
        self.direct: sqlite3.Connection | None = None
        self.reader_lock = threading.Lock()
        self.direct_lock = threading.Lock()

    def close(self) -> None:
        writer, self.writer = self.writer, None
        with self.reader_lock:
            reader, self.reader = self.reader, None
        with self.direct_lock:
            direct, self.direct = self.direct, None
        for conn in (direct, reader, writer):
            if conn is not None:
                conn.close()


def _abandoned(worker: Worker, connections: _Connections) -> None:
    """Finalizer of a store dropped without ``close``: close its connections, end its thread."""
    if worker.pid is not None and worker.pid != os.getpid():
        worker.abandon()  # a forked child's copy: the connections belong to the parent
        return
    worker.stop(connections.close)


class SQLiteMemoryStore:
    """A ``MemoryStore`` (ADR-0093 ``ExternalMemoryStore``) kept in one SQLite file.

    ``path`` is a file path (created if absent; its directory must exist; a relative one is
    taken from the working directory at construction) or ``":memory:"`` for a private
    in-memory database that lives as long as the store.
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
        if type(busy_timeout) not in (int, float):
            msg = f"busy_timeout must be a number of seconds, got {type(busy_timeout).__qualname__}"
            raise TypeError(msg)
        if not 0 <= busy_timeout <= _MAX_BUSY_TIMEOUT:
            msg = (
                f"busy_timeout must be between 0 and {_MAX_BUSY_TIMEOUT:,} seconds (SQLite's "
                f"limit), got {busy_timeout!r}"
            )
            raise ValueError(msg)
        self._path = _checked_path(path)
        # The file every connection opens, fixed now: a relative path read later (each reader
        # thread connects on its first read) would name another file after os.chdir(). Joined,
        # not normalised: ".." after a symbolic link leads where the system's open leads.
        self._file = self._path if self._path == ":memory:" else _absolute(self._path)
        self._synchronous = synchronous
        self._busy_timeout = float(busy_timeout)
        self._connections = _Connections()
        self._worker = Worker(f"lionmem-sqlite {self._path}")
        # A commit at NORMAL does not wait for the disk, so a new item may be inserted in the
        # caller's thread when that can be done without waiting (``_insert_here``).
        self._direct = synchronous == "NORMAL" and self._path != ":memory:"
        # Under _tail_lock (writes are counted in the worker and in callers' threads): writes
        # since the tail was last indexed and whether indexing it is queued; writes in callers'
        # threads since the last checkpoint and whether one is queued (they pause until it ran).
        self._tail_lock = threading.Lock()
        self._unindexed = 0
        self._indexing = False
        self._unchecked = 0
        self._checkpointing = False
        # The index entries of the items this store wrote since, by id: indexing them need not
        # decode their JSON (their content is not kept: it may be large).
        self._written: dict[str, Entries] = {}
        # The device and inode of the file the writer opened (``_moved``): None for ":memory:"
        # (or a path that could not be looked up), _NO_FILE if it was gone already.
        self._identity: tuple[int, int] | None = None
        weakref.finalize(self, _abandoned, self._worker, self._connections)

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

    def __reduce__(self) -> NoReturn:
        msg = (
            f"{self!r} cannot be copied or pickled: it owns its connections and worker thread; "
            "share it (one store serves any number of tasks and threads) or open another "
            "SQLiteMemoryStore on the same file"
        )
        raise TypeError(msg)

    # -- the worker thread ------------------------------------------------------------------

    def _open_writer(self) -> sqlite3.Connection:
        """The writer connection; for a file, record which file it opened (``_moved``): the
        path leads to the same file before and after the open, else it is opened again."""
        for _ in range(_RETRIES + 1):
            before = None if self._path == ":memory:" else _identity(self._file)
            conn = sqlite3.connect(
                self._file,
                timeout=self._busy_timeout,
                isolation_level=None,
                check_same_thread=True,
            )
            if before is None or _identity(self._file) == before != _NO_FILE:
                self._identity = before
                return conn
            conn.close()  # replaced, removed or made meanwhile: which file it holds is unknown
        msg = (
            f"{self._path!r} was replaced, removed or made anew each time the store opened it: "
            "open the store once the file stays in place"
        )
        raise MemoryAdapterUnavailable(msg)

    def _connect(self) -> sqlite3.Connection:
        memory = self._path == ":memory:"
        conn = self._open_writer()
        reader: _Reader | None = None
        direct: sqlite3.Connection | None = None
        try:
            prepare(conn, repr(self._path), wal=not memory)
            # Constants from a fixed set, never caller text.
            conn.execute(f"PRAGMA synchronous = {self._synchronous}")
            conn.execute("PRAGMA temp_store = MEMORY")
            upto = indexed_upto(conn, repr(self._path))
            (tail,) = conn.execute("SELECT count(*) FROM items WHERE seq > ?", (upto,)).fetchone()
            reader = None if memory else self._open_reader()
            if self._direct and conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                direct = self._open_direct()
            if self._moved() is not None:
                # The path led elsewhere once the writer had opened it: the other connections
                # may hold another file, where reads would disagree with the worker's.
                msg = (
                    f"{self!r}: the database file was deleted, moved or replaced while the store "
                    "opened it; no item was read or written (the file the writer opened may have "
                    "been created or migrated): try again once the file stays in place"
                )
                raise MemoryAdapterUnavailable(msg)
        except BaseException:
            for opened in (direct, reader, conn):
                if opened is not None:
                    opened.close()
            raise
        with self._connections.reader_lock:
            self._connections.reader = reader
        with self._connections.direct_lock:
            self._connections.direct = direct
        with self._tail_lock:
            self._unindexed = int(tail)
        return conn

    def _open_reader(self) -> _Reader:
        # No busy timeout: a read that meets a lock goes to the worker instead of waiting.
        reader = _unwaiting(self._file, _Reader, "PRAGMA query_only = 1")
        reader.set_progress_handler(reader.over_budget, _BUDGET_STEPS)
        # Reading one value is one step, however long: a longer one, even in a row the read
        # then skips, fails the read (SQLITE_TOOBIG) before it is loaded, and the worker runs it.
        reader.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _BUDGET_BYTES)
        return reader

    def _open_direct(self) -> sqlite3.Connection:
        # No busy timeout: an insert that meets a lock goes to the worker instead of waiting.
        # No checkpoints either (they sync the disk): the worker runs them (``_checkpoint``).
        return _unwaiting(
            self._file,
            sqlite3.Connection,
            "PRAGMA synchronous = NORMAL",
            "PRAGMA wal_autocheckpoint = 0",
        )

    def _run(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``operation`` in the worker thread, opening the file first if needed."""
        connections = self._connections
        for attempt in range(_RETRIES + 1):
            try:
                if connections.writer is None:
                    connections.writer = self._connect()
                return operation(connections.writer)
            except sqlite3.Error as exc:
                if connections.writer is not None:
                    rollback(connections.writer)
                if _primary(exc) in _RETRYABLE and attempt < _RETRIES:
                    time.sleep(_BACKOFF[attempt] * (1 + random.random()))
                    continue
                raise _translate(exc, repr(self._path), self._file) from exc
        raise AssertionError  # pragma: no cover - the loop returns or raises

    def _moved(self) -> MemoryAdapterUnavailable | None:
        """The error for a write once the file the store opened is no longer at its path.

        Deleted, moved or replaced, that file is one no open of the path will find: a write to
        it would be acknowledged and lost with it. (SQLite's own test, ``SQLITE_FCNTL_HAS_MOVED``,
        compares the inode.) A path that cannot be looked up for another reason (a directory
        made unreadable) proves nothing, and does not stop the write.
        """
        if self._identity is None:
            return None
        found = _identity(self._file)
        if found is None or (found == self._identity and found != _NO_FILE):
            return None
        msg = (
            f"{self!r}: the database file was deleted, moved or replaced since the store opened "
            "it, so a write would be lost with it; nothing was written: close this store and "
            "open the file again"
        )
        return MemoryAdapterUnavailable(msg)

    def _refuse_if_moved(self) -> None:
        """Raise ``_moved``'s error, if any."""
        moved = self._moved()
        if moved is not None:
            raise moved

    def _unmoved(self, conn: sqlite3.Connection, write: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``write`` unless the store's file was moved (``_moved``)."""
        self._refuse_if_moved()
        return write(conn)

    def _write_batches(self, batches: Sequence[tuple[EncodedItem, ...]]) -> list[Outcome]:
        """Commit the writes queued together in one transaction (in the worker thread).

        If that fails, each is committed on its own, so only a write that fails by itself fails;
        but a lock held past the busy timeout and the retries, met by the group or by one write,
        fails every write not yet committed at once (each would wait for it again). None is
        written once the store's file was moved (``_moved``).
        """
        moved = self._moved()
        if moved is not None:
            return [(None, moved)] * len(batches)
        where = repr(self._path)
        if len(batches) > 1:
            everything = tuple(chain.from_iterable(batches))
            try:
                indexed = self._run(partial(_write, batch=everything, where=where))
            except MemoryAdapterUnavailable as exc:
                if _locked(exc):
                    return [(None, exc)] * len(batches)
            except Exception:
                pass  # the writes are committed one by one just below
            else:
                self._wrote(len(everything), everything, indexed=indexed)
                return [(None, None)] * len(batches)
        outcomes: list[Outcome] = []
        for done, batch in enumerate(batches):
            try:
                indexed = self._run(partial(_write, batch=batch, where=where))
            except Exception as exc:
                if _locked(exc):
                    # Met here too (the group failed for another reason): the rest would each
                    # wait it out again.
                    return outcomes + [(None, exc)] * (len(batches) - done)
                outcomes.append((None, exc))
            else:
                self._wrote(len(batch), batch, indexed=indexed)
                outcomes.append((None, None))
        return outcomes

    def _wrote(
        self,
        count: int,
        items: Iterable[EncodedItem] = (),
        *,
        indexed: bool = False,
        here: bool = False,
    ) -> None:
        """Count ``count`` written items, unless the write ``indexed`` them itself; past
        ``TAIL_ITEMS``, queue the indexing of the tail.

        ``here``: one item inserted in the caller's thread; past ``CHECKPOINT_WRITES`` of those,
        queue a checkpoint (in any thread: the queue is thread-safe).
        """
        with self._tail_lock:
            if not indexed:
                for encoded in items:
                    self._written[encoded.id] = entries_of(encoded)
                self._unindexed += count
                if self._unindexed >= TAIL_ITEMS and not self._indexing:
                    self._indexing = self._worker.later(self._index_tail)
            if here:
                self._unchecked += 1
                if self._unchecked >= CHECKPOINT_WRITES and not self._checkpointing:
                    self._checkpointing = self._worker.later(self._checkpoint)

    def _checkpoint(self) -> None:
        """Copy the WAL into the file (in the worker thread; ``_checkpoint_wal`` says how long
        it may wait for readers).

        Inserts in callers' threads pause meanwhile, so it can reach the end of the WAL, which the
        next write then starts again from its beginning.
        """
        # A failure (the file busy, read-only or full) leaves the WAL as it is; the next
        # CHECKPOINT_WRITES writes try again.
        with contextlib.suppress(MemoryAdapterError):
            self._run(_checkpoint_wal)
        with self._tail_lock:
            self._unchecked = 0
            self._checkpointing = False

    def _index_tail(self) -> None:
        """Index the items not indexed yet (in the worker thread, after the writes queued)."""
        with self._tail_lock:
            self._indexing = False
            self._unindexed = 0
            written, self._written = self._written, {}
        where = repr(self._path)
        # A failure (the file busy for long, read-only, full, or a damaged row) leaves the tail
        # as it is: searches read it, and the next TAIL_ITEMS writes try again.
        with contextlib.suppress(MemoryAdapterError, ValueError):
            index = partial(_index, where=where, written=written, synchronous=self._synchronous)
            while self._run(index):
                pass

    def _finish(self) -> None:
        """Index the tail of an opened store, then close the connections (the close job)."""
        with self._tail_lock:
            unindexed = self._unindexed
        if self._connections.writer is not None and unindexed:
            self._index_tail()
        self._connections.close()

    def _closed(self) -> MemoryAdapterUnavailable:
        return MemoryAdapterUnavailable(f"{self!r} is closed")

    def _reentered(self) -> MemoryAdapterError:
        msg = (
            f"{self!r} was called from its own worker thread (by the items store_stream reads, "
            "or by its on_unrepresentable), where the call would wait for itself forever: that "
            "code must not use this store"
        )
        return MemoryAdapterError(msg)

    def _check_open(self) -> None:
        """Raise ``MemoryAdapterUnavailable`` after ``close``, or in a process forked after use."""
        if self._worker.stopped:
            raise self._closed()
        owner = self._worker.pid
        if owner is not None and owner != os.getpid():
            msg = (
                f"{self!r} was opened in process {owner}; a store cannot cross os.fork(): "
                "create a new SQLiteMemoryStore in this process"
            )
            raise MemoryAdapterUnavailable(msg)

    async def _call(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``operation`` on the writer connection, in the worker thread."""
        try:
            future = self._worker.submit(partial(self._run, operation))
        except WorkerStopped:
            raise self._closed() from None
        except WorkerReentered:
            raise self._reentered() from None
        return await future

    async def _write(self, batch: tuple[EncodedItem, ...]) -> None:
        try:
            future = self._worker.submit_batch(self._write_batches, batch)
        except WorkerStopped:
            raise self._closed() from None
        except WorkerReentered:
            raise self._reentered() from None
        await future

    def _insert_here(self, encoded: EncodedItem) -> bool:
        """Insert a new item on the direct connection in this thread; return whether it did.

        Not done (the worker then writes it, exactly as it would anyway) when the store has no
        direct connection, another thread is using it, operations of this store are queued or
        running in the worker (``Worker.busy``, cancelled ones included), a checkpoint is due,
        the file is locked (no busy timeout), the id is stored already (a replacement needs a
        transaction), the file was moved (``_moved``), or on any other SQLite error. The insert
        is one statement, its own transaction: all or nothing.
        """
        connections = self._connections
        # _checkpointing is read without _tail_lock: a stale answer only sends one more insert
        # one way or the other.
        if self._checkpointing or not connections.direct_lock.acquire(blocking=False):
            return False
        try:
            direct = connections.direct
            if direct is None or self._moved() is not None:
                return False
            try:
                if not _insert(direct, encoded).rowcount:
                    return False
            except sqlite3.Error:
                rollback(direct)
                return False
        finally:
            connections.direct_lock.release()
        self._wrote(1, (encoded,), here=True)
        return True

    def _read_here(self, operation: Callable[[sqlite3.Connection], _T]) -> _T | object:
        """Run a read on the reader connection in this thread, or return ``_MISSED``.

        Missed when the reader is absent or in use by another thread, when the file is busy (a
        checkpoint or a recovery holds it), when the read takes longer than ``_BUDGET_SECONDS``
        (SQLite interrupts it, or Python stops before the next row it would decode), at a row
        longer than ``_BUDGET_CHARS``, or on any other SQLite error: the worker then runs it
        again. Also missed while an operation whose caller was cancelled is still queued or
        running in the worker: the worker runs the read after it, so the read sees what it did.
        """
        connections = self._connections
        if self._worker.withdrawn or connections.reader is None:
            return _MISSED
        if not connections.reader_lock.acquire(blocking=False):
            return _MISSED
        try:
            reader = connections.reader
            if reader is None:
                return _MISSED
            reader.deadline = time.perf_counter() + _BUDGET_SECONDS
            try:
                return operation(reader)
            except (sqlite3.Error, _GiveWay):
                rollback(reader)
                return _MISSED
        finally:
            connections.reader_lock.release()

    async def _read(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._worker.here:  # else answered here or not, as the read's time would decide
            raise self._reentered()
        result = self._read_here(operation)
        if result is _MISSED:
            return await self._call(operation)
        return cast(_T, result)

    async def _configure(self, setting: Callable[[sqlite3.Connection], object]) -> None:
        """Apply ``setting`` to every connection of the store, opening them first if needed."""

        def apply(writer: sqlite3.Connection) -> None:
            setting(writer)
            with self._connections.reader_lock:
                if self._connections.reader is not None:
                    setting(self._connections.reader)
            with self._connections.direct_lock:
                if self._connections.direct is not None:
                    setting(self._connections.direct)

        await self._call(apply)

    # -- lifecycle --------------------------------------------------------------------------

    async def open(self) -> None:
        """Open (and if needed create or migrate) the file now instead of on the first call."""
        self._check_open()
        await self._call(lambda conn: None)

    async def close(self) -> None:
        """Wait for submitted operations, then close the database; idempotent (a call made
        while another is closing the store returns once it is closed).

        In a process forked from the one that opened the store, it only marks this copy closed.
        """
        owner = self._worker.pid
        if owner is not None and owner != os.getpid():
            self._worker.abandon()
            return
        try:
            future = self._worker.submit(self._finish, last=True)
        except WorkerStopped:
            await self._worker.ended()  # closed, or closing in another call: wait until it is
            return
        except WorkerReentered:
            raise self._reentered() from None
        await future

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
        encoded = encode_item(require_item(item, _STORE))
        self._check_open()
        # Decided before any await, so writes commit in the order of the calls.
        if self._direct and not self._worker.busy and self._insert_here(encoded):
            # Let the loop's other tasks run, as a write sent to the worker would: a task
            # writing in a loop must not hold the event loop. The item is stored already.
            await asyncio.sleep(0)
            return item.id
        await self._write((encoded,))
        return item.id

    async def retrieve(self, item_id: UUID | str) -> MemoryItem | None:
        """Return a new ``MemoryItem`` equal to the stored one, or ``None`` (also for a non-id)."""
        key = stored_key(item_id)
        self._check_open()
        if key is None:
            return None
        return await self._read(partial(_get, key=key))

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        """Return up to ``query.limit`` matching items in insertion order, as InMemoryStore does.

        Raises ``UnsupportedMemoryQuery`` for a negative limit; ``limit=0`` returns ``[]`` at once.
        """
        # limit=0 is answered without reading the file; a draft of None proves nothing matches.
        draft = plan_search(query) if check_query(query, MANIFEST) else None
        self._check_open()
        if draft is None:
            return []
        where = repr(self._path)
        return await self._read(partial(_search, draft=draft, limit=query.limit, where=where))

    # -- store-specific extras --------------------------------------------------------------

    async def store_many(self, items: Iterable[MemoryItem]) -> list[UUID]:
        """Store several items in one transaction: all of them, or (on any error) none.

        Every item is checked and encoded before anything is written. A repeated id is stored
        once, at its first position, holding its last value, as successive ``store`` calls would.
        """
        batch, encoded = encoded_batch(items, _STORE, "store_many", encode_item)
        self._check_open()
        if encoded:
            await self._write(tuple(encoded))
        return [item.id for item in batch]

    async def delete(self, item_id: UUID | str) -> bool:
        """Delete the item with this id; return whether there was one."""
        key = stored_key(item_id)
        self._check_open()
        if key is None:
            return False
        delete = partial(_delete, key=key, where=repr(self._path))
        return await self._call(partial(self._unmoved, write=delete))

    async def count(self) -> int:
        """Return the number of stored items (the worker counts them: SQLite reads the whole
        index in one step, which its clock check cannot interrupt)."""
        self._check_open()
        return await self._call(_count)

    async def items(self, *, batch_size: int = _PAGE) -> AsyncIterator[MemoryItem]:
        """Yield every item in insertion order, reading ``batch_size`` rows per worker call.

        Not a snapshot: each batch is read when it is needed, so an item stored meanwhile is
        yielded at the end, a replaced one in its place with its new value, and a deleted one
        not yet reached is skipped.
        """
        batch_size = page_size(batch_size, _MAX_BATCH)  # past SQLite's integers: all at once
        self._check_open()
        last = -1
        while True:
            self._check_open()
            rows = await self._call(partial(_page, after=last, size=batch_size))
            for _seq, item in rows:
                yield item
            if len(rows) < batch_size:
                return
            last = rows[-1][0]

    async def store_stream(
        self,
        items: Iterable[MemoryItem],
        *,
        on_unrepresentable: Callable[[MemoryItem, UnrepresentableValueError], None] | None = None,
    ) -> int:
        """Store every item ``items`` yields in one transaction; return how many it wrote.

        Unlike ``store_many`` nothing is held in memory: ``items`` is consumed in the worker
        thread, inside the transaction, one item at a time (so it must not use this store: a
        call from there raises ``MemoryAdapterError``). Any exception it raises (a StopIteration
        as a RuntimeError caused by it), or an item that cannot be stored exactly, rolls
        everything back and is raised; with ``on_unrepresentable`` such an item is given to it
        and skipped instead.
        An item whose id came earlier replaces it and is counted too (skipped items are not).
        Cancelled before its commit, it reads no further item and rolls everything back.
        """
        self._check_open()
        withdrawn = threading.Event()
        items = require_items(items, "store_stream")
        stream = partial(self._stream, items=items, skip=on_unrepresentable, withdrawn=withdrawn)
        try:
            return await self._call(partial(self._unmoved, write=stream))
        except asyncio.CancelledError:
            withdrawn.set()  # seen by the worker before the next item and before the commit
            raise
        except _CallersError as carried:
            error = carried.error
        # Raised outside the except clause, so its __context__ stays the caller's own.
        raise error

    def _stream(
        self,
        conn: sqlite3.Connection,
        items: Iterable[MemoryItem],
        skip: Callable[[MemoryItem, UnrepresentableValueError], None] | None,
        withdrawn: threading.Event,
    ) -> int:
        where = repr(self._path)
        check = self._refuse_if_moved
        stored = _write_stream(conn, items, skip, where, withdrawn, before_commit=check)
        self._wrote(stored, indexed=stored >= TAIL_ITEMS)
        return stored


def _identity(path: str) -> tuple[int, int] | None:
    """The device and inode of the file at ``path``; ``(-1, -1)``, which no file has, when the
    path leads to no file (a name removed, a directory or a link loop on the way); ``None``
    when it cannot be looked up for another reason (a directory made unreadable)."""
    try:
        found = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return _NO_FILE
    except OSError as exc:
        return _NO_FILE if exc.errno == errno.ELOOP else None
    return (found.st_dev, found.st_ino)


def _absolute(path: str) -> str:
    """``path`` from the working directory, its ``..`` and symbolic links left to the system."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _unwaiting(path: str, factory: type[_C], *pragmas: str) -> _C:
    """A ``factory`` connection to the existing file ``path`` (an absolute path) for any thread
    that never waits for a lock (no busy timeout), with in-memory temporary storage and
    ``pragmas`` set (closed again if one fails)."""
    # mode=rw: never a new file at the path (the writer's may have been removed meanwhile).
    uri = f"{Path(path).as_uri()}?mode=rw"
    conn = sqlite3.connect(
        uri, timeout=0, isolation_level=None, check_same_thread=False, factory=factory, uri=True
    )
    try:
        for pragma in (*pragmas, "PRAGMA temp_store = MEMORY"):
            conn.execute(pragma)
    except BaseException:
        conn.close()
        raise
    return conn


# -- operations, run in the worker thread ---------------------------------------------------


def _get(conn: sqlite3.Connection, key: str) -> MemoryItem | None:
    rows = conn.execute(_SELECT + " WHERE id = ?", (key,)).fetchall()
    if not rows:
        return None
    _spend(conn, rows[0])
    return decode_row(rows[0])


def _count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM items").fetchone()[0])


def _write(conn: sqlite3.Connection, batch: tuple[EncodedItem, ...], where: str) -> bool:
    """Write ``batch``; one of ``TAIL_ITEMS`` or more items is indexed in the same transaction
    (return whether it was)."""
    bulk = len(batch) >= TAIL_ITEMS
    if len(batch) == 1 and not bulk and _insert(conn, batch[0]).rowcount:
        return False  # one new item: one statement, its own transaction (it takes the write lock first)
    with transaction(conn):
        rows = [_insert_values(e) for e in batch]
        if len(batch) == 1 or conn.executemany(_INSERT, rows).rowcount != len(batch):
            if len(batch) > 1:  # some ids are stored already: one at a time, in order
                conn.execute("ROLLBACK")
                conn.execute("BEGIN IMMEDIATE")
            for encoded in batch:
                _upsert(conn, encoded, where)
        if bulk:
            _index_all(conn, where, {e.id: entries_of(e) for e in batch})
    return bulk


def _index_all(conn: sqlite3.Connection, where: str, known: dict[str, Entries]) -> None:
    """Index the whole tail inside the caller's transaction; a damaged row stops at its batch
    (nothing of that batch is written), leaving it and the rows after it to the tail."""
    with contextlib.suppress(ValueError):
        while index_tail(conn, where, _INDEX_BATCH, known):
            pass


def _checkpoint_wal(conn: sqlite3.Connection) -> None:
    """Copy the WAL into the file and let the next write start it again from its beginning.

    RESTART waits for readers still using the WAL (another process's searches, say), which
    would otherwise keep every checkpoint short of its end and the WAL growing; it waits up to
    ``_CHECKPOINT_WAIT_MS``, then copies what it can, and the next checkpoint tries again.
    """
    (waits,) = conn.execute("PRAGMA busy_timeout").fetchone()
    conn.execute(f"PRAGMA busy_timeout = {_CHECKPOINT_WAIT_MS}")
    try:
        conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchall()
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(waits)}")


def _index(
    conn: sqlite3.Connection, where: str, written: dict[str, Entries], synchronous: str
) -> bool:
    # The indexes are derived from the rows, so their commit does not wait for the disk: the
    # next write's sync covers it, and if a power cut loses it the items are still in the tail.
    conn.execute("PRAGMA synchronous = NORMAL")
    try:
        with transaction(conn):
            return index_tail(conn, where, _INDEX_BATCH, written)
    finally:
        conn.execute(f"PRAGMA synchronous = {synchronous}")  # a constant from a fixed set


# A new item's position is past every stored one and every deleted one, so a position is never
# reused (``items()`` resumes after the last position it saw).
_INSERT = (
    "INSERT INTO items (seq, id, created_at, metadata, content, tags, text) VALUES ("
    "max(coalesce((SELECT max(seq) FROM items), 0), coalesce((SELECT CAST(value AS INTEGER) "
    "FROM lionmem_meta WHERE key = 'deleted_seq'), 0)) + 1, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO NOTHING"
)


def _insert(conn: sqlite3.Connection, e: EncodedItem) -> sqlite3.Cursor:
    """Insert ``e`` as a new item (its ``rowcount`` is 0 if its id is stored already)."""
    return conn.execute(_INSERT, _insert_values(e))


def _insert_values(e: EncodedItem) -> tuple[str, str, str, str, str, str]:
    return (e.id, e.created_at, e.metadata, e.content, e.tags, e.text)


def _upsert(conn: sqlite3.Connection, e: EncodedItem, where: str) -> None:
    if _insert(conn, e).rowcount:
        return  # a new item joins the tail, above every indexed one: only its row is written
    seq, old_text = conn.execute("SELECT seq, text FROM items WHERE id = ?", (e.id,)).fetchone()
    conn.execute(
        "UPDATE items SET created_at = ?, metadata = ?, content = ?, tags = ?, text = ? "
        "WHERE seq = ?",
        (e.created_at, e.metadata, e.content, e.tags, e.text, seq),
    )
    if seq > indexed_upto(conn, where):
        return  # in the tail: nothing indexed to change
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


def _delete(conn: sqlite3.Connection, key: str, where: str) -> bool:
    with transaction(conn):
        found = conn.execute("SELECT seq, text FROM items WHERE id = ?", (key,)).fetchone()
        if found is not None:
            seq, text = found
            if seq <= indexed_upto(conn, where):
                delete_text(conn, seq, text)
                conn.execute("DELETE FROM item_tags WHERE seq = ?", (seq,))
                conn.execute("DELETE FROM item_fields WHERE seq = ?", (seq,))
            conn.execute("DELETE FROM items WHERE seq = ?", (seq,))
            conn.execute(
                "INSERT INTO lionmem_meta (key, value) VALUES ('deleted_seq', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value "
                "WHERE CAST(value AS INTEGER) < CAST(excluded.value AS INTEGER)",
                (str(seq),),
            )
    return found is not None


def _search(
    conn: sqlite3.Connection, draft: SearchDraft, limit: int, where: str
) -> list[MemoryItem]:
    results: list[MemoryItem] = []
    with snapshot(conn):  # the indexed items and the tail as of one moment
        upto = indexed_upto(conn, where)
        plan = draft.finish(lambda sql, params: int(conn.execute(sql, params).fetchone()[0]), upto)
        if plan is not None:
            _collect(conn, plan, None, limit, results)
        if len(results) < limit:
            # The tail comes after every indexed item in insertion order.
            _collect(conn, draft.tail(upto), draft.wanted, limit, results)
    return results


def _collect(
    conn: sqlite3.Connection,
    plan: SearchPlan,
    wanted: frozenset[str] | None,
    limit: int,
    results: list[MemoryItem],
) -> None:
    """Append to ``results`` the rows of ``plan`` that carry a ``wanted`` tag (if given) and pass
    its filters, up to ``limit`` in all (``results`` holds fewer)."""
    confirm = plan.confirm
    cursor = conn.execute(plan.sql, plan.params)
    try:
        # One row at a time: SQLite steps to a row only when it is asked for the next one, so
        # the rows after the last one needed cost nothing.
        for row in cursor:
            _spend(conn, row)
            if wanted is not None and wanted.isdisjoint(_decode_tags(row)):
                continue
            if confirm:
                try:
                    metadata = read_json(row[2])
                except ValueError as exc:
                    msg = f"the stored metadata of item {row[0]!r} is malformed: {exc}"
                    raise MemoryAdapterError(msg) from exc
                if not isinstance(metadata, dict):
                    msg = f"the stored metadata of item {row[0]!r} is not a JSON object"
                    raise MemoryAdapterError(msg)
                if not all(metadata.get(key) == value for key, value in confirm):
                    continue
            results.append(decode_row(row))
            if len(results) == limit:
                break
    finally:
        cursor.close()


def _decode_tags(row: tuple[str, str, str, str, str]) -> list[str]:
    try:
        tags = read_json(row[4])
    except ValueError as exc:
        msg = f"the stored tags of item {row[0]!r} are malformed: {exc}"
        raise MemoryAdapterError(msg) from exc
    if not isinstance(tags, list) or not all(type(tag) is str for tag in tags):
        msg = f"the stored tags of item {row[0]!r} are not a JSON list of strings"
        raise MemoryAdapterError(msg)
    return tags


def _page(conn: sqlite3.Connection, after: int, size: int) -> list[tuple[int, MemoryItem]]:
    rows = conn.execute(
        "SELECT seq, id, created_at, metadata, content, tags FROM items "
        "WHERE seq > ? ORDER BY seq LIMIT ?",
        (after, size),
    ).fetchall()
    return [(row[0], decode_row(row[1:])) for row in rows]


class _CallersError(Exception):
    """A SQLite error raised by a stream's iterable or callback (reading another database, say),
    carried past the store's handling of its own SQLite errors and raised as it was."""

    def __init__(self, error: sqlite3.Error) -> None:
        super().__init__(str(error))
        self.error = error


def _callers(items: Iterable[MemoryItem], withdrawn: threading.Event) -> Iterator[MemoryItem]:
    """Yield what ``items`` yields; a SQLite error it raises comes out as ``_CallersError``.

    Withdrawal is checked before each item is asked for, so a cancelled stream takes none more
    from the caller's iterable (an item taken from a queue or a file would be lost).
    """
    iterator = iter(items)
    while True:
        _check_withdrawn(withdrawn)
        try:
            item = next(iterator)
        except StopIteration:
            return
        except sqlite3.Error as error:
            raise _CallersError(error) from error
        yield item


def _check_withdrawn(withdrawn: threading.Event) -> None:
    """Raise ``CancelledError`` (rolling the stream back) once its caller was cancelled."""
    if withdrawn.is_set():
        msg = "store_stream was cancelled before its commit; nothing of it was stored"
        raise asyncio.CancelledError(msg)


def _write_stream(  # noqa: PLR0913 - the stream's connection, source and three checks
    conn: sqlite3.Connection,
    items: Iterable[MemoryItem],
    skip: Callable[[MemoryItem, UnrepresentableValueError], None] | None,
    where: str,
    withdrawn: threading.Event,
    *,
    before_commit: Callable[[], None],
) -> int:
    """Write ``items`` in one transaction; ``before_commit`` may refuse the commit by raising
    (a file moved while the stream ran)."""
    # Cancelled while an earlier attempt waited for the write lock: not begun again.
    _check_withdrawn(withdrawn)
    stored = 0
    begun = False
    try:
        with transaction(conn):
            begun = True
            for item in _callers(items, withdrawn):
                try:
                    encoded = encode_item(require_item(item, _STORE, "store_stream"))
                except UnrepresentableValueError as exc:
                    if skip is None:
                        raise
                    try:
                        skip(item, exc)
                    except sqlite3.Error as error:
                        raise _CallersError(error) from error
                    continue
                _upsert(conn, encoded, where)
                stored += 1
            if stored >= TAIL_ITEMS:
                _index_all(conn, where, {})
            _check_withdrawn(withdrawn)
            before_commit()
    except sqlite3.Error as exc:
        if not begun:
            raise  # nothing consumed yet: the whole operation may be retried
        # Items were consumed and cannot be read again, so this failure is final.
        raise _translate(exc, where) from exc
    return stored
