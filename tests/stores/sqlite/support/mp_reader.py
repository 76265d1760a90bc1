"""Read one file over and over while writers fill it, until it holds ``total`` items.

Each round counts, lists, and searches by text, tag and filter. The count must never shrink and
each search must return whole items of the writers. Prints the number of rounds; any exception
ends the process with status 1. Gives up (status 2) after ``deadline`` seconds.
"""

from __future__ import annotations

import asyncio
import sys
import time

from lionmem import MemoryItem, MemoryQuery
from lionmem.stores.sqlite import SQLiteMemoryStore


def check(items: list[MemoryItem]) -> None:
    for item in items:
        writer = item.metadata["writer"]
        assert item.content == f"{writer} item {item.metadata['n']}", item
        assert item.tags == [writer], item


async def main(path: str, total: int, deadline: float) -> int:
    give_up = time.monotonic() + deadline
    rounds = 0
    seen = 0
    async with SQLiteMemoryStore(path) as store:
        while seen < total:
            if time.monotonic() > give_up:
                return 2
            count = await store.count()
            assert count >= seen, (count, seen)
            seen = count
            check(await store.search(MemoryQuery(limit=50)))
            check(await store.search(MemoryQuery(text="item 1", limit=50)))
            check(await store.search(MemoryQuery(tags=["a"], limit=50)))
            check(await store.search(MemoryQuery(filters={"writer": "b"}, limit=50)))
            rounds += 1
    print(rounds, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))))
