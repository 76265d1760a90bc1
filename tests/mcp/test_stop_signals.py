"""Ctrl-C (SIGINT) and SIGTERM stop ``lionmem mcp`` over stdio after it closed its store.

What a supervisor sends (systemd, ``docker stop``) is handled as Ctrl-C, in its own words and
exit status. The server runs as a subprocess over pipes; stdin stays open, so the signal and
not the end of input stops it.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from lionmem import SQLiteMemoryStore
from tests.mcp.support import RawServer


@pytest.mark.parametrize(
    ("sent", "done"),
    [(signal.SIGINT, (130, "interrupted")), (signal.SIGTERM, (143, "terminated"))],
    ids=["ctrl-c", "sigterm"],
)
async def test_a_stop_signal_closes_the_store_and_says_so(
    tmp_path: Path, sent: signal.Signals, done: tuple[int, str]
) -> None:
    """After answering a store, the server given the signal closes its store (SQLite removes
    its write-ahead log with the last connection), says so and exits 130 or 143."""
    db = tmp_path / "memory.db"
    wal = tmp_path / "memory.db-wal"
    server = RawServer(db)
    try:
        stored = server.call(2, "memory_store", {"content": "kept"})
        assert wal.exists()  # the store is open
        server.process.send_signal(sent)
        status = server.process.wait(timeout=30)
        assert server.process.stderr is not None
        errors = server.process.stderr.read().decode("utf-8")
        rest = server.stdout.read()
    finally:
        server.kill()
    status_wanted, word = done
    assert (status, rest, errors) == (
        status_wanted,
        b"",
        f"lionmem mcp: serving {db} over stdio\nlionmem mcp: {word}\n",
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["memory.db"]
    async with SQLiteMemoryStore(db) as store:
        items = [(str(item.id), item.content) async for item in store.items()]
    assert items == [(stored["structuredContent"]["id"], "kept")]
