"""SQLiteMemoryStore.search: the reference semantics of SEMANTICS.md §5.3, reproduced exactly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from lionmem import MemoryItem, MemoryQuery
from lionmem.errors import UnsupportedMemoryQuery
from lionmem.stores._sqlite_query import MAX_TAGS
from lionmem.stores.sqlite import SQLiteMemoryStore
from tests.differential import FILTERED, RAISING_FILTERS, outcome
from tests.stores.sqlite.support import contents, fill


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteMemoryStore]:
    async with SQLiteMemoryStore(tmp_path / "memory.db") as opened:
        yield opened


async def texts(store: SQLiteMemoryStore, stored: list[Any], needle: str) -> list[Any]:
    await fill(store, *(MemoryItem(content=content) for content in stored))
    return await contents(store, MemoryQuery(text=needle, limit=1000))


# ---------------------------------------------------------------- text


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        ("ß", ["straße"]),
        ("SS", []),
        ("ss", []),
        ("STRAßE", ["straße"]),
        ("ς", ["ΟΔΟΣ"]),
        ("Σ", []),
        ("σ", []),  # noqa: RUF001 - the Greek small sigma is the point of the case
        ("İ", ["İstanbul"]),
        ("i", ["İstanbul"]),
        ("i\u0307", ["İstanbul"]),
        ("ǅ", ["ǅemal"]),
        ("Ǆ", ["ǅemal"]),
        ("ǆ", ["ǅemal"]),
        ("İSTANBUL", ["İstanbul"]),
        ("ΟΔΟΣ", ["ΟΔΟΣ"]),
        ("odos", []),
    ],
)
async def test_text_uses_python_lower(
    store: SQLiteMemoryStore, needle: str, expected: list[str]
) -> None:
    """Matching is ``needle.lower() in str(content).lower()``, not casefold or SQLite folding."""
    assert await texts(store, ["straße", "ΟΔΟΣ", "İstanbul", "ǅemal"], needle) == expected


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        ("'k'", [{"k": "v"}]),
        ("{'k': 'v'}", [{"k": "v"}]),
        ('{"k"', []),
        ("none", [None]),
        ("[1, 'two']", [[1, "two"]]),
        ("true", [True]),
        ("1.5", [1.5]),
    ],
)
async def test_text_matches_the_python_repr(
    store: SQLiteMemoryStore, needle: str, expected: list[Any]
) -> None:
    """Non-string content is searched through its str(): dict reprs, None, lists, bools, floats."""
    stored: list[Any] = [{"k": "v"}, None, [1, "two"], True, 1.5]
    assert await texts(store, stored, needle) == expected


async def test_text_matches_ints_by_digits(store: SQLiteMemoryStore) -> None:
    """Int content 10..19 and 21 match "1" among 0..21."""
    assert await texts(store, list(range(22)), "1") == [1, *range(10, 20), 21]


async def test_space_is_a_real_needle(store: SQLiteMemoryStore) -> None:
    """ " " matches only content whose str() holds a space."""
    assert await texts(store, ["a b", "ab", [1, 2]], " ") == ["a b", [1, 2]]


async def test_empty_text_applies_no_predicate(store: SQLiteMemoryStore) -> None:
    """text="" matches everything."""
    assert await texts(store, ["a", None, 3], "") == ["a", None, 3]


async def test_long_needle_uses_the_index_and_stays_exact(store: SQLiteMemoryStore) -> None:
    """A needle of three or more characters finds exactly the substring matches."""
    stored = ["the cat sat", "cathedral", "CATALOG", "ca t", "dog"]
    assert await texts(store, stored, "cat") == ["the cat sat", "cathedral", "CATALOG"]


async def test_needle_spanning_a_nul_still_matches(store: SQLiteMemoryStore) -> None:
    """Text after a NUL is searchable, and a needle containing NUL matches literally."""
    stored = ["ab\x00cdef", "abcdef"]
    assert (
        await texts(store, stored, "cdef"),
        await contents(store, MemoryQuery(text="b\x00c")),
    ) == (
        ["ab\x00cdef", "abcdef"],
        ["ab\x00cdef"],
    )


async def test_needle_with_lone_surrogate_matches_nothing(store: SQLiteMemoryStore) -> None:
    """No stored text holds a lone surrogate, so such a needle finds nothing."""
    assert await texts(store, ["a", "b", "\\ud800"], "\ud800") == []


async def test_text_match_survives_replacement(store: SQLiteMemoryStore) -> None:
    """After a replacement the new content is searched, not the old."""
    item = MemoryItem(content="old words")
    await fill(store, item, MemoryItem(id=item.id, content="new words"))
    assert (
        await contents(store, MemoryQuery(text="old")),
        await contents(store, MemoryQuery(text="new")),
    ) == ([], ["new words"])


# ---------------------------------------------------------------- tags


async def test_tags_match_any_of(store: SQLiteMemoryStore) -> None:
    """An item matches when it carries at least one query tag."""
    await fill(
        store,
        MemoryItem(content=1, tags=["a"]),
        MemoryItem(content=2, tags=["b", "c"]),
        MemoryItem(content=3, tags=["d"]),
    )
    assert await contents(store, MemoryQuery(tags=["a", "c"])) == [1, 2]


async def test_tags_are_case_sensitive(store: SQLiteMemoryStore) -> None:
    """ "A" does not match the tag "a"."""
    await fill(store, MemoryItem(content=1, tags=["a"]), MemoryItem(content=2, tags=["A"]))
    assert await contents(store, MemoryQuery(tags=["A"])) == [2]


async def test_empty_string_tag_matches_only_that_tag(store: SQLiteMemoryStore) -> None:
    """[""] matches an item tagged "" and nothing else."""
    await fill(store, MemoryItem(content=1, tags=[""]), MemoryItem(content=2, tags=["x"]))
    assert await contents(store, MemoryQuery(tags=[""])) == [1]


async def test_duplicate_tags_match_once(store: SQLiteMemoryStore) -> None:
    """An item carrying a tag twice is returned once."""
    await fill(store, MemoryItem(content=1, tags=["a", "a"]))
    assert await contents(store, MemoryQuery(tags=["a", "a"])) == [1]


async def test_empty_tag_list_applies_no_predicate(store: SQLiteMemoryStore) -> None:
    """tags=[] matches everything."""
    await fill(store, MemoryItem(content=1, tags=["a"]), MemoryItem(content=2))
    assert await contents(store, MemoryQuery(tags=[])) == [1, 2]


async def test_tag_results_follow_insertion_order_not_tag_order(store: SQLiteMemoryStore) -> None:
    """Several tags return their items in insertion order."""
    await fill(
        store,
        MemoryItem(content=1, tags=["z"]),
        MemoryItem(content=2, tags=["a"]),
        MemoryItem(content=3, tags=["z", "a"]),
    )
    assert await contents(store, MemoryQuery(tags=["a", "z"])) == [1, 2, 3]


async def test_replaced_tags_are_searched(store: SQLiteMemoryStore) -> None:
    """A replacement's tags replace the old ones in tag search."""
    item = MemoryItem(content=1, tags=["old"])
    await fill(store, item, MemoryItem(id=item.id, content=1, tags=["new"]))
    assert (
        await contents(store, MemoryQuery(tags=["old"])),
        await contents(store, MemoryQuery(tags=["new"])),
    ) == ([], [1])


async def test_astral_tag_is_not_matched_by_its_surrogate_halves(store: SQLiteMemoryStore) -> None:
    """The two lone surrogates that encode 😀 in UTF-16 are not the tag 😀."""
    await fill(store, MemoryItem(content=1, tags=["😀"]))
    assert await contents(store, MemoryQuery(tags=["\ud83d\ude00", "other"])) == []


# ---------------------------------------------------------------- filters


async def filtered(store: SQLiteMemoryStore, filters: dict[str, Any]) -> list[Any]:
    return await contents(store, MemoryQuery(filters=filters, limit=1000))


NUMBERS = [
    MemoryItem(content="int", metadata={"k": 1}),
    MemoryItem(content="float", metadata={"k": 1.0}),
    MemoryItem(content="bool", metadata={"k": True}),
    MemoryItem(content="str", metadata={"k": "1"}),
    MemoryItem(content="zero", metadata={"k": 0}),
    MemoryItem(content="false", metadata={"k": False}),
    MemoryItem(content="missing", metadata={}),
    MemoryItem(content="null", metadata={"k": None}),
    MemoryItem(content="list", metadata={"k": [1]}),
]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, ["int", "float", "bool"]),
        (1.0, ["int", "float", "bool"]),
        (True, ["int", "float", "bool"]),
        (Decimal(1), ["int", "float", "bool"]),
        (Fraction(1, 1), ["int", "float", "bool"]),
        (0, ["zero", "false"]),
        (-0.0, ["zero", "false"]),
        ("1", ["str"]),
        (None, ["missing", "null"]),
        ([1], ["list"]),
        ([1.0], ["list"]),
        ([True], ["list"]),
        ((1,), []),
        (float("nan"), []),
        (float("inf"), []),
    ],
    ids=repr,
)
async def test_filters_use_python_equality(
    store: SQLiteMemoryStore, value: Any, expected: list[str]
) -> None:
    """A filter matches exactly the items whose metadata value == the filter value in Python."""
    await fill(store, *NUMBERS)
    assert await filtered(store, {"k": value}) == expected


async def test_none_filter_on_an_absent_key_matches_everything(store: SQLiteMemoryStore) -> None:
    """{"zz": None} matches every item, since no item has zz."""
    await fill(store, *NUMBERS)
    assert len(await filtered(store, {"zz": None})) == len(NUMBERS)


async def test_nested_filter_values_compare_exactly(store: SQLiteMemoryStore) -> None:
    """Dicts compare by content regardless of key order; lists compare by order."""
    await fill(
        store,
        MemoryItem(content="ab", metadata={"k": {"a": 1, "b": [1, 2]}}),
        MemoryItem(content="ba", metadata={"k": {"b": [1, 2], "a": 1.0}}),
        MemoryItem(content="rev", metadata={"k": {"a": 1, "b": [2, 1]}}),
        MemoryItem(content="more", metadata={"k": {"a": 1, "b": [1, 2], "c": 0}}),
    )
    assert await filtered(store, {"k": {"b": [1, 2], "a": True}}) == ["ab", "ba"]


async def test_long_nested_values_compare_exactly(store: SQLiteMemoryStore) -> None:
    """Values too long to index verbatim (stored as digests) still match exactly."""
    long_value = {"text": "x" * 500, "n": list(range(50))}
    other = {"text": "x" * 500, "n": [*range(49), 0]}
    await fill(
        store,
        MemoryItem(content="same", metadata={"k": long_value}),
        MemoryItem(content="other", metadata={"k": other}),
    )
    assert await filtered(store, {"k": dict(long_value)}) == ["same"]


async def test_all_filters_must_match(store: SQLiteMemoryStore) -> None:
    """Several filters combine with AND."""
    await fill(
        store,
        MemoryItem(content=1, metadata={"a": 1, "b": 2}),
        MemoryItem(content=2, metadata={"a": 1, "b": 3}),
        MemoryItem(content=3, metadata={"a": 2, "b": 2}),
    )
    assert await filtered(store, {"a": 1, "b": 2}) == [1]


async def test_filter_value_with_custom_equality_is_decided_by_python(
    store: SQLiteMemoryStore,
) -> None:
    """An object whose __eq__ accepts everything matches every item, as in the reference."""

    class Anything:
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = None  # type: ignore[assignment]  # unhashable, like any class with __eq__

    await fill(store, *NUMBERS)
    assert len(await filtered(store, {"k": Anything()})) == len(NUMBERS)


@pytest.mark.parametrize(("query", "expected"), RAISING_FILTERS)
async def test_a_filter_value_whose_equality_raises_raises_where_the_reference_does(
    tmp_path: Path, query: MemoryQuery, expected: object
) -> None:
    """Decimal('sNaN') raises against a number: the filters after it do not narrow the items
    it is compared with, so the search raises (or answers) as InMemoryStore does, whether the
    items wait to be indexed or are indexed."""
    path = tmp_path / "memory.db"
    async with SQLiteMemoryStore(path) as store:
        await fill(store, *FILTERED)
        waiting = await outcome(store.search(query))
    async with SQLiteMemoryStore(path) as store:  # closing indexed the items
        indexed = await outcome(store.search(query))
    assert (waiting, indexed) == (expected, expected)


async def test_filter_with_non_string_nested_key_matches_nothing(store: SQLiteMemoryStore) -> None:
    """{1: "a"} never equals a stored dict, whose keys are strings."""
    await fill(store, MemoryItem(content=1, metadata={"k": {"1": "a"}}))
    assert await filtered(store, {"k": {1: "a"}}) == []


async def test_replaced_metadata_is_filtered(store: SQLiteMemoryStore) -> None:
    """A replacement's metadata replaces the old one in filters."""
    item = MemoryItem(content=1, metadata={"k": "old"})
    await fill(store, item, MemoryItem(id=item.id, content=1, metadata={"k": "new"}))
    assert (await filtered(store, {"k": "old"}), await filtered(store, {"k": "new"})) == ([], [1])


async def test_empty_filters_apply_no_predicate(store: SQLiteMemoryStore) -> None:
    """filters={} matches everything."""
    await fill(store, *NUMBERS[:3])
    assert await filtered(store, {}) == ["int", "float", "bool"]


# ---------------------------------------------------------------- combinations and limit


async def test_text_tags_and_filters_combine(store: SQLiteMemoryStore) -> None:
    """All three predicates must hold."""
    await fill(
        store,
        MemoryItem(content="apple pie", tags=["food"], metadata={"n": 1}),
        MemoryItem(content="apple tree", tags=["plant"], metadata={"n": 1}),
        MemoryItem(content="apple tart", tags=["food"], metadata={"n": 2}),
        MemoryItem(content="pear pie", tags=["food"], metadata={"n": 1}),
    )
    query = MemoryQuery(text="APPLE", tags=["food"], filters={"n": 1})
    assert await contents(store, query) == ["apple pie"]


@pytest.mark.parametrize("limit", [1, 2, 5, 7, 100])
async def test_limit_keeps_the_first_matches(store: SQLiteMemoryStore, limit: int) -> None:
    """A positive limit returns the first ``limit`` matches in insertion order."""
    await fill(
        store, *(MemoryItem(content=f"item {n}", metadata={"even": n % 2 == 0}) for n in range(12))
    )
    expected = [f"item {n}" for n in range(0, 12, 2)][:limit]
    assert await contents(store, MemoryQuery(filters={"even": True}, limit=limit)) == expected


@pytest.mark.parametrize(
    "query",
    [
        MemoryQuery(text="item", limit=3),
        MemoryQuery(text="it", limit=3),
        MemoryQuery(tags=["t"], limit=3),
        MemoryQuery(tags=["t", "u"], limit=3),
        MemoryQuery(filters={"k": 1}, limit=3),
        MemoryQuery(filters={"j": None, "z": None}, limit=3),
    ],
    ids=["trigram", "short-text", "one-tag", "two-tags", "filter", "null-filters"],
)
async def test_every_search_path_returns_insertion_order(
    store: SQLiteMemoryStore, query: MemoryQuery
) -> None:
    """Whichever table drives the search, replaced items keep their first position."""
    items = [MemoryItem(content=f"item {n}", tags=["t", "u"], metadata={"k": 1}) for n in range(5)]
    await fill(store, *items)
    await fill(
        store,
        *(
            MemoryItem(id=item.id, content=f"item {n}!", tags=["u", "t"], metadata={"k": 1.0})
            for n, item in reversed(list(enumerate(items)))
        ),
    )
    assert await contents(store, query) == ["item 0!", "item 1!", "item 2!"]


# ---------------------------------------------------------------- which predicate drives


async def test_common_tag_with_a_needle_finds_the_same_items(store: SQLiteMemoryStore) -> None:
    """Past the driver cap (4,000 rows) the trigram index drives; results are unchanged."""
    items = [
        MemoryItem(content=f"note {n} {'rare word' if n % 97 == 0 else 'plain'}", tags=["common"])
        for n in range(4_100)
    ]
    await store.store_many(items)
    query = MemoryQuery(text="RARE WORD", tags=["common"], filters={"missing": None}, limit=5)
    expected = [f"note {n} rare word" for n in range(0, 4_100, 97)][:5]
    assert await contents(store, query) == expected


async def test_predicate_without_rows_gives_empty(store: SQLiteMemoryStore) -> None:
    """A tag no item carries, beside a common needle and filter, finds nothing."""
    await fill(
        store, *(MemoryItem(content="common text", tags=["a"], metadata={"k": 1}) for _ in range(3))
    )
    query = MemoryQuery(text="common", tags=["absent"], filters={"k": 1})
    assert await contents(store, query) == []


async def test_smallest_filter_drives_and_others_still_apply(store: SQLiteMemoryStore) -> None:
    """With several filters and a tag, every predicate still holds on every result."""
    await fill(
        store,
        MemoryItem(content=1, tags=["t"], metadata={"a": 1, "b": 1}),
        MemoryItem(content=2, tags=["t"], metadata={"a": 1, "b": 2}),
        MemoryItem(content=3, tags=["u"], metadata={"a": 1, "b": 1}),
        MemoryItem(content=4, tags=["t"], metadata={"a": 2, "b": 1}),
    )
    query = MemoryQuery(tags=["t"], filters={"a": 1, "b": 1})
    assert await contents(store, query) == [1]


async def test_too_many_tags_are_refused_before_io(tmp_path: Path) -> None:
    """More than MAX_TAGS distinct query tags raise UnsupportedMemoryQuery naming tags, with
    the contract's message and a note saying why."""
    closed = SQLiteMemoryStore(tmp_path / "m.db")
    await closed.close()
    tags = [f"t{n}" for n in range(MAX_TAGS + 1)]
    with pytest.raises(UnsupportedMemoryQuery) as caught:
        await closed.search(MemoryQuery(tags=tags))
    assert caught.value.rejected_keys == ("tags",)
    assert str(caught.value) == "unsupported memory query keys: tags"
    assert caught.value.__notes__ == [
        "a query may hold at most 10,000 distinct tags; this one holds 10,001"
    ]
