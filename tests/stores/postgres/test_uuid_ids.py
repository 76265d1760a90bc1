"""PostgresMemoryStore stores an id of a UUID subclass by its value, as the SQLite store does."""

from __future__ import annotations

from uuid import UUID

import asyncpg
from asyncpg.pgproto.pgproto import UUID as AsyncpgUUID

from lionmem import MemoryItem, MemoryQuery
from lionmem.stores.postgres import PostgresMemoryStore


class ShoutingId(UUID):
    """A UUID whose str() is not the canonical text."""

    def __str__(self) -> str:
        return "ID-" + super().__str__().upper()


async def test_an_item_with_a_uuid_subclass_id_is_stored_by_its_value(postgres_dsn: str) -> None:
    """asyncpg's own UUID (what a read gives back) and a subclass with its own str() are stored
    under the canonical text and come back as plain UUIDs equal to them."""
    ids = [UUID(int=777 + n) for n in range(4)]
    odd: list[UUID] = [AsyncpgUUID(ids[0].bytes), ShoutingId(int=ids[1].int)]
    odd += [AsyncpgUUID(ids[2].bytes), ShoutingId(int=ids[3].int)]
    async with PostgresMemoryStore(postgres_dsn) as store:
        await store.store(MemoryItem(id=odd[0], content="zero"))
        await store.store(MemoryItem(id=odd[1], content="one"))
        await store.store_many(
            [MemoryItem(id=i, content=str(n + 2)) for n, i in enumerate(odd[2:])]
        )
        for i, content in zip(ids, ["zero", "one", "2", "3"], strict=True):
            got = await store.retrieve(i)
            assert got is not None
            assert (type(got.id), got.id, got.content) == (UUID, i, content)
        found = await store.search(MemoryQuery(limit=10))
        assert sorted(str(item.id) for item in found) == [str(i) for i in ids]
    conn = await asyncpg.connect(postgres_dsn)
    try:
        stored = await conn.fetch("SELECT id::text FROM lionmem_items ORDER BY id")
    finally:
        await conn.close()
    assert [row[0] for row in stored] == [str(i) for i in ids]


async def test_retrieve_and_delete_find_an_item_by_a_uuid_subclass_of_its_id(
    postgres_dsn: str,
) -> None:
    """A lookup by a UUID subclass goes by its value, as InMemoryStore's does, not by its str()."""
    plain = UUID(int=4242)
    async with PostgresMemoryStore(postgres_dsn, namespace="subclass-lookup") as store:
        await store.store(MemoryItem(id=plain, content="found"))
        got = await store.retrieve(ShoutingId(int=plain.int))
        assert got is not None
        assert (got.id, got.content) == (plain, "found")
        assert await store.delete(ShoutingId(int=plain.int)) is True
        assert await store.retrieve(plain) is None
