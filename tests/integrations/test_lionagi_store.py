"""LionagiMemoryStore's own rules: lionagi types in and out, refusals, pass-through, extras, lifecycle."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from typing import Any
from uuid import UUID

import lionagi
import pytest
from pydantic import ValidationError

from lionmem import (
    ExternalMemoryStore,
    InMemoryStore,
    MemoryAdapterError,
    MemoryAdapterUnavailable,
    MemoryItem,
    MemoryQuery,
    PostgresMemoryStore,
    SQLiteMemoryStore,
    UnrepresentableValueError,
    UnsupportedMemoryQuery,
)
from lionmem.conformance.fake import FakeHarness
from lionmem.integrations.lionagi import ExternalLionagiMemoryStore, LionagiMemoryStore
from lionmem.stores._sqlite_query import MAX_TAGS
from tests.integrations.stores import NewStore

LION_CLASS = "lionagi.protocols.memory.MemoryItem"
ID = UUID("12345678-1234-5678-1234-567812345678")


class Note(lionagi.MemoryItem):
    """A lionagi subclass with a field of its own."""

    title: str = ""


class Plain(lionagi.MemoryItem):
    """A lionagi subclass without fields of its own."""


class Key(str):
    """A str subclass, which lionmem's validation would turn into a plain str."""

    __slots__ = ()


def sample(**fields: Any) -> lionagi.MemoryItem:
    values: dict[str, Any] = {
        "id": ID,
        "created_at": 1.5,
        "metadata": {"k": "v", "n": [1, {"x": None}]},
        "content": {"a": [1, 2.5, "s"]},
        "tags": ["x", "y"],
    }
    return lionagi.MemoryItem(**(values | fields))


def fields_of(item: Any) -> tuple[Any, ...]:
    return (item.id, item.created_at.hex(), repr(item.metadata), repr(item.content), item.tags)


async def test_items_come_back_as_lionagi_items_equal_field_by_field(new_store: NewStore) -> None:
    """retrieve and search give real lionagi MemoryItems with every field of the stored one."""
    original = sample()
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        assert await store.store(original) is original.id
        found = await store.retrieve(ID)
        searched = await store.search(lionagi.MemoryQuery(text="2.5"))
    assert type(found) is lionagi.MemoryItem
    assert fields_of(found) == fields_of(original)
    assert found.model_dump() == original.model_dump()
    assert found == original
    assert found is not original
    assert [type(i) for i in searched] == [lionagi.MemoryItem]
    assert fields_of(searched[0]) == fields_of(original)
    assert len(lionagi.Pile([found], item_type={lionagi.MemoryItem})) == 1


async def test_a_store_used_without_the_wrapper_says_to_wrap_it(new_store: NewStore) -> None:
    """A lionagi item or query given to a lionmem store itself (a Branch built with the store
    unwrapped) raises TypeError giving lionagi's type in full and naming the wrapper; nothing is
    stored."""
    wrap = (
        "(lionagi's own type: wrap the store in lionmem.integrations.lionagi.LionagiMemoryStore "
        "to use it from lionagi)"
    )
    async with new_store() as store:
        errors = []
        for call in (
            lambda: store.store(lionagi.MemoryItem(content="x")),  # type: ignore[arg-type]  # wrong on purpose
            lambda: store.search(lionagi.MemoryQuery(text="x")),  # type: ignore[arg-type]  # wrong on purpose
        ):
            with pytest.raises(TypeError) as caught:
                await call()
            errors.append(str(caught.value))
        left = await store.search(MemoryQuery())
    assert [error.partition(", got ")[2] for error in errors] == [
        f"lionagi.protocols.memory.MemoryItem {wrap}",
        f"lionagi.protocols.memory.MemoryQuery {wrap}; build one with "
        "lionmem.MemoryQuery(text=..., tags=..., filters=..., limit=...)",
    ]
    assert left == []


async def test_retrieve_takes_every_uuid_form_and_gives_none_otherwise(new_store: NewStore) -> None:
    """A UUID or any string uuid.UUID() parses finds the item; garbage, positions and misses give None."""
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(sample())
        for key in (ID, str(ID), str(ID).upper(), ID.hex, f"urn:uuid:{ID}"):
            found = await store.retrieve(key)
            assert found is not None
            assert found.id == ID, key
        misses: tuple[Any, ...] = ("garbage", "", 0, -1, None, UUID(int=1))
        for miss in misses:
            assert await store.retrieve(miss) is None, miss


async def test_stored_values_are_copies(new_store: NewStore) -> None:
    """Changing the stored object's tags or metadata, or a returned item, leaves the store as it was."""
    original = sample()
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(original)
        original.tags.append("late")
        original.metadata["late"] = 1
        returned = await store.retrieve(ID)
        assert returned is not None
        returned.tags.append("later")
        returned.metadata["later"] = 2
        again = await store.retrieve(ID)
        assert again is not None
        assert (again.tags, again.metadata) == (["x", "y"], {"k": "v", "n": [1, {"x": None}]})
        assert await store.search(lionagi.MemoryQuery(tags=["late", "later"])) == []
        assert await store.search(lionagi.MemoryQuery(filters={"late": 1})) == []


async def test_values_inside_metadata_are_shared_by_the_in_memory_store_only(
    new_store: NewStore,
) -> None:
    """A list in metadata changed in place is seen by InMemoryStore (copies are shallow), not by a durable store."""
    original = sample(metadata={"n": [1]})
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(original)
        original.metadata["n"].append(2)
        returned = await store.retrieve(ID)
        assert returned is not None
        returned.metadata["n"].append(3)
        again = await store.retrieve(ID)
        assert again is not None
        matching = [i.id for i in await store.search(lionagi.MemoryQuery(filters={"n": [1]}))]
    if isinstance(wrapped, InMemoryStore):
        assert again.metadata == {"n": [1, 2, 3]}
        assert matching == []
    else:
        assert again.metadata == {"n": [1]}
        assert matching == [ID]


async def test_replacing_keeps_the_position(new_store: NewStore) -> None:
    """Storing an id again replaces the item where it was, as lionagi's store does."""
    first, second = sample(), lionagi.MemoryItem(content="second")
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(first)
        await store.store(second)
        await store.store(sample(content="replaced"))
        found = await store.search(lionagi.MemoryQuery())
    assert [(i.id, i.content) for i in found] == [(ID, "replaced"), (second.id, "second")]


async def test_lion_class_is_lionagis_on_the_way_out(new_store: NewStore) -> None:
    """An item written with lionmem's class name in metadata comes back naming lionagi's class."""
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        for index, name in enumerate(
            ["lionmem.MemoryItem", "lionmem_models.memory_item.MemoryItem", LION_CLASS]
        ):
            await wrapped.store(
                MemoryItem(id=UUID(int=index), metadata={"lion_class": name, "i": 1})
            )
            found = await store.retrieve(UUID(int=index))
            assert found is not None
            assert found.metadata == {"lion_class": LION_CLASS, "i": 1}
            stored = await wrapped.retrieve(UUID(int=index))
            assert stored is not None
            assert stored.metadata["lion_class"] == name  # not rewritten
        await store.store(sample(metadata={"lion_class": LION_CLASS}))
        kept = await wrapped.retrieve(ID)
        assert kept is not None
        assert kept.metadata == {"lion_class": LION_CLASS}


# -------------------------------------------------------------------------------- refusals


async def assert_refused(
    store: LionagiMemoryStore, item: Any, field: str, value_type: str
) -> UnrepresentableValueError:
    """store(item) raises naming ``field``; the item stored under ID before is unchanged."""
    with pytest.raises(UnrepresentableValueError) as caught:
        await store.store(item)
    assert caught.value.field == field
    assert caught.value.value_type == value_type
    subject = "a" if value_type.startswith("dict key ") else "a value of type"
    assert str(caught.value).startswith(f"MemoryItem.{field}: {subject} {value_type} ")
    kept = await store.retrieve(ID)
    assert kept is not None
    assert fields_of(kept) == fields_of(sample())
    assert [i.id for i in await store.search(lionagi.MemoryQuery(limit=100))] == [ID]
    return caught.value


async def test_a_subclass_is_refused_with_the_reason(new_store: NewStore) -> None:
    """A lionagi subclass, with fields of its own or not, is refused at store(): it could not come back."""
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(sample())
        for item in (Note(id=ID, title="t"), Plain(id=ID)):
            error = await assert_refused(store, item, "__class__", type(item).__qualname__)
            assert "a subclass (its class and its extra fields) would not round-trip" in str(error)
        with pytest.raises(UnrepresentableValueError):
            await store.store_many([sample(content="ok"), Note(title="t")])
        kept = await store.retrieve(ID)
        assert kept is not None
        assert fields_of(kept) == fields_of(sample())


async def test_values_no_lionmem_item_can_hold_are_refused(new_store: NewStore) -> None:
    """NaN or infinite created_at, non-string metadata keys and mistyped assigned fields are refused."""
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(sample())
        for value in (math.nan, math.inf, -math.inf):
            await assert_refused(store, sample(created_at=value), "created_at", "float")
        await assert_refused(
            store, sample(metadata={1: "a"}), "metadata[1]", "dict key of type int"
        )
        await assert_refused(
            store,
            sample(metadata={"a": 1, ("t",): 2}),
            "metadata[('t',)]",
            "dict key of type tuple",
        )

        await assert_refused(
            store, sample(metadata={Key("k"): 1}), "metadata['k']", "dict key of type Key"
        )
        assigned = sample()
        assigned.metadata = OrderedDict(k="v")
        await assert_refused(store, assigned, "metadata", "OrderedDict")
        assigned.metadata = '{"k": "v"}'  # type: ignore[assignment]  # lionagi does not validate assignment
        await assert_refused(store, assigned, "metadata", "str")
        for named in ("bogus", "lionmem.MemoryItem", "lionmem_models.memory_item.MemoryItem"):
            assigned = sample()
            assigned.metadata = {"lion_class": named, "k": 1}
            error = await assert_refused(store, assigned, "metadata['lion_class']", "str")
            assert f"{named!r}: items come back naming lionagi's class" in str(error)
        assigned.metadata = {"lion_class": 1}
        await assert_refused(store, assigned, "metadata['lion_class']", "int")
        unchecked = lionagi.MemoryItem.model_construct(
            id="junk",  # type: ignore[arg-type]  # the id validation that model_construct skips
            created_at=1.0,
            metadata={},
            content="x",
            tags=[],
        )
        error = await assert_refused(store, unchecked, "id", "str")
        assert "badly formed hexadecimal UUID string" in str(error)
        assert error.__cause__ is not None
        for tags, field, kind in (
            (("x",), "tags", "tuple"),
            ("x", "tags", "str"),
            (["x", 1], "tags[1]", "int"),
            (["x", b"y"], "tags[1]", "bytes"),
        ):
            assigned = sample()
            assigned.tags = tags  # type: ignore[assignment]  # lionagi does not validate assignment
            await assert_refused(store, assigned, field, kind)


async def test_sqlite_refusals_name_the_field() -> None:
    """What SQLite cannot keep exactly (a tuple, a set, NaN inside content) is refused by it, naming the path."""
    async with SQLiteMemoryStore(":memory:") as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(sample())
        await assert_refused(store, sample(content=(1, 2)), "content", "tuple")
        await assert_refused(store, sample(content={"s": {1}}), "content['s']", "set")
        await assert_refused(store, sample(metadata={"f": math.nan}), "metadata['f']", "float")


async def test_the_in_memory_store_keeps_any_content() -> None:
    """Over InMemoryStore, content JSON cannot hold (a tuple, NaN, an object) is kept as it is."""
    marker = object()
    store = LionagiMemoryStore(InMemoryStore())
    await store.store(sample(content=(1, math.nan, marker)))
    found = await store.retrieve(ID)
    assert found is not None
    assert found.content[2] is marker
    assert found.content[:1] == (1,)


async def test_store_rejects_what_is_not_a_lionagi_item(new_store: NewStore) -> None:
    """A lionmem item, a dict, a list or None raise TypeError naming both full class names."""
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        expected = "store() takes a lionagi MemoryItem (lionagi.protocols.memory.MemoryItem), got "
        cases: list[tuple[Any, str]] = [
            (
                MemoryItem(),
                "lionmem_models.memory_item.MemoryItem; store it on the wrapped store itself",
            ),
            ({"content": "x"}, "builtins.dict"),
            ([sample()], "builtins.list; use store_many() for several items"),
            (None, "builtins.NoneType"),
        ]
        for value, tail in cases:
            with pytest.raises(TypeError) as caught:
                await store.store(value)
            assert str(caught.value) == expected + tail
        assert await store.search(lionagi.MemoryQuery()) == []


async def test_search_takes_lionagi_and_lionmem_queries_only(new_store: NewStore) -> None:
    """A lionagi query, a subclass of it or a lionmem query works; a dict or None raises TypeError."""

    class Scoped(lionagi.MemoryQuery):
        scope: str = "ignored"

    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(sample())
        for query in (lionagi.MemoryQuery(tags=["x"]), Scoped(tags=["x"]), MemoryQuery(tags=["x"])):
            assert [i.id for i in await store.search(query)] == [ID]
        for bad in ({"tags": ["x"]}, None, "x"):
            with pytest.raises(TypeError, match=r"^search\(\) takes a lionagi MemoryQuery"):
                await store.search(bad)  # type: ignore[arg-type]  # wrong types on purpose
        broken = lionagi.MemoryQuery()
        broken.filters = {1: "a"}  # type: ignore[dict-item]  # lionagi does not validate assignment
        with pytest.raises(ValidationError, match="filters"):
            await store.search(broken)
        broken = lionagi.MemoryQuery()
        broken.limit = None  # type: ignore[assignment]  # lionagi would return everything
        with pytest.raises(ValidationError, match="limit"):
            await store.search(broken)


# --------------------------------------------------------------- external stores and limits


def fake_harness() -> FakeHarness:
    """The harness of an honest external store that filters on "lang" and "topic" only, with no extras."""
    return FakeHarness()


async def test_negative_limit_is_emulated_over_a_store_that_refuses_it() -> None:
    """SQLite refuses limit < 0; the wrapper cuts its full answer as lionagi's slice does."""
    oracle = lionagi.InMemoryStore()
    async with SQLiteMemoryStore(":memory:") as wrapped:
        store = LionagiMemoryStore(wrapped)
        with pytest.raises(UnsupportedMemoryQuery):
            await wrapped.search(MemoryQuery(limit=-1))
        for n in range(5):
            item = lionagi.MemoryItem(content=f"item {n}", tags=["even" if n % 2 == 0 else "odd"])
            await store.store(item)
            await oracle.store(item)
        for limit in (-1, -2, -3, -5, -6, -(10**30)):
            for query in (
                lionagi.MemoryQuery(limit=limit),
                lionagi.MemoryQuery(tags=["even"], limit=limit),
            ):
                found = [i.content for i in await store.search(query)]
                assert found == [i.content for i in await oracle.search(query)], query
        assert [i.content for i in await store.search(lionagi.MemoryQuery(limit=-2))] == [
            "item 0",
            "item 1",
            "item 2",
        ]
        assert len(await store.search(lionagi.MemoryQuery(limit=10**30))) == 5


async def test_a_query_of_more_tags_than_the_store_takes_is_refused_naming_tags() -> None:
    """Past MAX_TAGS distinct tags SQLite refuses the query; the refusal reaches the caller, for
    a negative limit too, and a query of MAX_TAGS tags is answered."""
    async with SQLiteMemoryStore(":memory:") as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(lionagi.MemoryItem(content="tagged", tags=["t0"]))
        many = [f"t{n}" for n in range(MAX_TAGS + 1)]
        for limit in (10, -1):
            with pytest.raises(UnsupportedMemoryQuery) as caught:
                await store.search(lionagi.MemoryQuery(tags=many, limit=limit))
            assert caught.value.rejected_keys == ("tags",)
        found = await store.search(lionagi.MemoryQuery(tags=many[:MAX_TAGS]))
        assert [i.content for i in found] == ["tagged"]


async def test_a_refusal_of_filters_names_only_the_filters() -> None:
    """With a negative limit and unsupported filter keys, the error names the keys, not the limit."""
    harness = fake_harness()
    store = LionagiMemoryStore(await harness.make_store())
    await store.store(sample(metadata={"lang": "en"}))
    await store.store(lionagi.MemoryItem(content="second", metadata={"lang": "en"}))
    with pytest.raises(UnsupportedMemoryQuery) as caught:
        await store.search(lionagi.MemoryQuery(filters={"lang": "en", "zz": 1, "aa": 2}, limit=-1))
    assert caught.value.rejected_keys == ("aa", "zz")
    found = await store.search(lionagi.MemoryQuery(filters={"lang": "en"}, limit=-1))
    assert [i.id for i in found] == [ID]


async def test_the_manifest_passes_through_when_there_is_one() -> None:
    """Over an ExternalMemoryStore the wrapper is one with the same manifest; otherwise it has none."""
    harness = fake_harness()
    fake = await harness.make_store()
    async with SQLiteMemoryStore(":memory:") as sqlite:
        typed: ExternalLionagiMemoryStore = LionagiMemoryStore(sqlite)  # the overload says so too
        assert typed.manifest is sqlite.manifest
        for wrapped in (sqlite, fake):
            store = LionagiMemoryStore(wrapped)
            assert type(store) is ExternalLionagiMemoryStore
            assert isinstance(store, ExternalMemoryStore)
            assert store.manifest is wrapped.manifest
    plain = LionagiMemoryStore(InMemoryStore())
    assert type(plain) is LionagiMemoryStore
    assert not isinstance(plain, ExternalMemoryStore)
    assert not hasattr(plain, "manifest")
    for either in (plain, LionagiMemoryStore(fake)):
        assert isinstance(either, lionagi.MemoryStore)
        assert either.wrapped is not None


async def test_errors_of_the_wrapped_store_pass_through() -> None:
    """An unavailable service raises MemoryAdapterUnavailable from store, retrieve and search."""
    harness = fake_harness()
    store = LionagiMemoryStore(await harness.make_store())
    await harness.make_transport_unavailable()
    with pytest.raises(MemoryAdapterUnavailable):
        await store.store(sample())
    with pytest.raises(MemoryAdapterUnavailable):
        await store.retrieve(ID)
    with pytest.raises(MemoryAdapterUnavailable):
        await store.search(lionagi.MemoryQuery(limit=-1))
    await harness.reset()
    await harness.make_responses_malformed()
    with pytest.raises(MemoryAdapterError):
        await store.search(lionagi.MemoryQuery())


def test_the_constructor_wants_a_lionmem_store() -> None:
    """Wrapping a non-store, a store class, a wrapper or lionagi's own store raises TypeError."""
    with pytest.raises(
        TypeError, match=r"^LionagiMemoryStore wraps a lionmem MemoryStore, got builtins\.str$"
    ):
        LionagiMemoryStore("junk")  # type: ignore[call-overload]  # wrong type on purpose
    wrapper = LionagiMemoryStore(InMemoryStore())
    stores: tuple[Any, ...] = (wrapper, lionagi.InMemoryStore())
    for store in stores:
        with pytest.raises(
            TypeError, match="already takes lionagi items: pass it to lionagi directly"
        ):
            LionagiMemoryStore(store)
    for given in (InMemoryStore, SQLiteMemoryStore):
        with pytest.raises(TypeError) as refused:
            LionagiMemoryStore(given)  # type: ignore[call-overload]  # a class, on purpose
        assert str(refused.value) == (
            f"LionagiMemoryStore wraps a store instance, got the class {given.__qualname__}; "
            f"call it first, e.g. LionagiMemoryStore({given.__qualname__}())"
        )
    assert repr(wrapper).startswith("LionagiMemoryStore(<lionmem.stores.memory.InMemoryStore")
    assert repr(LionagiMemoryStore(SQLiteMemoryStore(":memory:"))) == (
        "ExternalLionagiMemoryStore(SQLiteMemoryStore(':memory:'))"
    )


async def test_the_external_wrapper_wants_an_external_store() -> None:
    """ExternalLionagiMemoryStore over a store without a manifest raises TypeError naming the type."""
    with pytest.raises(
        TypeError,
        match=r"^ExternalLionagiMemoryStore wraps an ExternalMemoryStore \(one with a manifest\), "
        r"got lionmem\.stores\.memory\.InMemoryStore; use LionagiMemoryStore$",
    ):
        ExternalLionagiMemoryStore(InMemoryStore())
    external = ExternalLionagiMemoryStore(SQLiteMemoryStore(":memory:"))
    assert type(external) is ExternalLionagiMemoryStore
    assert external.manifest is external.wrapped.manifest  # type: ignore[attr-defined]  # SQLite has one
    await external.close()


# ------------------------------------------------------------------------ extras, lifecycle


async def test_extras_are_forwarded_to_sqlite() -> None:
    """store_many is all or nothing; delete, count and items answer as SQLite's do, in lionagi items."""
    async with LionagiMemoryStore(SQLiteMemoryStore(":memory:")) as store:
        items = [lionagi.MemoryItem(content=n) for n in range(3)]
        assert await store.store_many(items) == [i.id for i in items]
        with pytest.raises(UnrepresentableValueError):
            await store.store_many([lionagi.MemoryItem(content="new"), sample(content=(1,))])
        assert await store.count() == 3
        listed = [item async for item in store.items(batch_size=2)]
        assert [(type(i), i.content) for i in listed] == [(lionagi.MemoryItem, n) for n in range(3)]
        assert await store.delete(str(items[1].id)) is True
        assert await store.delete(items[1].id) is False
        assert await store.delete("garbage") is False
        assert [i.content async for i in store.items()] == [0, 2]


async def test_store_many_refuses_what_is_not_a_batch_of_lionagi_items(new_store: NewStore) -> None:
    """One item, a mapping or a string is not read as a batch, and a bad element names its position."""
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        await store.store(sample())
        lionagi_class = "lionagi.protocols.memory.MemoryItem"
        batches: list[tuple[Any, str]] = [
            (
                sample(content="one"),
                f"store_many() takes an iterable of lionagi MemoryItems ({lionagi_class}), got "
                f"{lionagi_class}; use store() for one item",
            ),
            (
                {ID: sample(content="one")},
                f"store_many() takes an iterable of lionagi MemoryItems ({lionagi_class}), got "
                "builtins.dict; pass its values()",
            ),
            (
                "ab",
                f"store_many() takes an iterable of lionagi MemoryItems ({lionagi_class}), got "
                "builtins.str",
            ),
            (
                [lionagi.MemoryItem(), [lionagi.MemoryItem()]],
                f"store_many() takes lionagi MemoryItems ({lionagi_class}), got builtins.list "
                "at position 1",
            ),
            (
                [MemoryItem()],
                f"store_many() takes lionagi MemoryItems ({lionagi_class}), got "
                "lionmem_models.memory_item.MemoryItem at position 0; store it on the wrapped "
                "store itself",
            ),
        ]
        for batch, message in batches:
            with pytest.raises(TypeError) as caught:
                await store.store_many(batch)
            assert str(caught.value) == message
        kept = await store.search(lionagi.MemoryQuery(limit=100))
        assert [fields_of(i) for i in kept] == [fields_of(sample())]


async def test_extras_a_store_lacks_say_so() -> None:
    """Over a store without them, store_many stores one by one and the others raise AttributeError."""
    store = LionagiMemoryStore(InMemoryStore())
    items = [lionagi.MemoryItem(content=n) for n in range(3)]
    assert await store.store_many(iter(items)) == [i.id for i in items]
    late = sample(created_at=math.nan)
    with pytest.raises(UnrepresentableValueError) as refused:
        await store.store_many([lionagi.MemoryItem(content="new"), late])
    assert refused.value.__notes__ == [
        f"store_many(): the item at position 1, id {late.id}; none of the items was written"
    ]
    assert [i.content for i in await store.search(lionagi.MemoryQuery())] == [0, 1, 2]
    for name, call in (
        ("delete", lambda: store.delete(items[0].id)),
        ("count", store.count),
    ):
        with pytest.raises(
            AttributeError,
            match=rf"^InMemoryStore has no {name}\(\), so this wrapper cannot forward it$",
        ):
            await call()
    with pytest.raises(AttributeError, match=r"^InMemoryStore has no items\(\)"):
        [item async for item in store.items()]


async def test_close_and_async_with_reach_the_wrapped_store(tmp_path: Any) -> None:
    """Leaving ``async with`` or close() closes SQLite (idempotently); later calls are unavailable."""
    path = tmp_path / "memory.db"
    async with LionagiMemoryStore(SQLiteMemoryStore(path)) as store:
        assert path.exists()  # entering opened the file
        await store.store(sample())
    for key in (ID, "garbage"):
        with pytest.raises(MemoryAdapterUnavailable, match="is closed"):
            await store.retrieve(key)
    again = LionagiMemoryStore(SQLiteMemoryStore(path))
    found = await again.retrieve(ID)
    assert found is not None
    assert fields_of(found) == fields_of(sample())
    await again.close()
    await again.close()
    with pytest.raises(MemoryAdapterUnavailable):
        await again.search(lionagi.MemoryQuery())
    plain = LionagiMemoryStore(InMemoryStore())
    async with plain as entered:
        assert entered is plain
        await plain.store(sample())
    await plain.close()  # nothing to close: the store still answers
    assert await plain.retrieve(ID) is not None


async def test_copies_and_pickles_rebuild_the_wrapper() -> None:
    """deepcopy and pickle give a wrapper of the same kind over a copy of the wrapped store;
    copy.copy gives one over the same store, as a copy of lionagi's own store shares its items."""
    import copy
    import pickle

    store = LionagiMemoryStore(InMemoryStore())
    await store.store(sample())
    for twin in (copy.deepcopy(store), pickle.loads(pickle.dumps(store))):
        assert type(twin) is LionagiMemoryStore
        assert twin.wrapped is not store.wrapped
        await twin.store(lionagi.MemoryItem(content="only in the copy"))
        found = [i.content for i in await twin.search(lionagi.MemoryQuery())]
        assert found == [sample().content, "only in the copy"]
    assert [i.content for i in await store.search(lionagi.MemoryQuery())] == [sample().content]
    shallow = copy.copy(store)
    assert (type(shallow), shallow.wrapped) == (LionagiMemoryStore, store.wrapped)
    reference = lionagi.InMemoryStore()
    await copy.copy(reference).store(lionagi.MemoryItem(content="shared"))
    assert [i.content for i in await reference.search(lionagi.MemoryQuery())] == ["shared"]
    harness = fake_harness()
    external = LionagiMemoryStore(await harness.make_store())
    assert type(copy.copy(external)) is ExternalLionagiMemoryStore


class Labelled(LionagiMemoryStore):
    """A subclass with an attribute of its own, in a slot."""

    __slots__ = ("label",)
    label: str


class Noted(LionagiMemoryStore):
    """A subclass with an instance ``__dict__``."""

    note: str


async def test_copies_and_pickles_keep_a_subclass_and_its_attributes() -> None:
    """A subclass's copy is of that subclass, with the attributes it set, over a copied store."""
    import copy
    import pickle

    labelled = Labelled(InMemoryStore())
    labelled.label = "slot"
    noted = Noted(InMemoryStore())
    noted.note = "dict"
    for store in (labelled, noted):
        await store.store(sample())

    def pickled(store: Any) -> Any:
        return pickle.loads(pickle.dumps(store))

    twins: tuple[Callable[[Any], Any], ...] = (copy.copy, copy.deepcopy, pickled)
    for make in twins:
        labelled_twin, noted_twin = make(labelled), make(noted)
        assert type(labelled_twin) is Labelled
        assert labelled_twin.label == "slot"
        assert type(noted_twin) is Noted
        assert noted_twin.note == "dict"
        assert vars(noted_twin) == {"note": "dict"}
        for twin, original in ((labelled_twin, labelled), (noted_twin, noted)):
            assert [i.content for i in await twin.search(lionagi.MemoryQuery())] == [
                sample().content
            ]
            if make is not copy.copy:
                assert twin.wrapped is not original.wrapped


async def test_concurrent_stores_keep_submission_order(new_store: NewStore) -> None:
    """Stores gathered in one event loop land in submission order; the last replacement wins."""
    import asyncio

    items = [lionagi.MemoryItem(content=n) for n in range(60)]
    replacements = [sample(content=f"version {n}") for n in range(10)]
    async with new_store() as wrapped:
        store = LionagiMemoryStore(wrapped)
        ids = await asyncio.gather(
            *(store.store(item) for item in [*items[:30], *replacements, *items[30:]])
        )
        assert ids == [*(i.id for i in items[:30]), *[ID] * 10, *(i.id for i in items[30:])]
        found = await store.search(lionagi.MemoryQuery(limit=100))
    assert [i.content for i in found] == [*range(30), "version 9", *range(30, 60)]


async def test_threads_with_their_own_event_loops_share_one_wrapper(new_store: NewStore) -> None:
    """Four threads, each running its own event loop, store through one wrapper; nothing is lost."""
    import asyncio
    import threading

    async with new_store() as wrapped:
        if isinstance(wrapped, PostgresMemoryStore):
            pytest.skip("not applicable: a PostgresMemoryStore belongs to one event loop")
        store = LionagiMemoryStore(wrapped)
        errors: list[BaseException] = []

        async def write(thread: int) -> None:
            for n in range(25):
                await store.store(lionagi.MemoryItem(content=f"{thread}-{n}", tags=[f"t{thread}"]))

        def run(thread: int) -> None:
            try:
                asyncio.run(write(thread))
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            await asyncio.to_thread(thread.join)
        assert errors == []
        for t in range(4):
            found = await store.search(lionagi.MemoryQuery(tags=[f"t{t}"], limit=100))
            assert [i.content for i in found] == [f"{t}-{n}" for n in range(25)]


class DriverUUID(UUID):
    """A database driver's UUID subclass (asyncpg returns one)."""

    __slots__ = ()


class ClosableStore(InMemoryStore):
    """An InMemoryStore whose items come back with a driver's UUID, with close() but no ``async with``."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    async def retrieve(self, item_id: UUID | str) -> MemoryItem | None:
        found = await super().retrieve(item_id)
        if found is None:
            return None
        return found.model_copy(update={"id": DriverUUID(int=found.id.int)})

    async def close(self) -> None:
        self.closed += 1


async def test_a_drivers_uuid_comes_back_as_a_plain_uuid() -> None:
    """An id of a UUID subclass from the wrapped store comes back as a plain, equal UUID."""
    store = LionagiMemoryStore(ClosableStore())
    await store.store(sample())
    assert type((await store.wrapped.retrieve(ID)).id) is DriverUUID  # type: ignore[union-attr]  # stored just above
    found = await store.retrieve(ID)
    assert found is not None
    assert type(found.id) is UUID
    assert found.id == ID


async def test_async_with_closes_a_store_that_only_has_close() -> None:
    """Leaving ``async with`` calls close() on a store without ``async with`` of its own."""
    wrapped = ClosableStore()
    async with LionagiMemoryStore(wrapped) as store:
        await store.store(sample())
    assert wrapped.closed == 1
