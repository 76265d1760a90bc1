"""The PostgreSQL store's tables, its version check and its migrations.

A lionmem database holds two tables in the first schema of the connection's ``search_path``:
``lionmem_meta`` (``schema_version`` and ``unicode_version``, the Unicode database of the Python
that lowered the search text) and ``lionmem_items`` (one row per item and namespace; the columns
are described in docs/postgres.md). ``prepare`` runs once per store: it reads the version without
locking; only when something must change does it take a transaction-scoped advisory lock, look
again, and run every missing step in that one transaction, so concurrent first uses of a fresh
database serialise instead of failing. A database written by a newer lionmem (or by a Python with
a newer Unicode database), or one whose encoding is not UTF8, raises
``IncompatibleDatabaseError`` and is not written to. ``transaction`` is the store's transaction,
whose end never waits long for a server that stopped answering.
"""

from __future__ import annotations

import asyncio
import contextlib
import unicodedata
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from lionmem.errors import IncompatibleDatabaseError, MemoryAdapterError
from lionmem.stores._postgres_codec import search_text
from lionmem.stores._sqlite_codec import read_json

__all__ = [
    "LOCK_KEY",
    "MIGRATIONS",
    "ROLLBACK_WAIT",
    "SCHEMA_VERSION",
    "IncompatibleDatabaseError",
    "prepare",
    "transaction",
]

LOCK_KEY = 0x4C4D454D_00000001
"""The advisory lock every migration holds ("LMEM", 1): one migrating session per database."""

# Columns of text searched or compared byte for byte use the "C" collation, so that neither a
# nondeterministic database collation nor locale rules can change equality or LIKE.
_V1 = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    """
    CREATE TABLE lionmem_meta (
        key text PRIMARY KEY,
        value text NOT NULL
    )
    """,
    """
    CREATE TABLE lionmem_items (
        seq bigint GENERATED ALWAYS AS IDENTITY,
        namespace text COLLATE "C" NOT NULL,
        id uuid NOT NULL,
        created_at text NOT NULL,
        metadata text NOT NULL,
        content text NOT NULL,
        tags text NOT NULL,
        search text COLLATE "C" NOT NULL,
        tag_keys text[] COLLATE "C" NOT NULL,
        field_keys text[] COLLATE "C" NOT NULL,
        PRIMARY KEY (namespace, id)
    )
    """,
    "CREATE UNIQUE INDEX lionmem_items_order ON lionmem_items (namespace, seq)",
    # {trgm}: pg_trgm's schema, which need not be on the search_path (the extension may exist
    # already, in another schema than the tables').
    "CREATE INDEX lionmem_items_search ON lionmem_items USING gin (search {trgm}.gin_trgm_ops)",
    "CREATE INDEX lionmem_items_tags ON lionmem_items USING gin (tag_keys)",
    "CREATE INDEX lionmem_items_fields ON lionmem_items USING gin (field_keys)",
)

# Version 2: the array columns' planner statistics from 300,000 sampled rows instead of 30,000
# (up to 10,000 most common elements): with 100, metadata equality for 1 item in 1,000 got a
# walk of the insertion order after some ANALYZE runs and the index after others. (``search``
# keeps 100: the planner runs a needle over every histogram entry, 0.45 ms a text search with
# 1,000.) Pending lists of the GIN indexes capped at 1 MB instead of 4 MB: every search reads
# them whole until they are merged (by the write that fills one, or by autovacuum).
_V2 = (
    "ALTER TABLE lionmem_items ALTER COLUMN tag_keys SET STATISTICS 1000, "
    "ALTER COLUMN field_keys SET STATISTICS 1000",
    *(
        f"ALTER INDEX lionmem_items_{name} SET (gin_pending_list_limit = 1024)"
        for name in ("search", "tags", "fields")
    ),
)

Connection = Any
"""An asyncpg connection (typed loosely: asyncpg ships no type information)."""

ROLLBACK_WAIT = 1.0
"""Seconds the end of a failed call may wait for the server (a transaction's rollback, a timed-out
statement's cancellation), before its connection is closed instead."""


async def _migrate_to_1(conn: Connection) -> None:
    create_extension, *statements = _V1
    await conn.execute(create_extension)
    trgm = await conn.fetchval(
        "SELECT quote_ident(n.nspname) FROM pg_catalog.pg_extension e "
        "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'"
    )
    for statement in statements:
        await conn.execute(statement.replace("{trgm}", trgm))


async def _migrate_to_2(conn: Connection) -> None:
    for statement in _V2:
        await conn.execute(statement)


# MIGRATIONS[n] takes a version-n database to version n + 1. They all run in one transaction.
MIGRATIONS: list[Callable[[Connection], Awaitable[None]]] = [_migrate_to_1, _migrate_to_2]
SCHEMA_VERSION = len(MIGRATIONS)


def _unicode_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


async def _read_meta(conn: Connection, where: str) -> dict[str, str] | None:
    """Return the meta table's rows, or ``None`` for a database without lionmem's tables."""
    # A scan of pg_class, not to_regclass(): the catalog cache may still hold "no such table"
    # from before another session committed its migration (an advisory lock does not refresh it).
    names = await conn.fetch(
        "SELECT relname FROM pg_catalog.pg_class WHERE relnamespace = "
        "(SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = current_schema()) "
        "AND relname IN ('lionmem_meta', 'lionmem_items')"
    )
    found = {row[0] for row in names}
    meta, items = "lionmem_meta" in found, "lionmem_items" in found
    if not meta:
        if items:
            msg = f"{where} has a table lionmem_items but no lionmem_meta: it is not lionmem's"
            raise IncompatibleDatabaseError(msg)
        return None
    rows = await conn.fetch("SELECT key, value FROM lionmem_meta")
    meta_rows = {row[0]: row[1] for row in rows}
    if not items:
        _needs(meta_rows, where)  # a newer or unreadable version is refused as such first
        msg = (
            f"{where} has a table lionmem_meta but no lionmem_items: restore both tables, or "
            "drop lionmem_meta to start empty"
        )
        raise IncompatibleDatabaseError(msg)
    return meta_rows


def _needs(meta: dict[str, str] | None, where: str) -> bool:
    """Return whether the database must be created or migrated; raise if it is not readable."""
    if meta is None:
        return True
    raw = meta.get("schema_version", "")
    if not raw.isdigit():
        msg = f"{where} has a lionmem_meta table without a valid schema_version ({raw!r})"
        raise IncompatibleDatabaseError(msg)
    version = int(raw)
    if version > SCHEMA_VERSION:
        msg = (
            f"{where} was written by a newer lionmem (schema version {version}; this version "
            f"reads up to {SCHEMA_VERSION}): upgrade lionmem to open it"
        )
        raise IncompatibleDatabaseError(msg)
    recorded = meta.get("unicode_version", "")
    if _unicode_key(recorded) > _unicode_key(unicodedata.unidata_version):
        msg = (
            f"{where} holds search text lowered with Unicode {recorded}, newer than this "
            f"Python's {unicodedata.unidata_version}: open it with a newer Python"
        )
        raise IncompatibleDatabaseError(msg)
    return version < SCHEMA_VERSION or recorded != unicodedata.unidata_version


# Both walk the (namespace, seq) index: a page reads on from the last row, an update finds its row.
_RELOWER_PAGE = (
    "SELECT namespace, seq, content, search FROM lionmem_items "
    "WHERE (namespace, seq) > ($1, $2) ORDER BY namespace, seq LIMIT 1000"
)
# Only the content read: a store may replace the item between the page and the update (the
# migration locks no rows), and its write's search text is then the one to keep.
_RELOWER_SET = (
    "UPDATE lionmem_items SET search = $3 WHERE namespace = $1 AND seq = $2 AND content = $4"
)


async def _relower(conn: Connection) -> None:
    """Recompute every item's search text with this Python's ``str.lower()``."""
    last: tuple[str, int] = ("", 0)  # below every row: a namespace is a JSON string
    while True:
        rows = await conn.fetch(_RELOWER_PAGE, *last)
        if not rows:
            return
        changed = []
        for namespace, seq, content, old in rows:
            try:
                new = search_text(read_json(content))
            except ValueError as exc:
                msg = f"the stored content at position {seq} is malformed: {exc}"
                raise MemoryAdapterError(msg) from exc
            if new != old:
                changed.append((namespace, seq, new, content))
        if changed:
            await conn.executemany(_RELOWER_SET, changed)
        last = (rows[-1][0], rows[-1][1])


@contextlib.asynccontextmanager
async def transaction(conn: Connection, **options: Any) -> AsyncIterator[None]:
    """``conn.transaction(**options)`` that never waits long for the server once it failed.

    After an exception in the block the rollback may take ``ROLLBACK_WAIT`` seconds (after a
    timeout it waits for the statement's cancellation, for which asyncpg connects again: a
    server that stopped answering would take a whole ``command_timeout`` more); past that, or
    if it fails, the connection is closed, which rolls back too, and the block's exception is
    raised. A commit that times out or is cancelled closes the connection as well.
    """
    started = conn.transaction(**options)
    # Entered and left as ``async with`` would (asyncpg then knows the transaction is managed,
    # also when BEGIN itself is cancelled), except for the bounded rollback.
    await started.__aenter__()
    try:
        yield
    except BaseException as exc:
        try:
            async with asyncio.timeout(ROLLBACK_WAIT):
                await started.__aexit__(type(exc), exc, exc.__traceback__)
        except asyncio.CancelledError:  # the caller's cancellation goes on, whatever the block's
            _close(conn)
            raise
        except Exception:
            _close(conn)
        raise
    try:
        await started.__aexit__(None, None, None)
    except (TimeoutError, asyncio.CancelledError):
        _close(conn)
        raise


def _close(conn: Connection) -> None:
    """Close ``conn`` at once, unless it is closed already (asyncpg then refuses to)."""
    with contextlib.suppress(Exception):
        conn.terminate()


async def prepare(conn: Connection, where: str) -> None:
    """Create or migrate lionmem's tables if needed (one transaction, under the advisory lock).

    Nothing is written to a database whose tables are not lionmem's or are newer, nor to one
    whose encoding is not UTF8 (it could not hold every text an item may carry), nor through a
    session whose first schema is its temporary one (the tables would be temporary).
    """
    encoding = await conn.fetchval("SELECT pg_catalog.current_setting('server_encoding')")
    if encoding != "UTF8":
        msg = (
            f"{where} is a database of encoding {encoding}, which cannot hold every Unicode "
            "text an item may carry: lionmem needs a database created with ENCODING 'UTF8'"
        )
        raise IncompatibleDatabaseError(msg)
    schema = await conn.fetchval("SELECT current_schema()")
    if schema is not None and schema.startswith("pg_temp"):
        msg = (
            f"the first schema of the search_path at {where} is the session's temporary schema "
            f"({schema}): tables there vanish with the connection; put a permanent schema first"
        )
        raise MemoryAdapterError(msg)
    if not _needs(await _read_meta(conn, where), where):
        return
    async with transaction(conn):
        await conn.execute("SELECT pg_advisory_xact_lock($1)", LOCK_KEY)
        # Another session may have created or migrated the tables meanwhile: look again.
        meta = await _read_meta(conn, where)
        if not _needs(meta, where):
            return
        version = 0 if meta is None else int(meta["schema_version"])
        for step in MIGRATIONS[version:]:
            await step(conn)
        if meta is not None and meta.get("unicode_version") != unicodedata.unidata_version:
            await _relower(conn)
        await conn.executemany(
            "INSERT INTO lionmem_meta (key, value) VALUES ($1, $2) "
            "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            [
                ("schema_version", str(SCHEMA_VERSION)),
                ("unicode_version", unicodedata.unidata_version),
            ],
        )
