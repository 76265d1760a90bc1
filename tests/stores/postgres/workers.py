"""Processes the multi-process tests start: ``python -m tests.stores.postgres.workers KIND ...``.

* ``migrate START DSN...``: at the wall-clock time START, open a store on every DSN at once;
  print ``ok`` or the error of each, exit 1 if any failed.
* ``write DSN NAMESPACE PREFIX COUNT``: store COUNT items (single stores and batches of ten)
  with contents ``PREFIX-n``, printing each acknowledged id.
* ``crash DSN``: store items one by one until the server goes away, printing each acknowledged
  id, then ``stopped``.
"""

from __future__ import annotations

import asyncio
import sys
import time

from lionmem import MemoryAdapterError, MemoryItem
from lionmem.stores.postgres import PostgresMemoryStore


async def migrate(start: float, dsns: list[str]) -> int:
    await asyncio.sleep(max(0.0, start - time.time()))

    async def one(dsn: str) -> str:
        store = PostgresMemoryStore(dsn)
        try:
            await store.open()
            return "ok"
        except Exception as exc:  # every failure is reported, none may happen
            return f"{type(exc).__name__}: {exc} (cause {exc.__cause__!r})"
        finally:
            await store.close()

    results = await asyncio.gather(*(one(dsn) for dsn in dsns))
    for result in results:
        print(result, flush=True)
    return 0 if all(result == "ok" for result in results) else 1


async def write(dsn: str, namespace: str, prefix: str, count: int) -> int:
    async with PostgresMemoryStore(dsn, namespace=namespace) as store:
        n = 0
        while n < count:
            if n % 20 < 10:
                item = MemoryItem(content=f"{prefix}-{n}", tags=[prefix])
                await store.store(item)
                print(item.id, flush=True)
                n += 1
            else:
                batch = [MemoryItem(content=f"{prefix}-{n + k}", tags=[prefix]) for k in range(10)]
                await store.store_many(batch)
                for item in batch:
                    print(item.id, flush=True)
                n += 10
    return 0


async def crash(dsn: str) -> int:
    async with PostgresMemoryStore(dsn, connect_timeout=2) as store:
        n = 0
        while True:
            item = MemoryItem(content=f"acknowledged {n}")
            try:
                await store.store(item)
            except MemoryAdapterError:
                print("stopped", flush=True)
                return 0
            print(item.id, flush=True)
            n += 1


def main(argv: list[str]) -> int:
    kind, *args = argv
    if kind == "migrate":
        return asyncio.run(migrate(float(args[0]), args[1:]))
    if kind == "write":
        return asyncio.run(write(args[0], args[1], args[2], int(args[3])))
    if kind == "crash":
        return asyncio.run(crash(args[0]))
    msg = f"unknown worker {kind!r}"
    raise SystemExit(msg)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
