"""SQLiteMemoryStore: the protocol methods, the store-specific extras, lifecycle and concurrency."""

from __future__ import annotations

import asyncio
import copy
import pickle
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import pytest

import lionmem
from lionmem import Branch, InMemoryStore, MemoryItem, MemoryQuery
from lionmem.errors import MemoryAdapterError, MemoryAdapterUnavailable, UnsupportedMemoryQuery
from lionmem.protocol import MemoryStore
from lionmem.stores.sqlite import SQLiteMemoryStore, UnrepresentableValueError
from tests.stores.shared import (
    one_item_for_many_is_refused,
    queries_changed_in_place_answer_as_in_memory,
)
from tests.stores.sqlite.support import EVERYTHING, contents, dump, fill


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteMemoryStore]:
    async with SQLiteMemoryStore(tmp_path / "memory.db") as opened:
        yield opened


class Note(MemoryItem):
    """A MemoryItem subclass: the SQLite store cannot give its class back, so it refuses it."""


# ---------------------------------------------------------------- the protocol


def test_exported_from_lionmem() -> None:
    """``lionmem.SQLiteMemoryStore`` is the store class."""
    assert lionmem.SQLiteMemoryStore is SQLiteMemoryStore


def test_satisfies_the_memory_store_protocol(tmp_path: Path) -> None:
    """An instance passes the structural MemoryStore check."""
    assert isinstance(SQLiteMemoryStore(tmp_path / "m.db"), MemoryStore)


async def test_store_returns_the_item_id(store: SQLiteMemoryStore) -> None:
    """store() returns the item's own UUID."""
    item = MemoryItem(content="x")
    assert await store.store(item) == item.id


async def test_retrieve_returns_an_equal_new_object(store: SQLiteMemoryStore) -> None:
    """retrieve() gives a new MemoryItem whose every field equals the stored one."""
    item = MemoryItem(content={"a": [1, 2.5, None]}, tags=["t", "t", ""], metadata={"k": "v"})
    await store.store(item)
    found = await store.retrieve(item.id)
    assert found is not item
    assert dump(found) == dump(item)


async def test_retrieve_unknown_id_returns_none(store: SQLiteMemoryStore) -> None:
    """An id that was never stored gives None."""
    await store.store(MemoryItem())
    assert await store.retrieve(uuid4()) is None


@pytest.mark.parametrize(
    "form",
    [str.upper, lambda s: s.replace("-", ""), lambda s: "{" + s + "}", lambda s: "urn:uuid:" + s],
    ids=["upper", "hex", "braces", "urn"],
)
async def test_retrieve_accepts_every_uuid_string_form(
    store: SQLiteMemoryStore, form: object
) -> None:
    """Any string uuid.UUID() parses finds the item."""
    item = MemoryItem(content="found")
    await store.store(item)
    assert callable(form)
    found = await store.retrieve(form(str(item.id)))
    assert dump(found) == dump(item)


@pytest.mark.parametrize("garbage", ["garbage", "", None, 1.5, 0, b"x"])
async def test_retrieve_of_a_non_id_returns_none(store: SQLiteMemoryStore, garbage: object) -> None:
    """A value that is not a UUID or a UUID string gives None without raising (L6)."""
    assert await store.retrieve(garbage) is None  # type: ignore[arg-type]  # wrong on purpose


async def test_replacement_keeps_the_position(store: SQLiteMemoryStore) -> None:
    """Storing an existing id again replaces the item where it stood."""
    first, second = MemoryItem(content="one"), MemoryItem(content="two")
    await fill(store, first, second)
    await store.store(MemoryItem(id=first.id, content="ONE"))
    assert await contents(store, EVERYTHING) == ["ONE", "two"]


async def test_replacement_keeps_the_count(store: SQLiteMemoryStore) -> None:
    """Replacing an item does not add one."""
    item = MemoryItem(content="one")
    await fill(store, item, MemoryItem(id=item.id, content="again"))
    assert await store.count() == 1


async def test_replacement_changes_every_field(store: SQLiteMemoryStore) -> None:
    """The replacement's created_at, metadata, content and tags are what comes back."""
    item = MemoryItem(content="one", tags=["a"], metadata={"k": 1}, created_at=1.0)
    replacement = MemoryItem(id=item.id, content=[2], tags=["b"], metadata={"j": 2}, created_at=2.0)
    await fill(store, item, replacement)
    assert dump(await store.retrieve(item.id)) == dump(replacement)


async def test_search_returns_items_in_insertion_order(store: SQLiteMemoryStore) -> None:
    """An empty query returns the items in the order they were first stored."""
    await fill(store, *(MemoryItem(content=n) for n in range(30)))
    assert await contents(store, EVERYTHING) == list(range(30))


async def test_default_limit_is_twenty(store: SQLiteMemoryStore) -> None:
    """MemoryQuery()'s limit of 20 cuts the results."""
    await fill(store, *(MemoryItem(content=n) for n in range(25)))
    assert await contents(store, MemoryQuery()) == list(range(20))


async def test_later_changes_to_the_object_are_not_stored(store: SQLiteMemoryStore) -> None:
    """store() encodes the item when called; mutating it afterwards changes nothing stored."""
    item = MemoryItem(content=["a"])
    await store.store(item)
    item.content.append("b")
    found = await store.retrieve(item.id)
    assert found is not None
    assert found.content == ["a"]


@pytest.mark.parametrize("value", [{"content": "x"}, "x", None, [MemoryItem()]])
async def test_store_of_a_non_item_raises_type_error(
    store: SQLiteMemoryStore, value: object
) -> None:
    """Only a MemoryItem is stored; anything else raises TypeError naming its type (L5)."""
    with pytest.raises(TypeError, match=type(value).__qualname__):
        await store.store(value)  # type: ignore[arg-type]  # wrong on purpose


async def test_store_of_a_non_item_stores_nothing(store: SQLiteMemoryStore) -> None:
    """A rejected store leaves the store empty."""
    with pytest.raises(TypeError):
        await store.store([MemoryItem()])  # type: ignore[arg-type]  # wrong on purpose
    assert await store.count() == 0


async def test_one_item_given_for_many_is_refused_naming_the_call(
    store: SQLiteMemoryStore,
) -> None:
    """A single item, or a non-item among many, given to store_many or store_stream."""
    await one_item_for_many_is_refused(store)


async def test_a_query_changed_in_place_is_answered_as_in_memory(
    store: SQLiteMemoryStore,
) -> None:
    """Tags and filter keys that are not strings, put in a query after it was validated."""
    await queries_changed_in_place_answer_as_in_memory(store)


async def test_store_of_a_subclass_is_refused(store: SQLiteMemoryStore) -> None:
    """A MemoryItem subclass cannot come back as itself, so it is refused before writing."""
    with pytest.raises(UnrepresentableValueError, match="Note"):
        await store.store(Note(content="x"))


async def test_refused_subclass_error_is_an_adapter_error(store: SQLiteMemoryStore) -> None:
    """The refusal is a MemoryAdapterError (a rejected write) and a ValueError (bad input)."""
    with pytest.raises(MemoryAdapterError) as caught:
        await store.store(Note())
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("value", [{"text": "x"}, "x", None, MemoryItem()])
async def test_search_of_a_non_query_raises_what_the_reference_raises(
    store: SQLiteMemoryStore, value: object
) -> None:
    """search() takes a MemoryQuery; anything else raises the TypeError InMemoryStore raises,
    naming the type and how to build a query (L7)."""
    errors = []
    for each in (store, InMemoryStore()):
        with pytest.raises(TypeError) as caught:
            await each.search(value)  # type: ignore[arg-type]  # wrong on purpose
        errors.append(str(caught.value))
    hint = " or lionmem.MemoryQuery.model_validate(the_dict)" if isinstance(value, dict) else ""
    assert (
        errors
        == [
            f"search() takes a MemoryQuery, got {type(value).__qualname__}; build one with "
            f"lionmem.MemoryQuery(text=..., tags=..., filters=..., limit=...){hint}"
        ]
        * 2
    )


@pytest.mark.parametrize(
    "duplicate", [copy.deepcopy, pickle.dumps, copy.copy], ids=["deepcopy", "pickle", "copy"]
)
async def test_a_store_cannot_be_copied_and_says_so(
    store: SQLiteMemoryStore, duplicate: Callable[[Any], object]
) -> None:
    """A store owns its connections and worker thread: copying or pickling it (or a Branch that
    holds it: a shallow copy of a Branch shares its store) raises a TypeError naming the store and
    what to do, and the store still works."""
    await store.store(MemoryItem(content="kept"))
    branch = Branch(memory=store)
    for value in (store, branch) if duplicate is not copy.copy else (store,):
        with pytest.raises(TypeError) as caught:
            duplicate(value)
        assert str(caught.value) == (
            f"{store!r} cannot be copied or pickled: it owns its connections and worker thread; "
            "share it (one store serves any number of tasks and threads) or open another "
            "SQLiteMemoryStore on the same file"
        )
    assert copy.copy(branch).memory is store
    assert [item.content for item in await store.search(MemoryQuery())] == ["kept"]


async def test_negative_limit_is_rejected(store: SQLiteMemoryStore) -> None:
    """A negative limit raises UnsupportedMemoryQuery naming limit (ADR-0093 D3)."""
    with pytest.raises(UnsupportedMemoryQuery) as caught:
        await store.search(MemoryQuery(limit=-1))
    assert caught.value.rejected_keys == ("limit",)


async def test_negative_limit_is_rejected_before_any_io(tmp_path: Path) -> None:
    """The limit check happens before the database is touched (a closed store shows it)."""
    closed = SQLiteMemoryStore(tmp_path / "m.db")
    await closed.close()
    with pytest.raises(UnsupportedMemoryQuery):
        await closed.search(MemoryQuery(limit=-5))


async def test_zero_limit_returns_empty_without_io(tmp_path: Path) -> None:
    """limit=0 returns [] without touching the database (the file is not even created)."""
    store = SQLiteMemoryStore(tmp_path / "m.db")
    assert await store.search(MemoryQuery(text="x", limit=0)) == []
    assert not (tmp_path / "m.db").exists()
    await store.close()


async def test_search_results_carry_every_field(store: SQLiteMemoryStore) -> None:
    """A search hit is a full MemoryItem: tags and metadata included."""
    item = MemoryItem(content="hit", tags=["a", "b"], metadata={"k": [1, {"x": None}]})
    await store.store(item)
    assert [dump(hit) for hit in await store.search(MemoryQuery(text="hit"))] == [dump(item)]


# ---------------------------------------------------------------- store-specific extras


async def test_store_many_stores_in_order(store: SQLiteMemoryStore) -> None:
    """store_many() stores every item, in order, and returns their ids."""
    items = [MemoryItem(content=n) for n in range(5)]
    assert await store.store_many(items) == [item.id for item in items]
    assert await contents(store, EVERYTHING) == [0, 1, 2, 3, 4]


async def test_store_many_repeated_id_keeps_first_position_and_last_value(
    store: SQLiteMemoryStore,
) -> None:
    """A repeated id in one batch behaves like successive store() calls."""
    first = MemoryItem(content="first")
    await store.store_many(
        [first, MemoryItem(content="middle"), MemoryItem(id=first.id, content="last")]
    )
    assert await contents(store, EVERYTHING) == ["last", "middle"]


async def test_store_many_is_all_or_nothing(store: SQLiteMemoryStore) -> None:
    """One unstorable item in a batch means nothing of the batch is stored."""
    with pytest.raises(UnrepresentableValueError):
        await store.store_many([MemoryItem(content="ok"), MemoryItem(content=(1, 2))])
    assert await store.count() == 0


async def test_a_refused_item_of_store_many_is_noted_by_position_and_id(
    store: SQLiteMemoryStore,
) -> None:
    """The error refusing an item of a batch notes where it stands and its id."""
    bad = MemoryItem(content=(1, 2))
    with pytest.raises(UnrepresentableValueError) as refused:
        await store.store_many([MemoryItem(content="ok"), MemoryItem(content="ok"), bad])
    assert refused.value.__notes__ == [
        f"store_many(): the item at position 2, id {bad.id}; none of the items was written"
    ]
    with pytest.raises(TypeError) as wrong:
        await store.store_many([MemoryItem(content="ok"), "junk"])  # type: ignore[list-item]  # a non-item, on purpose
    assert wrong.value.__notes__ == [
        "store_many(): the item at position 1; none of the items was written"
    ]
    assert await store.count() == 0


async def test_store_many_of_nothing_returns_empty(store: SQLiteMemoryStore) -> None:
    """An empty batch stores nothing and returns []."""
    assert await store.store_many([]) == []


async def test_store_many_accepts_a_generator(store: SQLiteMemoryStore) -> None:
    """Any iterable of items is accepted."""
    await store.store_many(MemoryItem(content=n) for n in range(3))
    assert await store.count() == 3


async def test_delete_removes_the_item(store: SQLiteMemoryStore) -> None:
    """delete() of a stored id returns True and the item is gone."""
    item = MemoryItem(content="x")
    await store.store(item)
    assert await store.delete(item.id) is True
    assert await store.retrieve(item.id) is None


async def test_delete_removes_the_item_from_search(store: SQLiteMemoryStore) -> None:
    """A deleted item no longer matches text, tag or filter searches."""
    item = MemoryItem(content="findme", tags=["t"], metadata={"k": 1})
    await fill(store, item, MemoryItem(content="other"))
    await store.delete(item.id)
    query = MemoryQuery(text="findme", tags=["t"], filters={"k": 1})
    assert await store.search(query) == []


async def test_delete_of_an_unknown_id_returns_false(store: SQLiteMemoryStore) -> None:
    """delete() of an id that is not stored returns False."""
    assert await store.delete(uuid4()) is False


async def test_delete_of_a_non_id_returns_false(store: SQLiteMemoryStore) -> None:
    """delete() of something that is not an id returns False."""
    assert await store.delete("garbage") is False


async def test_restoring_a_deleted_id_appends_it(store: SQLiteMemoryStore) -> None:
    """After delete, storing the same id again puts it last."""
    first, second = MemoryItem(content="a"), MemoryItem(content="b")
    await fill(store, first, second)
    await store.delete(first.id)
    await store.store(first)
    assert await contents(store, EVERYTHING) == ["b", "a"]


async def test_count_counts_items(store: SQLiteMemoryStore) -> None:
    """count() is the number of distinct stored ids."""
    await fill(store, *(MemoryItem() for _ in range(7)))
    assert await store.count() == 7


async def test_items_yields_everything_in_order(store: SQLiteMemoryStore) -> None:
    """items() yields every item in insertion order, across several batches."""
    stored = [MemoryItem(content=n) for n in range(11)]
    await store.store_many(stored)
    seen = [dump(item) async for item in store.items(batch_size=4)]
    assert seen == [dump(item) for item in stored]


async def test_items_sees_an_item_stored_during_iteration(store: SQLiteMemoryStore) -> None:
    """An item stored while iterating is yielded at the end (the iterator is not a snapshot)."""
    await store.store_many([MemoryItem(content=n) for n in range(3)])
    seen = []
    async for item in store.items(batch_size=2):
        seen.append(item.content)
        if item.content == 0:
            await store.store(MemoryItem(content="late"))
    assert seen == [0, 1, 2, "late"]


async def test_items_rejects_a_batch_size_below_one(store: SQLiteMemoryStore) -> None:
    """batch_size must be at least 1."""
    with pytest.raises(ValueError, match="batch_size"):
        [item async for item in store.items(batch_size=0)]


# ---------------------------------------------------------------- lifecycle


def test_construction_does_no_io(tmp_path: Path) -> None:
    """The constructor creates no file; the first operation does."""
    SQLiteMemoryStore(tmp_path / "m.db")
    assert not (tmp_path / "m.db").exists()


async def test_open_creates_the_file(tmp_path: Path) -> None:
    """open() creates the database at once."""
    store = SQLiteMemoryStore(tmp_path / "m.db")
    await store.open()
    await store.close()
    assert (tmp_path / "m.db").exists()


async def test_items_persist_across_instances(tmp_path: Path) -> None:
    """A new store on the same file finds what an earlier one stored."""
    item = MemoryItem(content="kept", tags=["t"], metadata={"k": 1.5})
    async with SQLiteMemoryStore(tmp_path / "m.db") as first:
        await first.store(item)
    async with SQLiteMemoryStore(tmp_path / "m.db") as second:
        assert dump(await second.retrieve(item.id)) == dump(item)


async def test_operations_after_close_raise_unavailable(tmp_path: Path) -> None:
    """A closed store raises MemoryAdapterUnavailable."""
    store = SQLiteMemoryStore(tmp_path / "m.db")
    await store.close()
    with pytest.raises(MemoryAdapterUnavailable, match="closed"):
        await store.store(MemoryItem())


async def test_close_is_idempotent(tmp_path: Path) -> None:
    """Closing twice is fine."""
    store = SQLiteMemoryStore(tmp_path / "m.db")
    await store.open()
    await store.close()
    await store.close()
    with pytest.raises(MemoryAdapterUnavailable):
        await store.count()


async def test_close_waits_for_submitted_writes(tmp_path: Path) -> None:
    """Writes submitted before close() are committed before the file is closed."""
    store = SQLiteMemoryStore(tmp_path / "m.db")
    pending = [asyncio.ensure_future(store.store(MemoryItem(content=n))) for n in range(20)]
    await asyncio.sleep(0)  # let every store() submit its write
    await store.close()
    await asyncio.gather(*pending)
    async with SQLiteMemoryStore(tmp_path / "m.db") as reopened:
        assert await reopened.count() == 20


async def test_async_with_closes(tmp_path: Path) -> None:
    """Leaving ``async with`` closes the store."""
    async with SQLiteMemoryStore(tmp_path / "m.db") as store:
        await store.count()
    with pytest.raises(MemoryAdapterUnavailable):
        await store.count()


async def test_failed_async_with_entry_closes_the_store(tmp_path: Path) -> None:
    """When opening fails on entering ``async with``, the store is closed (its thread ends)."""
    store = SQLiteMemoryStore(tmp_path / "nowhere" / "m.db")
    with pytest.raises(MemoryAdapterUnavailable):
        async with store:
            pass
    with pytest.raises(MemoryAdapterUnavailable, match="closed"):
        await store.count()


async def test_missing_directory_raises_unavailable(tmp_path: Path) -> None:
    """A path whose directory does not exist raises MemoryAdapterUnavailable on first use."""
    store = SQLiteMemoryStore(tmp_path / "nowhere" / "m.db")
    with pytest.raises(MemoryAdapterUnavailable):
        await store.store(MemoryItem())


async def test_memory_database_is_private_per_instance() -> None:
    """Two ":memory:" stores do not share items."""
    async with SQLiteMemoryStore(":memory:") as one, SQLiteMemoryStore(":memory:") as two:
        await one.store(MemoryItem())
        assert (await one.count(), await two.count()) == (1, 0)


def test_unknown_synchronous_is_rejected(tmp_path: Path) -> None:
    """synchronous must be one of EXTRA, FULL, NORMAL."""
    with pytest.raises(ValueError, match="synchronous"):
        SQLiteMemoryStore(tmp_path / "m.db", synchronous="OFF")  # type: ignore[arg-type]  # wrong on purpose


def test_negative_busy_timeout_is_rejected(tmp_path: Path) -> None:
    """busy_timeout must be a non-negative number of seconds."""
    with pytest.raises(ValueError, match="busy_timeout"):
        SQLiteMemoryStore(tmp_path / "m.db", busy_timeout=-1)


def test_repr_names_the_path(tmp_path: Path) -> None:
    """repr() shows the path."""
    assert repr(SQLiteMemoryStore(":memory:")) == "SQLiteMemoryStore(':memory:')"


# ---------------------------------------------------------------- concurrency


async def test_concurrent_stores_keep_submission_order(store: SQLiteMemoryStore) -> None:
    """200 gathered stores return their ids in order and are stored in submission order."""
    items = [MemoryItem(content=n) for n in range(200)]
    ids = await asyncio.gather(*(store.store(item) for item in items))
    assert ids == [item.id for item in items]
    assert await contents(store, EVERYTHING) == list(range(200))


async def test_concurrent_replacements_last_submitted_wins(store: SQLiteMemoryStore) -> None:
    """Gathered replacements of one id leave the last submitted value and one item."""
    first = MemoryItem(content=0)
    await asyncio.gather(*(store.store(MemoryItem(id=first.id, content=n)) for n in range(49)))
    assert await contents(store, EVERYTHING) == [48]


def test_one_store_serves_threads_with_their_own_loops(tmp_path: Path) -> None:
    """Four threads, each running its own event loop, share one store without errors (L9)."""
    store = SQLiteMemoryStore(tmp_path / "m.db", synchronous="NORMAL")
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        async def run() -> None:
            for n in range(25):
                await store.store(MemoryItem(content=offset + n))

        try:
            asyncio.run(run())
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(100 * k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    async def check() -> int:
        async with store:
            return await store.count()

    assert errors == []
    assert asyncio.run(check()) == 100


async def test_database_work_does_not_block_the_event_loop(store: SQLiteMemoryStore) -> None:
    """While the worker waits inside a database call, the event loop keeps running tasks."""
    release = threading.Event()

    def blocking_call(conn: object) -> bool:
        return release.wait(timeout=10)

    waiting = asyncio.ensure_future(store._call(blocking_call))
    await asyncio.sleep(0)
    # If the loop were blocked by the worker, this line would not run until the wait timed out.
    release.set()
    assert await waiting is True


async def test_cancelled_caller_leaves_the_store_usable(store: SQLiteMemoryStore) -> None:
    """Cancelling a task awaiting a store() does not break later operations."""
    task = asyncio.ensure_future(store.store(MemoryItem(content="maybe")))
    await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await store.store(MemoryItem(content="after"))
    assert (await contents(store, EVERYTHING))[-1] == "after"


async def test_search_during_concurrent_stores_sees_a_prefix(store: SQLiteMemoryStore) -> None:
    """A search gathered among stores sees a prefix of the final insertion order."""
    items = [MemoryItem(content=n) for n in range(40)]
    first = [asyncio.ensure_future(store.store(item)) for item in items[:20]]
    search = asyncio.ensure_future(store.search(EVERYTHING))
    rest = [asyncio.ensure_future(store.store(item)) for item in items[20:]]
    await asyncio.gather(*first, *rest)
    seen = [hit.content for hit in await search]
    assert seen == list(range(len(seen)))


async def test_same_results_as_the_reference_store(store: SQLiteMemoryStore) -> None:
    """A mixed workload gives the same contents as InMemoryStore for a few fixed queries."""
    reference = InMemoryStore()
    items = [
        MemoryItem(content="Straße", tags=["de"], metadata={"n": 1}),
        MemoryItem(content={"k": "ΟΔΟΣ"}, tags=["gr", "de"], metadata={"n": 1.0}),
        MemoryItem(content=None, tags=[], metadata={"n": True}),
        MemoryItem(content=[1, "two"], tags=["x"], metadata={}),
    ]
    for target in (store, reference):
        await fill(target, *items)
    queries = [
        MemoryQuery(text="ß"),
        MemoryQuery(text="ς"),
        MemoryQuery(text="none"),
        MemoryQuery(tags=["de", "x"]),
        MemoryQuery(filters={"n": 1}),
        MemoryQuery(filters={"n": None}),
        MemoryQuery(text="'", limit=1),
    ]
    for query in queries:
        assert await contents(store, query) == await contents(reference, query), query


async def test_unknown_uuid_object_is_not_found(store: SQLiteMemoryStore) -> None:
    """retrieve() of UUID(int=0) on an empty store is None."""
    assert await store.retrieve(UUID(int=0)) is None
