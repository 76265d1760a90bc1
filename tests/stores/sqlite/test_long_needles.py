"""Long needles over repetitive content: exact results from a bounded index query."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import SupportsIndex

import pytest

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from lionmem.stores import _sqlite_query
from lionmem.stores.sqlite import SQLiteMemoryStore
from tests.stores.sqlite.support import contents, fill


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteMemoryStore]:
    async with SQLiteMemoryStore(tmp_path / "memory.db", synchronous="NORMAL") as opened:
        yield opened


def _index_terms(needle: str) -> list[str]:
    """The quoted terms of the full-text query a search for ``needle`` gives the trigram index."""
    query = _sqlite_query._fts_query(needle)
    terms = re.findall(r'"((?:[^"]|"")*)"', query)
    assert query == " AND ".join(f'"{term}"' for term in terms)
    return [term.replace('""', '"') for term in terms]


@pytest.mark.parametrize(
    "needle",
    ["a" * 999 + "b", "ab" * 500, "abc", 'quote"d"' * 40, "the quick brown fox jumps over"],
)
def test_the_index_is_asked_for_a_few_trigrams_of_the_needle(needle: str) -> None:
    """At most TRIGRAMS distinct trigrams, each a piece of the (lowered) needle, in its order."""
    terms = _index_terms(needle)
    assert 1 <= len(terms) <= _sqlite_query.TRIGRAMS
    assert len(set(terms)) == len(terms)
    assert all(len(term) == 3 and term in needle for term in terms)
    assert terms[0] == needle[:3]


@pytest.mark.parametrize(
    ("needle", "expected"),
    [
        ("a" * 4003 + "q" + "a" * 3999, ["aaa", "aaq", "aqa", "qaa"]),
        ("a" * 500_000 + "bc" + "a" * 500_000, ["aaa", "aab", "abc", "bca", "caa"]),
        ("x" * 3 + "y" * 5_000 + "z", ["xxx", "xxy", "xyy", "yyy", "yyz"]),
    ],
)
def test_the_index_is_asked_for_every_rare_trigram_of_a_long_run(
    needle: str, expected: list[str]
) -> None:
    """A long needle of few runs of one character asks for all its distinct trigrams, those
    around the rare characters included (they are what lets the index select few items)."""
    assert _index_terms(needle) == expected


REPETITIVE = [
    "a" * 50_000,
    "ab" * 25_000,
    "a" * 49_999 + "b",
    "ab" * 10_000 + "x" + "ab" * 10_000,
    "Abc" * 10_000,
]


@pytest.mark.parametrize(
    "needle",
    [
        "a" * 999 + "b",
        "a" * 1000,
        "ab" * 500,
        "ba" * 499 + "x",
        "ab" * 300 + "x" + "ab" * 300,
        "abc" * 333,
        "ABCA" * 100,
        "b" * 3,
    ],
)
async def test_long_needles_over_repetitive_content_match_the_reference(
    store: SQLiteMemoryStore, needle: str
) -> None:
    """Every long needle finds exactly what InMemoryStore finds, in the same order."""
    reference = InMemoryStore()
    items = [MemoryItem(content=text) for text in REPETITIVE]
    await fill(store, *items)
    await fill(reference, *items)
    query = MemoryQuery(text=needle, limit=10)
    assert await contents(store, query) == await contents(reference, query)


class _CountingSlices(str):
    """A needle that counts the slices taken of it."""

    slices = 0

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        type(self).slices += 1
        return str.__getitem__(self, key)


def test_a_needle_of_any_length_is_read_at_a_bounded_number_of_positions() -> None:
    """The index query of a needle of 100,000 characters of 100,000 runs reads RUNS runs (one
    character and at most three trigrams each), then at most SCANNED + 1 positions of the rest
    (its last among them): its cost in the caller's thread is bounded."""
    needle = _CountingSlices("ab" * 50_000 + "xyz")
    terms = _index_terms(needle)
    assert _CountingSlices.slices <= 4 * _sqlite_query.RUNS + _sqlite_query.SCANNED + 1
    assert (terms[0], terms[-1], len(set(terms)) == len(terms)) == ("aba", "xyz", True)


async def test_needles_longer_than_the_scanned_positions_stay_exact(
    store: SQLiteMemoryStore,
) -> None:
    """A needle longer than SCANNED positions finds the items holding it, not an item that
    differs from it only between the positions its index query was built from."""
    long_text = "".join(f"{n:05d}" for n in range(2_000))
    reference = InMemoryStore()
    items = [
        MemoryItem(content=long_text),
        MemoryItem(content=long_text[:5_003] + "#" + long_text[5_004:]),
        MemoryItem(content="x" + long_text + "y"),
    ]
    await fill(store, *items)
    await fill(reference, *items)
    query = MemoryQuery(text=long_text)
    assert await contents(store, query) == await contents(reference, query)
    assert len(await store.search(query)) == 2
