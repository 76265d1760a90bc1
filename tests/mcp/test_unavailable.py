"""A store the server cannot write to: the write is an error, reads go on, nothing is half-done.

Another connection holds the SQLite file's write lock; the server's store waits out its busy
timeout and retries (about 15 seconds), then the tool answers that the store is unavailable.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mcp import Client

from lionmem import SQLiteMemoryStore
from tests.mcp.support import error_text, stdio_parameters, structured


@pytest.mark.slow
async def test_a_locked_database_fails_the_write_and_keeps_serving(tmp_path: Path) -> None:
    """While another writer holds the lock, memory_store is an error; afterwards it succeeds."""
    db = tmp_path / "memory.db"
    async with Client(stdio_parameters(db), read_timeout_seconds=120) as client:
        first = structured(await client.call_tool("memory_store", {"content": "before"}))
        blocker = sqlite3.connect(db, isolation_level=None)
        try:
            blocker.execute("BEGIN EXCLUSIVE")
            text = error_text(await client.call_tool("memory_store", {"content": "blocked"}))
            assert text == (
                f"the store is unavailable, nothing was done: SQLite database {str(db)!r} is "
                "unavailable: database is locked"
            )
            found = structured(await client.call_tool("memory_search", {}))
            assert [hit["id"] for hit in found["items"]] == [first["id"]]
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        structured(await client.call_tool("memory_store", {"content": "after"}))
    async with SQLiteMemoryStore(db) as store:
        contents = [item.content async for item in store.items()]
    assert contents == ["before", "after"]
