"""Several processes on one database: concurrent first use (migrations) and concurrent writers."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from lionmem import MemoryItem, MemoryQuery
from lionmem.stores._postgres_schema import SCHEMA_VERSION
from lionmem.stores.postgres import PostgresMemoryStore
from tests.postgres_support import Cluster

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


def start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.stores.postgres.workers", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_six_processes_create_five_fresh_databases_at_once(postgres_server: Cluster) -> None:
    """Six processes opening the same five empty databases at the same moment: no failure."""
    databases = [postgres_server.fresh_database("race", template="template0") for _ in range(5)]
    dsns = [postgres_server.dsn(name) for name in databases]
    moment = time.time() + 3.0  # after every interpreter has started
    workers = [start("migrate", str(moment), *dsns) for _ in range(6)]
    outcomes = [worker.communicate(timeout=120) for worker in workers]
    reports = [out.split() for out, _err in outcomes]
    assert [worker.returncode for worker in workers] == [0] * 6, outcomes
    assert reports == [["ok"] * 5] * 6
    for name in databases:
        assert postgres_server.psql(
            "SELECT value FROM lionmem_meta WHERE key = 'schema_version'", name
        ) == str(SCHEMA_VERSION)
        assert postgres_server.psql("SELECT count(*) FROM lionmem_items", name) == "0"


async def test_concurrent_writers_and_a_sweep_lose_nothing(postgres_server: Cluster) -> None:
    """Four writer processes and a sweeping reader: every earlier item seen exactly once, in
    order; afterwards every acknowledged item is there with its content."""
    dsn = postgres_server.dsn(postgres_server.fresh_database())
    async with PostgresMemoryStore(dsn, namespace="shared") as store:
        earlier = [MemoryItem(content=f"earlier-{n}") for n in range(500)]
        await store.store_many(earlier)
        earlier_ids = [item.id for item in earlier]
        writers = [start("write", dsn, "shared", f"w{w}", "250") for w in range(4)]
        sweeps = 0
        while any(writer.poll() is None for writer in writers) or sweeps < 2:
            swept = [item.id async for item in store.items(batch_size=64)]
            assert len(swept) == len(set(swept)), "a sweep yielded an item twice"
            assert swept[:500] == earlier_ids
            sweeps += 1
        outputs = [writer.communicate(timeout=120) for writer in writers]
        assert [writer.returncode for writer in writers] == [0] * 4, outputs
        assert await store.count() == 500 + 4 * 250
        for w, (out, _err) in enumerate(outputs):
            acknowledged = out.split()
            assert len(acknowledged) == 250
            found = await store.search(MemoryQuery(tags=[f"w{w}"], limit=1000))
            assert [str(item.id) for item in found] == acknowledged
            assert [item.content for item in found] == [f"w{w}-{n}" for n in range(250)]
    assert sweeps >= 2
