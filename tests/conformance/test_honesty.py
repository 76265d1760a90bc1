"""Honest stores the fake's switches do not cover pass the suite.

ADR-0093 D3 lets an adapter refuse, with ``MemoryAdapterError``, a value it cannot represent, and
a ``search_fidelity='lossy'`` manifest permits documented normalisation of search hits. Each store
here is the honest fake with one such difference, told truthfully: the suite must pass it.
"""

from __future__ import annotations

import asyncio
import functools
import unicodedata
from collections.abc import Iterator
from typing import Any
from uuid import UUID

from lionmem import MemoryAdapterError, MemoryItem
from lionmem.conformance import ConformanceReport, run
from lionmem.conformance.fake import FakeBehaviour, FakeHarness, FakeMemoryAdapter, FakeService
from tests.profiles import examples

EXAMPLES = examples(200)
"""Reference-search examples per run (the default)."""


def _leaves(value: Any) -> Iterator[Any]:
    """Every key and scalar inside a JSON-like value."""
    if isinstance(value, dict):
        for key, element in value.items():
            yield key
            yield from _leaves(element)
    elif isinstance(value, list):
        for element in value:
            yield from _leaves(element)
    else:
        yield value


class _BigIntRefuser(FakeMemoryAdapter):
    """A service holding numbers as doubles, which refuses the integers it would round."""

    async def store(self, item: MemoryItem) -> UUID:
        for value in [*_leaves(item.content), *_leaves(item.metadata)]:
            if type(value) is int and abs(value) >= 2**53:
                msg = "integer beyond a double's exact range"
                raise MemoryAdapterError(msg)
        return await super().store(item)


class _DecomposedTextRefuser(FakeMemoryAdapter):
    """A service that keeps text in NFC, which refuses text not already in NFC."""

    async def store(self, item: MemoryItem) -> UUID:
        for value in [*_leaves(item.content), *item.tags, *_leaves(item.metadata)]:
            if isinstance(value, str) and not unicodedata.is_normalized("NFC", value):
                msg = "text not in Unicode normal form C"
                raise MemoryAdapterError(msg)
        return await super().store(item)


class _RefuserHarness(FakeHarness):
    """The honest fake's harness, making stores of ``adapter``."""

    def __init__(self, adapter: type[FakeMemoryAdapter]) -> None:
        super().__init__()
        self.adapter = adapter

    async def make_store(self) -> FakeMemoryAdapter:
        return self.adapter(self.service, self.manifest, self.behaviour)


class _NFCHitTagsService(FakeService):
    """A search index that NFC-normalises the tags of its hits (storage keeps them exactly)."""

    def query(
        self, text: str | None, tags: list[str] | None, filters: dict[str, Any] | None, limit: int
    ) -> list[dict[str, Any]]:
        hits = super().query(text, tags, filters, limit)
        for hit in hits:
            if "tags" in hit:  # a malformed payload has none
                hit["tags"] = [unicodedata.normalize("NFC", tag) for tag in hit["tags"]]
        return hits


def _report(harness: FakeHarness) -> ConformanceReport:
    return asyncio.run(run(harness, examples=EXAMPLES))


@functools.cache
def _refuser_report(adapter: type[FakeMemoryAdapter]) -> ConformanceReport:
    """The suite's report on the honest fake whose stores are ``adapter``, run once per module."""
    return _report(_RefuserHarness(adapter))


def _failures(report: ConformanceReport) -> list[tuple[str, str | None]]:
    return [(result.case, result.reason) for result in report.failed]


def test_store_refusing_big_integers_passes() -> None:
    """Integers beyond a double's range, refused on write, fail no case."""
    assert _failures(_refuser_report(_BigIntRefuser)) == []


def test_big_integer_refusal_is_reported() -> None:
    """metadata_round_trip passes saying the big-integer metadata was refused."""
    report = _refuser_report(_BigIntRefuser)
    assert report.result("metadata_round_trip").reason == (
        "refused (ADR-0093 D3): metadata {'big': [9007199254740993, -9223372036854775809, "
        "18446744073709551617]}; metadata {'extremes': [5e-324, 1.7976931348623157e+308, "
        "9223372036854775808, 18446744073709551617]}"
    )


def test_store_refusing_decomposed_text_passes() -> None:
    """Text not in NFC, refused on write, fails no case."""
    assert _failures(_refuser_report(_DecomposedTextRefuser)) == []


def test_decomposed_text_refusal_is_reported() -> None:
    """retrieve_anchors passes saying the text not in NFC was refused."""
    report = _refuser_report(_DecomposedTextRefuser)
    assert report.result("retrieve_anchors").reason == (
        "refused (ADR-0093 D3): text not in Unicode normal form C"
    )


def test_lossy_store_normalising_hit_tags_passes() -> None:
    """Under search_fidelity='lossy', hits whose tags are sorted, deduplicated and in NFC pass."""
    harness = FakeHarness(FakeBehaviour(canonical_search_tags=True))
    harness.service = _NFCHitTagsService(harness.behaviour)
    assert harness.manifest.search_fidelity == "lossy"
    assert _failures(_report(harness)) == []
