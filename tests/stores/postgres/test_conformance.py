"""PostgresMemoryStore against the ADR-0093 conformance suite, reference-search profile included.

The ``memory_adapter_harness`` fixture switches on lionmem's pytest plugin, which adds one test
per conformance case beside it (``TestMemoryAdapterConformance``), each on a new database.
"""

from __future__ import annotations

import pytest

from lionmem import ExternalMemoryStore, MemoryAdapterManifest
from lionmem.conformance import run
from lionmem.stores.postgres import MANIFEST, PostgresMemoryStore
from tests.postgres_support import Cluster
from tests.stores.postgres.harness import PostgresHarness, harness


@pytest.fixture
def memory_adapter_harness(postgres_server: Cluster) -> PostgresHarness:
    return PostgresHarness(postgres_server, postgres_server.fresh_database("conformance"))


def test_is_an_external_memory_store() -> None:
    """The store satisfies ExternalMemoryStore structurally."""
    assert isinstance(PostgresMemoryStore("postgresql://unused"), ExternalMemoryStore)


def test_manifest_claims_full_fidelity_and_reference_search() -> None:
    """The manifest declares every field native and exact, any filter key, reference search."""
    assert PostgresMemoryStore("postgresql://unused").manifest == MemoryAdapterManifest(
        adapter="lionmem.postgres",
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
    assert PostgresMemoryStore("postgresql://unused").manifest is MANIFEST


async def test_suite_passes_through_run(postgres_server: Cluster) -> None:
    """run() fails no case; only the two whose preconditions the store lacks are not applicable."""
    harness = PostgresHarness(postgres_server, postgres_server.fresh_database("conformance"))
    report = await run(harness, examples=30)
    statuses = {result.case: result.status for result in report.results}
    failed = {result.case: result.reason for result in report.results if result.status == "failed"}
    assert failed == {}
    assert [case for case, status in statuses.items() if status == "not_applicable"] == [
        "dropped_fields_accepted",  # nothing is dropped
        "unsupported_filter_rejected",  # every filter key is supported
    ]
    assert len(statuses) == len(report.results) >= 25


async def test_the_command_line_factory_owns_its_cluster() -> None:
    """harness() starts a cluster of its own, runs cases on it and destroys it on close()."""
    own = harness()
    report = await run(own, cases=["store_returns_item_id", "transport_outage"])
    assert [(result.case, result.status) for result in report.results] == [
        ("store_returns_item_id", "passed"),
        ("transport_outage", "passed"),
    ]
    assert not own.cluster.root.exists()
