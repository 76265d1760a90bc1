"""MemoryAdapterManifest: an immutable, closed, coherent declaration (ADR-0093 D1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

import lionmem
from lionmem import MemoryAdapterManifest

FULL: dict[str, Any] = {
    "adapter": "example.full",
    "native_item_fields": ["id", "created_at", "metadata", "content", "tags"],
    "dropped_item_fields": [],
    "supported_filters": ["topic", "lang"],
    "search_consistency": "immediate",
    "retrieve_fidelity": "full",
    "search_fidelity": "full",
    "search_returns_tags": True,
    "preserves_metadata": True,
}
LEAN: dict[str, Any] = {
    "adapter": "example.lean",
    "native_item_fields": ["id", "content", "tags"],
    "dropped_item_fields": ["created_at", "metadata"],
    "supported_filters": [],
    "search_consistency": "eventual",
    "retrieve_fidelity": "native_fields",
    "search_fidelity": "native_fields",
    "search_returns_tags": False,
    "preserves_metadata": False,
}


def manifest(base: dict[str, Any] = FULL, **changes: Any) -> MemoryAdapterManifest:
    return MemoryAdapterManifest.model_validate({**base, **changes})


def rejection(base: dict[str, Any] = FULL, **changes: Any) -> str:
    with pytest.raises(ValidationError) as caught:
        manifest(base, **changes)
    return str(caught.value)


def test_is_exported_from_lionmem() -> None:
    """lionmem.MemoryAdapterManifest is the generated model."""
    from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest as Generated

    assert lionmem.MemoryAdapterManifest is Generated


def test_set_fields_are_frozensets() -> None:
    """The field lists come back as frozensets, whatever iterable was given."""
    built = manifest(supported_filters=("topic", "lang"))
    assert (
        type(built.native_item_fields),
        type(built.dropped_item_fields),
        type(built.supported_filters),
    ) == (frozenset, frozenset, frozenset)


def test_set_fields_hold_the_given_entries() -> None:
    """native_item_fields and supported_filters hold exactly the listed names."""
    built = manifest()
    assert (built.native_item_fields, built.supported_filters) == (
        frozenset({"id", "created_at", "metadata", "content", "tags"}),
        frozenset({"topic", "lang"}),
    )


def test_optional_claims_default_to_the_conservative_values() -> None:
    """An ADR-shaped manifest claims listed filter keys only and backend-defined search."""
    built = manifest()
    assert (built.supports_any_filter_key, built.search_semantics) == (False, "backend-defined")


def test_assignment_is_refused() -> None:
    """A manifest is frozen: assigning a field raises and changes nothing."""
    built = manifest()
    with pytest.raises(ValidationError, match="Instance is frozen"):
        built.search_consistency = "eventual"  # type: ignore[misc]  # the point: it is frozen
    assert built.search_consistency == "immediate"


def test_manifest_is_hashable_and_equal_by_value() -> None:
    """Two manifests with the same claims are equal and hash alike."""
    assert {manifest(), manifest(supported_filters=["lang", "topic"])} == {manifest()}


def test_unknown_field_is_rejected() -> None:
    """An unknown field is refused (extra forbidden)."""
    assert "Extra inputs are not permitted" in rejection(search_scores=True)


@pytest.mark.parametrize(
    "field", ["native_item_fields", "dropped_item_fields", "supported_filters"]
)
def test_duplicate_entries_are_rejected(field: str) -> None:
    """A list naming an entry twice is refused instead of merged (the schema's uniqueItems)."""
    doubled = {
        "native_item_fields": ["id", "id", "created_at", "metadata", "content", "tags"],
        "dropped_item_fields": ["created_at", "created_at"],
        "supported_filters": ["topic", "topic"],
    }[field]
    base = LEAN if field == "dropped_item_fields" else FULL
    assert "listed more than once" in rejection(base, **{field: doubled})


def test_duplicate_message_names_the_entry() -> None:
    """The duplicate error names the repeated entry."""
    assert "listed more than once: 'topic'" in rejection(supported_filters=["topic", "topic"])


def test_unknown_item_field_name_is_rejected() -> None:
    """Item fields are the five MemoryItem field names."""
    native = [*FULL["native_item_fields"], "embedding"]
    assert "native_item_fields" in rejection(native_item_fields=native)


def test_empty_adapter_is_rejected() -> None:
    """adapter must be a non-empty string."""
    assert "at least 1 character" in rejection(adapter="")


def test_lean_manifest_is_valid() -> None:
    """Dropping created_at and metadata with native_fields fidelity is coherent."""
    assert manifest(LEAN).dropped_item_fields == frozenset({"created_at", "metadata"})


def test_overlapping_fields_are_rejected_with_the_adr_message() -> None:
    """A field both native and dropped gives D1's disjointness message."""
    message = rejection(LEAN, dropped_item_fields=["created_at", "metadata", "tags"])
    assert "native and dropped item fields must be disjoint" in message


def test_unclassified_field_is_rejected_with_the_adr_message() -> None:
    """A field in neither list gives D1's classification message."""
    message = rejection(LEAN, dropped_item_fields=["metadata"])
    assert "every MemoryItem field must be classified" in message


def test_dropped_anchor_is_rejected_with_the_adr_message() -> None:
    """Dropping tags gives D1's required-native-fields message."""
    message = rejection(
        LEAN,
        native_item_fields=["id", "content"],
        dropped_item_fields=["created_at", "metadata", "tags"],
    )
    assert "id, content, and tags are required native fields" in message


def test_preserved_dropped_metadata_is_rejected_with_the_adr_message() -> None:
    """preserves_metadata with metadata dropped gives D1's metadata message."""
    message = rejection(LEAN, preserves_metadata=True)
    assert "preserved metadata must be a native field" in message


def test_full_retrieve_with_drops_is_rejected_with_the_adr_message() -> None:
    """Full retrieve fidelity with a dropped field gives D1's retrieve message."""
    message = rejection(LEAN, retrieve_fidelity="full")
    assert "full retrieve fidelity must preserve every item field" in message


def test_full_retrieve_without_preserved_metadata_is_rejected() -> None:
    """Full retrieve fidelity requires preserves_metadata."""
    message = rejection(preserves_metadata=False, search_fidelity="lossy")
    assert "full retrieve fidelity must preserve every item field" in message


def test_full_search_without_tags_is_rejected_with_the_adr_message() -> None:
    """Full search fidelity with tag-less hits gives D1's search message."""
    message = rejection(search_returns_tags=False)
    assert "full search fidelity must preserve all fields and tags" in message


def test_full_search_without_preserved_metadata_is_rejected() -> None:
    """Full search fidelity requires preserves_metadata."""
    message = rejection(preserves_metadata=False, retrieve_fidelity="lossy")
    assert "full search fidelity must preserve all fields and tags" in message


def test_search_may_be_lower_than_retrieve() -> None:
    """native_fields search beside full retrieve, with tag-less hits, is coherent."""
    built = manifest(search_fidelity="native_fields", search_returns_tags=False)
    assert (built.retrieve_fidelity, built.search_fidelity) == ("full", "native_fields")


def test_any_filter_key_with_listed_keys_is_rejected() -> None:
    """supports_any_filter_key=True with a non-empty supported_filters is refused."""
    message = rejection(supports_any_filter_key=True)
    assert "supported_filters must be empty when supports_any_filter_key is true" in message


def test_supports_filter_answers_for_listed_keys() -> None:
    """supports_filter is true exactly for the listed keys."""
    built = manifest()
    assert (built.supports_filter("topic"), built.supports_filter("color")) == (True, False)


def test_supports_filter_accepts_everything_with_any_key() -> None:
    """With supports_any_filter_key, every key is supported."""
    built = manifest(supported_filters=[], supports_any_filter_key=True)
    assert built.supports_filter("any.key $x")


def test_unsupported_filters_are_sorted_and_deduplicated() -> None:
    """unsupported_filters returns the keys the manifest refuses, sorted, once each."""
    assert manifest().unsupported_filters(["zeta", "topic", "alpha", "zeta"]) == ("alpha", "zeta")


def test_unsupported_filters_is_empty_with_any_key() -> None:
    """With supports_any_filter_key, no key is unsupported."""
    built = manifest(supported_filters=[], supports_any_filter_key=True)
    assert built.unsupported_filters(["x", "y"]) == ()


def test_json_round_trip_keeps_the_claims() -> None:
    """model_validate_json(model_dump_json()) gives an equal manifest."""
    built = manifest(search_semantics="reference")
    assert MemoryAdapterManifest.model_validate_json(built.model_dump_json()) == built


def test_json_dump_writes_the_sets_as_arrays() -> None:
    """In JSON, the set-valued fields are arrays holding the same names."""
    dumped = json.loads(manifest().model_dump_json())
    assert sorted(dumped["supported_filters"]) == ["lang", "topic"]


def test_the_field_names_a_manifest_takes_are_the_memory_item_fields() -> None:
    """The schema's MemoryItemField names, and the fields to classify, are MemoryItem's fields."""
    from typing import get_args

    from lionmem._manifest_base import ITEM_FIELDS
    from lionmem_models.memory_adapter_manifest import MemoryItemField

    (literal, *_) = get_args(MemoryItemField.__value__)
    assert set(get_args(literal)) == set(ITEM_FIELDS) == set(lionmem.MemoryItem.model_fields)
