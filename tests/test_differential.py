"""Differential test: lionmem's InMemoryStore against lionagi 0.36.0's, the oracle, on random data.

The same operations run on both stores: stores with colliding ids (replacements), retrieves by
UUID and by string, and searches with random text, tags, filters and limits. The ids returned,
the ids found in order and every payload (id, created_at, metadata, content, tags) must be
identical. Only inputs both accept are generated: the deliberate differences (SEMANTICS.md §9)
have their own tests.
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import lionagi
from hypothesis import event, given, settings
from hypothesis import strategies as st

from lionmem import InMemoryStore, MemoryItem, MemoryQuery

EXAMPLES = 600

SPECIAL = "İßΣσςǅǄǆiIsSk1 '{}:,"  # noqa: RUF001 -- the Greek sigmas are chosen on purpose
ID_POOL = [UUID(int=n * 0x1F1F1F1F1F1F1F1F1F1F1F1F1F1F1F + 7) for n in range(1, 7)]
TAG_POOL = ["a", "b", "A", "", "tag", "ǅ"]
KEY_POOL = ["a", "b", "k", "missing"]
VALUE_POOL: list[Any] = [None, 0, 1, 1.0, True, False, "x", "1", "", [1], (1,), {"n": 1}, 2.5]

WORDS = ["straße", "STRASSE", "ΟΔΟΣ", "οδος", "Σίσυφος", "İstanbul", "ǅemal", "None", "True"]
NEEDLES = [
    "ß",
    "ss",
    "SS",
    "σ",  # noqa: RUF001 -- the Greek small sigma is chosen on purpose
    "ς",
    "Σ",
    "İ",
    "i",
    "i\u0307",
    "ǅ",
    "Ǆ",
    "ǆ",
    "'",
    "none",
    "true",
    "1",
    " ",
]
texts = st.text(alphabet=SPECIAL, max_size=8) | st.text(max_size=6) | st.sampled_from(WORDS)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-30, max_value=30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | texts
)
contents = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
metadatas = st.dictionaries(st.sampled_from(KEY_POOL[:3]), st.sampled_from(VALUE_POOL), max_size=3)
item_specs = st.fixed_dictionaries(
    {
        "id": st.sampled_from(ID_POOL),
        "created_at": st.floats(min_value=0, max_value=2e9, allow_nan=False),
        "metadata": metadatas,
        "content": contents,
        "tags": st.lists(st.sampled_from(TAG_POOL), max_size=3),
    }
)
limits = st.sampled_from([20, 0, 1, 2, 3, 10**6]) | st.integers(min_value=-6, max_value=-1)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("store"), item_specs),
        st.tuples(st.just("search"), st.none()),
        st.tuples(st.just("retrieve"), st.sampled_from([*ID_POOL, UUID(int=1)])),
    ),
    min_size=1,
    max_size=14,
)
id_forms = st.sampled_from(["uuid", "str", "upper", "hex", "garbage", "empty"])


def payload(item: Any) -> str:
    """Everything a caller can read from an item, as text (repr keeps NaN comparable)."""
    if item is None:
        return "None"
    return repr((str(item.id), item.created_at, item.metadata, item.content, item.tags))


def id_form(item_id: UUID, form: str) -> Any:
    return {
        "uuid": item_id,
        "str": str(item_id),
        "upper": str(item_id).upper(),
        "hex": item_id.hex,
        "garbage": "garbage",
        "empty": "",
    }[form]


def draw_text(data: st.DataObject, stored: list[dict[str, Any]]) -> str | None:
    """A needle: None, "", a Unicode trap, a random string or a piece of a stored content."""
    kind = data.draw(st.sampled_from(["none", "empty", "trap", "random", "piece", "piece"]))
    if kind == "none":
        return None
    if kind == "empty":
        return ""
    if kind == "trap":
        return data.draw(st.sampled_from(NEEDLES))
    if kind == "random" or not stored:
        return data.draw(texts)
    source = str(data.draw(st.sampled_from(stored))["content"])
    start = data.draw(st.integers(0, max(0, len(source) - 1)))
    end = data.draw(st.integers(min(len(source), start + 1), min(len(source), start + 6)))
    piece = source[start:end]
    return piece.swapcase() if data.draw(st.booleans()) else piece


def draw_tags(data: st.DataObject, stored: list[dict[str, Any]]) -> list[str] | None:
    """Query tags: None, [], random tags, or tags of a stored item plus maybe another."""
    kind = data.draw(st.sampled_from(["none", "empty", "random", "stored"]))
    if kind == "none":
        return None
    if kind == "empty":
        return []
    extra = data.draw(st.lists(st.sampled_from(TAG_POOL), min_size=1, max_size=2))
    if kind == "random" or not stored:
        return extra
    return [*data.draw(st.sampled_from(stored))["tags"], *extra[:1]]


EQUAL_TWINS: dict[Any, list[Any]] = {1: [1, 1.0, True], 0: [0, 0.0, False], None: [None]}


def draw_filters(data: st.DataObject, stored: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Filters: None, {}, random ones, or entries of a stored item's metadata (1 as 1.0 or True)."""
    kind = data.draw(st.sampled_from(["none", "empty", "random", "stored", "stored"]))
    if kind == "none":
        return None
    if kind == "empty":
        return {}
    random_filters = data.draw(
        st.dictionaries(st.sampled_from(KEY_POOL), st.sampled_from(VALUE_POOL), max_size=2)
    )
    if kind == "random" or not stored:
        return random_filters or {"missing": None}
    filters: dict[str, Any] = {}
    for key, value in data.draw(st.sampled_from(stored))["metadata"].items():
        if data.draw(st.booleans()):
            twins = EQUAL_TWINS.get(value, [value]) if isinstance(value, int | None) else [value]
            filters[key] = data.draw(st.sampled_from(twins))
    if data.draw(st.booleans()):
        filters["missing"] = None
    return filters or random_filters


async def scenario(data: st.DataObject, steps: list[tuple[str, Any]]) -> int:
    ours, oracle = InMemoryStore(), lionagi.InMemoryStore()
    stored: list[dict[str, Any]] = []
    compared = 0
    for kind, argument in steps:
        if kind == "store":
            spec: dict[str, Any] = argument
            mine = MemoryItem(**spec)
            theirs = lionagi.MemoryItem(**spec)
            assert (await ours.store(mine), await oracle.store(theirs)) == (mine.id, theirs.id)
            stored.append(spec)
        elif kind == "retrieve":
            key = id_form(argument, data.draw(id_forms))
            assert payload(await ours.retrieve(key)) == payload(await oracle.retrieve(key))
        else:
            fields = {
                "text": draw_text(data, stored),
                "tags": draw_tags(data, stored),
                "filters": draw_filters(data, stored),
                "limit": data.draw(limits),
            }
            found = await ours.search(MemoryQuery(**fields))
            expected = await oracle.search(lionagi.MemoryQuery(**fields))
            assert [i.id for i in found] == [i.id for i in expected], fields
            assert [payload(i) for i in found] == [payload(i) for i in expected], fields
            event("search found something" if found else "search found nothing")
        compared += 1
    everything = await ours.search(MemoryQuery(limit=10**6))
    assert [payload(i) for i in everything] == [
        payload(i) for i in await oracle.search(lionagi.MemoryQuery(limit=10**6))
    ]
    return compared


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data(), first=st.lists(item_specs, min_size=1, max_size=8), steps=operations)
def test_same_results_as_lionagi(
    data: st.DataObject, first: list[dict[str, Any]], steps: list[tuple[str, Any]]
) -> None:
    """Every store, retrieve and search gives lionagi 0.36.0's ids and payloads, in its order."""
    script = [("store", spec) for spec in first] + steps
    assert asyncio.run(scenario(data, script)) == len(script)


def test_the_oracle_is_lionagi_0_36_0() -> None:
    """The differential test runs against the pinned oracle version."""
    from importlib.metadata import version

    assert version("lionagi") == "0.36.0"
