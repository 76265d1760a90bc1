"""The C speedups (``lionmem/_speedups.c``) are built, in use, and give what their Python specifications give.

The text scan: ``memory._walk_cached`` is the specification: the C ``scan`` must return the same hits and
the same missed item, and leave the chunk's iterator at the same place, for items whose type
reads ``content`` from the ``__dict__``. An item of any other type must come back as missed
(the store then evaluates it the slow, exact way; ``test_memory_cache`` checks the store's
results for such types with both scans). Construction's pre-check: ``init_ready`` must agree
with the test the Python closure writes out (``test_fast_init`` compares whole constructions
with both). The C module must be built: importing it fails loudly here otherwise.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import lionmem
from lionmem import MemoryItem, _base, _speedups
from lionmem._speedups import init_ready, scan
from lionmem.stores import memory
from lionmem.stores.memory import _UNSEEN, _walk_cached


class Note(MemoryItem):
    """A plain subclass: it reads content from the __dict__, so the C scan takes it."""


class Loud(MemoryItem):
    """Its own __getattribute__: the C scan must hand it back as missed."""

    def __getattribute__(self, name: str) -> Any:
        return super().__getattribute__(name)


class Shouting(str):
    """A str subclass content: never a cached string, so a miss either way."""

    __slots__ = ()


def test_the_store_and_construction_use_the_c_code() -> None:
    assert memory._scan_cached is scan
    assert _base._INIT_READY is init_ready
    assert MemoryItem.__init__.__code__.co_freevars.count("ready") == 1  # the C-checked closure


WORDS = ["Harbor", "river", "ΟΔΟΣ", "straße", "İx", "note", ""]


@st.composite
def walks(draw: st.DrawFn) -> tuple[list[MemoryItem], list[Any], list[Any], int, str, int]:
    """A chunk of items (plain types only), a cache over it at some start, a needle and a count."""
    size = draw(st.integers(0, 12))
    start = draw(st.integers(0, 3))
    items: list[MemoryItem] = []
    sources: list[Any] = [draw(st.sampled_from([_UNSEEN, "river"])) for _ in range(start)]
    lowered: list[Any] = [str(source).lower() for source in sources]
    for _ in range(size):
        kind = draw(st.sampled_from([MemoryItem, Note]))
        content = draw(
            st.one_of(
                st.sampled_from(WORDS),
                st.builds(Shouting, st.sampled_from(WORDS)),
                st.lists(st.sampled_from(WORDS), max_size=2),
            )
        )
        item = kind(content=content)
        cached = draw(st.sampled_from(["same", "copy", "unseen", "other"]))
        if cached == "same":
            source: Any = item.content
        elif cached == "copy":  # equal, but another object: a miss
            source = (str(item.content) + ".")[:-1]
            source = source if source is not item.content else _UNSEEN
        elif cached == "unseen":
            source = _UNSEEN
        else:
            source = draw(st.sampled_from(WORDS))
        items.append(item)
        sources.append(source)
        # The lowered text the scan must use as given (a wrong one here would show).
        lowered.append(draw(st.sampled_from([str(source).lower(), "harbor", "x"])))
    # Sometimes the cache ends inside the chunk: both walks stop there without taking more.
    cut = draw(st.integers(start, len(sources)) | st.just(len(sources)))
    needle = draw(st.sampled_from(["harbor", "r", "ß", "i̇", "", "zz"]))
    needed = draw(st.sampled_from([-1, 1, 2, 3, 100]))
    return items, sources[:cut], lowered[:cut], start, needle, needed


@given(walks())
def test_same_walk_as_the_python_specification(
    case: tuple[list[MemoryItem], list[Any], list[Any], int, str, int],
) -> None:
    items, sources, lowered, start, needle, needed = case
    ours_from, theirs_from = iter(items), iter(items)
    ours = scan(ours_from, sources, lowered, start, needle, needed)
    theirs = _walk_cached(theirs_from, sources, lowered, start, needle, needed)
    assert len(ours[0]) == len(theirs[0])
    assert all(a is b for a, b in zip(ours[0], theirs[0], strict=True))
    assert ours[1] is theirs[1]
    assert list(ours_from) == list(theirs_from)  # the same items left untaken


def test_the_module_was_built_from_this_source() -> None:
    """A module built from another version of _speedups.c (not rebuilt since) fails here."""
    source = Path(lionmem.__file__).with_name("_speedups.c").read_bytes()
    assert hashlib.sha256(source).hexdigest() == _speedups.SOURCE_SHA256


def both(
    chunk: list[MemoryItem], sources: list[Any], lowered: list[Any], needle: str, needed: int
) -> list[tuple[list[MemoryItem], MemoryItem | None]]:
    """The C walk's answer and the Python walk's, each over its own iterator of ``chunk``."""
    return [walk(iter(chunk), sources, lowered, 0, needle, needed) for walk in (scan, _walk_cached)]


@pytest.mark.parametrize("needed", [-(2**70), -2, -1, 0, 1, 2, 3, 4, 5, 6, 2**63, 2**70])
def test_the_walk_stops_at_needed_matches(needed: int) -> None:
    items = [MemoryItem(content=f"{'Harbor' if n % 3 else 'river'} {n}") for n in range(9)]
    sources: list[Any] = [item.content for item in items]
    lowered: list[Any] = [source.lower() for source in sources]
    ours, theirs = both(items, sources, lowered, "harbor", needed)
    hits = [item for n, item in enumerate(items) if n % 3]
    assert ours == theirs == (hits[:needed] if 0 < needed < len(hits) else hits, None)


class Key:
    """A ``__dict__`` key hashing like "content": looking up "content" runs its ``__eq__``."""

    def __init__(self) -> None:
        self.action: Callable[[], None] = lambda: None

    def __hash__(self) -> int:
        return hash("content")

    def __eq__(self, other: object) -> bool:
        action, self.action = self.action, lambda: None
        action()
        return False


def test_a_class_changed_during_the_walk_is_checked_again() -> None:
    """Code run by a lookup that gives the class a content property is seen from the next item."""
    results = []
    for walk in (scan, _walk_cached):
        first, second = Note(content="Harbor a"), Note(content="Harbor b")
        sources = [first.content, second.content]

        def shadow() -> None:
            Note.content = property(lambda self: "Quasar")

        key = Key()
        object.__setattr__(first, "__dict__", {key: None, **first.__dict__})
        key.action = shadow  # armed once the dict is built: the walk's lookup runs it
        try:
            hits, missed = walk(
                iter([first, second]), sources, ["harbor a", "harbor b"], 0, "harbor", -1
            )
        finally:
            del Note.content
        results.append(([hit.content for hit in hits], missed is second))
    assert results == [(["Harbor a"], True), (["Harbor a"], True)]


def test_the_cache_is_read_before_each_item_is_taken() -> None:
    """As with zip: an entry written while the chunk gives its item is not yet seen."""
    items = [MemoryItem(content="Harbor") for _ in range(2)]
    results = []
    for walk in (scan, _walk_cached):
        sources: list[Any] = [_UNSEEN, _UNSEEN]

        def chunk(sources: list[Any] = sources) -> Iterator[MemoryItem]:
            for position, item in enumerate(items):
                sources[position] = item.content  # too late for this step
                yield item

        hits, missed = walk(chunk(), sources, ["harbor", "harbor"], 0, "harbor", -1)
        results.append((hits, missed))
    assert results == [([], items[0]), ([], items[0])]


def test_an_entry_changed_while_its_item_is_taken_makes_the_item_missed() -> None:
    """The C walk does not hold the entries it read: one replaced meanwhile is a miss (never a hit).

    The Python walk still tests the entry it read (zip holds it); a miss only sends the item to
    the exact, slow evaluation, so the store's results are the same either way.
    """
    items = [MemoryItem(content="Harbor") for _ in range(2)]
    for replaced in ("sources", "lowered"):
        sources: list[Any] = [item.content for item in items]
        lowered: list[Any] = ["harbor", "harbor"]
        changed, other = (sources, _UNSEEN) if replaced == "sources" else (lowered, "x")

        def chunk(changed: list[Any] = changed, other: Any = other) -> Iterator[MemoryItem]:
            for position, item in enumerate(items):
                changed[position] = other
                yield item

        assert scan(chunk(), sources, lowered, 0, "harbor", -1) == ([], items[0])


def test_an_item_of_another_reading_type_is_missed_where_it_stands() -> None:
    plain = [MemoryItem(content=f"Harbor {n}") for n in range(3)]
    loud = Loud(content="Harbor loud")
    chunk = [*plain, loud, MemoryItem(content="Harbor after")]
    sources = [item.__dict__["content"] for item in chunk]
    lowered = [source.lower() for source in sources]
    rest = iter(chunk)
    hits, missed = scan(rest, sources, lowered, 0, "harbor", -1)
    assert hits == plain
    assert missed is loud
    assert list(rest) == chunk[4:]


def test_a_content_property_on_the_class_makes_its_items_missed() -> None:
    item = Note(content="Harbor")
    sources, lowered = [item.content], ["harbor"]
    assert scan([item], sources, lowered, 0, "harbor", -1) == ([item], None)
    Note.content = property(lambda self: "Harbor")
    try:
        assert scan([item], sources, lowered, 0, "harbor", -1) == ([], item)
    finally:
        del Note.content
    assert scan([item], sources, lowered, 0, "harbor", -1) == ([item], None)


def test_an_item_without_content_in_its_dict_is_missed() -> None:
    item = MemoryItem(content="Harbor")
    source = item.content
    del item.__dict__["content"]
    assert scan([item], [source], ["harbor"], 0, "harbor", -1) == ([], item)


def test_an_object_without_a_dict_is_missed() -> None:
    plain = object()
    assert scan([plain], ["x"], ["x"], 0, "x", -1) == ([], plain)


def raising(item: MemoryItem) -> Iterator[MemoryItem]:
    yield item
    msg = "dictionary changed size during iteration"
    raise RuntimeError(msg)


def test_an_error_from_the_chunk_propagates() -> None:
    """The dict iterator's error (another thread added an item) reaches the caller, which resumes."""
    item = MemoryItem(content="Harbor")
    for walk in (scan, _walk_cached):
        with pytest.raises(RuntimeError, match="changed size"):
            walk(raising(item), [item.content, _UNSEEN], ["harbor", ""], 0, "harbor", -1)


def test_the_needle_is_tested_as_python_does() -> None:
    item = MemoryItem(content="Harbor")
    with pytest.raises(TypeError, match="requires string as left operand"):
        scan([item], [item.content], ["harbor"], 0, 1, -1)  # type: ignore[arg-type]  # a bad needle on purpose


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        ((), TypeError, "takes 6 arguments"),
        (([], (), [], 0, "x", -1), TypeError, "lists for sources and lowered"),
        (([], [], None, 0, "x", -1), TypeError, "lists for sources and lowered"),
        (([], [], [], -1, "x", -1), ValueError, "start of 0 or more"),
        (([], [], [], "0", "x", -1), TypeError, "integer"),
        (([], [], [], 0, "x", None), TypeError, "integer"),
        ((5, [""], [""], 0, "x", -1), TypeError, "not iterable"),
    ],
)
def test_bad_arguments_are_refused(
    args: tuple[Any, ...], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        scan(*args)


def test_no_reference_is_leaked() -> None:
    """Hits, misses, early stops and errors leave every object's reference count as it was."""
    items = [MemoryItem(content=f"{'Harbor' if n % 2 else 'river'} {n}") for n in range(20)]
    sources: list[Any] = [item.content for item in items]
    lowered: list[Any] = [source.lower() for source in sources]
    sources[15] = _UNSEEN
    watched = [*items, *sources, *lowered, items[0].__dict__]
    before = [sys.getrefcount(obj) for obj in watched]
    for _ in range(200):
        assert scan(items, sources, lowered, 0, "harbor", -1) == (items[1:15:2], items[15])
        assert scan(items, sources, lowered, 0, "harbor", 2) == ([items[1], items[3]], None)
        assert scan(items[16:], sources, lowered, 16, "harbor", -1) == (
            [items[17], items[19]],
            None,
        )
        with pytest.raises(TypeError):
            scan(items, sources, lowered, 0, 1, -1)  # type: ignore[arg-type]  # an error inside the walk
    assert [sys.getrefcount(obj) for obj in watched] == before


# ---------------------------------------------------------------- construction's pre-check

NAMES = frozenset({"id", "created_at", "metadata", "content", "tags"})


def python_ready(data: dict[str, Any], names: frozenset[str]) -> bool:
    """``init_ready``'s rule in Python (the closure used without the C module hashes keyword names first)."""
    return (
        all(type(key) is str for key in data)
        and names.issuperset(data)
        and type(metadata := data.get("metadata", {})) is dict
        and all(type(key) is str for key in metadata)
        and "lion_class" not in metadata
    )


class StrKey(str):
    """A keyword name of a str subclass: user code for hashing and comparing."""

    __slots__ = ()


class Collides:
    """A metadata key hashing like "lion_class"; counts the calls of its ``__eq__``, which raises ``error``."""

    calls = 0

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error

    def __hash__(self) -> int:
        return hash("lion_class")

    def __eq__(self, other: object) -> bool:
        Collides.calls += 1
        if self.error is not None:
            raise self.error
        return False


metadatas = st.one_of(
    st.just({}),
    st.dictionaries(st.sampled_from(["a", "lion_class", "b"]), st.integers(), max_size=3),
    st.dictionaries(st.sampled_from(["a", StrKey("b"), StrKey("lion_class")]), st.integers()),
    st.builds(lambda: {"a": 1, Collides(): 1}),
    st.just([("a", 1)]),
    st.builds(lambda: type("DictChild", (dict,), {})(a=1)),
    st.none(),
)


@given(
    keys=st.lists(
        st.sampled_from([*sorted(NAMES), "extra", "Content", StrKey("content")]),
        max_size=6,
        unique=True,
    ),
    metadata=metadatas,
)
@example(keys=["metadata"], metadata=type("DictChild", (dict,), {})(a=1))
@example(keys=["metadata", "content"], metadata={"lion_class": "MemoryItem"})
@example(keys=["metadata"], metadata={StrKey("a"): 1})
@example(keys=[StrKey("content")], metadata=None)
@example(keys=["content", "extra"], metadata=None)
@example(keys=[], metadata=None)
def test_init_ready_agrees_with_the_python_test(keys: list[str], metadata: Any) -> None:
    data: dict[str, Any] = dict.fromkeys(keys, 1)
    if "metadata" in data:
        data["metadata"] = metadata
    assert init_ready(data, NAMES) is python_ready(data, NAMES)


@pytest.mark.parametrize("error", [None, ValueError("no"), KeyboardInterrupt()])
def test_no_user_code_runs_in_the_check(error: BaseException | None) -> None:
    """A metadata key that is not an exact str is never compared: the class validator takes it."""
    Collides.calls = 0
    assert init_ready({"metadata": {"a": 1, Collides(error): 1}}, NAMES) is False
    assert init_ready({StrKey("content"): 1}, NAMES) is False
    assert Collides.calls == 0


def test_init_ready_leaks_no_reference() -> None:
    metadata = {"a": 1}
    named = {"lion_class": "x"}
    odd = {Collides(): 1}
    data = {"content": "x", "metadata": metadata}
    watched = [metadata, named, odd, data, NAMES]
    before = [sys.getrefcount(obj) for obj in watched]
    for _ in range(200):
        assert init_ready(data, NAMES) is True
        assert init_ready({"metadata": named}, NAMES) is False
        assert init_ready({"metadata": odd}, NAMES) is False
        assert init_ready({"extra": 1}, NAMES) is False
        with pytest.raises(TypeError):
            init_ready(data, set(NAMES))  # type: ignore[arg-type]  # a set, not a frozenset, on purpose
    assert [sys.getrefcount(obj) for obj in watched] == before


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((), "takes 2 arguments"),
        (([], NAMES), "a dict and a frozenset"),
        (({}, set(NAMES)), "a dict and a frozenset"),
        ((type("D", (dict,), {})(), NAMES), "a dict and a frozenset"),
    ],
)
def test_init_ready_refuses_other_arguments(args: tuple[Any, ...], match: str) -> None:
    with pytest.raises(TypeError, match=match):
        init_ready(*args)
