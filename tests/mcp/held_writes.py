"""``lionmem mcp`` whose SQLite store holds every write until the test lets it go.

Run as ``python -m tests.mcp.held_writes GATE NAME=VALUE... -- ARGUMENTS...`` from the repository
root, the rest as for ``tests.mcp.short_deadlines``. Each write creates the file ``GATE/held``,
then waits, before anything is written, until the file ``GATE/released`` exists.
"""

from __future__ import annotations

import sys
from pathlib import Path
from uuid import UUID

import anyio

from lionmem import MemoryItem, SQLiteMemoryStore
from tests.mcp.short_deadlines import run


def hold(gate: Path) -> None:
    """Make every ``SQLiteMemoryStore.store`` wait at ``gate`` before it writes."""
    store = SQLiteMemoryStore.store

    async def held(self: SQLiteMemoryStore, item: MemoryItem) -> UUID:
        (gate / "held").touch()
        while not (gate / "released").exists():
            await anyio.sleep(0.01)
        return await store(self, item)

    SQLiteMemoryStore.store = held  # type: ignore[method-assign]  # the hold, for this process only


if __name__ == "__main__":
    hold(Path(sys.argv[1]))
    raise SystemExit(run(sys.argv[2:]))
