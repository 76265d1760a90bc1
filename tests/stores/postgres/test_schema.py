"""Schema creation, versions and migrations: created on first use, newer databases untouched."""

from __future__ import annotations

import unicodedata

import asyncpg
import pytest

from lionmem import MemoryAdapterError, MemoryItem, MemoryQuery
from lionmem.stores import _postgres_schema as schema_module
from lionmem.stores._postgres_codec import search_text
from lionmem.stores._postgres_schema import (
    _RELOWER_PAGE,
    _RELOWER_SET,
    LOCK_KEY,
    MIGRATIONS,
    SCHEMA_VERSION,
)
from lionmem.stores.postgres import (
    SERVER_SETTINGS,
    IncompatibleDatabaseError,
    PostgresMemoryStore,
)
from tests.postgres_support import Cluster


def snapshot(cluster: Cluster, database: str) -> str:
    """Every table with its columns, and the meta rows: what must stay unchanged."""
    tables = cluster.psql(
        "SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ',' "
        "ORDER BY table_name, column_name) FROM information_schema.columns "
        "WHERE table_schema = 'public'",
        database,
    )
    meta = cluster.psql(
        "SELECT coalesce(string_agg(key || '=' || value, ',' ORDER BY key), '') FROM lionmem_meta "
        "WHERE to_regclass('lionmem_meta') IS NOT NULL",
        database,
    ) if "lionmem_meta" in tables else ""  # fmt: skip
    return tables + "|" + meta


async def test_tables_are_created_on_first_use(postgres_server: Cluster) -> None:
    """A fresh database gets lionmem's tables, its schema version and Unicode version."""
    database = postgres_server.fresh_database()
    store = PostgresMemoryStore(postgres_server.dsn(database))
    assert await store.count() == 0
    await store.close()
    meta = postgres_server.psql(
        "SELECT string_agg(key || '=' || value, ',' ORDER BY key) FROM lionmem_meta", database
    )
    assert meta == f"schema_version={SCHEMA_VERSION},unicode_version={unicodedata.unidata_version}"


async def test_a_version_1_database_migrates_and_keeps_its_items(
    postgres_server: Cluster,
) -> None:
    """A database at schema version 1 gets version 2's statistics targets on the array columns
    and GIN pending-list limits on first use, its items and their order kept."""
    import asyncpg

    from lionmem.stores.postgres import _UPSERT, _row

    database = postgres_server.fresh_database()
    items = [MemoryItem(content=f"old note {n}", metadata={"n": n}) for n in range(3)]
    conn = await asyncpg.connect(postgres_server.dsn(database))
    try:
        async with conn.transaction():
            await MIGRATIONS[0](conn)
            await conn.execute(
                "INSERT INTO lionmem_meta VALUES ('schema_version', '1'), ('unicode_version', $1)",
                unicodedata.unidata_version,
            )
            for item in items:
                await conn.execute(_UPSERT, '"default"', *_row(item))
    finally:
        await conn.close()
    targets = (
        "SELECT string_agg(attname || '=' || attstattarget, ',' ORDER BY attname) "
        "FROM pg_attribute WHERE attrelid = 'lionmem_items'::regclass "
        "AND attname IN ('search', 'tag_keys', 'field_keys')"
    )
    options = (
        "SELECT coalesce(string_agg(relname || ':' || array_to_string(reloptions, ';'), ',' "
        "ORDER BY relname), 'none') FROM pg_class "
        "WHERE relname LIKE 'lionmem_items_%' AND reloptions IS NOT NULL"
    )
    assert postgres_server.psql(targets, database) == "field_keys=-1,search=-1,tag_keys=-1"
    assert postgres_server.psql(options, database) == "none"
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        assert [i.content async for i in store.items()] == [i.content for i in items]
        found = await store.search(MemoryQuery(text="NOTE 1", filters={"n": 1.0}))
        assert [i.id for i in found] == [items[1].id]
    assert postgres_server.psql(targets, database) == "field_keys=1000,search=-1,tag_keys=1000"
    assert postgres_server.psql(options, database) == (
        "lionmem_items_fields:gin_pending_list_limit=1024,"
        "lionmem_items_search:gin_pending_list_limit=1024,"
        "lionmem_items_tags:gin_pending_list_limit=1024"
    )
    assert (
        postgres_server.psql(
            "SELECT value FROM lionmem_meta WHERE key = 'schema_version'", database
        )
        == str(SCHEMA_VERSION)
        == "2"
    )


async def test_a_newer_database_is_refused_and_untouched(postgres_server: Cluster) -> None:
    """A schema version above this lionmem's raises IncompatibleDatabaseError; nothing changes."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store(MemoryItem(content="kept"))
    postgres_server.psql(
        f"UPDATE lionmem_meta SET value = '{SCHEMA_VERSION + 1}' WHERE key = 'schema_version'",
        database,
    )
    before = snapshot(postgres_server, database)
    store = PostgresMemoryStore(postgres_server.dsn(database))
    for call in (store.count(), store.search(MemoryQuery()), store.store(MemoryItem(content="x"))):
        with pytest.raises(IncompatibleDatabaseError, match="newer lionmem"):
            await call
    await store.close()
    assert snapshot(postgres_server, database) == before
    assert postgres_server.psql("SELECT count(*) FROM lionmem_items", database) == "1"


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("CREATE TABLE lionmem_items (x int)", "not lionmem's"),
        (
            "CREATE TABLE lionmem_meta (key text PRIMARY KEY, value text NOT NULL); "
            "INSERT INTO lionmem_meta VALUES ('schema_version', 'two')",
            "valid schema_version",
        ),
        (
            "CREATE TABLE lionmem_meta (key text PRIMARY KEY, value text NOT NULL); "
            "INSERT INTO lionmem_meta VALUES ('schema_version', '1'), ('unicode_version', '99.0.0')",
            "newer than this Python",
        ),
        (
            "CREATE TABLE lionmem_meta (key text PRIMARY KEY, value text NOT NULL); "
            f"INSERT INTO lionmem_meta VALUES ('schema_version', '{SCHEMA_VERSION}'), "
            f"('unicode_version', '{unicodedata.unidata_version}')",
            "lionmem_meta but no lionmem_items: restore both",
        ),
    ],
)
async def test_foreign_or_unreadable_databases_are_refused(
    postgres_server: Cluster, setup: str, message: str
) -> None:
    """Tables that are not lionmem's, or that this Python cannot read, are left untouched."""
    database = postgres_server.fresh_database()
    postgres_server.psql(setup, database)
    before = snapshot(postgres_server, database)
    store = PostgresMemoryStore(postgres_server.dsn(database))
    with pytest.raises(IncompatibleDatabaseError, match=message) as caught:
        await store.open()
    assert caught.value.__cause__ is None  # the store's own finding, not its own cause
    await store.close()
    assert snapshot(postgres_server, database) == before


def lowered_by_an_older_unicode(server: Cluster, database: str) -> None:
    """Make ``database`` look lowered by Unicode 1.0.0: its meta row says so, its search text is
    stale, and the next store to open it recomputes every item's."""
    server.psql(
        "UPDATE lionmem_meta SET value = '1.0.0' WHERE key = 'unicode_version'; "
        "UPDATE lionmem_items SET search = 'stale'",
        database,
    )


async def test_search_text_is_relowered_for_a_newer_unicode(postgres_server: Cluster) -> None:
    """A database lowered by an older Unicode database gets its search text recomputed."""
    database = postgres_server.fresh_database()
    item = MemoryItem(content="Straße İ")
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store(item)
    lowered_by_an_older_unicode(postgres_server, database)
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        assert [i.id for i in await store.search(MemoryQuery(text="straße i\u0307"))] == [item.id]
        assert await store.search(MemoryQuery(text="stale")) == []
    assert (
        postgres_server.psql(
            "SELECT value FROM lionmem_meta WHERE key = 'unicode_version'", database
        )
        == unicodedata.unidata_version
    )


async def test_relowering_keeps_the_search_text_of_an_item_replaced_meanwhile(
    postgres_server: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The migration reads a page of rows, then updates their search text; an item another
    store replaces in between keeps the search text of its new content."""
    database = postgres_server.fresh_database()
    items = [MemoryItem(content=f"note {n}") for n in range(3)]
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store_many(items)
    lowered_by_an_older_unicode(postgres_server, database)
    real = search_text

    def replacing_first(content: object) -> str:
        if content == "note 0":  # the page is read: a store replaces the item now
            postgres_server.psql(
                "UPDATE lionmem_items SET content = '\"replaced\"', search = 'replaced' "
                f"WHERE id = '{items[0].id}'",
                database,
            )
        return real(content)

    monkeypatch.setattr(schema_module, "search_text", replacing_first)
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        found = [
            [item.content for item in await store.search(MemoryQuery(text=needle))]
            for needle in ("replaced", "note 0", "note")
        ]
    assert found == [["replaced"], [], ["note 1", "note 2"]]


async def test_relowering_stops_at_a_damaged_row_and_names_it(postgres_server: Cluster) -> None:
    """Recomputing the search text reads every item's content: a row whose JSON is nested too
    deeply to read stops the migration (nothing of it is kept) with MemoryAdapterError naming
    the row's position, and the database stays as it was."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store(MemoryItem(content="first"))
        await store.store(MemoryItem(content="second"))
    postgres_server.psql(
        "UPDATE lionmem_meta SET value = '1.0.0' WHERE key = 'unicode_version'; "
        "UPDATE lionmem_items SET content = repeat('[', 100000) || repeat(']', 100000) "
        "WHERE content = '\"second\"'",
        database,
    )
    before = snapshot(postgres_server, database)
    store = PostgresMemoryStore(postgres_server.dsn(database))
    with pytest.raises(MemoryAdapterError, match="content at position 2 is malformed"):
        await store.open()
    await store.close()
    assert snapshot(postgres_server, database) == before


async def test_relowering_reads_and_writes_through_the_order_index(
    postgres_server: Cluster,
) -> None:
    """Recomputing the search text pages through the (namespace, seq) index and updates each
    row through it: no statement scans or sorts the table, so a large table migrates in time
    that grows with its size, not with its square."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store_many([MemoryItem(content=n) for n in range(5000)])
    postgres_server.psql("ANALYZE lionmem_items", database)
    plans = [
        postgres_server.psql(f"EXPLAIN {sql}", database)
        for sql in (
            _RELOWER_PAGE.replace("$1", "''").replace("$2", "0"),
            _RELOWER_SET.replace("$1", "'\"default\"'")
            .replace("$2", "7")
            .replace("$3", "'x'")
            .replace("$4", "'7'"),
        )
    ]
    assert [("Index" in plan, "Seq Scan" in plan, "Sort" in plan) for plan in plans] == [
        (True, False, False)
    ] * 2


async def test_a_temporary_first_schema_is_refused_before_anything_is_created(
    postgres_server: Cluster,
) -> None:
    """A pool whose search_path starts with pg_temp would put the tables in one session's
    temporary schema, where acknowledged writes vanish with the connection: the store refuses
    it on first use, saying so, and creates nothing."""
    database = postgres_server.fresh_database()
    pool = await asyncpg.create_pool(
        postgres_server.dsn(database),
        server_settings={**SERVER_SETTINGS, "search_path": "pg_temp, public"},
    )
    try:
        store = PostgresMemoryStore(pool=pool)
        with pytest.raises(MemoryAdapterError, match=r"temporary schema \(pg_temp_\d+\)"):
            await store.open()
        created = await pool.fetchval("SELECT count(*) FROM pg_class WHERE relname LIKE 'lionmem%'")
    finally:
        await pool.close()
    assert created == 0


async def test_tables_dropped_from_the_first_schema_are_not_looked_up_further_along_the_path(
    postgres_server: Cluster,
) -> None:
    """With a search_path of two schemas both holding lionmem tables, tables dropped from the
    first one under a running store are created there again: the store never reads or writes
    the other schema's tables."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as other:
        await other.store(MemoryItem(content="another application's"))
    postgres_server.psql("CREATE SCHEMA tenant", database)
    postgres_server.psql(f"ALTER DATABASE {database} SET search_path = tenant, public", database)
    async with PostgresMemoryStore(postgres_server.dsn(database), max_size=2) as store:
        await store.store(MemoryItem(content="tenant's"))
        postgres_server.psql("DROP TABLE tenant.lionmem_items, tenant.lionmem_meta", database)
        after = [item.content for item in await store.search(MemoryQuery())], await store.count()
        await store.store(MemoryItem(content="tenant's again"))
        again = [item.content for item in await store.search(MemoryQuery())]
    assert (after, again) == (([], 0), ["tenant's again"])
    assert postgres_server.psql("SELECT content FROM public.lionmem_items", database) == (
        '"another application\'s"'
    )


async def test_a_store_refused_a_temporary_schema_works_once_the_path_is_fixed(
    postgres_server: Cluster,
) -> None:
    """A store whose connections put their temporary schema first is refused; once the
    database's search_path is fixed, its new connections find the right schema and it works."""
    database = postgres_server.fresh_database()
    postgres_server.psql(f"ALTER DATABASE {database} SET search_path = pg_temp, public", database)
    store = PostgresMemoryStore(postgres_server.dsn(database))
    try:
        with pytest.raises(MemoryAdapterError, match="temporary schema"):
            await store.count()
        postgres_server.psql(f"ALTER DATABASE {database} SET search_path = public", database)
        await store._pool.expire_connections()  # as after a server restart
        await store.store(MemoryItem(content="kept"))
        assert await store.count() == 1
    finally:
        await store.close()
    assert postgres_server.psql("SELECT count(*) FROM public.lionmem_items", database) == "1"


async def test_migration_waits_for_the_advisory_lock(postgres_server: Cluster) -> None:
    """While another session holds the migration lock, a first use waits, then succeeds."""
    import asyncio

    import asyncpg

    database = postgres_server.fresh_database()
    holder = await asyncpg.connect(postgres_server.dsn(database))
    try:
        await holder.execute("SELECT pg_advisory_lock($1)", LOCK_KEY)
        store = PostgresMemoryStore(postgres_server.dsn(database))
        opening = asyncio.ensure_future(store.open())
        await asyncio.sleep(0.3)
        assert not opening.done()
        await holder.execute("SELECT pg_advisory_unlock($1)", LOCK_KEY)
        await opening
        assert await store.count() == 0
        await store.close()
    finally:
        await holder.close()


async def test_tables_go_to_a_search_path_schema_without_pg_trgm(postgres_server: Cluster) -> None:
    """pg_trgm installed in public while the search_path names only another schema: the tables
    and the trigram index are created there, and text search works."""
    database = postgres_server.fresh_database()
    postgres_server.psql("CREATE SCHEMA app", database)
    dsn = postgres_server.dsn(database) + "?options=-csearch_path%3Dapp"
    item = MemoryItem(content="Schema-qualified Trigrams")
    async with PostgresMemoryStore(dsn) as store:
        await store.store(item)
        assert [i.id for i in await store.search(MemoryQuery(text="D TRIG"))] == [item.id]
    assert (
        postgres_server.psql(
            "SELECT string_agg(schemaname || '.' || tablename, ',' ORDER BY tablename) "
            "FROM pg_tables WHERE tablename LIKE 'lionmem%'",
            database,
        )
        == "app.lionmem_items,app.lionmem_meta"
    )
    assert (
        postgres_server.psql(
            "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'pg_trgm'",
            database,
        )
        == "public"
    )
    assert (
        postgres_server.psql(
            "SELECT schemaname FROM pg_indexes WHERE indexname = 'lionmem_items_search'", database
        )
        == "app"
    )


@pytest.mark.parametrize("encoding", ["LATIN1", "SQL_ASCII"])
async def test_a_database_not_encoded_in_utf8_is_refused_before_any_write(
    postgres_server: Cluster, encoding: str
) -> None:
    """A LATIN1 database would refuse '€' only when an item holding it is written, and SQL_ASCII
    does not check text at all: the store refuses both on first use and creates nothing."""
    database = postgres_server.fresh_database()
    postgres_server.psql(f"DROP DATABASE {database}")
    postgres_server.psql(
        f"CREATE DATABASE {database} TEMPLATE template0 ENCODING '{encoding}' "
        "LC_COLLATE 'C' LC_CTYPE 'C'"
    )
    before = snapshot(postgres_server, database)
    store = PostgresMemoryStore(postgres_server.dsn(database))
    calls = (store.open, lambda: store.store(MemoryItem(content="€")), store.count)
    for call in calls:
        with pytest.raises(IncompatibleDatabaseError, match=f"encoding {encoding}.*'UTF8'"):
            await call()
    await store.close()
    assert snapshot(postgres_server, database) == before == "|"
    assert (
        postgres_server.psql(
            "SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'", database
        )
        == "0"
    )
