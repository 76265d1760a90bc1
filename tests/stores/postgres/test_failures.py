"""A real server stopped, restarted and killed under the store (each on a cluster of its own)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from uuid import UUID, uuid4

import pytest

from lionmem import MemoryAdapterError, MemoryAdapterUnavailable, MemoryItem, MemoryQuery
from lionmem.stores._postgres_schema import ROLLBACK_WAIT
from lionmem.stores._postgres_schema import prepare as real_prepare
from lionmem.stores.postgres import PostgresMemoryStore
from tests.postgres_support import TEMPLATE, Cluster, started_cluster

ROOT = Path(__file__).resolve().parents[3]
CONNECT_TIMEOUT = 2.0

pytestmark = pytest.mark.slow


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A cluster this test may stop, start and kill."""
    own = started_cluster()
    yield own
    own.destroy()


def calls(store: PostgresMemoryStore, known: UUID) -> list[Callable[[], object]]:
    return [
        lambda: store.store(MemoryItem(content="during the outage")),
        lambda: store.retrieve(known),
        lambda: store.search(MemoryQuery(text="kept")),
        store.count,
        lambda: store.store_many([MemoryItem(content="batch")]),
        lambda: store.delete(known),
    ]


async def test_stopped_server_raises_unavailable_then_recovers(cluster: Cluster) -> None:
    """With the server stopped every call raises MemoryAdapterUnavailable within the connect
    timeout; once it is back, the same store works again and nothing was written meanwhile."""
    store = PostgresMemoryStore(cluster.dsn(), connect_timeout=CONNECT_TIMEOUT)
    kept = MemoryItem(content="kept")
    await store.store(kept)
    cluster.stop()
    for call in calls(store, kept.id):
        began = time.monotonic()
        with pytest.raises(MemoryAdapterUnavailable):
            await call()  # type: ignore[misc]  # each call returns an awaitable
        # The documented bound: refused connections fail at once, none waits past the timeout.
        assert time.monotonic() - began < CONNECT_TIMEOUT + 1.0
    cluster.start()
    found = await store.retrieve(kept.id)
    assert found is not None
    assert found.content == "kept"
    assert [i.content for i in await store.search(MemoryQuery(limit=10))] == ["kept"]
    await store.store(MemoryItem(content="after"))
    assert await store.count() == 2
    await store.close()


async def test_a_stream_after_a_restart_gets_a_new_connection_before_reading(
    cluster: Cluster,
) -> None:
    """After a restart the pool's connection is broken; store_stream finds that out before it
    reads the iterable, so it runs again on a new connection, reading every item once."""
    pulled: list[int] = []

    def numbered() -> Iterator[MemoryItem]:
        for i in range(3):
            pulled.append(i)
            yield MemoryItem(content=i)

    async with PostgresMemoryStore(cluster.dsn(), connect_timeout=CONNECT_TIMEOUT) as store:
        assert await store.count() == 0  # the pool now holds a connection
        cluster.stop()
        cluster.start()
        assert await store.store_stream(numbered()) == 3
        assert pulled == [0, 1, 2]
        assert [item.content async for item in store.items()] == [0, 1, 2]


async def test_a_store_made_while_the_server_is_down_works_once_it_is_up(cluster: Cluster) -> None:
    """First use with the server down raises MemoryAdapterUnavailable; later calls connect."""
    cluster.stop()
    store = PostgresMemoryStore(cluster.dsn(), connect_timeout=CONNECT_TIMEOUT)
    with pytest.raises(MemoryAdapterUnavailable):
        await store.open()
    with pytest.raises(MemoryAdapterUnavailable):
        await store.retrieve(uuid4())
    cluster.start()
    assert await store.count() == 0
    await store.close()


async def test_a_server_that_stops_answering_mid_transaction_fails_within_command_timeout(
    cluster: Cluster,
) -> None:
    """A stream whose server stops answering (SIGSTOP) between two of its statements raises
    MemoryAdapterUnavailable once the statement ran past command_timeout, the rollback waited
    ROLLBACK_WAIT (the connection is then closed: a rollback waiting for the server would take
    command_timeout again) and the end of its server process was waited for as long. Once the
    server answers, the same store works, and nothing of the stream was written."""
    store = PostgresMemoryStore(cluster.dsn(), connect_timeout=1.0, command_timeout=3.0)
    await store.open()
    stopped: list[int] = []

    def items() -> Iterator[MemoryItem]:
        for n in range(1500):
            if n == 1000:  # the first statement, of 1,000 items, has run
                stopped.extend(cluster.server_pids())
                for pid in stopped:
                    os.kill(pid, signal.SIGSTOP)
            yield MemoryItem(content=n)

    try:
        with pytest.raises(MemoryAdapterUnavailable, match="ran past command_timeout"):
            # 3 + 1 + 1 s, with a second to spare: a rollback waiting as long as the statement
            # would take 6 s at least.
            await asyncio.wait_for(store.store_stream(items()), 3 + 2 * ROLLBACK_WAIT + 1)
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    assert await store.count() == 0
    await store.close()


async def test_a_server_that_stops_answering_fails_each_statement_within_command_timeout(
    cluster: Cluster,
) -> None:
    """Calls of one statement each, on pooled connections, whose server stops answering
    (SIGSTOP) raise MemoryAdapterUnavailable once the statement ran past command_timeout and
    the wait for its cancellation took ROLLBACK_WAIT at most (not connect_timeout: the
    connection is closed instead). Once the server answers, the same store works again."""
    command_timeout = 3.0
    store = PostgresMemoryStore(
        cluster.dsn(), connect_timeout=20.0, command_timeout=command_timeout, max_size=3
    )
    kept = MemoryItem(content="kept")
    await store.store(kept)
    await asyncio.gather(*(store.search(MemoryQuery(text="kept")) for _ in range(3)))
    stopped = cluster.server_pids()

    async def timed(call: Awaitable[object]) -> tuple[str, float]:
        began = time.monotonic()
        try:
            await call
        except MemoryAdapterUnavailable as exc:
            return str(exc), time.monotonic() - began
        return "answered", time.monotonic() - began

    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    try:
        outcomes = await asyncio.gather(
            timed(store.store(MemoryItem(content="during"))),
            timed(store.retrieve(kept.id)),
            timed(store.search(MemoryQuery(text="kept"))),
        )
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
    for message, seconds in outcomes:
        assert "ran past command_timeout (3 s)" in message
        # A second to spare: waiting for the cancellation as long as the statement took 6 s.
        assert command_timeout <= seconds < command_timeout + ROLLBACK_WAIT + 1
    assert [item.content for item in await store.search(MemoryQuery(text="kept"))] == ["kept"]
    await store.close()


@pytest.mark.parametrize("how", ["restart", "crash"])
async def test_pooled_connections_survive_a_server_restart(cluster: Cluster, how: str) -> None:
    """After a restart (or a crash and recovery) the store's idle pooled connections are
    replaced: the next calls succeed without rebuilding the store."""
    async with PostgresMemoryStore(cluster.dsn(), max_size=4) as store:
        items = [MemoryItem(content=f"item {n}") for n in range(8)]
        await store.store_many(items)
        # Open several pooled connections at once, so that several are stale afterwards.
        await asyncio.gather(*(store.search(MemoryQuery(limit=3)) for _ in range(4)))
        if how == "restart":
            cluster.stop()
        else:
            cluster.kill()
        cluster.start()
        assert await store.count() == 8
        found = await store.retrieve(items[3].id)
        assert found is not None
        assert found.content == "item 3"
        await store.store(MemoryItem(content="new"))
        assert await store.count() == 9


async def test_a_server_crash_loses_no_acknowledged_write() -> None:
    """A writer process stores items one by one; the server is killed (SIGKILL) mid-run. Its
    default is synchronous_commit=off, but the store's sessions commit synchronously: every id
    the writer saw acknowledged is there after crash recovery."""
    cluster = started_cluster(durable=True, settings={"synchronous_commit": "off"})
    try:
        assert cluster.psql("SHOW synchronous_commit") == "off"
        writer = subprocess.Popen(
            [sys.executable, "-m", "tests.stores.postgres.workers", "crash", cluster.dsn()],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        acknowledged: list[str] = []
        while len(acknowledged) < 300:
            line = writer.stdout.readline()
            assert line, "the writer stopped before the crash"
            acknowledged.append(line.strip())
        cluster.kill()
        rest, _ = writer.communicate(timeout=60)
        lines = rest.split()
        assert lines[-1] == "stopped"
        acknowledged += lines[:-1]
        cluster.start()
        async with PostgresMemoryStore(cluster.dsn()) as store:
            stored = {str(item.id) async for item in store.items()}
            missing = [ident for ident in acknowledged if ident not in stored]
            assert missing == []
            assert len(stored) >= len(acknowledged)
    finally:
        cluster.destroy()


@pytest.mark.parametrize("how", ["recreated", "tables dropped"])
async def test_a_database_recreated_empty_gets_its_tables_again(
    postgres_server: Cluster, how: str
) -> None:
    """The database is dropped and created again (or lionmem's tables are dropped) under a
    running store: its next calls create the tables again, as on first use, and work; they do
    not fail with 'relation lionmem_items does not exist' until the store is rebuilt."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store(MemoryItem(content="before"))
        if how == "recreated":
            postgres_server.psql(f"DROP DATABASE {database} WITH (FORCE)")
            postgres_server.psql(f"CREATE DATABASE {database} TEMPLATE {TEMPLATE}")
        else:
            postgres_server.psql("DROP TABLE lionmem_items, lionmem_meta", database)
        assert await store.count() == 0
        item = MemoryItem(content="after")
        await store.store(item)
        assert await store.retrieve(item.id) == item
        assert [i.content async for i in store.items()] == ["after"]
    assert postgres_server.psql("SELECT count(*) FROM lionmem_meta", database) == "2"


async def test_a_delete_first_after_the_tables_vanished_gets_them_again(
    postgres_server: Cluster,
) -> None:
    """delete() (never run twice on a lost connection) is the first call after lionmem's tables
    were dropped: it creates them again and answers, as every other call does."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        item = MemoryItem(content="before")
        await store.store(item)
        postgres_server.psql("DROP TABLE lionmem_items, lionmem_meta", database)
        assert await store.delete(item.id) is False
        assert await store.count() == 0


async def test_a_stream_first_after_the_tables_vanished_writes_everything_once(
    postgres_server: Cluster,
) -> None:
    """store_stream() is the first call after lionmem's tables were dropped, and finds them
    missing once it has begun reading: it creates them again and goes on with the items it
    read, reading each of them once."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store(MemoryItem(content="before"))
        postgres_server.psql("DROP TABLE lionmem_items, lionmem_meta", database)
        read: list[int] = []

        def notes() -> Iterator[MemoryItem]:
            for n in range(2500):
                read.append(n)
                yield MemoryItem(content=n)

        assert await store.store_stream(notes()) == 2500
        assert read == list(range(2500))
        assert [i.content async for i in store.items()] == list(range(2500))


async def test_a_missing_relation_other_than_the_stores_is_an_error_not_a_rerun(
    postgres_server: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trigger on lionmem_items writes to a table that a job drops (and creates again) in the
    middle of a stream: the stream fails with that error and writes nothing. It is not run again
    from the chunk it still holds as if lionmem's tables had vanished, which lost the chunk
    before it and reported success."""
    database = postgres_server.fresh_database()
    async with PostgresMemoryStore(postgres_server.dsn(database)) as store:
        await store.store(MemoryItem(content="before"))
        postgres_server.psql(
            "CREATE TABLE side (c text); "
            "CREATE FUNCTION note() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN IF NEW.content = '\"late\"' THEN INSERT INTO side VALUES (NEW.content); "
            "END IF; RETURN NEW; END $$; "
            "CREATE TRIGGER noting BEFORE INSERT ON lionmem_items "
            "FOR EACH ROW EXECUTE FUNCTION note()",
            database,
        )

        async def prepare(conn: object, where: str) -> None:  # the job has created it again
            postgres_server.psql("CREATE TABLE IF NOT EXISTS side (c text)", database)
            await real_prepare(conn, where)

        monkeypatch.setattr("lionmem.stores.postgres.prepare", prepare)

        def notes() -> Iterator[MemoryItem]:
            for n in range(2500):
                if n == 1000:  # the first chunk is written, in the stream's transaction
                    postgres_server.psql("DROP TABLE side", database)
                yield MemoryItem(content="late" if n == 1500 else n)

        with pytest.raises(MemoryAdapterError, match='relation "side" does not exist'):
            await store.store_stream(notes())
        assert await store.count() == 1


async def backend_pids(dsn: str) -> list[int]:
    """The server processes of the store's connections (lionmem names its connections)."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'lionmem' "
            "AND pid <> pg_backend_pid()"
        )
    finally:
        await conn.close()
    return [row[0] for row in rows]


@pytest.mark.parametrize("how", ["past command_timeout", "cancelled"])
@pytest.mark.parametrize("write", ["store", "delete"])
async def test_a_write_that_did_not_finish_never_takes_effect_after_a_later_write(
    cluster: Cluster, write: str, how: str
) -> None:
    """A write whose statement waits, unread, in a server process that stopped answering
    (SIGSTOP on that process alone) raises once past command_timeout, or when its caller gives
    up; asyncpg's cancellation cannot reach it there. The store ends that process, and until
    the server confirms it ended, refuses the store's later writes: the stale statement can
    never take effect after them, overwriting (or deleting) what a later write stored."""
    dsn = cluster.dsn()
    store = PostgresMemoryStore(dsn, max_size=1, connect_timeout=2.0, command_timeout=1.0)
    item = MemoryItem(content="v0")
    await store.store(item)
    await store.delete(uuid4())  # the delete statement is prepared, as after any earlier delete
    (pid,) = await backend_pids(dsn)
    stale: Callable[[], Awaitable[object]] = {
        "store": lambda: store.store(MemoryItem(id=item.id, content="stale")),
        "delete": lambda: store.delete(item.id),
    }[write]
    os.kill(pid, signal.SIGSTOP)
    try:
        if how == "cancelled":
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(stale(), 0.3)
        else:
            with pytest.raises(MemoryAdapterUnavailable, match="ran past command_timeout") as first:
                await stale()
            assert "the write may still take effect" in "\n".join(first.value.__notes__)
        with pytest.raises(MemoryAdapterUnavailable, match="may still take effect"):
            await store.store(MemoryItem(id=item.id, content="refused"))
        assert await store.retrieve(item.id) == item  # reads go on
    finally:
        os.kill(pid, signal.SIGCONT)
    for _ in range(100):  # the process ends as soon as it runs again
        if pid not in await backend_pids(dsn):
            break
        await asyncio.sleep(0.1)
    later = MemoryItem(id=item.id, content="later")
    await store.store(later)
    await asyncio.sleep(0.5)
    assert [await store.retrieve(item.id), await store.count()] == [later, 1]
    await store.close()


async def test_the_fence_never_ends_a_process_of_another_role_or_a_server_process(
    cluster: Cluster,
) -> None:
    """A fenced process id the system has since given to another role's session, or to one of
    the server's own processes, counts as ended (the store's process is gone) and is left
    running, even for a store that logs in as a superuser, which may end any process."""
    import asyncpg

    cluster.psql("CREATE ROLE other LOGIN")
    other = await asyncpg.connect(cluster.dsn().replace("postgres@", "other@"))
    admin = await asyncpg.connect(cluster.dsn())
    try:
        checkpointer = await admin.fetchval(
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'"
        )
        async with PostgresMemoryStore(cluster.dsn(), command_timeout=2.0) as store:
            for pid in (other.get_server_pid(), checkpointer):
                store._unended.add(pid)  # as after a write that did not finish on that process
                item = MemoryItem(content=f"after fencing process {pid}")
                await store.store(item)
                assert await store.retrieve(item.id) == item
        assert await other.fetchval("SELECT current_user") == "other"
        running = await admin.fetch("SELECT pid FROM pg_stat_activity")
        assert {other.get_server_pid(), checkpointer} <= {row[0] for row in running}
    finally:
        await other.close()
        await admin.close()
