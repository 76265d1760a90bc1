"""Store items until killed, printing ``<n> <id>`` once each ``store()`` has returned.

Run by ``tests/stores/sqlite/test_durability.py``: a printed line is an acknowledged write, which must
survive ``kill -9``. ``expected_item(n)`` rebuilds item ``n`` so the test can check every field.
"""

from __future__ import annotations

import asyncio
import sys
from uuid import UUID

from lionmem import MemoryItem
from lionmem.stores.sqlite import SQLiteMemoryStore


def expected_item(n: int, item_id: UUID) -> MemoryItem:
    """Item ``n`` as the writer stores it."""
    return MemoryItem(
        id=item_id,
        created_at=1_000_000_000 + n / 3,
        metadata={"n": n, "fraction": n / 7, "nested": {"even": n % 2 == 0, "list": [n, None]}},
        content={"n": n, "text": "İß ΣΟΣ " * (n % 5), "float": -n / 11},
        tags=[f"t{n % 3}", "all", "all"],
    )


async def main(path: str) -> None:
    store = SQLiteMemoryStore(path)
    n = 0
    while True:
        item = expected_item(n, UUID(int=n + 1))
        await store.store(item)
        print(n, item.id, flush=True)
        n += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
