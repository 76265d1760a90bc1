"""One lionagi Session over a SQLite file, in a process of its own: ``write`` or ``read`` (see the test).

``write PATH`` stores two items through two branches of a session and ends the process at once,
without closing anything (each acknowledged write is already committed). ``read PATH`` opens a
new session on the same file and prints, as JSON, every item its branches find.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from uuid import UUID

import lionagi

from lionmem import SQLiteMemoryStore
from lionmem.integrations.lionagi import LionagiMemoryStore

FIRST = UUID("00000000-0000-4000-8000-000000000001")
SECOND = UUID("00000000-0000-4000-8000-000000000002")


async def write(path: str) -> None:
    session = lionagi.Session(memory=LionagiMemoryStore(SQLiteMemoryStore(path)))
    planner = session.new_branch(name="planner")
    coder = session.new_branch(name="coder")
    await planner.memory.store(
        lionagi.MemoryItem(
            id=FIRST,
            created_at=1.25,
            content={"plan": ["parse", "test"]},
            tags=["plan"],
            metadata={"branch": str(planner.id)},
        )
    )
    await coder.memory.store(
        lionagi.MemoryItem(id=SECOND, created_at=2.5, content="use sqlite", tags=["decision"])
    )
    print("stored", flush=True)
    os._exit(0)  # no close, no interpreter shutdown: only what was committed survives


async def read(path: str) -> None:
    async with LionagiMemoryStore(SQLiteMemoryStore(path)) as store:
        session = lionagi.Session(memory=store)
        branch = session.new_branch(name="reviewer")
        found = await branch.memory.search(lionagi.MemoryQuery(limit=10))
        decision = await session.default_branch.memory.search(
            lionagi.MemoryQuery(tags=["decision"])
        )
        first = await branch.memory.retrieve(FIRST)
        assert type(first) is lionagi.MemoryItem
        print(
            json.dumps(
                {
                    "found": [item.model_dump(mode="json") for item in found],
                    "decision": [str(item.id) for item in decision],
                    "same store": branch.memory is session.memory is store,
                }
            )
        )


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    asyncio.run(write(path) if mode == "write" else read(path))
