"""Open each of several fresh files at an agreed moment, store one item in it, and close it.

Run by ``tests/stores/sqlite/test_concurrent_open.py``, several at once: the processes open the
same new file at the same time, so one of them creates the schema while the others look at it.
Any exception ends the process with status 1 and a traceback.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from lionmem import MemoryItem
from lionmem.stores.sqlite import SQLiteMemoryStore

ROUND_SECONDS = 0.05


async def main(directory: str, name: str, rounds: int, start: float) -> None:
    for n in range(rounds):
        time.sleep(max(0.0, start + n * ROUND_SECONDS - time.time()))
        async with SQLiteMemoryStore(Path(directory) / f"fresh-{n}.db") as store:
            await store.store(MemoryItem(content=name))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
