"""Differential test: LionagiMemoryStore over every lionmem store against lionagi 0.36.0's InMemoryStore.

The same lionagi items are stored in both (ids collide, so items are replaced in place), read back
by id in every form, and searched with random text, tags, filters and limits, negative and huge
ones included. The ids, their order and every field must be the oracle's, and every item returned
must be a real lionagi ``MemoryItem`` whose ``model_dump()`` is the oracle's. Values are those every
store keeps exactly (plain JSON, finite floats); the refusals have their own tests.
"""

from __future__ import annotations

import asyncio
from typing import Any

import lionagi
from hypothesis import event, given, settings
from hypothesis import strategies as st

from lionmem.integrations.lionagi import LionagiMemoryStore
from tests.integrations.stores import NewStore
from tests.profiles import examples
from tests.strategies import (
    ID_FORMS,
    MISSING,
    WORDS,
    Pools,
    id_form,
    id_pool,
    json_values,
    scalar_values,
    text_values,
)
from tests.strategies import payload as fields_of

EXAMPLES = examples(500)
LION_CLASS = "lionagi.protocols.memory.MemoryItem"

SPECIAL = "İßΣσςǅǄǆiIsSk1 '\"{}:,%_\x00"  # noqa: RUF001 - the Greek sigmas are chosen on purpose
VALUE_POOL: list[Any] = [None, 0, 1, 1.0, True, False, "x", "1", "", [1], {"n": 1}, 2.5, -0.0]
texts = text_values(SPECIAL, special_size=8, other_size=6, phrases=False)
POOLS = Pools(
    ids=id_pool(6),
    tags=["a", "b", "A", "", "tag", "ǅ", "%"],
    keys=["a", "b", "k", "lion_class", MISSING],
    values=VALUE_POOL,
    filter_values=[*VALUE_POOL, LION_CLASS, (1,)],
    equal_twins={1: [1, 1.0, True], 0: [0, 0.0, -0.0, False], None: [None]},
    needles=[
        "ß",
        "SS",
        "σ",  # noqa: RUF001 - the Greek small sigma is chosen on purpose
        "ς",
        "Σ",
        "İ",
        "i\u0307",
        "ǅ",
        "Ǆ",
        "'",
        "none",
        "true",
        "1",
        " ",
        "%",
    ],
    texts=texts,
    piece_size=6,
)
scalars = scalar_values(texts, st.floats(allow_nan=False, allow_infinity=False))


def with_lion_class(spec: dict[str, Any], tagged: bool) -> dict[str, Any]:
    """The spec, its metadata naming lionagi's class when ``tagged`` (as ``to_dict()`` output does)."""
    metadata = {key: value for key, value in spec["metadata"].items() if key != "lion_class"}
    if tagged:
        metadata["lion_class"] = LION_CLASS
    return {**spec, "metadata": metadata}


item_specs = st.builds(
    with_lion_class,
    POOLS.item_specs(
        created_at=st.floats(allow_nan=False, allow_infinity=False),
        contents=json_values(scalars, keys=texts),
    ),
    st.booleans(),
)
# Half the searches have a negative limit, mostly -1 (the cut that most often leaves results).
limits = st.sampled_from([20, 0, 1, 2, 3, 10**6, 10**30]) | st.sampled_from(
    [-1, -1, -1, -2, -3, -6, -(10**30)]
)
# Queries that match many items (none or a few common tags), so that negative limits cut a list.
wide_queries = st.fixed_dictionaries(
    {
        "tags": st.none() | st.lists(st.sampled_from(POOLS.tags), min_size=2, max_size=4),
        "limit": st.sampled_from([-1, -2, -3, -5, 2]),
    }
)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("store"), item_specs),
        st.tuples(st.just("store_many"), st.lists(item_specs, min_size=1, max_size=4)),
        st.tuples(st.just("search"), st.none()),
        st.tuples(st.just("search"), st.none()),
        st.tuples(st.just("wide search"), st.none()),
        st.tuples(st.just("retrieve"), POOLS.retrieve_ids()),
    ),
    min_size=1,
    max_size=14,
)


def payload(item: Any) -> str:
    """Every field as text, of a real lionagi ``MemoryItem`` (or ``None``)."""
    assert item is None or type(item) is lionagi.MemoryItem, type(item)
    return fields_of(item)


def same(found: list[Any], expected: list[Any], context: object) -> None:
    assert [i.id for i in found] == [i.id for i in expected], context
    assert [payload(i) for i in found] == [payload(i) for i in expected], context
    assert [i.model_dump() for i in found] == [i.model_dump() for i in expected], context


async def scenario(new_store: NewStore, data: st.DataObject, steps: list[tuple[str, Any]]) -> None:
    oracle = lionagi.InMemoryStore()
    stored: list[dict[str, Any]] = []
    async with new_store() as wrapped, LionagiMemoryStore(wrapped) as store:
        for kind, argument in steps:
            if kind == "store":
                item = lionagi.MemoryItem(**argument)
                assert await store.store(item) == await oracle.store(item) == item.id
                stored.append(argument)
            elif kind == "store_many":
                items = [lionagi.MemoryItem(**spec) for spec in argument]
                assert await store.store_many(items) == [await oracle.store(i) for i in items]
                stored.extend(argument)
            elif kind == "retrieve":
                key = id_form(argument, data.draw(ID_FORMS))
                assert payload(await store.retrieve(key)) == payload(await oracle.retrieve(key))
            else:
                fields = (
                    POOLS.query_fields(data, stored, limits)
                    if kind == "search"
                    else data.draw(wide_queries)
                )
                query = lionagi.MemoryQuery(**fields)
                found = await store.search(query)
                expected = await oracle.search(query)
                same(found, expected, fields)
                sign = "negative" if query.limit < 0 else "zero" if query.limit == 0 else "positive"
                event(f"{sign} limit, {'some' if expected else 'no'} results")
        everything = lionagi.MemoryQuery(limit=10**6)
        same(await store.search(everything), await oracle.search(everything), "everything")


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data(), first=st.lists(item_specs, min_size=1, max_size=8), steps=operations)
def test_same_results_as_lionagi(
    new_store: NewStore,
    data: st.DataObject,
    first: list[dict[str, Any]],
    steps: list[tuple[str, Any]],
) -> None:
    """Every store, retrieve and search gives lionagi InMemoryStore's items, fields and order."""
    asyncio.run(scenario(new_store, data, [("store", spec) for spec in first] + steps))


@settings(max_examples=examples(40), deadline=None)
@given(
    words=st.lists(st.sampled_from([*WORDS, "ab", "İß"]), min_size=40, max_size=120),
    needle=st.sampled_from(["straße", "οδος", "none", "ab", "s", ""]),
    tags=st.sampled_from([None, ["ab"], ["ab", "None", "straße"]]),
    limit=st.sampled_from([-1, -2, -7, -39, -40, -41, -119, -(10**6), 1, 5, 20]),
)
def test_negative_limits_drop_the_same_matches_on_larger_stores(
    new_store: NewStore, words: list[str], needle: str, tags: list[str] | None, limit: int
) -> None:
    """With many matches, a negative limit drops the same last matches as lionagi's slice."""

    async def run() -> None:
        oracle = lionagi.InMemoryStore()
        async with new_store() as wrapped:
            store = LionagiMemoryStore(wrapped)
            items = [
                lionagi.MemoryItem(content=f"{n} {word}", tags=[word])
                for n, word in enumerate(words)
            ]
            await store.store_many(items)
            for item in items:
                await oracle.store(item)
            query = lionagi.MemoryQuery(text=needle, tags=tags, limit=limit)
            same(await store.search(query), await oracle.search(query), query)

    asyncio.run(run())


def test_the_oracle_is_lionagi_0_36_0() -> None:
    """The differential runs against the lionagi version the integration is pinned to."""
    from importlib.metadata import version

    assert version("lionagi") == "0.36.0"
