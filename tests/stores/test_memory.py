"""InMemoryStore: SEMANTICS.md §5.1-§5.3, §5.5 and §7 exactly, and the decisions L5-L8 of §9."""

from __future__ import annotations

import copy
import inspect
import math
import pickle
from typing import Any
from uuid import uuid4

import pytest

from lionmem import Element, InMemoryStore, MemoryItem, MemoryQuery
from tests.differential import FILTERED, RAISING_FILTERS, outcome

EVERYTHING = MemoryQuery(limit=1_000_000)


class Note(MemoryItem):
    """A MemoryItem subclass, to check that subclasses are stored and keep their type."""


class Exploding:
    """Content whose str() raises, to observe which items a search evaluates."""

    def __init__(self) -> None:
        self.calls = 0

    def __str__(self) -> str:
        self.calls += 1
        raise RuntimeError("str() was called")


async def stored(store: InMemoryStore, *items: MemoryItem) -> InMemoryStore:
    for item in items:
        await store.store(item)
    return store


async def filled(*items: MemoryItem) -> InMemoryStore:
    return await stored(InMemoryStore(), *items)


async def contents(store: InMemoryStore, query: MemoryQuery) -> list[Any]:
    return [item.content for item in await store.search(query)]


# ---------------------------------------------------------------- §5 the store object


def test_constructor_takes_no_arguments() -> None:
    """InMemoryStore() accepts no argument, as the reference."""
    with pytest.raises(TypeError):
        InMemoryStore(1)  # type: ignore[call-arg]  # the call is wrong on purpose


def test_public_methods_are_exactly_the_three_coroutines() -> None:
    """The only public attributes are store, retrieve and search, each a coroutine function."""
    public = {name for name in dir(InMemoryStore()) if not name.startswith("_")}
    assert public == {"store", "retrieve", "search"}
    assert all(inspect.iscoroutinefunction(getattr(InMemoryStore, n)) for n in public)


def test_stores_compare_by_identity() -> None:
    """Two empty stores are different objects and not equal."""
    assert InMemoryStore() != InMemoryStore()


async def test_a_new_store_is_empty() -> None:
    """A fresh store finds nothing: there is no persistence (§7)."""
    assert await InMemoryStore().search(EVERYTHING) == []


async def test_deepcopy_copies_the_items() -> None:
    """copy.deepcopy gives an independent store holding equal items in the same order."""
    a, b = MemoryItem(content="a"), MemoryItem(content="b")
    original = await filled(a, b)
    clone = copy.deepcopy(original)
    copied = await clone.search(EVERYTHING)
    assert [i.id for i in copied] == [a.id, b.id]
    assert copied[0] is not a


async def test_a_shallow_copy_is_an_independent_store_of_the_same_objects() -> None:
    """copy.copy gives a store holding the same item objects; writes to either stay its own."""
    a = MemoryItem(content="a")
    original = await filled(a)
    clone = copy.copy(original)
    await clone.store(MemoryItem(content="b"))
    await original.store(MemoryItem(content="c"))
    assert (await clone.search(EVERYTHING))[0] is a
    assert (await contents(original, EVERYTHING), await contents(clone, EVERYTHING)) == (
        ["a", "c"],
        ["a", "b"],
    )


async def test_pickle_round_trip_keeps_the_items() -> None:
    """A pickled and unpickled store holds the same ids and contents, in order, and still works."""
    a, b = MemoryItem(content="a"), MemoryItem(content="b")
    clone = pickle.loads(pickle.dumps(await filled(a, b)))
    await clone.store(MemoryItem(content="c"))
    assert await contents(clone, EVERYTHING) == ["a", "b", "c"]


# ---------------------------------------------------------------- §5.1 store


async def test_store_returns_the_items_own_id() -> None:
    """store() returns item.id itself."""
    item = MemoryItem()
    assert await InMemoryStore().store(item) is item.id


async def test_new_ids_are_appended_in_order() -> None:
    """Items come back from search in the order they were first stored."""
    items = [MemoryItem(content=n) for n in range(5)]
    assert await contents(await filled(*items), EVERYTHING) == [0, 1, 2, 3, 4]


async def test_replacement_keeps_position_and_count() -> None:
    """Storing another object with an existing id replaces it in place without adding one."""
    a, b, c = MemoryItem(content="a"), MemoryItem(content="b"), MemoryItem(content="c")
    store = await filled(a, b, c)
    await store.store(MemoryItem(id=b.id, content="B"))
    assert await contents(store, EVERYTHING) == ["a", "B", "c"]


async def test_replacement_is_what_retrieve_returns() -> None:
    """After a replacement, retrieve returns the new object."""
    item = MemoryItem(content="old")
    store = await filled(item)
    replacement = MemoryItem(id=item.id, content="new")
    await store.store(replacement)
    assert await store.retrieve(item.id) is replacement


async def test_replacement_returns_its_own_id() -> None:
    """store() of a replacement returns the replacement's id (equal to the old one)."""
    item = MemoryItem()
    store = await filled(item)
    replacement = MemoryItem(id=item.id)
    assert await store.store(replacement) is replacement.id


async def test_storing_the_same_object_again_changes_nothing() -> None:
    """Re-storing a stored object keeps one entry at its first position."""
    a, b = MemoryItem(content="a"), MemoryItem(content="b")
    store = await filled(a, b, a, a)
    assert await contents(store, EVERYTHING) == ["a", "b"]


async def test_subclass_is_stored_and_keeps_its_type() -> None:
    """A MemoryItem subclass is accepted and comes back as the same object from retrieve and search."""
    note = Note(content="n")
    store = await filled(note)
    assert await store.retrieve(note.id) is note
    assert (await store.search(EVERYTHING))[0] is note


async def test_store_keeps_the_callers_object() -> None:
    """The stored object is the caller's object, not a copy."""
    item = MemoryItem(content=["x"])
    store = await filled(item)
    assert await store.retrieve(item.id) is item


async def test_mutating_content_after_store_changes_text_matches() -> None:
    """A content list mutated after store() is what the text predicate sees."""
    item = MemoryItem(content=["before"])
    store = await filled(item)
    item.content.append("after")
    assert await store.search(MemoryQuery(text="after")) == [item]


async def test_mutating_tags_after_store_changes_tag_matches() -> None:
    """Tags assigned after store() are what the tag predicate sees."""
    item = MemoryItem(tags=["old"])
    store = await filled(item)
    item.tags = ["new"]
    assert await store.search(MemoryQuery(tags=["new"])) == [item]
    assert await store.search(MemoryQuery(tags=["old"])) == []


async def test_mutating_metadata_after_store_changes_filter_matches() -> None:
    """Metadata changed in place after store() is what the filters see."""
    item = MemoryItem(metadata={"k": 1})
    store = await filled(item)
    item.metadata["k"] = 2
    assert await store.search(MemoryQuery(filters={"k": 2})) == [item]


async def test_assigned_metadata_and_tags_are_copies() -> None:
    """An assigned dict or list is validated into a copy: later changes to the caller's object
    do not reach the stored item (lionagi keeps the caller's object)."""
    item = MemoryItem()
    store = await filled(item)
    metadata, tags = {"k": 1}, ["a"]
    item.metadata, item.tags = metadata, tags
    metadata["k"] = 2
    tags.append("b")
    assert (item.metadata, item.tags) == ({"k": 1}, ["a"])
    assert await store.search(MemoryQuery(filters={"k": 1}, tags=["a"])) == [item]
    assert await store.search(MemoryQuery(tags=["b"])) == []


# ---------------------------------------------------------------- L5 what store() rejects


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        (Element(), "Element"),
        ({"content": "x"}, "dict"),
        ([MemoryItem()], "list"),
        ((MemoryItem(),), "tuple"),
        (None, "NoneType"),
        ("hello", "str"),
        ("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "str"),
        (5, "int"),
        (MemoryItem().model_dump(), "dict"),
    ],
)
async def test_store_rejects_non_items_naming_the_type(value: Any, type_name: str) -> None:
    """Anything but a MemoryItem raises TypeError naming the type received."""
    with pytest.raises(TypeError, match=rf"takes a MemoryItem \(or a subclass\), got {type_name}"):
        await InMemoryStore().store(value)


@pytest.mark.parametrize(
    "value",
    [[MemoryItem(), MemoryItem()], {"x": MemoryItem()}, (MemoryItem(),), Element()],
)
async def test_rejected_store_stores_nothing(value: Any) -> None:
    """A rejected store() leaves the store unchanged, even for lists and dicts of items."""
    store = await filled(MemoryItem(content="kept"))
    with pytest.raises(TypeError):
        await store.store(value)
    assert await contents(store, EVERYTHING) == ["kept"]


async def test_store_of_a_list_hints_at_one_at_a_time() -> None:
    """Passing a list says to store the items one at a time."""
    with pytest.raises(TypeError, match="store the items one at a time"):
        await InMemoryStore().store([MemoryItem()])  # type: ignore[arg-type]  # wrong on purpose


async def test_store_rejects_a_lionagi_item() -> None:
    """The reference's own MemoryItem is not a lionmem MemoryItem and is refused."""
    import lionagi

    with pytest.raises(TypeError, match=r"got lionagi\.protocols\.memory\.MemoryItem \(lionagi"):
        await InMemoryStore().store(lionagi.MemoryItem())  # type: ignore[arg-type]  # wrong on purpose


# ---------------------------------------------------------------- §5.2 retrieve and L6


async def test_retrieve_returns_the_stored_object() -> None:
    """A known UUID returns the stored object itself."""
    item = MemoryItem()
    assert await (await filled(item)).retrieve(item.id) is item


async def test_retrieve_unknown_uuid_is_none() -> None:
    """An unknown UUID gives None."""
    assert await (await filled(MemoryItem())).retrieve(uuid4()) is None


@pytest.mark.parametrize(
    "form",
    [
        str,
        lambda u: str(u).upper(),
        lambda u: u.hex,
        lambda u: "{" + str(u) + "}",
        lambda u: u.urn,
    ],
    ids=["canonical", "upper", "hex", "braces", "urn"],
)
async def test_retrieve_accepts_uuid_strings(form: Any) -> None:
    """Every string form uuid.UUID() parses finds the item."""
    item = MemoryItem()
    assert await (await filled(item)).retrieve(form(item.id)) is item


@pytest.mark.parametrize(
    "key",
    ["garbage", "", None, 1.5, 0, -1, True, slice(0, 2), [0], b"x", 10**40],
    ids=repr,
)
async def test_retrieve_garbage_is_none(key: Any) -> None:
    """Strings that are not UUIDs and non-id values, positions included, give None."""
    store = await filled(MemoryItem(), MemoryItem())
    assert await store.retrieve(key) is None


async def test_retrieve_by_list_of_ids_is_none() -> None:
    """A list of stored ids is not a key (L6), so it gives None."""
    a = MemoryItem()
    assert await (await filled(a)).retrieve([a.id]) is None  # type: ignore[arg-type]  # wrong on purpose


async def test_retrieve_by_item_is_none() -> None:
    """An item is not a key (L6), even the stored one."""
    a = MemoryItem()
    assert await (await filled(a)).retrieve(a) is None  # type: ignore[arg-type]  # wrong on purpose


async def test_retrieve_by_uuid_int_is_none() -> None:
    """The integer value of a stored UUID is not a key."""
    a = MemoryItem()
    assert await (await filled(a)).retrieve(a.id.int) is None  # type: ignore[arg-type]  # wrong on purpose


# ---------------------------------------------------------------- §5.3 search: text


@pytest.mark.parametrize("text", [None, ""])
async def test_empty_text_applies_no_predicate(text: str | None) -> None:
    """text None and "" match every item."""
    store = await filled(MemoryItem(content="a"), MemoryItem(content=None))
    assert await contents(store, MemoryQuery(text=text)) == ["a", None]


async def test_a_space_is_a_real_needle() -> None:
    """text " " matches only content whose str() has a space."""
    store = await filled(MemoryItem(content="a b"), MemoryItem(content="ab"))
    assert await contents(store, MemoryQuery(text=" ")) == ["a b"]


async def test_text_is_case_insensitive() -> None:
    """The needle and the content are both lowered."""
    store = await filled(MemoryItem(content="Paris"), MemoryItem(content="Rome"))
    assert await contents(store, MemoryQuery(text="pARIS")) == ["Paris"]


@pytest.mark.parametrize(
    ("needle", "matches"),
    [("'k'", True), ("{'k': 'v'}", True), ('{"k"', False), ("k", True)],
)
async def test_dict_content_matches_its_python_repr(needle: str, matches: bool) -> None:
    """A dict matches its Python repr (single quotes), not JSON."""
    store = await filled(MemoryItem(content={"k": "v"}))
    assert bool(await store.search(MemoryQuery(text=needle))) is matches


@pytest.mark.parametrize(
    ("content", "needle"),
    [(None, "none"), ([1, "two"], "[1, 'two']"), (True, "true"), (1.5, "1.5")],
)
async def test_non_string_content_matches_its_str(content: Any, needle: str) -> None:
    """None, lists, bools and floats match their str() form."""
    assert await contents(await filled(MemoryItem(content=content)), MemoryQuery(text=needle)) == [
        content
    ]


async def test_int_content_matches_digit_substrings() -> None:
    """Of the ints 0..25, exactly 1 and 10-19 and 21 contain "1"."""
    store = await filled(*(MemoryItem(content=n) for n in range(26)))
    assert await contents(store, MemoryQuery(text="1", limit=100)) == [1, *range(10, 20), 21]


@pytest.mark.parametrize(
    ("content", "needle", "matches"),
    [
        ("straße", "ß", True),
        ("straße", "SS", False),
        ("straße", "ss", False),
        ("ΟΔΟΣ", "ς", True),
        ("ΟΔΟΣ", "Σ", False),
        ("ΟΔΟΣ", "σ", False),  # noqa: RUF001 -- the Greek small sigma is the point of the row
        ("İstanbul", "İ", True),
        ("İstanbul", "i", True),
        ("İstanbul", "i\u0307", True),
        ("ǅ", "Ǆ", True),
        ("ǅ", "ǆ", True),
        ("ǅ", "ǅ", True),
    ],
)
async def test_text_uses_lower_not_casefold(content: str, needle: str, matches: bool) -> None:
    """Unicode matching follows str.lower(): final sigma, dotted İ and ß as Python lowers them."""
    store = await filled(MemoryItem(content=content))
    assert bool(await store.search(MemoryQuery(text=needle))) is matches


async def test_str_error_propagates_even_for_items_tags_exclude() -> None:
    """With a text predicate, str() runs on every scanned item, so its error propagates."""
    store = await filled(MemoryItem(content=Exploding(), tags=["other"]))
    with pytest.raises(RuntimeError, match="str"):
        await store.search(MemoryQuery(text="x", tags=["wanted"]))


async def test_without_text_str_is_never_called() -> None:
    """Without a text predicate, content is never turned into a string."""
    bomb = Exploding()
    store = await filled(MemoryItem(content=bomb, tags=["t"]))
    assert len(await store.search(MemoryQuery(tags=["t"]))) == 1
    assert bomb.calls == 0


# ---------------------------------------------------------------- §5.3 search: tags


async def test_tags_match_any_of() -> None:
    """An item matches when it shares at least one tag with the query."""
    store = await filled(
        MemoryItem(content=1, tags=["a"]),
        MemoryItem(content=2, tags=["b", "c"]),
        MemoryItem(content=3, tags=["d"]),
    )
    assert await contents(store, MemoryQuery(tags=["c", "a"])) == [1, 2]


async def test_tags_are_case_sensitive() -> None:
    """Tag "A" does not match tag "a"."""
    store = await filled(MemoryItem(tags=["a"]))
    assert await store.search(MemoryQuery(tags=["A"])) == []


async def test_duplicate_tags_change_nothing() -> None:
    """Duplicates on either side neither add nor remove a match."""
    item = MemoryItem(tags=["a", "a"])
    store = await filled(item)
    assert await store.search(MemoryQuery(tags=["a", "a", "a"])) == [item]


async def test_empty_string_tag_matches_only_an_empty_tag() -> None:
    """tags=[""] matches only an item carrying the tag ""."""
    store = await filled(MemoryItem(content=1, tags=[""]), MemoryItem(content=2, tags=["x"]))
    assert await contents(store, MemoryQuery(tags=[""])) == [1]


@pytest.mark.parametrize("tags", [None, []])
async def test_empty_tags_apply_no_predicate(tags: list[str] | None) -> None:
    """tags None and [] match every item, untagged ones included."""
    store = await filled(MemoryItem(content=1), MemoryItem(content=2, tags=["x"]))
    assert await contents(store, MemoryQuery(tags=tags)) == [1, 2]


# ---------------------------------------------------------------- §5.3 search: filters


async def test_filters_match_all_of() -> None:
    """Every filter key must match."""
    store = await filled(
        MemoryItem(content=1, metadata={"a": 1, "b": 2}),
        MemoryItem(content=2, metadata={"a": 1, "b": 3}),
    )
    assert await contents(store, MemoryQuery(filters={"a": 1, "b": 2})) == [1]


async def test_none_filter_matches_missing_and_explicit_none() -> None:
    """{k: None} matches a missing key and an explicit None, not another value."""
    store = await filled(
        MemoryItem(content=1, metadata={}),
        MemoryItem(content=2, metadata={"k": None}),
        MemoryItem(content=3, metadata={"k": 0}),
    )
    assert await contents(store, MemoryQuery(filters={"k": None})) == [1, 2]


async def test_none_filter_on_an_unused_key_matches_everything() -> None:
    """{"zz": None} matches every item when no item has "zz"."""
    store = await filled(MemoryItem(content=1), MemoryItem(content=2, metadata={"a": 1}))
    assert await contents(store, MemoryQuery(filters={"zz": None})) == [1, 2]


@pytest.mark.parametrize("value", [1, 1.0, True])
async def test_filters_use_python_equality(value: Any) -> None:
    """1, 1.0 and True all equal a stored 1."""
    store = await filled(MemoryItem(metadata={"k": 1}))
    assert len(await store.search(MemoryQuery(filters={"k": value}))) == 1


async def test_tuple_filter_does_not_match_a_list() -> None:
    """(1, 2) is not equal to [1, 2]."""
    store = await filled(MemoryItem(metadata={"k": [1, 2]}))
    assert await store.search(MemoryQuery(filters={"k": (1, 2)})) == []


async def test_nan_filter_never_matches() -> None:
    """NaN is not equal to itself, so it matches nothing, not even the stored NaN object."""
    nan = math.nan
    store = await filled(MemoryItem(metadata={"k": nan}))
    assert await store.search(MemoryQuery(filters={"k": nan})) == []


async def test_filters_stop_at_the_first_miss_in_key_order() -> None:
    """Keys are checked in the filters' order and checking stops at the first miss."""
    seen: list[str] = []

    class Spy:
        def __init__(self, name: str, equal: bool) -> None:
            self.name, self.equal = name, equal

        def __eq__(self, other: object) -> bool:
            seen.append(self.name)
            return self.equal

        def __hash__(self) -> int:
            return 0

    store = await filled(
        MemoryItem(metadata={"a": Spy("a", True), "b": Spy("b", False), "c": Spy("c", True)})
    )
    assert await store.search(MemoryQuery(filters={"a": 0, "b": 0, "c": 0})) == []
    assert seen == ["a", "b"]


async def test_metadata_value_is_on_the_left_of_equality() -> None:
    """The comparison is metadata.get(key) == value, so the stored value's __eq__ decides."""

    class AlwaysEqual:
        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 0

    store = await filled(MemoryItem(metadata={"k": AlwaysEqual()}))
    assert len(await store.search(MemoryQuery(filters={"k": "anything"}))) == 1


async def test_filters_take_the_truth_of_equality_not_inequality() -> None:
    """A value whose == and != both say True matches: only == is consulted."""

    class Contrary:
        def __eq__(self, other: object) -> bool:
            return True

        def __ne__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 0

    store = await filled(MemoryItem(metadata={"k": Contrary()}))
    assert len(await store.search(MemoryQuery(filters={"k": 1}))) == 1


@pytest.mark.parametrize("filters", [None, {}])
async def test_empty_filters_apply_no_predicate(filters: dict[str, Any] | None) -> None:
    """filters None and {} match every item."""
    store = await filled(MemoryItem(content=1), MemoryItem(content=2, metadata={"a": 1}))
    assert await contents(store, MemoryQuery(filters=filters)) == [1, 2]


# ---------------------------------------------------------------- §5.3 search: combination and limit


async def test_predicates_combine_with_and() -> None:
    """Text, tags and filters must all match."""
    store = await filled(
        MemoryItem(content="red", tags=["t"], metadata={"k": 1}),
        MemoryItem(content="red", tags=["t"], metadata={"k": 2}),
        MemoryItem(content="red", tags=["u"], metadata={"k": 1}),
        MemoryItem(content="blue", tags=["t"], metadata={"k": 1}),
    )
    found = await store.search(MemoryQuery(text="RE", tags=["t"], filters={"k": 1}))
    assert [(i.content, i.tags, i.metadata) for i in found] == [("red", ["t"], {"k": 1})]


async def test_no_predicate_returns_the_first_twenty_by_default() -> None:
    """MemoryQuery() returns all items in order, cut at the default limit 20."""
    store = await filled(*(MemoryItem(content=n) for n in range(25)))
    assert await contents(store, MemoryQuery()) == list(range(20))


@pytest.mark.parametrize(
    ("limit", "expected"),
    [(0, []), (2, [0, 1]), (-1, [0, 1, 2]), (-3, [0]), (-4, []), (-10, []), (10**30, [0, 1, 2, 3])],
)
async def test_limit_is_a_slice_stop(limit: int, expected: list[int]) -> None:
    """The results are cut as results[:limit]: negative values drop matches from the end."""
    store = await filled(*(MemoryItem(content=n) for n in range(4)))
    assert await contents(store, MemoryQuery(limit=limit)) == expected


@pytest.mark.parametrize("limit", [2**63 - 1, 2**63, 10**30, -(2**63) - 1, -(10**30)])
async def test_a_limit_beyond_any_index_with_text(limit: int) -> None:
    """A text search takes a limit of any size, past any machine integer, as results[:limit]."""
    store = await filled(*(MemoryItem(content=f"Harbor {n}") for n in range(3)))
    expected = ["Harbor 0", "Harbor 1", "Harbor 2"][:limit]
    assert await contents(store, MemoryQuery(text="harbor", limit=limit)) == expected


async def test_negative_limit_applies_to_matches_not_items() -> None:
    """With a predicate, a negative limit drops the last matches, not the last stored items."""
    store = await filled(
        *(MemoryItem(content=n, tags=["even"] if n % 2 == 0 else []) for n in range(7))
    )
    assert await contents(store, MemoryQuery(tags=["even"], limit=-1)) == [0, 2, 4]


async def test_positive_limit_with_predicate_keeps_the_first_matches() -> None:
    """A positive limit keeps the first matches in insertion order."""
    store = await filled(
        *(MemoryItem(content=n, tags=["even"] if n % 2 == 0 else []) for n in range(9))
    )
    assert await contents(store, MemoryQuery(tags=["even"], limit=2)) == [0, 2]


async def test_search_returns_a_new_list_each_time() -> None:
    """Two searches return distinct lists."""
    store = await filled(MemoryItem())
    assert await store.search(EVERYTHING) is not await store.search(EVERYTHING)


async def test_search_returns_live_objects() -> None:
    """Mutating a returned item mutates the stored item."""
    item = MemoryItem(tags=["a"])
    store = await filled(item)
    (await store.search(EVERYTHING))[0].tags.append("b")
    retrieved = await store.retrieve(item.id)
    assert retrieved is not None
    assert retrieved.tags == ["a", "b"]


async def test_query_subclass_is_accepted() -> None:
    """A MemoryQuery subclass is a valid query."""

    class Wide(MemoryQuery):
        pass

    store = await filled(MemoryItem(content="x"))
    assert await contents(store, Wide(text="x")) == ["x"]


async def test_search_of_an_empty_store_is_empty() -> None:
    """Any query on an empty store returns []."""
    assert await InMemoryStore().search(MemoryQuery(text="a", tags=["t"], filters={"k": 1})) == []


# ---------------------------------------------------------------- L7 what search() rejects


@pytest.mark.parametrize(
    ("value", "type_name"),
    [({"text": "x"}, "dict"), (None, "NoneType"), ("x", "str"), (MemoryItem(), "MemoryItem")],
)
async def test_search_rejects_non_queries_with_a_hint(value: Any, type_name: str) -> None:
    """Anything but a MemoryQuery raises TypeError naming its type and how to build a query."""
    with pytest.raises(TypeError, match=rf"takes a MemoryQuery, got {type_name}; build one with"):
        await InMemoryStore().search(value)


async def test_search_of_a_dict_hints_at_model_validate() -> None:
    """A dict query suggests MemoryQuery.model_validate."""
    with pytest.raises(TypeError, match=r"MemoryQuery\.model_validate"):
        await InMemoryStore().search({"text": "x"})  # type: ignore[arg-type]  # wrong on purpose


async def test_search_rejects_a_lionagi_query() -> None:
    """The reference's MemoryQuery is not a lionmem MemoryQuery and is refused."""
    import lionagi

    with pytest.raises(TypeError, match=r"got lionagi\.protocols\.memory\.MemoryQuery \(lionagi"):
        await InMemoryStore().search(lionagi.MemoryQuery())  # type: ignore[arg-type]  # wrong on purpose


# ---------------------------------------------------------------- L8 early stop


async def test_limit_zero_evaluates_nothing() -> None:
    """limit=0 returns [] without calling str() on any item."""
    bomb = Exploding()
    store = await filled(MemoryItem(content=bomb))
    assert await store.search(MemoryQuery(text="x", limit=0)) == []
    assert bomb.calls == 0


async def test_positive_limit_stops_the_scan() -> None:
    """Once limit matches are found, later items are not evaluated."""
    bomb = Exploding()
    store = await filled(
        MemoryItem(content="x1"), MemoryItem(content="x2"), MemoryItem(content=bomb)
    )
    assert await contents(store, MemoryQuery(text="x", limit=2)) == ["x1", "x2"]
    assert bomb.calls == 0


async def test_negative_limit_evaluates_every_item() -> None:
    """A negative limit needs every match, so every item is evaluated."""
    store = await filled(
        MemoryItem(content="x1"), MemoryItem(content="x2"), MemoryItem(content=Exploding())
    )
    with pytest.raises(RuntimeError, match="str"):
        await store.search(MemoryQuery(text="x", limit=-1))


@pytest.mark.parametrize(("query", "expected"), RAISING_FILTERS)
async def test_filters_are_compared_in_order_item_by_item(
    query: MemoryQuery, expected: object
) -> None:
    """A filter value whose == raises raises on the first item it is compared with; an item that
    an earlier filter (or the text, or the tags) rejects is never compared with it."""
    store = InMemoryStore()
    for item in FILTERED:
        await store.store(item)
    assert await outcome(store.search(query)) == expected
