"""Write ``count`` items to one file, alone or in batches, printing each acknowledged id.

Arguments: path, writer name, count, batch size, and optionally the store's ``synchronous`` mode.

Run by ``tests/stores/sqlite/test_durability.py`` beside another writer and a reader. Any exception
(a "database is locked" that escaped, say) ends the process with status 1 and a traceback.
"""

from __future__ import annotations

import asyncio
import sys
from typing import cast

from lionmem import MemoryItem
from lionmem.stores.sqlite import SQLiteMemoryStore, Synchronous


async def main(path: str, name: str, count: int, batch: int, synchronous: Synchronous) -> None:
    async with SQLiteMemoryStore(path, synchronous=synchronous) as store:
        for start in range(0, count, batch):
            items = [
                MemoryItem(
                    content=f"{name} item {n}", tags=[name], metadata={"writer": name, "n": n}
                )
                for n in range(start, min(start + batch, count))
            ]
            if batch == 1:
                await store.store(items[0])
            else:
                await store.store_many(items)
            for item in items:
                print(item.id, flush=True)


if __name__ == "__main__":
    mode = cast(Synchronous, sys.argv[5] if len(sys.argv) > 5 else "FULL")
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), mode))
