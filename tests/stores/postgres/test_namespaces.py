"""Namespaces: one database, many applications; no operation crosses from one to another."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from lionmem import MemoryItem, MemoryQuery
from lionmem.stores.postgres import PostgresMemoryStore

# Strings that would collide if the namespace were escaped, trimmed, case-folded or used as a
# LIKE pattern or a JSON fragment.
NAMESPACES = [
    "default", "", " ", "Default", "a", "a\x00", "a\x00b", '"a"', "a'b", "%", "_", "a%", "\\",
    "a\\", "İ", "i\u0307", "ß", "ss", "\ufffd", "\x00", '["a"]', "null",
]  # fmt: skip


async def test_no_operation_crosses_namespaces(postgres_dsn: str) -> None:
    """The same id lives in every namespace as an unrelated item; every operation sees its own."""
    shared = MemoryItem(content="shared").id
    stores = [PostgresMemoryStore(postgres_dsn, namespace=ns) for ns in NAMESPACES]
    try:
        for index, store in enumerate(stores):
            own = [MemoryItem(id=shared, content=f"word {index}", tags=["t"], metadata={"k": 1})]
            own += [
                MemoryItem(content=f"word {index} extra {n}", tags=["t"]) for n in range(index % 3)
            ]
            await store.store_many(own)
        for index, (namespace, store) in enumerate(zip(NAMESPACES, stores, strict=True)):
            expected_count = 1 + index % 3
            assert store.namespace == namespace
            assert await store.count() == expected_count
            found = await store.retrieve(shared)
            assert found is not None
            assert found.content == f"word {index}"
            queries = [
                MemoryQuery(limit=100),
                MemoryQuery(text="word", limit=100),
                MemoryQuery(tags=["t"], limit=100),
                MemoryQuery(filters={"k": 1}, limit=100),
            ]
            for query in queries:
                contents = [item.content for item in await store.search(query)]
                assert all(str(c).startswith(f"word {index}") for c in contents), (namespace, query)
            assert len([item async for item in store.items(batch_size=2)]) == expected_count
        # Deleting in one namespace leaves the others alone.
        assert await stores[0].delete(shared) is True
        assert await stores[0].retrieve(shared) is None
        for store in stores[1:]:
            assert await store.retrieve(shared) is not None
        assert (
            sum([await store.count() for store in stores])
            == sum(1 + index % 3 for index in range(len(NAMESPACES))) - 1
        )
    finally:
        for store in stores:
            await store.close()


async def test_namespaces_are_distinct_strings(postgres_dsn: str) -> None:
    """Every pair of the tricky namespaces is distinct in storage (no two share an item)."""
    async with PostgresMemoryStore(postgres_dsn, namespace="x") as probe:
        await probe.open()
    for left, right in itertools.combinations(NAMESPACES[:8], 2):
        item = MemoryItem(content=f"{left!r} only")
        async with PostgresMemoryStore(postgres_dsn, namespace=left) as a:
            await a.store(item)
        async with PostgresMemoryStore(postgres_dsn, namespace=right) as b:
            assert await b.retrieve(item.id) is None
            assert await b.search(MemoryQuery(text="only", limit=100)) == []
        async with PostgresMemoryStore(postgres_dsn, namespace=left) as a:
            assert await a.delete(item.id) is True


async def test_the_longest_namespace_works_and_a_longer_one_is_refused(postgres_dsn: str) -> None:
    """A namespace of 2,000 bytes as stored (random CJK, which PostgreSQL cannot compress, or
    NULs, six bytes each in JSON) works in every operation; one byte more is a ValueError at
    construction, not a database error at the first write."""
    rng = random.Random(7)
    cjk = "".join(chr(rng.randrange(0x4E00, 0xA000)) for _ in range(666))
    for longest in (cjk, "\x00" * 333):
        assert len(json.dumps(longest, ensure_ascii=False).encode()) == 2000
        item = MemoryItem(content="long namespace", tags=["t"], metadata={"k": 1})
        async with PostgresMemoryStore(postgres_dsn, namespace=longest) as store:
            assert store.namespace == longest
            await store.store(item)
            await store.store_many([MemoryItem(content=n) for n in range(3)])
            assert await store.retrieve(item.id) == item
            assert await store.search(MemoryQuery(text="LONG", tags=["t"], filters={"k": 1})) == [
                item
            ]
            assert [i.content async for i in store.items(batch_size=2)] == [
                "long namespace",
                0,
                1,
                2,
            ]
            assert await store.count() == 4
            assert await store.delete(item.id) is True
    for longer in (cjk + "a", "\x00" * 334, "a" * 1999):
        with pytest.raises(ValueError, match=r"namespace is too long: \d+ bytes .* at most 2000"):
            PostgresMemoryStore(postgres_dsn, namespace=longer)
