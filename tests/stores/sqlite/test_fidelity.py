"""SQLiteMemoryStore round trips: every field comes back exactly, or the write is refused whole."""

from __future__ import annotations

import math
import sys
from collections import OrderedDict
from collections.abc import AsyncIterator
from decimal import Decimal
from enum import IntEnum
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from lionmem import MemoryItem
from lionmem.errors import MemoryAdapterError
from lionmem.stores.sqlite import SQLiteMemoryStore, UnrepresentableValueError
from tests.stores.sqlite.support import dump


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteMemoryStore]:
    async with SQLiteMemoryStore(tmp_path / "memory.db") as opened:
        yield opened


async def round_trip(store: SQLiteMemoryStore, item: MemoryItem) -> MemoryItem:
    await store.store(item)
    found = await store.retrieve(item.id)
    assert found is not None
    return found


class Color(IntEnum):
    """An int subclass whose str() differs from the plain int JSON gives back."""

    RED = 1


class Text(str):
    """A str subclass."""

    __slots__ = ()


class Price(float):
    """A float subclass, finite (as numpy.float64 is)."""


# ---------------------------------------------------------------- what comes back exactly

EXACT_CONTENT: list[Any] = [
    None,
    True,
    False,
    0,
    -7,
    2**64 + 1,
    -(10**300),
    0.1,
    -0.0,
    5e-324,
    1.7976931348623157e308,
    "",
    "plain",
    "quotes ' \" and \\ backslash",
    "nul \x00 inside",
    "emoji 🧠 and İ ß Σ ς ǅ",
    "\u2028 line separators \u2029",
    [],
    {},
    [1, [2, [3, [4]]]],
    {"nested": {"list": [1, 2.5, None, "x"], "empty": {}}},
    {"": "empty key", "🔑": "emoji key", "a.b": 1, "$x": 2},
    {"b": 1, "a": 2},
]


@pytest.mark.parametrize("content", EXACT_CONTENT, ids=repr)
async def test_content_round_trips_exactly(store: SQLiteMemoryStore, content: Any) -> None:
    """Content comes back equal, with the same types and the same str()."""
    found = await round_trip(store, MemoryItem(content=content))
    assert (found.content, type(found.content), str(found.content)) == (
        content,
        type(content),
        str(content),
    )


async def test_dict_key_order_round_trips(store: SQLiteMemoryStore) -> None:
    """A dict comes back with its keys in the stored order (str() depends on it)."""
    found = await round_trip(store, MemoryItem(content={"z": 1, "a": 2, "m": 3}))
    assert list(found.content) == ["z", "a", "m"]


async def test_negative_zero_content_keeps_its_sign(store: SQLiteMemoryStore) -> None:
    """-0.0 comes back as -0.0, not 0.0."""
    found = await round_trip(store, MemoryItem(content=-0.0))
    assert math.copysign(1.0, found.content) == -1.0


@pytest.mark.parametrize(
    "created_at", [0.0, -0.0, 1.5, 1577836800.123456, 5e-324, -1e300, 1.7976931348623157e308]
)
async def test_created_at_round_trips_exactly(store: SQLiteMemoryStore, created_at: float) -> None:
    """created_at comes back as the very same float, sign of zero included."""
    found = await round_trip(store, MemoryItem(created_at=created_at))
    assert found.created_at.hex() == created_at.hex()


async def test_id_round_trips(store: SQLiteMemoryStore) -> None:
    """A non-version-4 UUID comes back unchanged."""
    item_id = UUID("12345678-1234-1234-1234-567812345678")
    found = await round_trip(store, MemoryItem(id=item_id))
    assert found.id == item_id


async def test_tags_round_trip_with_duplicates_and_order(store: SQLiteMemoryStore) -> None:
    """Tags keep their order, duplicates and empty strings."""
    tags = ["b", "a", "b", "", "Ǆ", "b"]
    found = await round_trip(store, MemoryItem(tags=tags))
    assert found.tags == tags


async def test_metadata_round_trips(store: SQLiteMemoryStore) -> None:
    """Metadata comes back equal, nested values and key order included."""
    metadata = {"z": None, "n": 1, "f": 1.0, "b": True, "l": [1, {"x": []}], "s": "ß"}
    found = await round_trip(store, MemoryItem(metadata=metadata))
    assert (found.metadata, list(found.metadata)) == (metadata, list(metadata))


async def test_int_and_float_stay_distinct(store: SQLiteMemoryStore) -> None:
    """1, 1.0 and True come back as int, float and bool."""
    found = await round_trip(store, MemoryItem(content=[1, 1.0, True]))
    assert [type(value) for value in found.content] == [int, float, bool]


async def test_lion_class_in_metadata_round_trips(store: SQLiteMemoryStore) -> None:
    """A matching lion_class key is kept as metadata."""
    metadata = {"lion_class": "lionmem.MemoryItem"}
    found = await round_trip(store, MemoryItem(metadata=metadata))
    assert found.metadata == metadata


async def test_whole_item_round_trips(store: SQLiteMemoryStore) -> None:
    """model_dump() of the retrieved item equals that of the stored item."""
    item = MemoryItem(
        created_at=1.25, metadata={"k": [1]}, content={"text": "hello"}, tags=["x", "y"]
    )
    assert dump(await round_trip(store, item)) == dump(item)


# ---------------------------------------------------------------- what is refused


def _recursive_list() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


REFUSED: list[tuple[str, Any, str, str]] = [
    ("tuple", (1, 2), "content", "tuple"),
    ("set", {1, 2}, "content", "set"),
    ("frozenset", frozenset({1}), "content", "frozenset"),
    ("bytes", b"raw", "content", "bytes"),
    ("bytearray", bytearray(b"raw"), "content", "bytearray"),
    ("nan", math.nan, "content", "float"),
    ("inf", math.inf, "content", "float"),
    ("-inf", -math.inf, "content", "float"),
    ("lone surrogate", "a\ud800b", "content", "str"),
    ("object", object(), "content", "object"),
    ("decimal", Decimal("1.5"), "content", "Decimal"),
    ("uuid", UUID(int=5), "content", "UUID"),
    ("int enum", Color.RED, "content", "Color"),
    ("str subclass", Text("x"), "content", "Text"),
    ("float subclass", Price(9.5), "content", "Price"),
    ("ordered dict", OrderedDict(a=1), "content", "OrderedDict"),
    ("int key", {1: "a"}, "content[1]", "dict key of type int"),
    ("none key", {None: "a"}, "content[None]", "dict key of type NoneType"),
    ("nested tuple", {"a": [1, (2,)]}, "content['a'][1]", "tuple"),
    ("nested nan", [0, [math.nan]], "content[1][0]", "float"),
    ("surrogate key", {"\udc00": 1}, "content['\\udc00']", "dict key of type str"),
    ("cycle", _recursive_list(), "content[0]", "list"),
    ("too deep", _deep(200), "content" + "[0]" * 199, "list"),
]


@pytest.mark.parametrize(
    ("value", "field", "kind"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
async def test_unrepresentable_content_is_refused_naming_field_and_type(
    store: SQLiteMemoryStore, value: Any, field: str, kind: str
) -> None:
    """The error names the path of the offending value and its type."""
    with pytest.raises(UnrepresentableValueError) as caught:
        await store.store(MemoryItem(content=value))
    assert (caught.value.field, caught.value.value_type) == (field, kind)


@pytest.mark.parametrize("value", [case[1] for case in REFUSED], ids=[case[0] for case in REFUSED])
async def test_refused_content_writes_nothing(store: SQLiteMemoryStore, value: Any) -> None:
    """After a refusal the store is still empty."""
    with pytest.raises(UnrepresentableValueError):
        await store.store(MemoryItem(content=value))
    assert await store.count() == 0


async def test_refused_replacement_keeps_the_old_item(store: SQLiteMemoryStore) -> None:
    """A refused replacement leaves the stored item as it was."""
    item = MemoryItem(content="old")
    await store.store(item)
    with pytest.raises(UnrepresentableValueError):
        await store.store(MemoryItem(id=item.id, content={1, 2}))
    assert dump(await store.retrieve(item.id)) == dump(item)


@pytest.mark.parametrize(
    ("value", "plain"),
    [(Text("x"), "str"), (Color.RED, "int"), (Price(9.5), "float"), (OrderedDict(a=1), "dict")],
)
async def test_a_refused_subclass_is_told_its_plain_type(
    store: SQLiteMemoryStore, value: Any, plain: str
) -> None:
    """A subclass of a JSON type is refused as that, naming the plain type it would come back as
    (a finite float subclass is not told that JSON has no NaN)."""
    with pytest.raises(UnrepresentableValueError) as caught:
        await store.store(MemoryItem(content=value))
    assert str(caught.value).endswith(
        f"it is a subclass of {plain}; JSON gives back the plain {plain}, whose str() and "
        "equality may differ (convert it first)"
    )


async def test_unrepresentable_metadata_value_is_refused(store: SQLiteMemoryStore) -> None:
    """A tuple inside metadata is refused, naming metadata and the key."""
    with pytest.raises(UnrepresentableValueError) as caught:
        await store.store(MemoryItem(metadata={"k": (1,)}))
    assert caught.value.field == "metadata['k']"


async def test_unrepresentable_tag_is_refused(store: SQLiteMemoryStore) -> None:
    """A tag with a lone surrogate is refused, naming its index."""
    with pytest.raises(UnrepresentableValueError) as caught:
        await store.store(MemoryItem(tags=["ok", "\ud83d"]))
    assert caught.value.field == "tags[1]"


async def test_error_message_names_field_and_type(store: SQLiteMemoryStore) -> None:
    """The message reads as the field path, the type and the reason."""
    with pytest.raises(
        UnrepresentableValueError, match=r"MemoryItem\.content\['a'\]: a value of type set"
    ):
        await store.store(MemoryItem(content={"a": {1}}))


async def test_int_beyond_the_str_digit_limit_is_refused(store: SQLiteMemoryStore) -> None:
    """An int too long for int-to-str conversion is refused rather than stored half-way."""
    digits = sys.get_int_max_str_digits()
    with pytest.raises(UnrepresentableValueError) as caught:
        await store.store(MemoryItem(content=[10 ** (digits + 1)]))
    assert caught.value.field == "content"


async def test_a_stored_int_longer_than_this_process_reads_is_named_so(
    store: SQLiteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An int stored by a process that reads 4,300 digits, read where the limit is lower: the
    error says so, and how to raise it, rather than call the row malformed."""
    item = MemoryItem(content=[10**4000])
    await store.store(item)
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        with pytest.raises(MemoryAdapterError) as caught:
            await store.retrieve(item.id)
    finally:
        sys.set_int_max_str_digits(limit)
    assert str(caught.value).startswith(
        f"the stored row of item {str(item.id)!r} holds an integer of more digits than this "
        "process reads (sys.get_int_max_str_digits() is 640; PYTHONINTMAXSTRDIGITS raises it): "
    )
    assert await store.retrieve(item.id) == item


async def test_deepest_allowed_nesting_round_trips(store: SQLiteMemoryStore) -> None:
    """199 levels of nested lists are stored and come back equal."""
    value = _deep(199)
    found = await round_trip(store, MemoryItem(content=value))
    assert found.content == value


def test_refusal_pickles() -> None:
    """UnrepresentableValueError survives pickling with its field and type."""
    import pickle

    error = UnrepresentableValueError("content[0]", "tuple", "no tuples")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.field, copy.value_type, str(copy)) == (error.field, error.value_type, str(error))
