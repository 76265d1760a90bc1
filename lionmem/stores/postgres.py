"""PostgresMemoryStore: exact, durable memory in PostgreSQL, shared by many hosts (asyncpg).

Semantics are ``InMemoryStore``'s for every non-negative limit (insertion order, replacement in
place, ``needle.lower() in str(content).lower()``, any-of tags, Python ``==`` filters), with the
same exact round trips and refusals as ``SQLiteMemoryStore`` (``UnrepresentableValueError``
before anything is written). One database holds many namespaces; every operation is scoped to the
store's. The tables are created on first use and migrated under an advisory lock
(``_postgres_schema``). Transport failures raise ``MemoryAdapterUnavailable`` and the same store
recovers when the server is back; the store's own connections commit with
``synchronous_commit=on``. Lifecycle, timeouts and guarantees: docs/postgres.md.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from types import TracebackType
from typing import Any, NoReturn, Self, TypeVar
from uuid import UUID

try:
    import asyncpg
except ImportError:  # pragma: no cover - exercised in a subprocess without asyncpg
    msg = (
        "PostgresMemoryStore needs asyncpg: install the extra with pip install 'lionmem[postgres]'"
    )
    raise ImportError(msg) from None

from lionmem.errors import (
    MemoryAdapterError,
    MemoryAdapterUnavailable,
    UnrepresentableValueError,
)
from lionmem.guard import check_query
from lionmem.stores._arguments import (
    encoded_batch,
    page_size,
    require_item,
    require_items,
    stored_key,
)
from lionmem.stores._postgres_codec import Row, row_of
from lionmem.stores._postgres_query import SELECT, plan_search
from lionmem.stores._postgres_schema import (
    ROLLBACK_WAIT,
    IncompatibleDatabaseError,
    prepare,
    transaction,
)
from lionmem.stores._sqlite_codec import decode_row, encodable, encode_item
from lionmem.stores.sqlite import MANIFEST as SQLITE_MANIFEST
from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest
from lionmem_models.memory_item import MemoryItem
from lionmem_models.memory_query import MemoryQuery

__all__ = [
    "MANIFEST",
    "MAX_NAMESPACE_BYTES",
    "SERVER_SETTINGS",
    "IncompatibleDatabaseError",
    "PostgresMemoryStore",
    "UnrepresentableValueError",
]

MANIFEST = SQLITE_MANIFEST.model_copy(update={"adapter": "lionmem.postgres"})
"""What every PostgresMemoryStore declares (ADR-0093 D1): the same as SQLiteMemoryStore."""

SERVER_SETTINGS = {
    "synchronous_commit": "on",
    "plan_cache_mode": "force_custom_plan",
    "random_page_cost": "1.1",
    "cpu_operator_cost": "0.05",
    "gin_fuzzy_search_limit": "0",
    "application_name": "lionmem",
}
"""Session settings of the store's own connections (give them to a pool you pass in)."""

MAX_NAMESPACE_BYTES = 2000
"""Longest namespace, in UTF-8 bytes of its JSON text (``"a"`` is 3): a btree entry holds at
most 2,704 bytes, and the namespace is in two (with the id, and with the insertion order)."""

_T = TypeVar("_T")
_PAGE = 256
_BATCH = 1000
_MAX_LIMIT = 2**63 - 1
# PostgreSQL's ceiling of max_connections (asyncpg makes an object per slot of a pool).
_MAX_CONNECTIONS = 2**18 - 1
_UNAVAILABLE_STATES = ("08", "53", "57", "58", "25006", "3D000", "55000", "55P03")
_RETRY_STATES = ("40001", "40P01")
_CONFLICT_RETRIES = 5
_CONFLICT_PAUSE = 0.005  # seconds, times the attempt: the longest random pause before a rerun
_NO_TABLE = "42P01"
_STORE = "PostgresMemoryStore"

_UPSERT = """
INSERT INTO lionmem_items AS i
    (namespace, id, created_at, metadata, content, tags, search, tag_keys, field_keys)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
ON CONFLICT (namespace, id) DO UPDATE SET
    created_at = EXCLUDED.created_at, metadata = EXCLUDED.metadata, content = EXCLUDED.content,
    tags = EXCLUDED.tags, search = EXCLUDED.search, tag_keys = EXCLUDED.tag_keys,
    field_keys = EXCLUDED.field_keys
"""
# Several rows in one statement; entries are newline-free (JSON escapes control characters), so
# each row's arrays travel as one newline-joined text. ORDER BY keeps the seqs in batch order.
_UPSERT_MANY = """
INSERT INTO lionmem_items AS i
    (namespace, id, created_at, metadata, content, tags, search, tag_keys, field_keys)
SELECT $1, u.id, u.created_at, u.metadata, u.content, u.tags, u.search,
       string_to_array(u.tag_keys, E'\\n'), string_to_array(u.field_keys, E'\\n')
FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
            $8::text[], $9::text[])
     WITH ORDINALITY AS u (id, created_at, metadata, content, tags, search, tag_keys,
                           field_keys, ord)
ORDER BY u.ord
ON CONFLICT (namespace, id) DO UPDATE SET
    created_at = EXCLUDED.created_at, metadata = EXCLUDED.metadata, content = EXCLUDED.content,
    tags = EXCLUDED.tags, search = EXCLUDED.search, tag_keys = EXCLUDED.tag_keys,
    field_keys = EXCLUDED.field_keys
"""
_RETRIEVE = (
    "SELECT id::text, created_at, metadata, content, tags FROM lionmem_items "
    "WHERE namespace = $1 AND id = $2"
)
_DELETE = "DELETE FROM lionmem_items WHERE namespace = $1 AND id = $2 RETURNING true"
_COUNT = "SELECT count(*) FROM lionmem_items WHERE namespace = $1"
# No row: the server process has ended; else whether it ended within the wait ($2 ms).
# Only a client process of the store's own login role: a pid the system gave to another process
# since is no other role's session (nor one the store may not end, which would fence it for good).
_END_PROCESS = (
    "SELECT pg_terminate_backend(pid, $2) FROM pg_stat_activity "
    "WHERE pid = $1 AND backend_type = 'client backend' AND usename = session_user"
)
_PAGE_SQL = f"{SELECT} WHERE namespace = $1 AND seq > $2 ORDER BY seq LIMIT $3"


def _state(exc: BaseException) -> str:
    return str(getattr(exc, "sqlstate", "") or "")


def _lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the connection or the server went away (worth a new connection).

    Not a statement past command_timeout (a TimeoutError, an OSError since Python 3.11): asyncpg
    cancels it and a read's connection stays usable (a write's is closed: ``_fence``), and
    running it again would double the wait."""
    if isinstance(
        exc, TimeoutError | asyncpg.DataError | asyncpg.exceptions.ClientConfigurationError
    ):
        return False
    # A plain InternalClientError (not one of its subclasses, which name client-side problems):
    # the connection took the server's farewell (an idle connection the server ended) before its
    # socket closed, so it refuses to start the next statement.
    return type(exc) is asyncpg.exceptions.InternalClientError or isinstance(
        exc, OSError | asyncpg.InterfaceError | asyncpg.PostgresConnectionError
    )


def _translate(
    exc: BaseException, where: str, timed_out: str = "it timed out"
) -> MemoryAdapterError:
    """The store's error for ``exc``; ``timed_out`` says which timeout a bare TimeoutError
    (asyncpg's carry no message) ran past, and another exception without a message is named
    by its type."""
    if isinstance(exc, MemoryAdapterError):
        return exc
    state = _state(exc)
    if (
        _lost(exc)
        or isinstance(exc, TimeoutError)
        or state.startswith(_UNAVAILABLE_STATES + _RETRY_STATES)
    ):
        reason = str(exc) or (timed_out if isinstance(exc, TimeoutError) else type(exc).__name__)
        if type(exc) is asyncpg.exceptions.InternalClientError:  # see _lost
            reason = f"the server ended the connection (asyncpg: {reason})"
        return MemoryAdapterUnavailable(f"PostgreSQL at {where} is unavailable: {reason}")
    return MemoryAdapterError(f"PostgreSQL at {where} failed: {exc}")


def _pause_before_rerun(
    exc: BaseException, *, lost: bool, allowed: bool, failures: collections.Counter[str]
) -> float | None:
    """How long to wait before running a failed operation again, or ``None`` not to run it again.

    A deadlock (stores writing the same items in different orders) or a serialization failure
    was rolled back by PostgreSQL: it runs again up to ``_CONFLICT_RETRIES`` times, after a short
    random pause that lets the other transaction finish first. A lost connection runs it once
    more, unless an earlier attempt failed. ``failures`` counts the attempts that failed.
    """
    if _state(exc).startswith(_RETRY_STATES):
        failures["conflict"] += 1
        if allowed and failures["conflict"] <= _CONFLICT_RETRIES:
            return random.uniform(0, _CONFLICT_PAUSE * failures["conflict"])
        return None
    failures["other"] += 1
    return 0.0 if allowed and lost and failures["other"] == 1 else None


def _row(item: MemoryItem, method: str = "store") -> Row:
    return _encoded_row(require_item(item, _STORE, method))


def _encoded_row(item: MemoryItem) -> Row:
    return row_of(encode_item(item))


def _decode_seq(row: Any) -> tuple[int, MemoryItem]:
    seq = row[0]
    if type(seq) is not int:
        msg = f"the stored row of item {row[1]!r} has a malformed seq {seq!r}"
        raise MemoryAdapterError(msg)
    return seq, decode_row(row[1:])


def _seconds(name: str, value: object) -> float:
    """``value`` as a float of seconds, or ``ValueError`` naming ``name`` if it is not a
    positive number (an int too large for a float included)."""
    shown = None
    if not isinstance(value, bool) and isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:
            # Described, not shown: past 4,300 digits repr() itself raises.
            shown = "an int too large for a float"
        else:
            if seconds > 0:
                return seconds
    msg = f"{name} must be a positive number of seconds, got {shown or repr(value)}"
    raise ValueError(msg)


def _unusable(pool: Any) -> str | None:
    """Why a pool passed in can give no connection whatever the server does, if it cannot."""
    if pool.is_closing():
        return "the pool passed in is closed: its owner closed it while the store still uses it"
    if not getattr(pool, "_initialized", True):  # asyncpg's own flag; no public one exists
        return (
            "the pool passed in is not initialized: pass the pool that "
            "await asyncpg.create_pool(...) returns, not the un-awaited call"
        )
    return None


async def _keep_session(conn: Any) -> None:
    """Pool reset: nothing. The store leaves no session state behind (asyncpg still rolls back
    an open transaction), so the default four-statement reset round trip is skipped."""


class PostgresMemoryStore:
    """A ``MemoryStore`` (ADR-0093 ``ExternalMemoryStore``) in a PostgreSQL database.

    Give either ``dsn`` (the store creates, owns and closes its asyncpg pool) or ``pool`` (an
    ``asyncpg.Pool`` that stays the caller's). ``namespace`` scopes every operation. Its writes
    take effect in call order; concurrent ``store()`` calls share commits (``_WriteQueue``).
    """

    def __init__(  # noqa: PLR0913 - independent, keyword-only settings of one connection pool
        self,
        dsn: str | None = None,
        *,
        namespace: str = "default",
        pool: Any = None,
        max_size: int = 10,
        connect_timeout: float = 5.0,
        command_timeout: float = 30.0,
    ) -> None:
        if (dsn is None) == (pool is None):
            msg = "PostgresMemoryStore takes a dsn or a pool (exactly one of them)"
            raise ValueError(msg)
        if pool is not None and not isinstance(pool, asyncpg.Pool):
            msg = f"pool must be an asyncpg.Pool, got {type(pool).__qualname__}"
            raise TypeError(msg)
        if dsn is not None and not isinstance(dsn, str):
            msg = f"dsn must be a str, got {type(dsn).__qualname__}"
            raise TypeError(msg)
        if dsn is not None and not encodable(dsn):
            msg = (
                "dsn holds a lone surrogate, which UTF-8 cannot encode (a byte that is not UTF-8 "
                "text, as Python reads one from a command line or the environment)"
            )
            raise ValueError(msg)
        if type(namespace) is not str:
            msg = f"namespace must be a str, got {type(namespace).__qualname__}"
            raise TypeError(msg)
        if not encodable(namespace):
            msg = "namespace holds a lone surrogate, which UTF-8 cannot encode"
            raise ValueError(msg)
        stored = len(_quote_namespace(namespace).encode("utf-8"))
        if stored > MAX_NAMESPACE_BYTES:
            msg = (
                f"namespace is too long: {stored} bytes as stored (UTF-8 JSON text), at most "
                f"{MAX_NAMESPACE_BYTES} (it is part of two indexes, whose entries are bounded)"
            )
            raise ValueError(msg)
        if type(max_size) is not int or not 1 <= max_size <= _MAX_CONNECTIONS:
            msg = (
                f"max_size must be an int from 1 to {_MAX_CONNECTIONS:,} (the most connections "
                f"a PostgreSQL server takes), got {max_size!r}"
            )
            raise ValueError(msg)
        connect_seconds = _seconds("connect_timeout", connect_timeout)
        command_seconds = _seconds("command_timeout", command_timeout)
        self._dsn = dsn
        self._namespace = namespace
        # A JSON string: holds any namespace (NUL included) in a text column, one to one.
        self._ns = _quote_namespace(namespace)
        self._pool: Any = pool
        self._owns_pool = pool is None
        self._max_size = max_size
        self._connect_timeout = connect_seconds
        self._command_timeout = command_seconds
        self._prepared = False
        self._analysed = False
        self._closed = False
        self._pin = _SchemaPin()
        # Ends the connections of the pool the store made, if the store is dropped unclosed.
        self._abandon: (
            weakref.finalize[[Any, asyncio.AbstractEventLoop], PostgresMemoryStore] | None
        ) = None
        self._opening: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop of the first call
        self._writes = _WriteQueue(self._write_rows)
        # Server processes of writes that did not finish (``_fence``), not seen to end yet.
        self._unended: set[int] = set()
        # Calls under way (made before close(), which waits for them), what close() waits on,
        # and whether close() has taken the pool.
        self._running = 0
        self._ended: asyncio.Event | None = None
        self._closing: asyncio.Task[None] | None = None
        self._pool_closed = False

    @property
    def manifest(self) -> MemoryAdapterManifest:
        """The ADR-0093 manifest: the same for every instance (``MANIFEST``)."""
        return MANIFEST

    @property
    def namespace(self) -> str:
        """The namespace every operation of this store is scoped to."""
        return self._namespace

    def __repr__(self) -> str:
        return f"PostgresMemoryStore(namespace={self._namespace!r})"

    def __reduce__(self) -> NoReturn:
        msg = (
            f"{self!r} cannot be copied or pickled: it owns its connection pool; share it (one "
            "store serves any number of tasks of its event loop) or open another "
            "PostgresMemoryStore on the same database"
        )
        raise TypeError(msg)

    # -- connections ------------------------------------------------------------------------

    def _where(self) -> str:
        return "the store's pool" if self._dsn is None else "the configured DSN"

    def _ran_past(self) -> str:
        if self._owns_pool:
            return f"a statement ran past command_timeout ({self._command_timeout:g} s)"
        return "a statement ran past the command_timeout of the pool passed in"

    def _check_call(self) -> None:
        """Refuse a call, before it touches any state of the store (after its arguments were
        checked), once the store is closed (``MemoryAdapterUnavailable``, even for a call that
        would not need the server) or from another event loop than the first call's
        (``MemoryAdapterError``)."""
        if self._closed:
            msg = f"{self!r} is closed"
            raise MemoryAdapterUnavailable(msg)
        refused = None if self._owns_pool else _unusable(self._pool)
        if refused is not None:
            raise MemoryAdapterError(refused)
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop:
            # asyncpg's connections and the write queue's futures belong to the loop of the
            # first call; from another loop a call would wait forever, so it is refused.
            msg = (
                f"{self!r} is used on another event loop than its first call's; asyncpg "
                "connections belong to one event loop: open one store per event loop"
            )
            raise MemoryAdapterError(msg)

    async def _get_pool(self) -> Any:
        # Every call was checked when it was made (_check_call); one made before close() runs
        # on, and only one still running when close() took the pool is refused here.
        if self._pool is not None:
            return self._pool
        if self._pool_closed:
            raise MemoryAdapterUnavailable(f"{self!r} is closed")
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                try:
                    self._pool = await asyncpg.create_pool(
                        self._dsn,
                        min_size=0,
                        max_size=self._max_size,
                        timeout=self._connect_timeout,
                        command_timeout=self._command_timeout,
                        server_settings=SERVER_SETTINGS,
                        reset=_keep_session,
                        init=self._pin,
                    )
                except Exception as exc:
                    raise _translate(exc, self._where()) from exc
                # The pool holds nothing of the store, so a store dropped unclosed is collected.
                loop = asyncio.get_running_loop()
                self._abandon = weakref.finalize(self, _end_abandoned, self._pool, loop)
        return self._pool

    async def _acquire(self, pool: Any) -> Any:
        try:
            return await pool.acquire(timeout=self._connect_timeout)
        except Exception as exc:
            refused = None if self._owns_pool else _unusable(pool)
            if refused is not None:  # the caller's mistake, not an outage
                raise MemoryAdapterError(refused) from exc
            waited = f"no connection within connect_timeout ({self._connect_timeout:g} s): "
            size = pool.get_max_size()
            if pool.get_size() == size:  # every connection made, none free during the wait
                waited += (
                    f"every connection of the pool ({size}) stayed busy (more calls at once "
                    "than the pool has connections, or calls that hold one for long)"
                )
            else:  # a new connection was needed, and the server did not give it in time
                waited += "the server did not answer"
            raise _translate(exc, self._where(), waited) from exc

    async def _call(
        self,
        operation: Callable[[Any], Awaitable[_T]],
        *,
        retry: bool | Callable[[], bool] = True,
        write: bool = False,
    ) -> _T:
        """Run ``operation`` on one pooled connection (creating the tables first if needed).

        A connection found broken (the server restarted) is replaced and, when ``retry`` allows
        (the operation is idempotent; a callable is asked after the failure), the operation runs
        once more on a new connection; one PostgreSQL aborted for a deadlock runs again up to
        ``_CONFLICT_RETRIES`` times. Tables found missing (the database was recreated or
        restored empty) are created again and the operation runs once more, whatever ``retry``
        says (it wrote nothing). An exception the operation wraps in ``_Own`` is raised as it
        is, untranslated. ``close()`` waits for it (``_started``).

        A ``write`` that runs past ``command_timeout``, or whose caller is cancelled, may not
        even have reached the server process yet, where asyncpg's cancellation cannot stop it:
        the store closes the connection (``_fence``) and ends that process (``_confirm_ended``,
        or ``_check_unended`` at the next write), so the write cannot take effect after later
        ones. Until the server confirms that it ended, later writes are refused.
        """
        with self._started():
            if write and self._unended:
                await self._check_unended()
            return await self._run_call(operation, retry, write=write)

    async def _process_ended(self, pool: Any, pid: int) -> bool:
        """End the server process ``pid`` (a connection of this store); return whether the
        server confirmed, within ``ROLLBACK_WAIT``, that it has ended."""
        try:
            async with asyncio.timeout(ROLLBACK_WAIT):
                conn = await pool.acquire()
                try:
                    wait_ms = int(ROLLBACK_WAIT * 500)  # the other half: the connection
                    ended = await conn.fetchval(_END_PROCESS, pid, wait_ms) is not False
                except BaseException:
                    # Closed, not released: a release would wait for the cancellation of a
                    # query the server may not answer.
                    conn.terminate()
                    raise
                await pool.release(conn)
                return ended
        except Exception:
            return False

    async def _check_unended(self) -> None:
        """Raise ``MemoryAdapterUnavailable`` while a write that did not finish (``_fence``)
        may still take effect (its server process has not been seen to end)."""
        pool = await self._get_pool()
        for pid in sorted(self._unended):
            if await self._process_ended(pool, pid):
                self._unended.discard(pid)
        if self._unended:
            msg = (
                f"PostgreSQL at {self._where()} is unavailable: a write of this store that did "
                "not finish (past command_timeout, or its caller cancelled) may still take "
                "effect, and the server has not confirmed that it ended that connection "
                f"(process {min(self._unended)}); nothing was written, so that this store's "
                "writes take effect in call order"
            )
            raise MemoryAdapterUnavailable(msg)

    @contextlib.contextmanager
    def _write_made(self) -> Iterator[None]:
        """Check a write call (``_check_call``) and count it as under way (``_started``) from
        now: it may wait behind other writes before its ``_call`` begins."""
        self._check_call()
        with self._started():
            yield

    @contextlib.contextmanager
    def _started(self) -> Iterator[None]:
        """Count the block as an operation under way, which ``close()`` waits for."""
        self._running += 1
        try:
            yield
        finally:
            self._running -= 1
            if not self._running and self._ended is not None:
                self._ended.set()

    async def _run_call(  # noqa: PLR0912 - one loop for every way a pooled call can fail
        self,
        operation: Callable[[Any], Awaitable[_T]],
        retry: bool | Callable[[], bool],
        *,
        write: bool,
    ) -> _T:
        pool = await self._get_pool()
        recreated = False
        failures: collections.Counter[str] = collections.Counter()
        while True:
            conn = await self._acquire(pool)
            # A write's server process, read now: a failed transaction may close conn.
            process = conn.get_server_pid() if write else 0
            own: Exception | None = None
            pause: float | None = 0.0
            released = False
            try:
                if not self._prepared:
                    if not self._owns_pool:
                        await _require_settings(conn)
                    await prepare(conn, self._where())
                    self._prepared = True
                return await operation(conn)
            except _Own as carried:
                own = carried.error
            except asyncio.CancelledError:
                if write:  # the statement may still be unread in the server's process
                    released = True
                    self._fence(conn, process)
                raise
            except Exception as exc:
                if _state(exc) == _NO_TABLE and not recreated and await _tables_gone(conn):
                    # The tables are gone (the database was recreated or restored empty):
                    # create them again, as on first use (the new table has no statistics),
                    # and run the operation again whatever ``retry`` says: nothing it wrote is
                    # lost or doubled, since a statement that wrote holds a lock that keeps the
                    # table from being dropped until its transaction ends. (A missing relation
                    # of another kind, a trigger's, say, is an error like any other.)
                    self._prepared = self._analysed = False
                    recreated = True
                else:
                    lost = _lost(exc)
                    if lost:
                        await pool.expire_connections()  # the others are probably stale too
                    allowed = retry() if callable(retry) else retry
                    pause = _pause_before_rerun(exc, lost=lost, allowed=allowed, failures=failures)
                if pause is None:
                    error = _translate(exc, self._where(), self._ran_past())
                    if write and isinstance(exc, TimeoutError):
                        released = True
                        self._fence(conn, process)
                        await self._confirm_ended(pool, process, error)
                    if error is exc:
                        # The store's own error (a database it refuses, a malformed row) goes
                        # on as it is, with its own cause, if any: it is not its own cause.
                        raise
                    raise error from exc
            finally:
                # After a read's timeout, release waits for the statement's cancellation, for
                # which asyncpg connects again: a server that stopped answering would hold the
                # caller a whole command_timeout more. Past ROLLBACK_WAIT (or if the connection
                # is broken) release closes the connection instead, and may re-raise.
                if not released:
                    with contextlib.suppress(Exception):
                        await pool.release(conn, timeout=ROLLBACK_WAIT)
            if own is not None:
                raise own  # outside the handler, so the carrier is not chained to it
            await asyncio.sleep(pause or 0)

    def _fence(self, conn: Any, pid: int) -> None:
        """Close ``conn``, whose write did not finish (past ``command_timeout``, or its caller
        cancelled), and refuse this store's later writes until its server process ``pid`` is
        seen to have ended (``_check_unended``): its statement may not have been read yet."""
        self._unended.add(pid)
        with contextlib.suppress(Exception):  # closed already (a failed transaction closes it)
            conn.terminate()  # which also hands its place in the pool back

    async def _confirm_ended(self, pool: Any, pid: int, error: Exception) -> None:
        """End the fenced server process ``pid`` now; unconfirmed, say so on ``error``."""
        if await self._process_ended(pool, pid):
            self._unended.discard(pid)
            return
        error.add_note(
            f"the server did not confirm that it ended the connection (process {pid}): the "
            "write may still take effect, and this store's later writes are refused until "
            "the server confirms it"
        )

    # -- lifecycle --------------------------------------------------------------------------

    async def open(self) -> None:
        """Connect and create (or migrate) the tables now instead of on the first call."""
        self._check_call()
        await self._call(_nothing)

    async def close(self) -> None:
        """Close the pool the store created (a pool passed in stays open); idempotent.

        Calls made before it, still connecting or running, end first (``command_timeout`` and
        ``connect_timeout`` bound the wait); calls made after it are refused. A close() made
        while another one runs returns when that one does.
        """
        self._closed = True
        loop = asyncio.get_running_loop()
        if self._loop is not None and loop is not self._loop:
            # The calls under way belong to the first loop, which this one cannot wait on.
            await self._close_pool()
            return
        if self._closing is None:
            self._closing = loop.create_task(self._close_after_calls())
        await asyncio.shield(self._closing)

    async def _close_after_calls(self) -> None:
        if self._running:
            self._ended = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                wait = self._command_timeout + self._connect_timeout
                await asyncio.wait_for(self._ended.wait(), wait)
        await self._close_pool()

    async def _close_pool(self) -> None:
        pool, self._pool = self._pool, None
        self._pool_closed = True
        if self._abandon is not None:
            self._abandon.detach()
        if pool is not None and self._owns_pool:
            try:
                await asyncio.wait_for(pool.close(), self._command_timeout)
            except (Exception, TimeoutError):
                pool.terminate()

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
        """Store ``item`` (replacing an item with its id in place), commit, and return its id."""
        row = _row(item)
        with self._write_made():
            await self._writes.submit(row)
        return item.id

    async def retrieve(self, item_id: UUID | str) -> MemoryItem | None:
        """Return a new ``MemoryItem`` equal to the stored one, or ``None`` (also for a non-id)."""
        key = stored_key(item_id)
        self._check_call()
        if key is None:
            return None
        ns = self._ns
        row = await self._call(lambda conn: conn.fetchrow(_RETRIEVE, ns, key))
        return None if row is None else decode_row(row)

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        """Return up to ``query.limit`` matching items in insertion order, as InMemoryStore does.

        Raises ``UnsupportedMemoryQuery`` for a negative limit; ``limit=0`` returns ``[]`` at once.
        """
        plan = plan_search(query) if check_query(query, MANIFEST) else None
        self._check_call()
        if plan is None:
            return []
        limit = min(query.limit, _MAX_LIMIT)
        ns = self._ns

        async def collect(conn: Any, *, one_page: bool) -> tuple[list[MemoryItem], bool]:
            """The matches read from the start, and whether they are all there are: one
            statement of ``limit`` rows or (not ``one_page``) as many as it takes."""
            results: list[MemoryItem] = []
            after, size = 0, limit
            while True:
                rows = await conn.fetch(plan.sql, ns, after, size, *plan.params)
                for row in rows:
                    item = decode_row(row[1:])
                    try:
                        kept = plan.keep(item)
                    except Exception as exc:  # the query's own values (an __eq__ that raises)
                        raise _Own(exc) from None
                    if kept:
                        results.append(item)
                        if len(results) == limit:
                            return results, True
                if len(rows) < size:
                    return results, True
                if one_page:
                    return results, False
                # Python rejected some rows: read on after the last one, twice as many.
                after, size = rows[-1][0], min(size * 2, _MAX_LIMIT)

        async def run(conn: Any) -> list[MemoryItem]:
            results, complete = await collect(conn, one_page=True)
            if not complete:
                # Python rejected rows of the first page, so more pages are needed. Each page
                # on its own would see the writes committed before it (part of a transaction,
                # an item deleted and stored again twice): read them all again in one snapshot.
                async with transaction(conn, isolation="repeatable_read", readonly=True):
                    results, _ = await collect(conn, one_page=False)
            return results

        return await self._call(run)

    # -- store-specific extras --------------------------------------------------------------

    async def store_many(self, items: Iterable[MemoryItem]) -> list[UUID]:
        """Store several items in one transaction: all of them, or (on any error) none.

        Every item is checked and encoded before anything is written. A repeated id is stored
        once, at its first position, holding its last value, as successive ``store`` calls would.
        """
        batch, rows = encoded_batch(items, _STORE, "store_many", _encoded_row)
        with self._write_made():
            if rows:
                async with self._writes.turn():
                    await self._write_rows(rows)
        if len(rows) >= _BATCH and not self._analysed:
            await self._analyse()
        return [item.id for item in batch]

    async def store_stream(
        self,
        items: Iterable[MemoryItem],
        *,
        on_unrepresentable: Callable[[MemoryItem, UnrepresentableValueError], None] | None = None,
    ) -> int:
        """Store every item ``items`` yields in one transaction; return how many it wrote.

        Unlike ``store_many`` the items are never all in memory: ``items`` is read on the event
        loop's thread, inside the transaction, ``_BATCH`` items between two statements (so it
        must not block for long, nor use this store). Any exception it raises, a non-item
        (``TypeError``) or an item that cannot be stored exactly rolls everything back and is
        raised as it is; with ``on_unrepresentable`` such an item is given to it and skipped
        instead. A repeated id is stored once, at its first position, holding its last value
        (and counted each time it is written). A connection found broken before the first item
        was read is replaced and the stream runs again; once items were read, a database
        failure is raised and not retried (they cannot be read again), except tables found
        missing: they are created again and the stream goes on with the items it holds.
        """
        self._check_call()
        ns = self._ns
        chunks = _chunks(require_items(items, "store_stream"), on_unrepresentable)
        reading = False
        chunk: list[Row] | None = None  # read, and not yet written by a statement that ran
        own: Exception | None = None  # raised by the items or on_unrepresentable

        async def write(conn: Any) -> int:
            nonlocal reading, chunk, own
            stored = 0
            async with transaction(conn):
                reading = True
                while True:
                    if chunk is None:
                        try:
                            chunk = next(chunks, None)
                        except Exception as exc:
                            own = exc
                            raise _Own(exc) from None
                        if chunk is None:
                            return stored
                    # Tables found missing fail this first statement only: the run again
                    # starts with the chunk it holds.
                    await conn.execute(_UPSERT_MANY, ns, *_columns(_unique(chunk)))
                    stored += len(chunk)
                    chunk = None

        # The caller's own exception leaves the turn as a return: one that is a
        # MemoryAdapterUnavailable (of another store the items come from) says nothing of this
        # store's server, so the writes waiting behind the stream must not fail with it.
        stored = 0
        with self._started():  # checked above; it may wait behind other writes
            async with self._writes.turn():
                try:
                    stored = await self._call(write, retry=lambda: not reading, write=True)
                except Exception as exc:
                    if exc is not own:
                        raise
        if own is not None:
            raise own
        if stored >= _BATCH and not self._analysed:
            await self._analyse()
        return stored

    async def _write_rows(self, rows: list[Row]) -> None:
        """Upsert ``rows`` in one transaction (one statement for up to ``_BATCH`` rows)."""
        ns = self._ns
        if len(rows) == 1:
            await self._call(lambda conn: conn.execute(_UPSERT, ns, *rows[0]), write=True)
            return
        unique = _unique(rows)
        columns = [
            _columns(unique[start : start + _BATCH]) for start in range(0, len(unique), _BATCH)
        ]
        if len(columns) == 1:  # one statement is one transaction: no BEGIN and COMMIT round trips
            await self._call(lambda conn: conn.execute(_UPSERT_MANY, ns, *columns[0]), write=True)
            return

        async def write(conn: Any) -> None:
            async with transaction(conn):
                for column in columns:
                    await conn.execute(_UPSERT_MANY, ns, *column)

        await self._call(write, write=True)

    async def _analyse(self) -> None:
        """``_analyse_if_never`` after a committed bulk load, whose result stands even when
        this fails (the next bulk load tries again)."""
        with contextlib.suppress(MemoryAdapterError):
            self._analysed = await self._call(_analyse_if_never)

    async def delete(self, item_id: UUID | str) -> bool:
        """Delete the item with this id; return whether there was one."""
        key = stored_key(item_id)
        ns = self._ns
        # Not retried on a lost connection: had it committed the delete, a retry would answer
        # False (tables found missing are another matter: the statement never ran).
        with self._write_made():
            if key is None:
                return False
            async with self._writes.turn():
                found = await self._call(
                    lambda conn: conn.fetchval(_DELETE, ns, key), retry=False, write=True
                )
        return found is True

    async def count(self) -> int:
        """Return the number of items in the store's namespace."""
        self._check_call()
        ns = self._ns
        return int(await self._call(lambda conn: conn.fetchval(_COUNT, ns)))

    async def items(self, *, batch_size: int = _PAGE) -> AsyncIterator[MemoryItem]:
        """Yield every item of the namespace in insertion order, ``batch_size`` rows per query.

        Keyset paging on the insertion order, one statement a page: every item committed
        before the sweep began is yielded exactly once (a replaced one in its place with the
        value its page read), unless it is deleted before its page is read. An item stored
        meanwhile may be yielded or not: rows are numbered when written, not when committed,
        so a transaction committed during the sweep may show in part. No item is yielded
        twice, except one deleted and stored again meanwhile: that is a new item, which may
        come again later (as in ``InMemoryStore``, which puts it at the end).
        """
        batch_size = page_size(batch_size, _MAX_LIMIT)  # past PostgreSQL's bigint: all at once
        ns = self._ns
        last = 0

        def page(after: int) -> Callable[[Any], Awaitable[Any]]:
            return lambda conn: conn.fetch(_PAGE_SQL, ns, after, batch_size)

        while True:
            self._check_call()
            rows = await self._call(page(last))
            for row in rows:
                last, item = _decode_seq(row)
                yield item
            if len(rows) < batch_size:
                return


class _SchemaPin:
    """Pool init: search only the schema that the store's first connection found first on its
    ``search_path``, so that tables dropped from it are found missing (and created there again),
    never found further along the path (another application's). The pool holds it, not the
    store."""

    def __init__(self) -> None:
        self.quoted: str | None = None  # where the first connection found its tables

    async def __call__(self, conn: Any) -> None:
        if self.quoted is None:
            name, quoted = await conn.fetchrow(
                "SELECT current_schema(), quote_ident(current_schema())"
            )
            if name is None or name.startswith("pg_temp"):
                return  # prepare refuses it; the next new connection looks again
            self.quoted = quoted
        await conn.execute(f"SET search_path = {self.quoted}")


def _end_abandoned(pool: Any, loop: asyncio.AbstractEventLoop) -> None:
    """Finalizer of a store dropped without ``close()``: end the connections of the pool it made
    at once, so the server sees them go. The collector may run it in any thread: the pool's
    loop does it, unless that loop is closed (then the sockets close as they are collected)."""
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
        if not loop.is_closed():
            loop.call_soon_threadsafe(pool.terminate)


async def _nothing(conn: Any) -> None:
    return None


async def _require_settings(conn: Any) -> None:
    """Refuse a pool passed in whose sessions break a promise the store's own connections keep:
    commits that do not wait for the disk (an acknowledged write must survive a crash), or GIN
    index scans that return a random subset of their rows (searches must be exact)."""
    commit, fuzzy = await conn.fetchrow(
        "SELECT pg_catalog.current_setting('synchronous_commit'), "
        "pg_catalog.current_setting('gin_fuzzy_search_limit')"
    )
    if commit == "off":
        broken = (
            "commits with synchronous_commit=off, so an acknowledged write could be lost in a "
            "server crash"
        )
    elif fuzzy != "0":
        broken = f"runs with gin_fuzzy_search_limit={fuzzy}, so searches would miss matches"
    else:
        return
    msg = (
        f"the pool passed in {broken}: create it with "
        "server_settings=lionmem.stores.postgres.SERVER_SETTINGS"
    )
    raise MemoryAdapterError(msg)


_NEVER_ANALYSED = "SELECT reltuples < 0 FROM pg_class WHERE oid = 'lionmem_items'::regclass"


async def _tables_gone(conn: Any) -> bool:
    """Whether ``lionmem_items`` is missing from the connection's search path."""
    try:
        return bool(await conn.fetchval("SELECT to_regclass('lionmem_items') IS NULL"))
    except Exception:  # the connection failed as well: not a case of missing tables
        return False


async def _analyse_if_never(conn: Any) -> bool:
    """Give the planner statistics if the table has none yet (a first bulk load); return
    whether it has them now.

    Without any, PostgreSQL guesses a few dozen rows and may walk the insertion order for a
    selective search (25-40 ms at 20,000 items instead of under 1 ms) until autovacuum's first
    ANALYZE, up to a minute later. Once analysed, its estimates follow the table's growth. A
    table another session holds for a VACUUM or ANALYZE is skipped, not waited for.
    """
    if not await conn.fetchval(_NEVER_ANALYSED):
        return True
    await conn.execute("ANALYZE (SKIP_LOCKED) lionmem_items")
    return not await conn.fetchval(_NEVER_ANALYSED)


class _Own(Exception):
    """Carries an exception of an operation's own (not the database's) out of ``_call``,
    which raises ``error`` unchanged instead of translating it."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def _chunks(
    items: Iterable[MemoryItem],
    skip: Callable[[MemoryItem, UnrepresentableValueError], None] | None,
) -> Iterator[list[Row]]:
    """The rows of ``items``, up to ``_BATCH`` at a time, each item encoded as it is read; an
    unrepresentable one is given to ``skip`` (and left out), or raised without it."""
    chunk: list[Row] = []
    for item in items:
        try:
            row = _row(item, "store_stream")
        except UnrepresentableValueError as exc:
            if skip is None:
                raise
            skip(item, exc)
            continue
        chunk.append(row)
        if len(chunk) == _BATCH:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _quote_namespace(namespace: str) -> str:
    return json.dumps(namespace, ensure_ascii=False)


def _columns(rows: list[Row]) -> tuple[list[str], ...]:
    return (
        [r.id for r in rows],
        [r.created_at for r in rows],
        [r.metadata for r in rows],
        [r.content for r in rows],
        [r.tags for r in rows],
        [r.search for r in rows],
        ["\n".join(r.tag_keys) for r in rows],
        ["\n".join(r.field_keys) for r in rows],
    )


_Stored = tuple[Row, asyncio.Future[None]]
"""A waiting ``store()`` call: its row, and the future its batch's commit settles."""


class _WriteQueue:
    """The store's writes, committed one after another in call order.

    ``store()`` calls made while a write is under way wait for it and are then committed
    together, in one transaction, in call order (as LangGraph batches its puts): one synchronous
    commit serves many writers. Any other write (``store_many``, ``store_stream``, ``delete``)
    runs in its caller's task during its ``turn()``: after the writes called before it, while
    those called after it wait. A call finding nothing under way writes at once. Each
    ``store()`` returns once its own batch has committed; a call cancelled while it waits is
    withdrawn. A batch the database refuses is retried row by row, so one refused item fails
    only its own call. A write failing with ``MemoryAdapterUnavailable`` (the server is down or
    too slow) fails the calls waiting behind it at once with that error, without running them:
    each would wait out its own timeout again. Calls made after it run as usual."""

    def __init__(self, write: Callable[[list[Row]], Awaitable[None]]) -> None:
        self._write = write
        # Waiting calls in call order: a store() call, or another write's future, set when its
        # turn comes. Cancelling a caller cancels its future at once: it is then left out.
        self._waiting: collections.deque[_Stored | asyncio.Future[None]] = collections.deque()
        self._drain_task: asyncio.Future[None] | None = None
        self._alone = False  # a call is writing without the drain task (nothing was under way)
        self._turn_over: asyncio.Future[None] | None = None  # set when the turn given ends

    def _busy(self) -> bool:
        return self._drain_task is not None or self._alone

    async def submit(self, row: Row) -> None:
        """Write ``row``; committed with the ``store()`` calls waiting beside it, if any."""
        if not self._busy():  # what turn() does, without its context manager's 6 µs
            self._alone = True
            try:
                await self._write([row])
            except MemoryAdapterUnavailable as exc:
                self._fail_waiting(exc)
                raise
            finally:
                self._end_alone()
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((row, future))
        # Cancelling the caller cancels ``future`` at once, and the drain leaves it out of the
        # next batch: it is not written after its caller gave up (and, say, deleted the id).
        await future

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold the store's writes for the block: it starts once the writes called before it
        are done, and the writes called meanwhile wait until it ends."""
        if not self._busy():
            self._alone = True
            try:
                yield
            except MemoryAdapterUnavailable as exc:
                self._fail_waiting(exc)
                raise
            finally:
                self._end_alone()
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        try:
            await turn  # raises the error of a write failed before it by an outage
        except asyncio.CancelledError:
            # Cancelled just after its turn came: give it back.
            if not turn.cancelled() and turn.exception() is None:
                self._end_turn()
            raise
        try:
            yield
        except MemoryAdapterUnavailable as exc:
            self._fail_waiting(exc)
            raise
        finally:
            self._end_turn()

    def _end_alone(self) -> None:
        self._alone = False
        self._start()

    def _end_turn(self) -> None:
        # Done already only if the drain was cancelled, as when its event loop shuts down.
        if self._turn_over is not None and not self._turn_over.done():
            self._turn_over.set_result(None)
        self._turn_over = None

    def _start(self) -> None:
        if self._waiting and self._drain_task is None:
            # Held here until done: the event loop keeps only a weak reference to a task.
            self._drain_task = asyncio.ensure_future(self._drain())

    async def _drain(self) -> None:
        try:
            while self._waiting:
                write = self._take()
                if isinstance(write, asyncio.Future):
                    self._turn_over = asyncio.get_running_loop().create_future()
                    write.set_result(None)
                    await self._turn_over
                elif write:
                    await self._commit(write)
                # The callers just answered run first: those that store again join the next
                # batch instead of committing alone after it.
                await asyncio.sleep(0)
        finally:
            self._drain_task = None

    def _take(self) -> list[_Stored] | asyncio.Future[None]:
        """The next write: the turn of the first waiting call if it is not a ``store()``,
        else up to ``_BATCH`` ``store()`` calls, in call order, up to the next other write or
        the next call storing an id the batch holds; calls cancelled meanwhile are left out."""
        batch: list[_Stored] = []
        ids: set[str] = set()
        while self._waiting and len(batch) < _BATCH:
            entry = self._waiting[0]
            if isinstance(entry, asyncio.Future):
                if batch and not entry.done():
                    break  # its turn comes after this batch
                self._waiting.popleft()
                if not entry.done():
                    return entry
            elif entry[0].id in ids and not entry[1].done():
                break  # a second write of an id: each is written, and may be refused, on its own
            else:
                self._waiting.popleft()
                if not entry[1].done():
                    batch.append(entry)
                    ids.add(entry[0].id)
        return batch

    async def _commit(self, batch: list[_Stored]) -> None:
        try:
            await self._write([row for row, _ in batch])
        except MemoryAdapterUnavailable as exc:
            self._fail_waiting(exc, batch)
        except Exception as exc:
            if len(batch) > 1:
                await self._commit_each(batch)
                return
            _settle(batch, exc)
        else:
            _settle(batch, None)

    async def _commit_each(self, batch: list[_Stored]) -> None:
        """Commit each of ``batch`` on its own, so a refused row fails only its own call."""
        for done, (row, future) in enumerate(batch):
            if future.done():  # its caller was cancelled: not written after it gave up
                continue
            try:
                await self._write([row])
            except MemoryAdapterUnavailable as exc:
                self._fail_waiting(exc, batch[done:])
                return
            except Exception as exc:
                future.set_exception(exc)
            else:
                future.set_result(None)

    def _fail_waiting(self, exc: MemoryAdapterUnavailable, batch: Sequence[_Stored] = ()) -> None:
        """Fail ``batch`` and every call waiting now with ``exc``, without running them."""
        _settle(batch, exc)
        while self._waiting:
            entry = self._waiting.popleft()
            future = entry if isinstance(entry, asyncio.Future) else entry[1]
            if not future.done():
                future.set_exception(exc)


def _settle(batch: Sequence[_Stored], exc: Exception | None) -> None:
    """Answer the calls of ``batch`` still waiting: committed, or failed with ``exc``."""
    for _, future in batch:
        if future.done():
            continue
        if exc is None:
            future.set_result(None)
        else:
            future.set_exception(exc)


def _unique(rows: list[Row]) -> list[Row]:
    """``rows`` with a repeated id kept at its first position, holding its last value."""
    unique: dict[str, Row] = {}
    for row in rows:
        unique[row.id] = row
    return list(unique.values())
