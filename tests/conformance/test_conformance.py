"""lionmem.conformance.run(): the D2 matrix as cases, the typed report, and the honest fake."""

from __future__ import annotations

import asyncio
import functools
import json
import random
from collections.abc import Callable
from typing import Any
from uuid import UUID, uuid4

import pytest
from pydantic import ValidationError

from lionmem import (
    ExternalMemoryStore,
    InMemoryStore,
    MemoryAdapterError,
    MemoryAdapterUnavailable,
    MemoryItem,
    MemoryQuery,
)
from lionmem.conformance import (
    CASES,
    DEFAULT_SEED,
    CaseResult,
    ConformanceReport,
    case_named,
    run,
    run_case,
)
from lionmem.conformance._reference import random_query
from lionmem.conformance.fake import FakeBehaviour, FakeHarness, FakeMemoryAdapter, FakeService

D2_ROWS = {
    "Structural surface",
    "Store identifier",
    "Direct retrieval",
    "Unknown id",
    "Wrong native kind",
    "Dropped write field",
    "Typed search",
    "Limit",
    "Empty query",
    "Unsupported filter",
    "Supported filter",
    "Tag projection",
    "Metadata projection",
    "Consistency",
    "Transport outage",
    "Rejected write",
}
"""ADR-0093 D2's matrix rows checked at run time ("Manifest accuracy" is test_conformance_lies)."""
EXTRA_ROWS = {"Malformed response (D4)", "Reference search (lionmem profile)"}


class _StoreHarness:
    """A harness over a plain InMemoryStore, which has no manifest."""

    def __init__(self) -> None:
        self.store = InMemoryStore()
        self.closed = False

    async def make_store(self) -> Any:  # a plain MemoryStore: deliberately no manifest
        return self.store

    async def reset(self) -> None:
        self.store = InMemoryStore()

    async def make_search_index_visible(self) -> None:
        return None

    async def make_transport_unavailable(self) -> None:
        return None

    async def close(self) -> None:
        self.closed = True


class _BrokenHarness(_StoreHarness):
    """A harness whose make_store raises."""

    async def make_store(self) -> Any:
        msg = "no namespace"
        raise RuntimeError(msg)


class _HangingHarness(FakeHarness):
    """A fake harness whose reset never returns."""

    async def reset(self) -> None:
        await asyncio.Event().wait()


class CloseRaisesHarness(FakeHarness):
    """A fake harness whose close() raises."""

    async def close(self) -> None:
        msg = "close failed"
        raise RuntimeError(msg)


class CloseHangsHarness(FakeHarness):
    """A fake harness whose close() never returns."""

    async def close(self) -> None:
        await asyncio.Event().wait()


CLOSE_RAISED = "the harness's close() raised RuntimeError: close failed"


@pytest.fixture(scope="module")
def honest_report() -> ConformanceReport:
    return asyncio.run(run(FakeHarness()))


def test_case_names_are_unique() -> None:
    """Every case has its own name."""
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))


def test_cases_cover_every_runtime_row_of_the_matrix() -> None:
    """The cases cover each D2 row checked at run time, plus the D4 and profile rows, nothing else."""
    assert {case.row for case in CASES} == D2_ROWS | EXTRA_ROWS


def test_every_case_has_a_one_sentence_summary() -> None:
    """Each case states its observation as one sentence ending in a full stop."""
    assert [case.name for case in CASES if not case.summary.endswith(".")] == []


def test_case_named_finds_a_case() -> None:
    """case_named returns the registered case."""
    assert case_named("transport_outage").row == "Transport outage"


def test_case_named_lists_the_known_names_for_an_unknown_one() -> None:
    """An unknown case name raises KeyError naming the known ones."""
    with pytest.raises(KeyError, match="no conformance case named 'nope'; known: protocols"):
        case_named("nope")


def test_honest_fake_passes(honest_report: ConformanceReport) -> None:
    """The honest fake fails no case."""
    assert [(result.case, result.reason) for result in honest_report.failed] == []


def test_honest_fake_report_is_ok(honest_report: ConformanceReport) -> None:
    """report.ok is true when no case failed."""
    assert honest_report.ok


def test_honest_fake_skips_only_what_it_does_not_claim(honest_report: ConformanceReport) -> None:
    """The only case that does not apply is the dropped-fields one, with the reason."""
    assert [(r.case, r.reason) for r in honest_report.not_applicable] == [
        ("dropped_fields_accepted", "the manifest lists no dropped_item_fields")
    ]


def test_report_lists_every_case_in_matrix_order(honest_report: ConformanceReport) -> None:
    """The report has one result per case, in CASES order."""
    assert [result.case for result in honest_report.results] == [case.name for case in CASES]


def test_report_names_the_adapter_and_manifest(honest_report: ConformanceReport) -> None:
    """The report carries manifest.adapter and the manifest itself."""
    assert (honest_report.adapter, honest_report.manifest) == (
        "lionmem.conformance.fake",
        FakeHarness().manifest,
    )


def test_reference_profile_detail_reports_the_run(honest_report: ConformanceReport) -> None:
    """A passed reference profile says how many examples ran and with which seed."""
    detail = honest_report.result("reference_search_profile").reason or ""
    assert (
        detail.startswith("200 examples, 1000 queries"),
        detail.endswith(f"seed {DEFAULT_SEED}"),
    ) == (
        True,
        True,
    )


def test_run_closes_the_harness() -> None:
    """run() closes the harness once it is done."""
    harness = FakeHarness()
    asyncio.run(run(harness, cases=["protocols"]))
    assert harness.closed


def test_run_closes_a_harness_that_fails_everywhere() -> None:
    """run() closes the harness even when every case fails."""
    harness = _BrokenHarness()
    asyncio.run(run(harness, cases=["protocols"]))
    assert harness.closed


def test_run_reports_an_unexpected_error_as_a_failure() -> None:
    """A harness error becomes a failed case naming the exception, not a crash."""
    report = asyncio.run(run(_BrokenHarness(), cases=["protocols"]))
    assert report.result("protocols").reason == "unexpected RuntimeError: no namespace"


def test_close_that_raises_is_reported_not_raised() -> None:
    """A close() that raises leaves the verdicts and makes the report not ok, saying why."""
    report = asyncio.run(run(CloseRaisesHarness(), cases=["protocols"]))
    assert (report.result("protocols").status, report.close_failure, report.ok) == (
        "passed",
        CLOSE_RAISED,
        False,
    )


def test_close_that_hangs_fails_at_the_deadline() -> None:
    """close() is bounded by the case timeout; one that does not finish is reported."""
    report = asyncio.run(run(CloseHangsHarness(), cases=["protocols"], timeout=0.05))
    assert (report.close_failure, report.ok) == (
        "the harness's close() did not finish within 0.05 s",
        False,
    )


def test_table_shows_a_failed_close() -> None:
    """The table has a line for the failed close(), its reason below, and says so in the counts."""
    report = asyncio.run(run(CloseRaisesHarness(), cases=["protocols"]))
    assert report.format_table().splitlines()[-4:] == [
        "  FAILED  harness close()",
        f"          {CLOSE_RAISED}",
        "",
        "1 passed, 0 failed, 0 not applicable; the harness's close() failed",
    ]


def test_json_report_holds_a_failed_close() -> None:
    """The JSON report carries close_failure and loads back equal."""
    report = asyncio.run(run(CloseRaisesHarness(), cases=["protocols"]))
    dumped = report.model_dump_json()
    assert (
        json.loads(dumped)["close_failure"],
        ConformanceReport.model_validate_json(dumped) == report,
    ) == (CLOSE_RAISED, True)


def test_store_without_manifest_fails_every_case() -> None:
    """A plain MemoryStore (no manifest) fails each case, saying what is missing."""
    report = asyncio.run(run(_StoreHarness()))
    assert {result.reason for result in report.results} == {
        "InMemoryStore.manifest is NoneType, not a MemoryAdapterManifest (ADR-0093 D1)"
    }


def test_store_without_manifest_has_no_adapter_name() -> None:
    """Without a manifest the report's adapter and manifest are None."""
    report = asyncio.run(run(_StoreHarness(), cases=["protocols"]))
    assert (report.adapter, report.manifest) == (None, None)


def test_run_can_select_cases() -> None:
    """cases=[...] runs exactly the named cases, in the given order."""
    report = asyncio.run(run(FakeHarness(), cases=["limit_positive", "protocols"]))
    assert [result.case for result in report.results] == ["limit_positive", "protocols"]


def test_run_refuses_an_unknown_case_name() -> None:
    """An unknown case name raises KeyError before anything runs."""
    with pytest.raises(KeyError, match="no conformance case named 'limits'"):
        asyncio.run(run(FakeHarness(), cases=["limits"]))


def test_run_refuses_a_non_harness() -> None:
    """run() of an object that is no harness raises TypeError naming the missing methods."""
    with pytest.raises(TypeError, match="missing: make_store, reset"):
        asyncio.run(run(object()))  # type: ignore[arg-type]  # the point: not a harness


class _PlainHooks(FakeHarness):
    """A harness whose reset and optional hook are plain methods, not coroutines."""

    def reset(self) -> None:  # type: ignore[override]  # the point: not a coroutine
        pass

    def make_foreign_record(self) -> UUID:  # type: ignore[override]  # the point: not a coroutine
        return uuid4()


def test_run_refuses_a_harness_with_plain_methods() -> None:
    """run() of a harness whose methods are not coroutines raises TypeError naming them."""
    with pytest.raises(
        TypeError,
        match=r"^_PlainHooks.reset, .make_foreign_record are not coroutine methods \(async def\)",
    ):
        asyncio.run(run(_PlainHooks()))  # type: ignore[arg-type]  # the point: plain methods


def _wrapped(method: Callable[..., Any]) -> Callable[..., Any]:
    """A plain decorator that keeps the wrapped function's identity (functools.wraps)."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return method(*args, **kwargs)

    return wrapper


class _DecoratedAndWithoutAHook(FakeHarness):
    """A harness whose reset is an async method under a plain decorator, and whose foreign-record
    hook is left out by setting it to None."""

    make_foreign_record = None  # type: ignore[assignment]  # the point: a hook left out

    @_wrapped
    async def reset(self) -> None:
        await super().reset()


def test_run_takes_decorated_coroutines_and_hooks_set_to_none() -> None:
    """A coroutine under a functools.wraps decorator is a coroutine method, and a hook set to
    None is a hook left out: its case is not applicable, the others run."""
    report = asyncio.run(run(_DecoratedAndWithoutAHook()))
    assert report.ok
    foreign = next(
        result for result in report.results if result.case == "foreign_record_returns_none"
    )
    assert foreign.status == "not_applicable"


class _HooksLeftOutOnTheInstance(FakeHarness):
    """A harness that leaves out its optional hooks on the instance, as one serving a live
    service would when it cannot make that service misbehave."""

    def __init__(self) -> None:
        super().__init__()
        self.make_foreign_record = None  # type: ignore[assignment]  # the point: left out
        self.make_writes_rejected = None  # type: ignore[assignment]  # the point: left out
        self.make_responses_malformed = None  # type: ignore[assignment]  # the point: left out


def test_hooks_set_to_none_on_the_instance_are_left_out() -> None:
    """A hook set to None on the harness itself is left out as one set on its class: each of
    its cases is not applicable, and the run passes."""
    report = asyncio.run(run(_HooksLeftOutOnTheInstance()))
    assert report.ok, report.failed
    hooked = ("foreign_record_returns_none", "rejected_write_raises", "malformed_response_raises")
    assert [report.result(case).status for case in hooked] == ["not_applicable"] * 3


def _asyncified(method: Callable[..., Any]) -> Callable[..., Any]:
    """An async wrapper over a plain function, keeping its identity (functools.wraps)."""

    @functools.wraps(method)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        return method(*args, **kwargs)

    return wrapper


class _WrappedStore(FakeMemoryAdapter):
    """A store whose store() is an async method under a plain functools.wraps decorator."""

    @_wrapped
    async def store(self, item: MemoryItem) -> UUID:
        return await super().store(item)


class _WrappedHarness(FakeHarness):
    """A harness whose reset is a plain function under an async wrapper, making stores whose
    store() is under a plain decorator."""

    @_asyncified
    def reset(self) -> None:
        self.service.reset()

    async def make_store(self) -> FakeMemoryAdapter:
        return _WrappedStore(self.service, self.manifest, self.behaviour)


def test_a_coroutine_under_any_functools_wraps_layer_is_a_coroutine_method() -> None:
    """An async wrapper over a plain function, and a plain wrapper over a coroutine function,
    are both coroutine methods: on the harness and on the store alike."""
    report = asyncio.run(run(_WrappedHarness()))
    assert report.ok, report.failed
    assert report.result("protocols").status == "passed"


def test_hung_case_fails_at_its_deadline() -> None:
    """A case that never finishes fails with the timeout in the reason."""
    result = asyncio.run(run_case(_HangingHarness(), "protocols", timeout=0.05))
    assert (result.status, result.reason) == (
        "failed",
        "the case did not finish within 0.05 s",
    )


def test_same_seed_gives_the_same_report() -> None:
    """Two runs with one seed give equal reports."""
    first = asyncio.run(run(FakeHarness(), seed=7, examples=20))
    assert asyncio.run(run(FakeHarness(), seed=7, examples=20)) == first


def test_examples_sets_the_profile_size() -> None:
    """examples=N runs N reference examples (five queries each)."""
    report = asyncio.run(run(FakeHarness(), examples=3, cases=["reference_search_profile"]))
    assert (report.result("reference_search_profile").reason or "").startswith(
        "3 examples, 15 queries"
    )


def test_profile_does_not_apply_to_backend_defined_search() -> None:
    """Without the reference claim, the profile is not applicable and says why."""
    harness = FakeHarness(FakeBehaviour(reversed_search_order=True))
    result = asyncio.run(run_case(harness, "reference_search_profile"))
    assert (result.status, result.reason) == (
        "not_applicable",
        "the manifest declares search_semantics='backend-defined'",
    )


def test_profile_failure_names_the_seed_to_repeat() -> None:
    """A profile failure says how to repeat it: the seed and the case."""
    lying = FakeHarness(FakeBehaviour(reversed_search_order=True), manifest=FakeHarness().manifest)
    result = asyncio.run(run_case(lying, "reference_search_profile", seed=11))
    assert (result.reason or "").endswith(
        "repeat with run(harness, seed=11, cases=['reference_search_profile'])"
    )


def test_profile_query_text_comes_from_replaced_writes_too() -> None:
    """Query text is cut from every write, so an index still holding a replaced text shows."""
    item_id = uuid4()
    writes = [MemoryItem(id=item_id, content="qqqq"), MemoryItem(id=item_id, content=7)]
    rng = random.Random(DEFAULT_SEED)
    needles = [random_query(rng, writes, ()).text for _ in range(50)]
    assert any("q" in needle.lower() for needle in needles if needle)


def test_failure_tells_apart_text_that_differs_only_in_normalisation() -> None:
    """Values that print alike are shown with ascii() too, saying how they differ."""
    lying = FakeHarness(FakeBehaviour(normalised_text=True), manifest=FakeHarness().manifest)
    result = asyncio.run(run_case(lying, "retrieve_anchors"))
    assert result.reason == (
        "manifest lists 'content' as native (retrieve_fidelity='full'), but retrieve() returned "
        "content='caf\u00e9 \u00c5ngstr\u00f6m \uac00' for stored "
        "'cafe\u0301 A\u030angstro\u0308m \u1100\u1161' (they differ only in Unicode "
        "normalisation: 'caf\\xe9 \\xc5ngstr\\xf6m \\uac00' and "
        "'cafe\\u0301 A\\u030angstro\\u0308m \\u1100\\u1161'); ADR-0093 D3: id, content and "
        "tags are anchors, and a value the adapter cannot keep exactly must be refused with "
        "MemoryAdapterError"
    )


def test_any_key_fake_passes() -> None:
    """The honest fake declaring supports_any_filter_key passes every case."""
    report = asyncio.run(run(FakeHarness(any_filter_key=True), examples=50))
    assert [(result.case, result.reason) for result in report.failed] == []


def test_any_key_fake_has_no_unsupported_filter_case() -> None:
    """With every key accepted, the unsupported-filter case does not apply, with the reason."""
    result = asyncio.run(run_case(FakeHarness(any_filter_key=True), "unsupported_filter_rejected"))
    assert (result.status, result.reason) == (
        "not_applicable",
        "the manifest accepts every filter key (supports_any_filter_key=True)",
    )


def test_report_round_trips_through_json(honest_report: ConformanceReport) -> None:
    """model_validate_json(model_dump_json()) rebuilds an equal report."""
    assert ConformanceReport.model_validate_json(honest_report.model_dump_json()) == honest_report


def test_report_json_lists_manifest_sets_sorted(honest_report: ConformanceReport) -> None:
    """The JSON report writes the manifest's set fields as sorted arrays (stable across runs)."""
    manifest = json.loads(honest_report.model_dump_json())["manifest"]
    assert manifest["native_item_fields"] == ["content", "created_at", "id", "metadata", "tags"]


def test_table_has_a_line_per_case_and_the_summary(honest_report: ConformanceReport) -> None:
    """format_table prints the header, one line per case, reasons below, and the counts."""
    lines = honest_report.format_table().splitlines()
    assert (
        lines[0].startswith("lionmem conformance: adapter 'lionmem.conformance.fake'"),
        sum(line.startswith(("  passed ", "  FAILED ", "  n/a ")) for line in lines),
        "          the manifest lists no dropped_item_fields" in lines,
        lines[-1],
    ) == (True, len(CASES), True, "25 passed, 0 failed, 1 not applicable")


def test_failed_result_needs_a_reason() -> None:
    """A failed CaseResult without a reason is refused."""
    with pytest.raises(ValidationError, match="a failed case needs a reason"):
        CaseResult(case="x", row="y", status="failed")


def test_result_of_an_unknown_case_is_a_key_error(honest_report: ConformanceReport) -> None:
    """report.result() of a case the run did not include raises KeyError."""
    with pytest.raises(KeyError):
        honest_report.result("nope")


# --- the fake adapter itself (the example authors read) ---------------------------------------


async def test_fake_adapter_is_an_external_memory_store() -> None:
    """The fake adapter satisfies ExternalMemoryStore."""
    assert isinstance(await FakeHarness().make_store(), ExternalMemoryStore)


async def test_fake_refuses_unrepresentable_content_before_io() -> None:
    """A tuple (which JSON would turn into a list) is refused before the service is called."""
    harness = FakeHarness()
    store = await harness.make_store()
    with pytest.raises(MemoryAdapterError, match="would not come back exactly"):
        await store.store(MemoryItem(content=(1, 2)))
    assert harness.service.calls == 0


async def test_fake_limit_zero_makes_no_service_call() -> None:
    """search(limit=0) answers [] without calling the service."""
    harness = FakeHarness()
    store = await harness.make_store()
    assert (await store.search(MemoryQuery(limit=0)), harness.service.calls) == ([], 0)


async def test_fake_chains_the_native_transport_error() -> None:
    """MemoryAdapterUnavailable carries the service's native error as its cause."""
    harness = FakeHarness()
    store = await harness.make_store()
    await harness.make_transport_unavailable()
    with pytest.raises(MemoryAdapterUnavailable) as caught:
        await store.retrieve(UUID(int=1))
    assert type(caught.value.__cause__).__name__ == "FakeTransportError"


def test_fake_service_replaces_in_place() -> None:
    """A second write to an id replaces the record and keeps its position."""
    service = FakeService()
    for record_id, content in (("a", 1), ("b", 2), ("a", 3)):
        service.write({"kind": "memory", "id": record_id, "content": content, "tags": []})
    assert [hit["content"] for hit in service.query(None, None, None, 10)] == [3, 2]
