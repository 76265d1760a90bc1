"""The differential scenario: the same random operations on a store and on ``InMemoryStore``.

``replay`` runs stores, ``store_many`` calls, retrieves and searches drawn with
``tests.strategies`` on both stores and asserts that the ids, their order and every field are the
reference's, then that a search for everything is too. ``operations`` is the strategy of such
steps. The SQLite and PostgreSQL differential tests share both; each brings its own value pools.
"""

from __future__ import annotations

from typing import Any

from hypothesis import event
from hypothesis import strategies as st

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from tests.strategies import Pools, payload

EVERYTHING = MemoryQuery(limit=10**6)


def operations(
    item_specs: st.SearchStrategy[dict[str, Any]], pools: Pools
) -> st.SearchStrategy[list[tuple[str, Any]]]:
    """Up to 14 steps: stores, ``store_many`` of up to 4 items, searches and retrieves."""
    return st.lists(
        st.one_of(
            st.tuples(st.just("store"), item_specs),
            st.tuples(st.just("store_many"), st.lists(item_specs, min_size=1, max_size=4)),
            st.tuples(st.just("search"), st.none()),
            st.tuples(st.just("search"), st.none()),
            st.tuples(st.just("retrieve"), pools.retrieve_ids()),
        ),
        min_size=1,
        max_size=14,
    )


async def replay(
    store: Any,
    data: st.DataObject,
    steps: list[tuple[str, Any]],
    pools: Pools,
    limits: st.SearchStrategy[int],
) -> InMemoryStore:
    """Run ``steps`` on the open ``store`` and on a new ``InMemoryStore`` (returned), asserting
    after each that both answered alike, and at the end that both hold the same items in order."""
    reference = InMemoryStore()
    stored: list[dict[str, Any]] = []
    for kind, argument in steps:
        if kind == "store":
            item = MemoryItem(**argument)
            assert await store.store(item) == await reference.store(item)
            stored.append(argument)
        elif kind == "store_many":
            items = [MemoryItem(**spec) for spec in argument]
            assert await store.store_many(items) == [await reference.store(i) for i in items]
            stored.extend(argument)
        elif kind == "retrieve":
            found = await store.retrieve(argument)
            assert payload(found) == payload(await reference.retrieve(argument))
        else:
            query = MemoryQuery(**pools.query_fields(data, stored, limits))
            found_items = await store.search(query)
            expected = await reference.search(query)
            assert [payload(i) for i in found_items] == [payload(i) for i in expected], query
            event("search found something" if found_items else "search found nothing")
    assert [payload(i) for i in await store.search(EVERYTHING)] == [
        payload(i) for i in await reference.search(EVERYTHING)
    ]
    return reference
