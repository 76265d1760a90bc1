"""The strict query guard of ADR-0093 D3: all bad keys rejected before I/O, limit rules."""

from __future__ import annotations

from typing import Any

import pytest

from lionmem import MemoryAdapterManifest, MemoryItem, MemoryQuery, UnsupportedMemoryQuery
from lionmem.guard import check_query, guarded_search

MANIFEST = MemoryAdapterManifest(
    adapter="guard-test",
    native_item_fields=frozenset({"id", "created_at", "metadata", "content", "tags"}),
    dropped_item_fields=frozenset(),
    supported_filters=frozenset({"topic", "lang"}),
    search_consistency="immediate",
    retrieve_fidelity="full",
    search_fidelity="full",
    search_returns_tags=True,
    preserves_metadata=True,
)
ANY_KEY = MemoryAdapterManifest.model_validate(
    {**MANIFEST.model_dump(), "supported_filters": [], "supports_any_filter_key": True}
)


def rejected(query: MemoryQuery, manifest: MemoryAdapterManifest = MANIFEST) -> tuple[str, ...]:
    with pytest.raises(UnsupportedMemoryQuery) as caught:
        check_query(query, manifest)
    return caught.value.rejected_keys


def test_plain_query_needs_the_backend() -> None:
    """A valid query with a positive limit returns True (ask the backend)."""
    assert check_query(MemoryQuery(text="x", tags=["t"], limit=5), MANIFEST) is True


def test_supported_filters_pass() -> None:
    """Filter keys the manifest lists are accepted."""
    assert check_query(MemoryQuery(filters={"topic": "a", "lang": None}), MANIFEST) is True


def test_empty_filters_pass() -> None:
    """An empty filters mapping names no key and passes."""
    assert check_query(MemoryQuery(filters={}), MANIFEST) is True


def test_limit_zero_needs_no_backend() -> None:
    """limit=0 returns False: the answer is [] without I/O."""
    assert check_query(MemoryQuery(limit=0), MANIFEST) is False


def test_every_unsupported_key_is_rejected_at_once() -> None:
    """All unsupported keys are named together, sorted; supported ones are not named."""
    query = MemoryQuery(filters={"zeta": 1, "topic": "a", "alpha": None})
    assert rejected(query) == ("alpha", "zeta")


def test_negative_limit_is_rejected_as_limit() -> None:
    """A negative limit raises UnsupportedMemoryQuery naming 'limit'."""
    assert rejected(MemoryQuery(limit=-1)) == ("limit",)


def test_negative_limit_and_bad_keys_are_rejected_together() -> None:
    """A negative limit is named beside the unsupported keys, in sorted order."""
    query = MemoryQuery(filters={"zeta": 1, "alpha": 2}, limit=-3)
    assert rejected(query) == ("alpha", "limit", "zeta")


def test_unsupported_key_is_rejected_even_with_limit_zero() -> None:
    """limit=0 does not excuse an unsupported key: the query is invalid either way."""
    assert rejected(MemoryQuery(filters={"color": "red"}, limit=0)) == ("color",)


def test_any_key_manifest_accepts_every_key() -> None:
    """With supports_any_filter_key, arbitrary keys pass."""
    assert check_query(MemoryQuery(filters={"a.b $x": 1, "": None}), ANY_KEY) is True


def test_any_key_manifest_still_rejects_negative_limits() -> None:
    """Accepting every key does not accept a negative limit."""
    assert rejected(MemoryQuery(limit=-1), ANY_KEY) == ("limit",)


def test_non_query_is_a_type_error() -> None:
    """A dict instead of a MemoryQuery raises TypeError naming the type."""
    with pytest.raises(TypeError, match="search\\(\\) takes a MemoryQuery, got dict"):
        check_query({"text": "x"}, MANIFEST)


class _Adapter:
    """A minimal adapter whose search body counts how often it runs."""

    manifest = MANIFEST

    def __init__(self) -> None:
        self.backend_calls = 0

    @guarded_search
    async def search(self, query: MemoryQuery) -> list[MemoryItem]:
        self.backend_calls += 1
        return [MemoryItem(content="hit")]


async def test_guarded_search_runs_the_body_for_a_valid_query() -> None:
    """A valid query reaches the decorated body and returns its result."""
    adapter = _Adapter()
    hits = await adapter.search(MemoryQuery(filters={"topic": "a"}))
    assert ([hit.content for hit in hits], adapter.backend_calls) == (["hit"], 1)


async def test_guarded_search_short_circuits_limit_zero() -> None:
    """limit=0 returns [] without running the body."""
    adapter = _Adapter()
    assert (await adapter.search(MemoryQuery(limit=0)), adapter.backend_calls) == ([], 0)


async def test_guarded_search_rejects_before_the_body() -> None:
    """An unsupported key raises before the body runs."""
    adapter = _Adapter()
    with pytest.raises(UnsupportedMemoryQuery):
        await adapter.search(MemoryQuery(filters={"color": "red"}))
    assert adapter.backend_calls == 0


def test_guarded_search_keeps_the_method_name() -> None:
    """The decorated method keeps its name (functools.wraps)."""
    method: Any = _Adapter.search
    assert method.__name__ == "search"
