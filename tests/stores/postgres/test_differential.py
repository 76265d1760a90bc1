"""Differential test: PostgresMemoryStore against InMemoryStore, the reference, on random data.

The same stores (with colliding ids, so replacements happen), retrieves and searches run on both,
each example in a namespace of its own. The ids found, in order, and every field of every item
must be identical, for every non-negative limit. Content is what the store holds exactly (plain
JSON values); needles mix Unicode case traps, NUL and its stand-in, LIKE syntax (``%``, ``_``,
``\\``) and pieces of stored content long enough to use the trigram index.
"""

from __future__ import annotations

import asyncio
import itertools
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from lionmem.stores.postgres import PostgresMemoryStore
from tests.differential import EVERYTHING, operations, replay
from tests.postgres_support import Cluster
from tests.profiles import examples
from tests.strategies import (
    MISSING,
    WORDS,
    Pools,
    id_pool,
    json_values,
    payload,
    scalar_values,
    text_values,
)

EXAMPLES = examples(300)

SPECIAL = "İßΣσςǅiIsSK\u212a1 '\"%_\\\x00\ufffd"  # noqa: RUF001 - the Greek sigmas are chosen on purpose
VALUE_POOL: list[Any] = [None, 0, 1, 1.0, True, False, "x", "1", "", [1], {"n": 1}, 2.5, -0.0]
texts = text_values(SPECIAL, special_size=10, other_size=8, phrases=True)
POOLS = Pools(
    ids=id_pool(8),
    tags=["a", "b", "A", "", "tag", "ǅ", "%", "a\x00", "\\", "x" * 300],
    keys=["a", "b", "k", "it's", "k" * 300, MISSING],
    values=VALUE_POOL,
    filter_values=[*VALUE_POOL, (1,), Decimal(1), Decimal("sNaN"), "y" * 300, [True, {"n": 1.0}]],
    equal_twins={1: [1, 1.0, True, Decimal(1)], 0: [0, 0.0, -0.0, False], None: [None]},
    needles=[
        "ß", "ss", "\u03c3", "ς", "Σ", "ΟΣ", "\u03bf\u03b4\u03bf\u03c2", "İ", "i\u0307", "i\u0307st", "ǅ", "ǆ", "k",
        "\u212a", "'", "none", "true", "1", " ", "%", "_", "\\", "a_b", "a%", '"', "\x00",
        "\ufffd", "\x00\ufffd", "straße", "{'",
    ],
    texts=texts,
    piece_size=9,
)  # fmt: skip
scalars = scalar_values(texts, st.floats(allow_nan=False, allow_infinity=False))
item_specs = POOLS.item_specs(
    created_at=st.floats(allow_nan=False, allow_infinity=False),
    contents=json_values(scalars, keys=texts),
)
limits = st.sampled_from([20, 0, 1, 2, 3, 10**6, 2**70])
steps_of = operations(item_specs, POOLS)
_namespaces = itertools.count()


@pytest.fixture(scope="module")
def database(postgres_server: Cluster) -> str:
    """One database for the module's examples (each example uses a namespace of its own)."""
    return postgres_server.dsn(postgres_server.fresh_database("differential"))


async def scenario(dsn: str, data: st.DataObject, steps: list[tuple[str, Any]]) -> None:
    async with PostgresMemoryStore(dsn, namespace=f"example {next(_namespaces)}") as store:
        reference = await replay(store, data, steps, POOLS, limits)
        assert [payload(i) async for i in store.items(batch_size=3)] == [
            payload(i) for i in await reference.search(EVERYTHING)
        ]


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data(), first=st.lists(item_specs, min_size=1, max_size=8), steps=steps_of)
def test_same_results_as_the_reference_store(
    database: str, data: st.DataObject, first: list[dict[str, Any]], steps: list[tuple[str, Any]]
) -> None:
    """Every store, retrieve and search gives InMemoryStore's items, fields and order exactly."""
    asyncio.run(scenario(database, data, [("store", spec) for spec in first] + steps))


LARGER_NEEDLES = ["straße", "οδος", "i\u0307stanbul", "none", "ab", "ΣΣ", "σσσ", "s"]  # noqa: RUF001 - Greek on purpose


@settings(max_examples=examples(30), deadline=None)
@given(
    words=st.lists(st.sampled_from([*WORDS, "ab", "İß", "ΣΣΣ"]), min_size=60, max_size=120),
    needle=st.sampled_from(LARGER_NEEDLES),
    limit=st.sampled_from([1, 2, 5, 20]),
)
def test_limit_stops_at_the_same_items_on_larger_stores(
    database: str, words: list[str], needle: str, limit: int
) -> None:
    """With many matching items, the first ``limit`` matches are the reference's."""

    async def run() -> None:
        reference = InMemoryStore()
        async with PostgresMemoryStore(database, namespace=f"larger {next(_namespaces)}") as store:
            items = [
                MemoryItem(content=f"{n} {word}", tags=[word], metadata={"n": n % 3})
                for n, word in enumerate(words)
            ]
            await store.store_many(items)
            for item in items:
                await reference.store(item)
            for query in (
                MemoryQuery(text=needle, limit=limit),
                MemoryQuery(text=needle, tags=["ab", "ΣΣΣ", "None"], limit=limit),
                MemoryQuery(filters={"n": Decimal(1)}, limit=limit),
                MemoryQuery(text=needle, filters={"n": 1.0}, limit=limit),
            ):
                found = [payload(i) for i in await store.search(query)]
                assert found == [payload(i) for i in await reference.search(query)], query

    asyncio.run(run())
