"""Hostile strings reach SQLiteMemoryStore only as bound parameters and match literally."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lionmem import MemoryItem, MemoryQuery
from lionmem.stores.sqlite import SQLiteMemoryStore
from tests.stores.sqlite.support import contents, fill, raw

HOSTILE = [
    "'",
    '"',
    "it's",
    'say "hi"',
    "a.b",
    "$.a",
    "$",
    "a[0]",
    "[",
    "]",
    "%",
    "_",
    "a%b",
    "a_b",
    "\\",
    "'; DROP TABLE items; --",
    '") OR 1=1 --',
    "1 OR 1=1",
    "* NEAR",
    "NOT",
    "AND OR",
    "a:b",
    "^a",
    "{col}",
    "\x00",
    "x\x00y",
]
IDS = [repr(value) for value in HOSTILE]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteMemoryStore]:
    async with SQLiteMemoryStore(tmp_path / "memory.db") as opened:
        yield opened


@pytest.mark.parametrize("key", HOSTILE, ids=IDS)
async def test_filter_key_matches_literally(store: SQLiteMemoryStore, key: str) -> None:
    """A metadata key made of SQL or JSON-path syntax filters only the item with that exact key."""
    await fill(
        store,
        MemoryItem(content="exact", metadata={key: 1}),
        MemoryItem(content="other key", metadata={key + "x": 1, "a": 1, "b": 1}),
        MemoryItem(content="other value", metadata={key: 2}),
    )
    assert await contents(store, MemoryQuery(filters={key: 1})) == ["exact"]


@pytest.mark.parametrize("key", HOSTILE, ids=IDS)
async def test_null_filter_on_hostile_key_matches_literally(
    store: SQLiteMemoryStore, key: str
) -> None:
    """{key: None} excludes only the item holding a non-null value under that exact key."""
    await fill(
        store,
        MemoryItem(content="has it", metadata={key: "v"}),
        MemoryItem(content="lacks it", metadata={"a": "v"}),
    )
    assert await contents(store, MemoryQuery(filters={key: None})) == ["lacks it"]


@pytest.mark.parametrize("value", HOSTILE, ids=IDS)
async def test_filter_value_matches_literally(store: SQLiteMemoryStore, value: str) -> None:
    """A hostile string value matches only itself."""
    await fill(
        store,
        MemoryItem(content="exact", metadata={"k": value}),
        MemoryItem(content="longer", metadata={"k": value + value}),
        MemoryItem(content="plain", metadata={"k": "a"}),
    )
    assert await contents(store, MemoryQuery(filters={"k": value})) == ["exact"]


@pytest.mark.parametrize("needle", HOSTILE, ids=IDS)
async def test_needle_matches_literally(store: SQLiteMemoryStore, needle: str) -> None:
    """A needle with LIKE wildcards, quotes, FTS syntax or NUL is a plain substring."""
    await fill(
        store,
        MemoryItem(content=f"before {needle} after"),
        MemoryItem(content="before xx after"),
        MemoryItem(content="abcdefghij"),
    )
    assert await contents(store, MemoryQuery(text=needle)) == [f"before {needle} after"]


@pytest.mark.parametrize("tag", HOSTILE, ids=IDS)
async def test_tag_matches_literally(store: SQLiteMemoryStore, tag: str) -> None:
    """A hostile tag, alone or with another, matches only that tag."""
    await fill(
        store,
        MemoryItem(content="exact", tags=[tag]),
        MemoryItem(content="other", tags=[tag + "x", "a"]),
    )
    assert (
        await contents(store, MemoryQuery(tags=[tag])),
        await contents(store, MemoryQuery(tags=[tag, "zzz"])),
    ) == (["exact"], ["exact"])


async def test_hostile_input_leaves_the_schema_intact(tmp_path: Path) -> None:
    """After storing and searching every hostile string, every table is still there and full."""
    async with SQLiteMemoryStore(tmp_path / "m.db") as store:
        for value in HOSTILE:
            await store.store(MemoryItem(content=value, tags=[value], metadata={value: value}))
            await store.search(MemoryQuery(text=value, tags=[value], filters={value: value}))
    tables = raw(
        tmp_path / "m.db", "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
    )
    assert ("items",) in tables
    assert raw(tmp_path / "m.db", "SELECT count(*) FROM items") == [(len(HOSTILE),)]


async def test_percent_needle_is_not_a_wildcard(store: SQLiteMemoryStore) -> None:
    """ "a%c" does not match "abc" (no LIKE semantics)."""
    await fill(store, MemoryItem(content="abc"), MemoryItem(content="a%c"))
    assert await contents(store, MemoryQuery(text="a%c")) == ["a%c"]


async def test_underscore_needle_is_not_a_wildcard(store: SQLiteMemoryStore) -> None:
    """ "a_c" does not match "abc"."""
    await fill(store, MemoryItem(content="abc"), MemoryItem(content="a_c"))
    assert await contents(store, MemoryQuery(text="a_c")) == ["a_c"]
