"""Helpers shared by the SQLite store's tests, and the child-process scripts they run."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from lionmem.stores.sqlite import SQLiteMemoryStore

SUPPORT = Path(__file__).resolve().parent
REPO = SUPPORT.parents[3]
EVERYTHING = MemoryQuery(limit=1_000_000)


def dump(item: MemoryItem | None) -> dict[str, Any] | None:
    """Every field of ``item`` (``model_dump``), to compare items field by field."""
    return None if item is None else item.model_dump()


async def fill(store: SQLiteMemoryStore | InMemoryStore, *items: MemoryItem) -> None:
    """Store ``items`` one at a time, in order."""
    for item in items:
        await store.store(item)


async def contents(store: SQLiteMemoryStore | InMemoryStore, query: MemoryQuery) -> list[Any]:
    """The contents of the search results, in order."""
    return [item.content for item in await store.search(query)]


@contextlib.asynccontextmanager
async def inserts_held(store: SQLiteMemoryStore) -> AsyncIterator[tuple[threading.Event, ...]]:
    """Hold the store's worker at the start of each ``INSERT INTO items`` until the second
    yielded event is set; the first is set once the worker is held. The hold ends with the
    block."""
    entered, release = threading.Event(), threading.Event()

    def hold(statement: str) -> None:
        if statement.startswith("INSERT INTO items "):
            entered.set()
            release.wait(10)

    await store._call(lambda conn: conn.set_trace_callback(hold))
    try:
        yield entered, release
    finally:
        release.set()
        await store._call(lambda conn: conn.set_trace_callback(None))


def raw(path: Path, sql: str, *params: Any) -> list[Any]:
    """Run ``sql`` on the file through a separate plain sqlite3 connection and return its rows."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def child(script: str, *args: str) -> subprocess.Popen[str]:
    """Start ``tests/stores/sqlite/support/<script>`` in a new Python process with piped output."""
    return subprocess.Popen(
        [sys.executable, str(SUPPORT / script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
