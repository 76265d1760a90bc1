"""Round trips between the schemas and the models, in the two directions that must hold.

1. schema-valid document => the model accepts it, and its dump is schema-valid again and keeps
   every value it was given (``id`` in canonical form, ``created_at`` as a float).
2. any model instance, however it was built (lax inputs included) => its dump is schema-valid.

The reverse of 1 is never asserted: pydantic's lax mode accepts more than the schema (``"5"`` as
a limit, ISO strings as ``created_at``); tests/vectors lists those inputs. Every validation here
has the format checker on, or ``"not-a-uuid"`` would pass as an ``id``.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from lionmem import Element, MemoryItem, MemoryQuery
from tests.schema_support import MODELS, flatten, validator

VECTORS = Path(__file__).resolve().parents[1] / "vectors"


def _vectors(*, schema_valid: bool) -> list[Any]:
    """Return the vectors the model accepts with the given schema verdict, as pytest params."""
    chosen = []
    for path in sorted(VECTORS.glob("*/*.json")):
        vector = json.loads(path.read_text(encoding="utf-8"))
        model_valid = vector.get("model", {}).get("valid", vector["valid"])
        if vector["valid"] is schema_valid and model_valid:
            chosen.append(pytest.param(vector, id=f"{path.parent.name}/{path.stem}"))
    return chosen


SCHEMA_VALID = _vectors(schema_valid=True)
LAX = _vectors(schema_valid=False)


def _errors(name: str, document: Any) -> list[str]:
    return [error.message for error in validator(name).iter_errors(document)]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _comparable(name: str, values: dict[str, Any]) -> str:
    """Return ``values`` as canonical JSON text, arrays of ``uniqueItems`` properties sorted.

    A ``uniqueItems`` array is a set in the model (a frozenset), whose dump order is arbitrary.
    """
    properties = flatten(name)["properties"]
    ordered = {
        key: sorted(value, key=_canonical)
        if properties.get(key, {}).get("uniqueItems") and isinstance(value, list)
        else value
        for key, value in values.items()
    }
    return _canonical(ordered)


# Models whose python-mode dump is not JSON data, with the reason (their JSON-mode dump is).
PYTHON_DUMP_NOT_JSON = {
    "memory_adapter_manifest": "its set-valued fields (uniqueItems arrays) are frozensets",
}


def _expected_values(name: str, document: dict[str, Any]) -> dict[str, Any]:
    """Return what the dump must hold for each given key: the value, normalised where defined.

    The normal forms: ``id`` canonical lower-case, ``created_at`` a float, and a MemoryQuery
    ``limit`` an int (JSON Schema counts ``5.0`` as an integer; the model stores ``5``).
    """
    expected = dict(document)
    if name in {"element", "memory_item"}:
        if "id" in expected:
            expected["id"] = str(UUID(expected["id"]))
        if "created_at" in expected:
            expected["created_at"] = float(expected["created_at"])
    if name == "memory_query" and "limit" in expected:
        expected["limit"] = int(expected["limit"])
    return expected


def test_validator_checks_formats() -> None:
    """The validators used here assert ``format`` (2020-12 treats it as an annotation otherwise)."""
    assert (
        validator("element").is_valid({"id": "not-a-uuid"}),
        validator("memory_item").is_valid({"id": "not-a-uuid"}),
    ) == (False, False)


@pytest.mark.parametrize("vector", SCHEMA_VALID)
def test_schema_valid_document_dumps_back_schema_valid_in_json_mode(vector: dict[str, Any]) -> None:
    """``model_dump(mode="json")`` of an accepted schema-valid document is schema-valid."""
    dumped = MODELS[vector["schema"]].model_validate(vector["document"]).model_dump(mode="json")
    assert _errors(vector["schema"], dumped) == []


@pytest.mark.parametrize(
    "vector", [v for v in SCHEMA_VALID if v.values[0]["schema"] not in PYTHON_DUMP_NOT_JSON]
)
def test_schema_valid_document_dumps_back_schema_valid_in_python_mode(
    vector: dict[str, Any],
) -> None:
    """``model_dump()`` (python mode) of a JSON document is JSON data that is schema-valid."""
    dumped = MODELS[vector["schema"]].model_validate(vector["document"]).model_dump()
    assert _errors(vector["schema"], dumped) == []


@pytest.mark.parametrize("name", sorted(PYTHON_DUMP_NOT_JSON))
def test_python_dump_exception_still_holds(name: str) -> None:
    """A model listed in PYTHON_DUMP_NOT_JSON still dumps a frozenset in python mode (not stale)."""
    vector = next(v.values[0] for v in SCHEMA_VALID if v.values[0]["schema"] == name)
    dumped = MODELS[name].model_validate(vector["document"]).model_dump()
    assert any(isinstance(value, frozenset) for value in dumped.values())


@pytest.mark.parametrize("vector", SCHEMA_VALID)
def test_schema_valid_json_text_dumps_back_schema_valid_json_text(vector: dict[str, Any]) -> None:
    """``model_validate_json`` then ``model_dump_json`` gives JSON text that is schema-valid."""
    model = MODELS[vector["schema"]]
    text = model.model_validate_json(json.dumps(vector["document"])).model_dump_json()
    assert _errors(vector["schema"], json.loads(text)) == []


@pytest.mark.parametrize("vector", SCHEMA_VALID)
def test_schema_valid_document_keeps_every_given_value(vector: dict[str, Any]) -> None:
    """Each given property comes back unchanged (the id canonical, created_at a float)."""
    document = vector["document"]
    dumped = MODELS[vector["schema"]].model_validate(document).model_dump(mode="json")
    assert _comparable(vector["schema"], {key: dumped[key] for key in document}) == _comparable(
        vector["schema"], _expected_values(vector["schema"], document)
    )


@pytest.mark.parametrize("vector", SCHEMA_VALID)
def test_dump_is_a_fixed_point(vector: dict[str, Any]) -> None:
    """Validating a dump again gives the same dump (defaults included, nothing regenerated)."""
    model = MODELS[vector["schema"]]
    dumped = model.model_validate(vector["document"]).model_dump(mode="json")
    again = model.model_validate(dumped).model_dump(mode="json")
    assert _comparable(vector["schema"], again) == _comparable(vector["schema"], dumped)


@pytest.mark.parametrize("vector", LAX)
def test_lax_input_dumps_schema_valid(vector: dict[str, Any]) -> None:
    """A schema-invalid input the model accepts (lax) is normalised into a schema-valid dump."""
    dumped = MODELS[vector["schema"]].model_validate(vector["document"]).model_dump(mode="json")
    assert (
        _errors(vector["schema"], vector["document"]) != [],
        _errors(vector["schema"], dumped),
    ) == (
        True,
        [],
    )


def test_there_are_lax_vectors_to_round_trip() -> None:
    """The lax round-trip test above has inputs (it would pass vacuously on an empty list)."""
    assert (len(LAX) > 0, len(SCHEMA_VALID) > 0) == (True, True)


# --- model dump => schema-valid, for instances built from Python values --------------------

_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_json = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
# content is stored unvalidated, so Python values that dump to JSON are fine as well.
_content = _json | st.uuids() | st.tuples(st.integers(), st.text()) | st.datetimes()
_ids = st.uuids(version=4) | st.uuids().map(str) | st.uuids().map(lambda u: str(u).upper())
_ids = _ids | st.uuids().map(lambda u: u.hex) | st.uuids().map(lambda u: u.urn)
_aware = st.datetimes(
    min_value=datetime(1900, 1, 1),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=2)), timezone(-timedelta(hours=5))]),
)
_created_at = (
    st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(10**15), 10**15)
    | _aware
    | _aware.map(lambda d: d.isoformat())
    | st.none()
)
_metadata = st.dictionaries(st.text().filter(lambda k: k != "lion_class"), _json, max_size=3)
_tags = st.lists(st.text(), max_size=4) | st.tuples(st.text(), st.text())


def _assert_dumps_schema_valid(name: str, instance: BaseModel) -> None:
    from_dict = instance.model_dump(mode="json")
    from_text = json.loads(instance.model_dump_json())
    assert (_errors(name, from_dict), _errors(name, from_text)) == ([], [])


@given(id_=_ids, created_at=_created_at, metadata=_metadata)
def test_element_dump_is_schema_valid(id_: Any, created_at: Any, metadata: dict[str, Any]) -> None:
    """An Element built from any accepted Python values dumps to a schema-valid document."""
    element = Element(id=id_, created_at=created_at, metadata=metadata)
    _assert_dumps_schema_valid("element", element)


@given(
    id_=_ids,
    created_at=_created_at,
    metadata=_metadata,
    content=_content,
    tags=_tags,
)
def test_memory_item_dump_is_schema_valid(
    id_: Any, created_at: Any, metadata: dict[str, Any], content: Any, tags: Any
) -> None:
    """A MemoryItem built from any accepted Python values dumps to a schema-valid document."""
    item = MemoryItem(id=id_, created_at=created_at, metadata=metadata, content=content, tags=tags)
    _assert_dumps_schema_valid("memory_item", item)


@given(
    text=st.none() | st.text(),
    tags=st.none() | _tags,
    filters=st.none() | st.dictionaries(st.text(), _json, max_size=3),
    limit=st.integers() | st.integers(-100, 100).map(str) | st.booleans(),
)
def test_memory_query_dump_is_schema_valid(
    text: str | None, tags: Any, filters: dict[str, Any] | None, limit: Any
) -> None:
    """A MemoryQuery built from any accepted Python values dumps to a schema-valid document."""
    query = MemoryQuery(text=text, tags=tags, filters=filters, limit=limit)
    _assert_dumps_schema_valid("memory_query", query)


@pytest.mark.parametrize(
    "name",
    [
        n
        for n in sorted(MODELS)
        if not any(f.is_required() for f in MODELS[n].model_fields.values())
    ],
)
def test_default_instance_dumps_schema_valid(name: str) -> None:
    """A model with no required field, built with no arguments, dumps to a schema-valid document."""
    _assert_dumps_schema_valid(name, MODELS[name]())


def test_memory_item_after_assignments_dumps_schema_valid() -> None:
    """Validated assignments (tags, metadata, content) keep the dump schema-valid."""
    item = MemoryItem()
    item.tags = ("a", "b")  # type: ignore[assignment]  # lax: a tuple is validated into a list
    item.metadata = '{"k": 1}'  # type: ignore[assignment]  # lax: a JSON object string is parsed
    item.content = {"nested": [1.5, None]}
    _assert_dumps_schema_valid("memory_item", item)


def test_created_at_dumps_as_a_finite_number() -> None:
    """created_at from an aware datetime dumps as the finite float a JSON number needs."""
    item = Element(created_at=datetime(2020, 1, 1, tzinfo=UTC))
    dumped = item.model_dump(mode="json")["created_at"]
    assert (dumped, math.isfinite(dumped)) == (1577836800.0, True)
