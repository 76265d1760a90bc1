"""Adapters and harnesses that would pass by a trick rather than by doing what the manifest claims.

Each is the honest fake with one trick: changing the item it is handed to match what it stored,
showing a manifest to the report that the cases never see, or returning a hit twice. The suite
must fail each, in the case that meets the trick, saying what it saw.
"""

from __future__ import annotations

import asyncio
import copy
import re
from typing import Any
from uuid import UUID

import pytest

from lionmem import MemoryItem, MemoryQuery
from lionmem.conformance import ConformanceReport, run
from lionmem.conformance import _cases as cases
from lionmem.conformance._values import same_value
from lionmem.conformance.fake import FakeHarness, FakeMemoryAdapter, declared_manifest

CONSTANTS = (
    "UNICODE_TAGS",
    "DECOMPOSED_TAGS",
    "BIG_INTS",
    "BIG_METADATA",
    "NESTED_METADATA",
    "CONTENT_SHAPES",
)
"""The suite's module constants that cases put into the items they store."""
PRISTINE = {name: copy.deepcopy(getattr(cases, name)) for name in CONSTANTS}
"""Their values when this module is imported, before any run."""


def _doubles_in_place(value: Any) -> None:
    """Turn every integer beyond a double's exact range inside ``value`` into a float, in place."""
    keys = list(value) if isinstance(value, dict) else range(len(value))
    for key in keys:
        element = value[key]
        if type(element) is int and abs(element) > 2**53:
            value[key] = float(element)
        elif isinstance(element, dict | list):
            _doubles_in_place(element)


class _NormalisesInPlace(FakeMemoryAdapter):
    """Keeps tags sorted without duplicates and big integers as doubles, under a full-fidelity
    manifest, and makes the item it is handed match what it keeps, in place."""

    async def store(self, item: MemoryItem) -> UUID:
        item.tags[:] = sorted(set(item.tags))
        for value in (item.content, item.metadata):
            if isinstance(value, dict | list):
                _doubles_in_place(value)
        return await super().store(item)


class _DuplicateHits(FakeMemoryAdapter):
    """Returns every search hit twice (up to the limit), under backend-defined search semantics."""

    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        hits = await super().search(query)
        return [twin for hit in hits for twin in (hit, hit.model_copy())][: query.limit]


class _AdapterHarness(FakeHarness):
    """The honest fake's harness, making stores of ``adapter`` under ``manifest``."""

    def __init__(self, adapter: type[FakeMemoryAdapter], **manifest: Any) -> None:
        super().__init__(manifest=declared_manifest().model_copy(update=manifest))
        self.adapter = adapter

    async def make_store(self) -> FakeMemoryAdapter:
        return self.adapter(self.service, self.manifest, self.behaviour)


class _ManifestChangesHarness(FakeHarness):
    """The honest fake, whose stores after the first ``honest_stores`` claim eventual search.

    Eventual search is a weaker claim the fake meets, so only the change itself is wrong.
    """

    def __init__(self, honest_stores: int) -> None:
        super().__init__()
        self.honest_stores = honest_stores
        self.made = 0

    async def make_store(self) -> FakeMemoryAdapter:
        self.made += 1
        if self.made <= self.honest_stores:
            return await super().make_store()
        weaker = self.manifest.model_copy(update={"search_consistency": "eventual"})
        return FakeMemoryAdapter(self.service, weaker, self.behaviour)


MANIFEST_CHANGED = (
    "the harness made a store whose manifest differs from the one the suite checks (the first "
    "store's, recorded in the report): search_consistency 'immediate' -> 'eventual'; every store "
    "of one harness must show the same manifest (ADR-0093 D1: the manifest is stable)"
)


def _report(harness: FakeHarness, *names: str) -> ConformanceReport:
    return asyncio.run(run(harness, examples=2, cases=names or None))


def test_changing_the_callers_item_in_place_hides_no_loss() -> None:
    """Tags and big integers changed in the handed item, as in the store, still fail the cases."""
    report = _report(
        _AdapterHarness(_NormalisesInPlace),
        "retrieve_anchors",
        "retrieve_structured_content",
        "metadata_round_trip",
    )
    assert [(result.case, result.status) for result in report.results] == [
        ("retrieve_anchors", "failed"),
        ("retrieve_structured_content", "failed"),
        ("metadata_round_trip", "failed"),
    ]
    assert report.result("retrieve_anchors").reason == (
        "manifest lists 'tags' as native (retrieve_fidelity='full'), but retrieve() returned "
        "tags=['Beta', 'alpha', 'é', 'ǅ'] for stored ['alpha', 'Beta', 'ǅ', 'é']; ADR-0093 D3: "
        "id, content and tags are anchors"
    )


def test_changing_the_callers_item_in_place_leaves_the_suite_constants_alone() -> None:
    """After a whole run against the in-place normaliser, the suite's constants are unchanged."""
    _report(_AdapterHarness(_NormalisesInPlace))
    assert [
        name for name in CONSTANTS if not same_value(getattr(cases, name), PRISTINE[name])
    ] == []


def test_store_showing_another_manifest_than_the_report_fails_its_case() -> None:
    """The first store's manifest is the report's; a case whose store shows another one fails."""
    report = _report(_ManifestChangesHarness(honest_stores=1), "protocols")
    assert (report.manifest, report.result("protocols").status) == (
        declared_manifest(),
        "failed",
    )
    assert report.result("protocols").reason == MANIFEST_CHANGED


def test_reference_profile_store_showing_another_manifest_fails_the_profile() -> None:
    """A store the reference-search profile makes per example must show the case's manifest too."""
    report = _report(_ManifestChangesHarness(honest_stores=2), "reference_search_profile")
    assert report.result("reference_search_profile").reason == MANIFEST_CHANGED


def test_search_returning_a_hit_twice_fails() -> None:
    """A search that returns one item twice fails, naming the query and the item."""
    harness = _AdapterHarness(_DuplicateHits, search_semantics="backend-defined")
    result = _report(harness, "search_returns_memory_items").result("search_returns_memory_items")
    assert result.status == "failed"
    assert re.fullmatch(
        r"search\(\) returned the item [0-9a-f-]{36} more than once; "
        r"a search returns each stored item at most once",
        result.reason or "",
    )


def test_backend_defined_search_without_repeats_passes() -> None:
    """The same manifest with the honest fake's search passes the case: the repeat is the fault."""
    harness = _AdapterHarness(FakeMemoryAdapter, search_semantics="backend-defined")
    report = _report(harness, "search_returns_memory_items")
    assert report.result("search_returns_memory_items").status == "passed"


def test_a_manifest_that_does_not_validate_fails_its_case_and_is_left_out_of_the_report() -> None:
    """A manifest built without validation that breaks a coherence rule fails
    manifest_valid_and_stable, and the report (which holds only a valid manifest) is made."""
    incoherent = declared_manifest().model_copy(
        update={"dropped_item_fields": frozenset({"created_at"})}
    )
    report = _report(FakeHarness(manifest=incoherent), "manifest_valid_and_stable", "protocols")
    result = report.result("manifest_valid_and_stable")
    assert result.status == "failed"
    assert (result.reason or "").startswith(
        "the manifest does not validate (built with model_construct?): "
    )
    assert "native and dropped item fields must be disjoint" in (result.reason or "")
    assert (report.ok, report.manifest, report.adapter) == (False, None, None)
    assert report.result("protocols").status == "passed"


def test_a_harness_class_is_refused_and_a_case_named_twice_runs_once() -> None:
    """run() of the harness class (not an instance) says to call it; a case named twice is run
    and reported once."""
    with pytest.raises(TypeError) as refused:
        asyncio.run(run(FakeHarness))  # type: ignore[arg-type]  # the class, on purpose
    assert str(refused.value) == (
        "the harness must be an instance, got the class FakeHarness; call it first, "
        "e.g. FakeHarness()"
    )
    report = _report(FakeHarness(), "protocols", "protocols")
    assert [result.case for result in report.results] == ["protocols"]
