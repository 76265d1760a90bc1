"""SQLiteMemoryStore against the ADR-0093 conformance suite, reference-search profile included.

Both at the default ``synchronous=FULL`` (every write in the worker) and at ``NORMAL`` (new items
inserted in the caller's thread).

The ``memory_adapter_harness`` fixture switches on lionmem's pytest plugin, which adds one test
per conformance case beside it (``TestMemoryAdapterConformance``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lionmem import ExternalMemoryStore, MemoryAdapterManifest
from lionmem.conformance import run
from lionmem.stores.sqlite import MANIFEST, SQLiteMemoryStore, Synchronous
from tests.stores.sqlite.support.harness import SQLiteHarness


@pytest.fixture(params=["FULL", "NORMAL"])
def memory_adapter_harness(tmp_path: Path, request: pytest.FixtureRequest) -> SQLiteHarness:
    return SQLiteHarness(tmp_path, synchronous=request.param)


def test_is_an_external_memory_store(tmp_path: Path) -> None:
    """The store satisfies ExternalMemoryStore structurally."""
    assert isinstance(SQLiteMemoryStore(tmp_path / "m.db"), ExternalMemoryStore)


def test_manifest_claims_full_fidelity_and_reference_search(tmp_path: Path) -> None:
    """The manifest declares every field native and exact, any filter key, reference search."""
    manifest = SQLiteMemoryStore(tmp_path / "m.db").manifest
    assert manifest == MemoryAdapterManifest(
        adapter="lionmem.sqlite",
        native_item_fields=frozenset({"id", "created_at", "metadata", "content", "tags"}),
        dropped_item_fields=frozenset(),
        supported_filters=frozenset(),
        supports_any_filter_key=True,
        search_consistency="immediate",
        retrieve_fidelity="full",
        search_fidelity="full",
        search_returns_tags=True,
        preserves_metadata=True,
        search_semantics="reference",
    )


def test_manifest_is_shared_and_immutable(tmp_path: Path) -> None:
    """Every instance returns the module's MANIFEST, which is frozen."""
    manifest = SQLiteMemoryStore(tmp_path / "m.db").manifest
    with pytest.raises(ValueError, match="frozen"):
        manifest.adapter = "other"  # type: ignore[misc]  # assigning a frozen field on purpose
    assert manifest is MANIFEST


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
async def test_suite_passes_through_run(tmp_path: Path, synchronous: Synchronous) -> None:
    """run() fails no case; only the two whose preconditions SQLite lacks are not applicable."""
    report = await run(SQLiteHarness(tmp_path, synchronous=synchronous), examples=20)
    statuses = {result.case: result.status for result in report.results}
    failed = {result.case: result.reason for result in report.results if result.status == "failed"}
    assert failed == {}
    assert [case for case, status in statuses.items() if status == "not_applicable"] == [
        "dropped_fields_accepted",  # nothing is dropped
        "unsupported_filter_rejected",  # every filter key is supported
    ]
