"""Behaviour the JSON schemas cannot express, inherited by the generated models.

The generator is told (``base-class-map`` in ``pyproject.toml``) to derive ``Element`` from
``ElementBase`` and ``MemoryQuery`` from ``QueryBase``; ``MemoryItem`` inherits ``ElementBase``
through ``Element``. ``ElementBase`` validates ``id``, ``created_at`` and ``metadata`` with the
tables of ``lionmem._coercions``, checks ``lion_class`` (L11), serialises ``id`` as a string and
compares, hashes and tests truth by identity (SEMANTICS.md §2 and §9, L1-L4).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any
from uuid import UUID

from pydantic import (
    BaseModel,
    ConfigDict,
    TypeAdapter,
    WithJsonSchema,
    field_serializer,
    field_validator,
)

from lionmem._coercions import coerce_created_at, coerce_metadata, utc_timestamp

__all__ = ["ElementBase", "QueryBase", "accepted_class_names", "utc_timestamp"]

# Names a serialised record may carry in ``metadata["lion_class"]`` besides the defining dotted
# name of its concrete class (L11): the public lionmem name, and lionagi's name for the same class
# so that data exported from lionagi loads. Keyed by the defining name so that the table needs no
# import of the classes it describes (the generated modules import this one).
_CLASS_ALIASES: dict[str, tuple[str, ...]] = {
    "lionmem_models.element.Element": (
        "lionmem.Element",
        "lionagi.protocols.generic.element.Element",
    ),
    "lionmem_models.memory_item.MemoryItem": (
        "lionmem.MemoryItem",
        "lionagi.protocols.memory.MemoryItem",
    ),
    "lionmem.session.Branch": ("lionmem.Branch", "lionagi.session.branch.Branch"),
    "lionmem.session.Session": ("lionmem.Session", "lionagi.session.session.Session"),
}
_accepted_cache: dict[type, frozenset[str]] = {}


def accepted_class_names(cls: type) -> frozenset[str]:
    """Return every ``lion_class`` value that names ``cls`` itself (never a parent class)."""
    names = _accepted_cache.get(cls)
    if names is None:
        defining = f"{cls.__module__}.{cls.__qualname__}"
        names = frozenset((defining, *_CLASS_ALIASES.get(defining, ())))
        _accepted_cache[cls] = names
    return names


_METADATA: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])
_UUIDString = Annotated[str, WithJsonSchema({"type": "string", "format": "uuid"})]


class ElementBase(BaseModel):
    """Identity, timestamp and metadata rules shared by every generated ``Element`` model."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    if TYPE_CHECKING:
        # Declared by the generated Element; named here so the methods below type-check.
        id: UUID

    # The three validators are plain (they replace pydantic's own UUID, float and dict checks,
    # and give the same results) so that a common input costs one Python call per field:
    # construction and model_validate stay close to a plain Pydantic model.
    @field_validator("id", mode="plain", check_fields=False, json_schema_input_type=UUID)
    @classmethod
    def _coerce_id(cls, value: Any) -> UUID:
        # Any value: str() first, as the reference does, so 123, None and b"..." give the
        # "badly formed hexadecimal UUID string" error of uuid.UUID.
        if isinstance(value, UUID):
            return value
        return UUID(str(value))

    @field_validator("created_at", mode="plain", check_fields=False, json_schema_input_type=float)
    @classmethod
    def _coerce_created_at(cls, value: Any) -> float:
        if type(value) is float and math.isfinite(value):
            return value
        seconds = coerce_created_at(value)
        # pydantic's float validation, which this replaces (and which the reference applies after
        # its own coercion), gives a plain float: a float subclass's own value, not its __float__.
        return seconds if type(seconds) is float else float.__float__(seconds)

    # The common input, a dict with str keys and no lion_class, costs one loop and one shallow
    # copy. Everything else takes the full coercion, then pydantic's own dict[str, Any]
    # validation (it turns str-subclass keys, str enums included, into plain str).
    @field_validator(
        "metadata", mode="plain", check_fields=False, json_schema_input_type=dict[str, Any]
    )
    @classmethod
    def _coerce_metadata(cls, value: Any) -> dict[str, Any]:
        if type(value) is dict and "lion_class" not in value:
            for key in value:
                if type(key) is not str:
                    break
            else:
                return value.copy()
        result = coerce_metadata(value)
        if "lion_class" in result:
            named = result["lion_class"]
            if not (isinstance(named, str) and named in accepted_class_names(cls)):
                msg = "Metadata class mismatch."
                raise ValueError(msg)
        return _METADATA.validate_python(result)

    # A str in both modes (SEMANTICS.md §2.9); described as the schema describes it, a UUID string.
    @field_serializer("id", check_fields=False)
    def _serialize_id(self, value: UUID) -> _UUIDString:
        return str(value)

    def __eq__(self, other: object) -> bool:
        """Compare by ``id`` only, against any Element; anything else is not comparable."""
        if not isinstance(other, ElementBase):
            return NotImplemented
        return bool(self.id == other.id)

    def __hash__(self) -> int:
        """Hash by ``id``, consistent with equality."""
        return hash(self.id)

    def __bool__(self) -> bool:
        """An element is always true, whatever its fields hold."""
        return True


class QueryBase(BaseModel):
    """Configuration of the generated ``MemoryQuery``: assignments are validated (L4), nothing else."""

    model_config = ConfigDict(validate_assignment=True)
