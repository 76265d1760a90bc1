"""Differential test: SQLiteMemoryStore against InMemoryStore, the reference, on random data.

The same stores (with colliding ids, so replacements happen), retrieves and searches run on both,
with the worker indexing the newest items after every write, after a few, or never (so searches
read indexed items, unindexed ones, or both), on a private in-memory database (every write in the
worker) or on a file at ``synchronous=NORMAL`` (new items inserted in the caller's thread).
The ids found, in order, and every field of every item must be identical, for every non-negative
limit. Content is restricted to what the SQLite store can hold exactly (plain JSON values); the
refusals of everything else have their own tests. Needles mix Unicode traps (dotted I, sharp s, the sigmas, ǅ), NUL,
SQL and FTS syntax, and pieces of stored content long enough to use the trigram index.
"""

from __future__ import annotations

import asyncio
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from lionmem.stores import _sqlite_query, sqlite
from lionmem.stores.sqlite import SQLiteMemoryStore
from tests.differential import operations, replay
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

SPECIAL = "İßΣσςǅǄǆiIsSk1 '\"{}:,%_\x00"  # noqa: RUF001 - the Greek sigmas are chosen on purpose
VALUE_POOL: list[Any] = [None, 0, 1, 1.0, True, False, "x", "1", "", [1], {"n": 1}, 2.5, -0.0]
texts = text_values(SPECIAL, special_size=10, other_size=8, phrases=True)
POOLS = Pools(
    ids=id_pool(8),
    tags=["a", "b", "A", "", "tag", "ǅ", "%", "a\x00"],
    keys=["a", "b", "k", "it's", MISSING],
    values=VALUE_POOL,
    filter_values=[*VALUE_POOL, (1,), Decimal("sNaN")],
    equal_twins={1: [1, 1.0, True], 0: [0, 0.0, -0.0, False], None: [None]},
    needles=[
        "ß",
        "ss",
        "SS",
        "σ",  # noqa: RUF001 - the Greek small sigma is chosen on purpose
        "ς",
        "Σ",
        "ΟΣ",
        "οδος",
        "İ",
        "i",
        "i\u0307",
        "i\u0307st",
        "ǅ",
        "Ǆ",
        "ǆ",
        "'",
        "none",
        "true",
        "1",
        " ",
        "%",
        "_",
        '"',
        "\x00",
        "straße",
        "{'",
    ],
    texts=texts,
    piece_size=9,
)
scalars = scalar_values(texts, st.floats(allow_nan=False, allow_infinity=False))
item_specs = POOLS.item_specs(
    created_at=st.floats(allow_nan=False, allow_infinity=False),
    contents=json_values(scalars, keys=texts),
)
limits = st.sampled_from([20, 0, 1, 2, 3, 10**6])
tails = st.sampled_from([0, 1, 3, 10**9])
"""Writes after which the worker indexes the newest items (``TAIL_ITEMS``)."""
places = st.sampled_from(["memory", "file at NORMAL"])
"""Where the store keeps its items: ``":memory:"``, or a file whose new items are inserted in the
caller's thread."""
steps_of = operations(item_specs, POOLS)


async def scenario(data: st.DataObject, steps: list[tuple[str, Any]]) -> None:
    with (
        mock.patch.object(sqlite, "TAIL_ITEMS", data.draw(tails, label="tail")),
        tempfile.TemporaryDirectory() as directory,
    ):
        if data.draw(places, label="place") == "memory":
            store = SQLiteMemoryStore(":memory:")
        else:
            store = SQLiteMemoryStore(Path(directory) / "memory.db", synchronous="NORMAL")
        async with store:
            await replay(store, data, steps, POOLS, limits)


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data(), first=st.lists(item_specs, min_size=1, max_size=8), steps=steps_of)
def test_same_results_as_the_reference_store(
    data: st.DataObject, first: list[dict[str, Any]], steps: list[tuple[str, Any]]
) -> None:
    """Every store, retrieve and search gives InMemoryStore's items, fields and order exactly."""
    asyncio.run(scenario(data, [("store", spec) for spec in first] + steps))


LARGER_NEEDLES = ["straße", "οδος", "i\u0307stanbul", "none", "ab", "ΣΣ", "σσσ", "s"]  # noqa: RUF001 - Greek on purpose


@settings(max_examples=examples(150), deadline=None)
@given(data=st.data(), first=st.lists(item_specs, min_size=1, max_size=8), steps=steps_of)
def test_same_results_whichever_predicate_drives(
    data: st.DataObject, first: list[dict[str, Any]], steps: list[tuple[str, Any]]
) -> None:
    """With the driver cap at 2 rows, the trigram index drives more often; results stay equal."""
    with mock.patch.object(_sqlite_query, "CAP", 2):
        asyncio.run(scenario(data, [("store", spec) for spec in first] + steps))


@settings(max_examples=examples(40), deadline=None)
@given(
    words=st.lists(st.sampled_from([*WORDS, "ab", "İß", "ΣΣΣ"]), min_size=60, max_size=120),
    needle=st.sampled_from(LARGER_NEEDLES),
    limit=st.sampled_from([1, 2, 5, 20]),
)
def test_limit_stops_at_the_same_items_on_larger_stores(
    words: list[str], needle: str, limit: int
) -> None:
    """With many matching items, the first ``limit`` matches are the reference's, whether the
    items are indexed, in the tail, or split between the two."""

    async def run() -> None:
        reference = InMemoryStore()
        async with SQLiteMemoryStore(":memory:") as store:
            items = [MemoryItem(content=f"{n} {word}", tags=[word]) for n, word in enumerate(words)]
            half = len(items) // 2
            await store.store_many(items[:half])
            await store.open()  # the worker has indexed the first half
            await store.store_many(items[half:])
            for item in items:
                await reference.store(item)
            for query in (
                MemoryQuery(text=needle, limit=limit),
                MemoryQuery(text=needle, tags=["ab", "ΣΣΣ", "None"], limit=limit),
            ):
                found = [payload(i) for i in await store.search(query)]
                assert found == [payload(i) for i in await reference.search(query)], query

    with mock.patch.object(sqlite, "TAIL_ITEMS", 30):
        asyncio.run(run())
