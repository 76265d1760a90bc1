"""Behaviour of the generated ``MemoryAdapterManifest`` that its JSON schema cannot give Python.

The generator is told (``base-class-map`` in ``pyproject.toml``) to derive ``MemoryAdapterManifest``
from ``ManifestBase``. The base makes every manifest an immutable value (``frozen``; the set-valued
fields are generated as ``frozenset``), rejects unknown fields, rejects duplicate entries in the
set-valued fields (the schema says ``uniqueItems``; pydantic alone would silently merge them), and
checks the coherence rules of ADR-0093 D1 with the ADR's own messages. The schema states the same
rules under ``dependentSchemas`` so that JSON Schema validators (jsonschema, ajv) agree with Python;
``tests/schema/test_manifest_schema.py`` proves the two agree on every combination that matters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from lionmem_models.memory_item import MemoryItem

if TYPE_CHECKING:
    from typing import Self

__all__ = ["ITEM_FIELDS", "REQUIRED_NATIVE_FIELDS", "ManifestBase"]

ITEM_FIELDS: frozenset[str] = frozenset(MemoryItem.model_fields)
"""Every ``MemoryItem`` field: each must be classified as native or dropped, exactly once."""

REQUIRED_NATIVE_FIELDS: frozenset[str] = frozenset({"id", "content", "tags"})
"""The direct-retrieval anchors of ADR-0092's protocol fence: always native (ADR-0093 D3)."""

_SET_FIELDS = ("native_item_fields", "dropped_item_fields", "supported_filters")


class ManifestBase(BaseModel):
    """Immutability, closedness and the D1 coherence rules shared by every generated manifest."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    if TYPE_CHECKING:
        # Declared by the generated MemoryAdapterManifest; named here so the rules type-check.
        adapter: str
        native_item_fields: frozenset[str]
        dropped_item_fields: frozenset[str]
        supported_filters: frozenset[str]
        supports_any_filter_key: bool
        search_consistency: str
        retrieve_fidelity: str
        search_fidelity: str
        search_returns_tags: bool
        preserves_metadata: bool
        search_semantics: str

    @field_validator(*_SET_FIELDS, mode="before", check_fields=False)
    @classmethod
    def _reject_duplicates(cls, value: Any) -> Any:
        # A set cannot hold duplicates; a list or tuple listing one name twice is a mistake in the
        # manifest (the schema's uniqueItems), not something to merge quietly.
        if isinstance(value, list | tuple):
            # Compared with == on a list, so that an unhashable entry reaches the item type's own
            # error instead of leaking a raw TypeError from hashing.
            seen: list[Any] = []
            repeated: list[str] = []
            for entry in value:
                if entry in seen and repr(entry) not in repeated:
                    repeated.append(repr(entry))
                seen.append(entry)
            if repeated:
                msg = "entries must be unique; listed more than once: " + ", ".join(repeated)
                raise ValueError(msg)
        return value

    @model_validator(mode="after")
    def _coherent_projection(self) -> Self:
        """Apply ADR-0093 D1's coherence rules, in the ADR's order and with its messages."""
        native = self.native_item_fields
        dropped = self.dropped_item_fields
        if native & dropped:
            msg = "native and dropped item fields must be disjoint"
            raise ValueError(msg)
        if native | dropped != ITEM_FIELDS:
            msg = "every MemoryItem field must be classified"
            raise ValueError(msg)
        if not native >= REQUIRED_NATIVE_FIELDS:
            msg = "id, content, and tags are required native fields"
            raise ValueError(msg)
        if self.preserves_metadata and "metadata" not in native:
            msg = "preserved metadata must be a native field"
            raise ValueError(msg)
        if self.retrieve_fidelity == "full" and (dropped or not self.preserves_metadata):
            msg = "full retrieve fidelity must preserve every item field"
            raise ValueError(msg)
        if self.search_fidelity == "full" and (
            dropped or not self.search_returns_tags or not self.preserves_metadata
        ):
            msg = "full search fidelity must preserve all fields and tags"
            raise ValueError(msg)
        if self.supports_any_filter_key and self.supported_filters:
            msg = "supported_filters must be empty when supports_any_filter_key is true"
            raise ValueError(msg)
        return self

    def supports_filter(self, key: str) -> bool:
        """Return whether ``key`` is accepted in ``MemoryQuery.filters``."""
        return self.supports_any_filter_key or key in self.supported_filters

    def unsupported_filters(self, keys: Iterable[str]) -> tuple[str, ...]:
        """Return the keys among ``keys`` that are not accepted, sorted and de-duplicated."""
        if self.supports_any_filter_key:
            return ()
        return tuple(sorted(set(keys) - self.supported_filters))
