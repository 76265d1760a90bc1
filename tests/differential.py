"""The differential scenario: the same random operations on a store and on ``InMemoryStore``.

``replay`` runs stores, ``store_many`` calls, retrieves and searches drawn with
``tests.strategies`` on both stores and asserts that the ids, their order and every field are the
reference's (or the same exception: a filter value's own ``==`` may raise), then that a search
for everything is too. ``operations`` is the strategy of such steps. The SQLite and PostgreSQL
differential tests share both; each brings its own value pools. ``RAISING_FILTERS`` pins the
order in which filters are compared, which random data rarely reaches.
"""

from __future__ import annotations

from collections.abc import Awaitable
from decimal import Decimal
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
            found = await outcome(store.search(query))
            assert found == await outcome(reference.search(query)), query
            if isinstance(found, str):
                event("search raised")
            else:
                event("search found something" if found else "search found nothing")
    assert [payload(i) for i in await store.search(EVERYTHING)] == [
        payload(i) for i in await reference.search(EVERYTHING)
    ]
    return reference


async def outcome(search: Awaitable[list[MemoryItem]]) -> list[str] | str:
    """The payloads a search returned, or the name of the exception it raised (a filter
    value's own ``==`` may raise, as ``Decimal("sNaN")`` does against a number)."""
    try:
        return [payload(item) for item in await search]
    except ArithmeticError as exc:
        return type(exc).__qualname__


FILTERED = [
    MemoryItem(content="one", metadata={"user": 1, "team": "red"}),
    MemoryItem(content="two", metadata={"user": 2, "team": "red"}),
    MemoryItem(content="three", metadata={"team": "blue"}),
]
"""Items for ``RAISING_FILTERS``."""

RAISING_FILTERS: list[tuple[MemoryQuery, list[str] | str]] = [
    # The reference compares "user" first, on the first item: its == raises, whatever follows.
    (MemoryQuery(filters={"user": Decimal("sNaN"), "team": "green"}), "InvalidOperation"),
    (MemoryQuery(filters={"user": Decimal("sNaN"), "team": None}), "InvalidOperation"),
    (
        MemoryQuery(filters={"user": Decimal("sNaN"), "zone": None, "team": "green"}),
        "InvalidOperation",
    ),
    # Nothing lets a number reach it (None == sNaN is False): no comparison raises.
    (MemoryQuery(filters={"team": "green", "user": Decimal("sNaN")}), []),
    (MemoryQuery(filters={"team": "blue", "user": Decimal("sNaN")}), []),
    (MemoryQuery(text="zzz", filters={"user": Decimal("sNaN"), "team": "green"}), []),
    (MemoryQuery(tags=["x"], filters={"user": Decimal("sNaN")}), []),
]
"""Searches of ``FILTERED`` with a filter value whose ``==`` raises against a number, and the
outcome the reference gives (it compares the filters in order, item by item): each store must
raise where it raises and answer where it answers."""
