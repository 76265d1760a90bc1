"""Stored items are live: contents changed after ``store`` are seen by every later search.

The reference (lionagi 0.36.0) reads ``str(content).lower()`` on every search, so it sees every
change made to an item after ``store``. These tests change contents between searches (``str``,
``dict`` and ``list`` contents; in place and reassigned; replaced by ``store``; a ``str``
subclass; a write straight into the item's ``__dict__``; class-level overrides of how
``content`` is read) and require the results of lionagi's store, in its order: first targeted
cases, then a random differential test, then threads.
"""

from __future__ import annotations

import asyncio
import functools
import random
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar
from uuid import UUID, uuid4

import lionagi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from tests.profiles import examples

EXAMPLES = examples(300)
WORDS = ["Harbor", "river", "Quasar", "ΟΔΟΣ", "straße", "İstanbul", "None", "note", "[1", "'k'"]
NEEDLES = ["harbor", "RIVER", "quasar", "ς", "ß", "i", "none", "note", "'", "[1", "k", "x", "1"]
TAGS = ["a", "b", "c"]


class Shouting(str):
    """A str subclass whose str() differs from its value: each search must call it."""

    __slots__ = ()

    def __str__(self) -> str:
        return self.upper() + " SHOUTED"


class Poke:
    """A content whose str() reassigns a later item's content, flipping whether it says Harbor."""

    def __init__(self) -> None:
        self.target: Any = None
        self.calls = 0

    def __str__(self) -> str:
        self.calls += 1
        self.target.content = f"{'Harbor' if self.calls % 2 else 'river'} {self.calls}"
        return "poke"


class Twins:
    """The same items in lionmem's store and in lionagi's, changed in lockstep."""

    def __init__(self) -> None:
        self.ours = InMemoryStore()
        self.oracle = lionagi.InMemoryStore()
        self.mine: list[MemoryItem] = []
        self.theirs: list[Any] = []

    async def add(self, content: Any, tags: list[str] | None = None, **fields: Any) -> int:
        """Store one item in both stores (sharing the content object); return its index."""
        spec = {"id": uuid4(), "content": content, "tags": tags or [], **fields}
        mine, theirs = MemoryItem(**spec), lionagi.MemoryItem(**spec)
        await self.ours.store(mine)
        await self.oracle.store(theirs)
        self.mine.append(mine)
        self.theirs.append(theirs)
        return len(self.mine) - 1

    async def replace(self, index: int, content: Any) -> None:
        """Store a new object with the id of item ``index`` (a replacement in place)."""
        spec = {"id": self.mine[index].id, "content": content, "tags": list(self.mine[index].tags)}
        mine, theirs = MemoryItem(**spec), lionagi.MemoryItem(**spec)
        await self.ours.store(mine)
        await self.oracle.store(theirs)
        self.mine[index], self.theirs[index] = mine, theirs

    def assign(self, index: int, content: Any) -> None:
        """Reassign the content of item ``index`` in both stores (the very same object)."""
        self.mine[index].content = content
        self.theirs[index].content = content

    async def same(self, **fields: Any) -> list[UUID]:
        """Search both stores; require the same ids in the same order; return them."""
        found = [item.id for item in await self.ours.search(MemoryQuery(**fields))]
        expected = [item.id for item in await self.oracle.search(lionagi.MemoryQuery(**fields))]
        assert found == expected, fields
        return found


async def test_reassigned_str_is_seen() -> None:
    """After a search matched "Harbor view", reassigning another string changes what matches."""
    twins = Twins()
    index = await twins.add("Harbor view")
    assert await twins.same(text="harbor") == [twins.mine[index].id]
    twins.assign(index, "Mountain view")
    assert await twins.same(text="harbor") == []
    assert await twins.same(text="MOUNTAIN") == [twins.mine[index].id]


async def test_equal_but_distinct_str_is_found() -> None:
    """A reassigned string equal to the old one (another object) still matches."""
    twins = Twins()
    index = await twins.add("Harbor view")
    await twins.same(text="view")
    twins.assign(index, "".join(["Harbor", " ", "view"]))
    assert await twins.same(text="harbor view") == [twins.mine[index].id]


async def test_dict_changed_in_place_is_seen() -> None:
    """A dict content changed in place after a search matches its new repr."""
    twins = Twins()
    content: dict[str, Any] = {"k": "Harbor"}
    index = await twins.add(content)
    assert await twins.same(text="harbor") == [twins.mine[index].id]
    content["k"] = "river"
    assert await twins.same(text="harbor") == []
    content["new"] = [1, "Quasar"]
    assert await twins.same(text="quasar") == [twins.mine[index].id]
    content.clear()
    assert await twins.same(text="{}") == [twins.mine[index].id]


async def test_list_changed_in_place_is_seen() -> None:
    """A list content changed in place after a search matches its new repr."""
    twins = Twins()
    content: list[Any] = ["Harbor"]
    index = await twins.add(content)
    await twins.same(text="harbor")
    content.append("Quasar")
    assert await twins.same(text="QUASAR") == [twins.mine[index].id]
    content[0] = "river"
    assert await twins.same(text="harbor") == []
    del content[:]
    assert await twins.same(text="[]") == [twins.mine[index].id]


async def test_type_changes_are_seen() -> None:
    """str -> dict -> list -> None -> str, each reassigned after a search, is seen each time."""
    twins = Twins()
    index = await twins.add("Harbor")
    for content, needle in [
        ({"harbor": 1}, "{'harbor': 1}"),
        (["x", 2], "['x', 2]"),
        (None, "none"),
        (12, "12"),
        ("Quasar", "quasar"),
    ]:
        await twins.same(text="harbor")
        twins.assign(index, content)
        assert await twins.same(text=needle) == [twins.mine[index].id]


async def test_str_subclass_is_read_through_its_own_str() -> None:
    """A str subclass is converted with its own __str__ on every search, even when equal to a plain string."""
    twins = Twins()
    index = await twins.add("harbor")
    assert await twins.same(text="harbor") == [twins.mine[index].id]
    twins.assign(index, Shouting("harbor"))
    assert await twins.same(text="shouted") == [twins.mine[index].id]
    twins.assign(index, "harbor")
    assert await twins.same(text="shouted") == []


async def test_replacement_by_store_is_seen() -> None:
    """store() of another object with the same id (same position) is searched with its own content."""
    twins = Twins()
    for word in WORDS:
        await twins.add(word)
    await twins.same(text="harbor")
    await twins.replace(0, "river")
    assert await twins.same(text="harbor") == []
    assert await twins.same(text="river") == [twins.mine[0].id, twins.mine[1].id]


async def test_write_into_the_items_dict_is_seen() -> None:
    """Even a content written straight into item.__dict__ (no assignment hook) is seen."""
    twins = Twins()
    index = await twins.add("Harbor")
    await twins.same(text="harbor")
    twins.mine[index].__dict__["content"] = "river"
    twins.theirs[index].__dict__["content"] = "river"
    assert await twins.same(text="harbor") == []
    assert await twins.same(text="river") == [twins.mine[index].id]


class Retyped(MemoryItem):
    """A subclass the tests below give a ``content`` property, or switch items to."""


class Loud(MemoryItem):
    """Its ``__getattribute__`` changes what ``item.content`` gives: searches read it."""

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        return f"{value} HARBOR" if name == "content" and isinstance(value, str) else value


def expected(items: list[MemoryItem], needle: str, limit: int = -1) -> list[UUID]:
    """The reference's text search, written out: ``needle.lower() in str(item.content).lower()``."""
    found = [item.id for item in items if needle.lower() in str(item.content).lower()]
    return found[:limit]


async def stored_mix() -> tuple[InMemoryStore, list[MemoryItem]]:
    """Plain items around Retyped and Loud ones, searched once before the tests change them."""
    store = InMemoryStore()
    items: list[MemoryItem] = []
    for n in range(150):
        kind = (MemoryItem, Retyped, MemoryItem, Loud)[n % 4]
        items.append(kind(content=f"{'Harbor' if n % 5 == 0 else 'river'} {n}"))
        await store.store(items[-1])
    for needle in ("harbor", "river"):
        found = [item.id for item in await store.search(MemoryQuery(text=needle, limit=-1))]
        assert found == expected(items, needle)
    return store, items


async def test_a_getattribute_override_is_honoured() -> None:
    """Loud items say HARBOR through their __getattribute__, on every search, first or not."""
    store, items = await stored_mix()
    for limit in (-1, 3, 20, 10**6):
        found = await store.search(MemoryQuery(text="harbor", limit=limit))
        assert [item.id for item in found] == expected(items, "harbor", limit)
        assert any(type(item) is Loud for item in found)


class Masked(MemoryItem):
    """Its ``__getattribute__`` gives the stored content until the class is masked, then another."""

    masked: ClassVar[bool] = False

    def __getattribute__(self, name: str) -> Any:
        if name == "content" and type(self).masked:
            return "Quasar masked"
        return super().__getattribute__(name)


async def test_a_getattribute_override_is_honoured_after_caching_the_stored_string() -> None:
    """After searches read the strings in each Masked item's __dict__, masking is still seen."""
    store = InMemoryStore()
    items = [(MemoryItem, Masked)[n % 2](content=f"Harbor {n}") for n in range(100)]
    for item in items:
        await store.store(item)
    assert await store.search(MemoryQuery(text="harbor", limit=-1)) == items[:-1]
    Masked.masked = True
    try:
        for limit in (-1, 3, 10**6):
            found = await store.search(MemoryQuery(text="quasar", limit=limit))
            assert found == items[1::2][:limit]
            found = await store.search(MemoryQuery(text="harbor", limit=limit))
            assert found == items[0::2][:limit]
    finally:
        Masked.masked = False


async def test_a_content_property_given_to_the_class_afterwards_is_seen() -> None:
    """A data descriptor put on the class after a search wins over each item's __dict__."""
    store, items = await stored_mix()
    Retyped.content = property(lambda self: "Quasar")
    try:
        for limit in (-1, 5, 10**6):
            found = await store.search(MemoryQuery(text="quasar", limit=limit))
            assert [item.id for item in found] == expected(items, "quasar", limit)
            assert found
            assert {type(item) for item in found} == {Retyped}
    finally:
        del Retyped.content
    assert await store.search(MemoryQuery(text="quasar")) == []


async def test_an_item_switched_to_another_class_is_read_through_it() -> None:
    """An item whose __class__ changes after caching is read the way its new class reads it."""
    store, items = await stored_mix()
    target = items[7]  # a Loud item, to plain MemoryItem: its HARBOR goes away
    object.__setattr__(target, "__class__", MemoryItem)
    other = items[2]  # a plain item, to Loud: it says HARBOR now
    object.__setattr__(other, "__class__", Loud)
    found = await store.search(MemoryQuery(text="harbor", limit=-1))
    assert [item.id for item in found] == expected(items, "harbor")
    assert other in found
    assert target not in found


async def test_a_content_deleted_from_the_dict_raises_as_in_the_reference() -> None:
    """item.content raises AttributeError in both stores once content is gone from __dict__."""
    twins = Twins()
    for n in range(5):
        await twins.add(f"Harbor {n}")
    await twins.same(text="harbor")
    del twins.mine[3].__dict__["content"]
    del twins.theirs[3].__dict__["content"]
    with pytest.raises(AttributeError, match="content"):
        await twins.oracle.search(lionagi.MemoryQuery(text="harbor"))
    with pytest.raises(AttributeError, match="content"):
        await twins.ours.search(MemoryQuery(text="harbor"))
    # A positive limit stops the scan before item 3 (a deliberate difference, SEMANTICS.md L8).
    found = await twins.ours.search(MemoryQuery(text="harbor", limit=3))
    assert found == twins.mine[:3]


async def test_str_that_changes_a_later_item_is_seen_before_that_item_is_read() -> None:
    """A later item is read after an earlier content's str() ran, as in the reference.

    Item 10's str() reassigns item 50's content, alternately with and without Harbor. Every
    search must match item 50 exactly when that search's own call said Harbor, also when an
    exact string before item 10 changed.
    """
    twins = Twins()
    for n in range(100):
        await twins.add(f"river {n}")
    ours, theirs = Poke(), Poke()  # one per store, so that each counts its own store's calls
    ours.target, theirs.target = twins.mine[50], twins.theirs[50]
    twins.mine[10].content, twins.theirs[10].content = ours, theirs
    for limit in (-1, 20, 3, 10**6):
        for round_ in range(3):
            twins.assign(5, f"river five {limit} {round_}")
            found = await twins.same(text="harbor", limit=limit)
            assert found == ([twins.mine[50].id] if ours.calls % 2 else [])[:limit]
            await twins.same(text="five", limit=limit)  # one match, before item 10: no early stop


async def test_changes_in_the_middle_of_a_long_store_with_limits() -> None:
    """In a store of 700 items, with positive and negative limits, changes anywhere are seen."""
    twins = Twins()
    rng = random.Random(7)
    for n in range(700):
        await twins.add(f"{rng.choice(WORDS)} {n} {rng.choice(WORDS)}", tags=[rng.choice(TAGS)])
    for needle in NEEDLES:
        await twins.same(text=needle, limit=-1)
    for index in (0, 1, 63, 64, 65, 300, 511, 699):
        twins.assign(index, f"Changed Harbor {index}")
    content: list[Any] = ["list"]
    twins.assign(400, content)
    content.append("Harbor in place")
    for limit in (1, 5, 20, 100, 10**6, -1, -7):
        await twins.same(text="harbor", limit=limit)
        await twins.same(text="changed", tags=["a"], limit=limit)
        await twins.same(text="in place", limit=limit)


# ---------------------------------------------------------------- random differential test

contents = st.one_of(
    st.sampled_from(WORDS),
    st.text(alphabet="aAhHrRbBoOqQ ΣςßİiI'1", max_size=10),
    st.lists(st.sampled_from(WORDS), max_size=3),
    st.dictionaries(st.sampled_from(["k", "Harbor"]), st.sampled_from(WORDS), max_size=2),
    st.builds(Shouting, st.sampled_from(WORDS)),
    st.none(),
    st.integers(-20, 20),
)
changes = st.one_of(
    st.tuples(st.just("assign"), st.integers(0, 10**6), contents),
    st.tuples(st.just("replace"), st.integers(0, 10**6), contents),
    st.tuples(st.just("in place"), st.integers(0, 10**6), st.sampled_from(WORDS)),
    st.tuples(st.just("equal copy"), st.integers(0, 10**6), st.none()),
    st.tuples(st.just("add"), st.integers(0, 0), contents),
    st.tuples(
        st.just("search"),
        st.sampled_from([20, 1, 3, 10**6, -1, -3]),
        st.tuples(st.sampled_from(NEEDLES), st.none() | st.sampled_from([["a"], ["b", "c"]])),
    ),
)


def change_in_place(content: Any, word: str) -> bool:
    """Change a list or dict content in place (both stores share it); False for other types."""
    if isinstance(content, list):
        content.append(word)
        return True
    if isinstance(content, dict):
        content[word] = word
        return True
    return False


async def replay(seed: int, size: int, steps: list[tuple[str, int, Any]]) -> None:
    twins = Twins()
    rng = random.Random(seed)
    for n in range(size):
        word = rng.choice(WORDS)
        draw = rng.random()
        content: Any = (
            f"{word} {n}" if draw < 0.8 else [word, n] if draw < 0.9 else {"k": word, "n": n}
        )
        await twins.add(content, tags=[rng.choice(TAGS)])
    for needle in NEEDLES[:4]:  # every item read once before anything changes
        await twins.same(text=needle, limit=-1)
    for kind, where, value in steps:
        index = where % len(twins.mine)
        if kind == "assign":
            twins.assign(index, value)
        elif kind == "replace":
            await twins.replace(index, value)
        elif kind == "in place":
            change_in_place(twins.mine[index].content, value)
        elif kind == "equal copy" and type(twins.mine[index].content) is str:
            twins.assign(index, "".join(list(twins.mine[index].content)))
        elif kind == "add":
            await twins.add(value, tags=["a"])
        elif kind == "search":
            needle, tags = value
            await twins.same(text=needle, tags=tags, limit=where)
    for needle in NEEDLES:
        await twins.same(text=needle, limit=-1)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    size=st.sampled_from([1, 5, 63, 64, 65, 200]),
    steps=st.lists(changes, max_size=25),
)
def test_same_results_as_lionagi_after_changes(
    seed: int, size: int, steps: list[tuple[str, int, Any]]
) -> None:
    """After any mix of changes following searches, every search gives lionagi's ids in order."""
    asyncio.run(replay(seed, size, steps))


# ---------------------------------------------------------------- threads (L9)


@contextmanager
def tiny_switch_interval() -> Iterator[None]:
    """Let the interpreter switch threads every few microseconds, so scans are interrupted."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def run_readers_during_writers(
    readers: Sequence[Callable[[], None]],
    writers: Sequence[Callable[[], None]],
    done: threading.Event,
) -> list[BaseException]:
    """Run each callable in its own thread, switching threads often; return what they raised.

    Once every writer has finished, ``done`` is set so that the readers stop.
    """
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> Callable[[], None]:
        def body() -> None:
            try:
                target()
            except BaseException as error:  # reported to the test thread
                errors.append(error)

        return body

    reading = [threading.Thread(target=guarded(reader)) for reader in readers]
    writing = [threading.Thread(target=guarded(writer)) for writer in writers]
    with tiny_switch_interval():
        for thread in reading + writing:
            thread.start()
        for thread in writing:
            thread.join(timeout=60)
        done.set()
        for thread in reading:
            thread.join(timeout=60)
    return errors


def test_threads_changing_and_searching_never_see_stale_text() -> None:
    """Threads that reassign contents while others search raise nothing, and the end state is exact.

    Each searching thread checks every result against the item's content as it was read: an
    item returned for "harbor" must have held a Harbor string at some point of the run, and the
    final searches, after all threads joined, must equal lionagi's on the same final contents.
    """
    count = 600
    items = [MemoryItem(content=f"river {n}") for n in range(count)]
    store = InMemoryStore()

    async def fill() -> None:
        for item in items:
            await store.store(item)

    asyncio.run(fill())
    ever_harbor: set[UUID] = set()
    lock = threading.Lock()
    stop = threading.Event()

    def writer(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(3000):
            item = items[rng.randrange(count)]
            text = rng.choice(["Harbor", "river", "Quasar"]) + f" {rng.random()}"
            with lock:
                if text.startswith("Harbor"):
                    ever_harbor.add(item.id)
                item.content = text

    def reader() -> None:
        async def run() -> None:
            while not stop.is_set():
                found = await store.search(MemoryQuery(text="harbor", limit=-1))
                with lock:
                    assert {item.id for item in found} <= ever_harbor

        asyncio.run(run())

    writers = [functools.partial(writer, seed) for seed in range(2)]
    assert run_readers_during_writers([reader, reader], writers, stop) == []
    oracle = lionagi.InMemoryStore()

    async def final() -> None:
        for item in items:
            await oracle.store(lionagi.MemoryItem(id=item.id, content=item.content))
        for needle in ["harbor", "river", "quasar", "0."]:
            ours = [i.id for i in await store.search(MemoryQuery(text=needle, limit=-1))]
            theirs = [i.id for i in await oracle.search(lionagi.MemoryQuery(text=needle, limit=-1))]
            assert ours == theirs

    asyncio.run(final())


def test_scans_during_stores_in_other_threads_match_a_prefix() -> None:
    """Tag, filter and text searches run while other threads store items see a prefix, exactly.

    Every result must be the matching items of some prefix of the final insertion order, in
    that order (so a prefix of all the final matches): a scan interrupted by another thread's
    store resumes where it stopped, skipping nothing and repeating nothing.
    """
    store = InMemoryStore()
    batches = [
        [
            MemoryItem(
                content=f"{'Harbor' if n % 3 else 'river'} {t} {n}",
                tags=["a" if n % 2 else "b"],
                metadata={"k": n % 4},
            )
            for n in range(2000)
        ]
        for t in range(3)
    ]
    queries = [
        MemoryQuery(tags=["a"], limit=-1),
        MemoryQuery(filters={"k": 1}, limit=10**6),
        MemoryQuery(text="harbor", limit=-1),
        MemoryQuery(text="river", tags=["b"], limit=10**6),
        MemoryQuery(tags=["b"], limit=50),
        MemoryQuery(text="harbor", limit=50),
    ]
    seen: list[tuple[int, list[UUID]]] = []
    writing = threading.Event()
    written = threading.Event()

    def writer(batch: list[MemoryItem]) -> None:
        async def run() -> None:
            writing.set()
            for item in batch:
                await store.store(item)

        asyncio.run(run())

    def reader() -> None:
        async def run() -> None:
            writing.wait(timeout=60)
            round_ = 0
            while not written.is_set() or round_ < len(queries):
                number = round_ % len(queries)
                found = await store.search(queries[number])
                seen.append((number, [item.id for item in found]))
                round_ += 1

        asyncio.run(run())

    writers = [functools.partial(writer, batch) for batch in batches]
    assert run_readers_during_writers([reader, reader], writers, written) == []
    final = asyncio.run(store.search(MemoryQuery(limit=10**6)))
    assert len(final) == 6000

    def matches(item: MemoryItem, query: MemoryQuery) -> bool:
        if query.text and query.text.lower() not in str(item.content).lower():
            return False
        if query.tags and set(query.tags).isdisjoint(item.tags):
            return False
        return not query.filters or all(item.metadata.get(k) == v for k, v in query.filters.items())

    for number, ids in seen:
        # The matches of any prefix of the final order, cut by any limit, are a prefix of all
        # the matches in the final order.
        every_match = [item.id for item in final if matches(item, queries[number])]
        assert ids == every_match[: len(ids)], queries[number]
    assert {len(ids) for _, ids in seen} != {0}
