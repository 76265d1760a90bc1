"""Manifest accuracy (ADR-0093 D2): for every switch of the fake, a manifest that lies fails the suite.

Each row of ``LIES`` turns one switch of ``FakeBehaviour`` on and keeps the honest fake's manifest,
which claims the opposite of that behaviour; a row may also turn ``declared`` switches on, which
the manifest then tells truthfully, to reach a claim the honest fake does not make. The suite must
then fail, the named case must be among the failures, and its reason must name the broken claim.
A switch that breaks several claims has a row per claim, so that every matrix row is shown to
catch something. For the switches an honest manifest can declare (``DECLARABLE``), the same
behaviour with the truthful manifest passes.
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import NamedTuple

import pytest

from lionmem.conformance import CASES, ConformanceReport, case_named, run
from lionmem.conformance.fake import DECLARABLE, FakeBehaviour, FakeHarness, declared_manifest
from tests.profiles import examples


class Lie(NamedTuple):
    switch: str
    """The FakeBehaviour switch that is on."""
    claim: str
    """The manifest claim (or ADR rule every manifest carries) the behaviour contradicts."""
    case: str
    """The case that must catch it."""
    declared: tuple[str, ...] = ()
    """Declarable switches also on, told truthfully by the manifest (so it makes other claims)."""


LIES: tuple[Lie, ...] = (
    Lie("eventual_search", "search_consistency='immediate'", "search_visibility"),
    Lie("unsupported_filters", "supported_filters=['lang', 'topic']", "supported_filter_selects"),
    Lie("unsupported_filters", "search_semantics='reference'", "reference_search_profile"),
    Lie("dropped_fields", "'created_at' as native with retrieve_fidelity='full'", "retrieve_created_at"),
    Lie("dropped_fields", "dropped_item_fields=[]", "no_silent_field_loss"),
    Lie("dropped_fields", "preserves_metadata=True", "metadata_round_trip"),
    Lie("tagless_search_hits", "search_returns_tags=True", "search_hit_tags"),
    Lie("tagless_search_hits", "search_fidelity='full'", "search_hit_fidelity"),
    Lie("reversed_search_order", "search_semantics='reference'", "reference_search_profile"),
    Lie("json_text_filters", "search_semantics='reference'", "reference_search_profile"),
    Lie("canonical_search_tags", "search_fidelity='full'", "search_hit_fidelity"),
    Lie("canonical_search_tags", "search_fidelity='full'", "search_hit_tags"),
    Lie("canonical_search_tags", "search_fidelity='native_fields'", "search_hit_fidelity", ("dropped_fields",)),
    Lie("canonical_search_tags", "search_fidelity='native_fields'", "search_hit_tags", ("dropped_fields",)),
    Lie("misses", "retrieve_fidelity='full'", "retrieve_anchors"),
    Lie("malformed_responses", "a malformed service payload raises MemoryAdapterError", "malformed_response_raises"),
    Lie("transport_failure", "every explicit call raises MemoryAdapterUnavailable", "transport_outage"),
    Lie(
        "no_query_guard",
        "supported_filters=['lang', 'topic'] (every other key is rejected)",
        "unsupported_filter_rejected",
    ),
    Lie("no_query_guard", "a negative limit raises UnsupportedMemoryQuery naming 'limit'", "limit_negative_rejected"),
    Lie("no_query_guard", "limit=0 returns [] without transport", "limit_zero_without_io"),
    Lie("coerces_foreign_records", "a record of another kind returns None", "foreign_record_returns_none"),
    Lie("acknowledges_rejected_writes", "a rejected remote write raises MemoryAdapterError", "rejected_write_raises"),
    Lie("native_search_hits", "every result is a MemoryItem", "search_returns_memory_items"),
    Lie("recall_for_unknown_ids", "an unknown id returns None", "unknown_id_returns_none"),
    Lie("magic_empty_query", "not translated into a magic search string", "empty_query_first_page"),
    Lie("returns_native_ids", "returns item.id as a UUID", "store_returns_item_id"),
    Lie("unstable_manifest", "stable for the adapter instance's lifetime", "manifest_valid_and_stable"),
    Lie("big_ints_as_doubles", "ADR-0093 D3: content is an anchor", "retrieve_structured_content"),
    Lie("big_ints_as_doubles", "preserves_metadata=True", "metadata_round_trip"),
    Lie("big_ints_as_doubles", "search_fidelity='full'", "search_hit_fidelity"),
    Lie("normalised_text", "retrieve_fidelity='full'", "retrieve_anchors"),
    Lie("normalised_text", "search_semantics='reference'", "reference_search_profile"),
    Lie("normalised_text", "search_fidelity='full'", "search_hit_fidelity"),
    Lie("normalised_text", "search_returns_tags=True", "search_hit_tags"),
)  # fmt: skip
EXAMPLES = examples(200)
"""Reference-search examples per run (the default)."""


IDS = [f"{lie.switch}-{lie.case}" + "".join(f"-{name}" for name in lie.declared) for lie in LIES]


@cache
def lying_report(switch: str, declared: tuple[str, ...] = ()) -> ConformanceReport:
    """Run the suite on the fake with ``switch`` and ``declared`` on; the manifest tells only ``declared``."""
    told = dict.fromkeys(declared, True)
    harness = FakeHarness(
        FakeBehaviour(**told, **{switch: True}), manifest=declared_manifest(FakeBehaviour(**told))
    )
    return asyncio.run(run(harness, examples=EXAMPLES))


def test_table_covers_every_switch() -> None:
    """Every switch of FakeBehaviour has at least one row in the lie table, and nothing else does."""
    assert {lie.switch for lie in LIES} == set(FakeBehaviour.switches())


def test_table_covers_every_matrix_row() -> None:
    """Some lie is caught by a case of each matrix row: every row is shown to detect something."""
    assert {case_named(lie.case).row for lie in LIES} == {case.row for case in CASES}


def test_the_honest_fake_has_every_switch_off() -> None:
    """The default behaviour turns no switch on."""
    assert FakeBehaviour().on() == ()


@pytest.mark.parametrize("lie", LIES, ids=IDS)
def test_lying_fake_fails_the_suite(lie: Lie) -> None:
    """With the switch on and the opposite claim, the suite reports a failure."""
    assert not lying_report(lie.switch, lie.declared).ok


@pytest.mark.parametrize("lie", LIES, ids=IDS)
def test_lie_is_caught_by_its_case(lie: Lie) -> None:
    """The table's case is among the failures."""
    assert lie.case in {result.case for result in lying_report(lie.switch, lie.declared).failed}


@pytest.mark.parametrize("lie", LIES, ids=IDS)
def test_failure_names_the_broken_claim(lie: Lie) -> None:
    """The case's failure message quotes the broken claim."""
    assert lie.claim in (lying_report(lie.switch, lie.declared).result(lie.case).reason or "")


@pytest.mark.parametrize("switch", sorted(DECLARABLE))
def test_declared_behaviour_passes(switch: str) -> None:
    """With the truthful manifest, a declarable behaviour passes the suite."""
    report = asyncio.run(run(FakeHarness(FakeBehaviour(**{switch: True})), examples=EXAMPLES))
    assert [(result.case, result.reason) for result in report.failed] == []


@pytest.mark.parametrize("switch", sorted(set(FakeBehaviour.switches()) - DECLARABLE))
def test_defect_is_not_declarable(switch: str) -> None:
    """A defect changes nothing in declared_manifest: no manifest can make it honest."""
    assert declared_manifest(FakeBehaviour(**{switch: True})) == declared_manifest()


def test_every_lie_is_caught() -> None:
    """Every switch of the fake is a lie the suite catches: 20 of 20."""
    caught = [switch for switch in FakeBehaviour.switches() if not lying_report(switch).ok]
    assert (len(caught), len(FakeBehaviour.switches())) == (20, 20)
