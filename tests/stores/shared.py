"""Checks that the SQLite and PostgreSQL stores share, run by each store's own tests."""

from __future__ import annotations

import re
from typing import Any

import pytest

from lionmem import InMemoryStore, MemoryItem, MemoryQuery

__all__ = ["one_item_for_many_is_refused", "queries_changed_in_place_answer_as_in_memory"]


async def one_item_for_many_is_refused(store: Any) -> None:
    """``store_many`` and ``store_stream`` take an iterable of items: one ``MemoryItem`` (whose
    iteration would yield its fields) and a non-item among them raise TypeError naming the call,
    and nothing is stored."""
    one = "takes an iterable of MemoryItem, got one MemoryItem: use store()"
    with pytest.raises(TypeError, match=rf"^store_many\(\) {re.escape(one)}"):
        await store.store_many(MemoryItem(content="x"))
    with pytest.raises(TypeError, match=rf"^store_stream\(\) {re.escape(one)}"):
        await store.store_stream(MemoryItem(content="x"))
    with pytest.raises(TypeError, match=r"^store_many\(\) takes MemoryItem items, got a str"):
        await store.store_many([MemoryItem(content="x"), "y"])
    assert await store.count() == 0


async def queries_changed_in_place_answer_as_in_memory(store: Any) -> None:
    """A query whose tags list or filters dict was changed in place after validation (a tag or
    key that is not a string) is answered as ``InMemoryStore`` answers it: such a tag equals no
    stored tag, and such a key is missing from every item's metadata (so it matches ``None``)."""
    reference = InMemoryStore()
    items = [
        MemoryItem(content="a", tags=["a"], metadata={"k": 1}),
        MemoryItem(content="b", tags=["b"], metadata={"k": 2}),
    ]
    for item in items:
        await store.store(item)
        await reference.store(item)

    def changed() -> list[MemoryQuery]:
        queries = []
        odd: Any  # what validation would refuse: the changes below are never validated
        for odd in (5, None, b"a", ("a",)):
            for tags in (["a"], []):
                query = MemoryQuery(tags=tags)
                assert query.tags is not None
                query.tags.append(odd)
                queries.append(query)
            for value in (None, 1):
                query = MemoryQuery(filters={"k": 1})
                assert query.filters is not None
                query.filters[odd] = value
                queries.append(query)
        return queries

    answers = [[item.content for item in await store.search(q)] for q in changed()]
    expected = [[item.content for item in await reference.search(q)] for q in changed()]
    assert answers == expected
    assert answers[:4] == [["a"], [], ["a"], []]
    unhashable = MemoryQuery(tags=["a"])
    assert unhashable.tags is not None
    unhashable.tags.append(["a"])  # type: ignore[arg-type]  # a change validation never sees
    for answering in (reference, store):
        with pytest.raises(TypeError, match="unhashable type: 'list'"):
            await answering.search(unhashable)
