"""Property tests: documents that hypothesis-jsonschema generates from the schemas fit the models.

hypothesis-jsonschema 0.23.1 knows drafts 4/6/7 only, has no ``uuid`` format and cannot follow
cross-file ``$ref``s, so it generates from ``schema_support.draft7_for_generation``: the schema
with ``allOf`` and local ``$ref``s inlined, ``unevaluatedProperties: false`` rewritten as
``additionalProperties: false``, ``dependentSchemas`` as draft 7's ``dependencies`` and
``$schema`` set to draft 7 (the tests below check that this loses nothing). Element's schema is
open for ``allOf`` extension while the model forbids unknown fields, so Element is generated from
the closed variant; a separate test generates from the open one.

Cross-field rules (top-level ``dependencies``, e.g. the manifest's ADR-0093 D1 coherence rules)
are left out of generation: hypothesis-jsonschema can only filter for them (about 7 of 8 drawn
manifests are discarded, which took 20+ seconds). The documents are then structurally valid but
only some satisfy the rules, and the test asserts that the model accepts exactly the documents
the full source schema accepts. For a schema without such rules every document must be valid.
"""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from jsonschema import Draft7Validator
from pydantic import BaseModel, ValidationError

from lionmem._base import accepted_class_names
from tests.profiles import examples
from tests.schema_support import DRAFT_7_KEYWORDS, MODELS, draft7_for_generation, validator, walk

EXAMPLES = examples(200)
"""Examples per model and property under the ci profile."""

CUSTOM_FORMATS = {"uuid": st.uuids().map(str)}
NAMES = sorted(MODELS)


def _structural(name: str, *, close: bool) -> dict[str, Any]:
    """Return the generation schema of ``name`` without its top-level cross-field rules."""
    schema = draft7_for_generation(name, close=close)
    schema.pop("dependencies", None)
    return schema


def _has_cross_field_rules(name: str) -> bool:
    return "dependencies" in draft7_for_generation(name)


@cache
def documents(name: str, *, close: bool = True) -> st.SearchStrategy[Any]:
    """Return the hypothesis-jsonschema strategy of schema ``name`` (closed unless told not to)."""
    return from_schema(_structural(name, close=close), custom_formats=CUSTOM_FORMATS)


def _accepts(name: str, document: Any, *, as_json: bool) -> bool:
    model = MODELS[name]
    try:
        if as_json:
            model.model_validate_json(json.dumps(document))
        else:
            model.model_validate(document)
    except ValidationError:
        return False
    return True


def _floats(value: Any) -> list[float]:
    """Return every float anywhere inside a JSON value (ints are always finite)."""
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [n for item in value.values() for n in _floats(item)]
    if isinstance(value, list):
        return [n for item in value for n in _floats(item)]
    return []


def _names_another_class(name: str, document: dict[str, Any]) -> bool:
    """True when ``metadata.lion_class`` names something else than the model (schema can't say)."""
    metadata = document.get("metadata", {})
    if "lion_class" not in metadata:
        return False
    named = metadata["lion_class"]  # any JSON value: a list or an object is not hashable
    return not (isinstance(named, str) and named in accepted_class_names(MODELS[name]))


@pytest.mark.parametrize("name", NAMES)
def test_generation_schema_uses_only_draft_7_equivalent_keywords(name: str) -> None:
    """The generation schema uses only keywords that mean the same in draft 7 and 2020-12."""
    used: set[str] = set()
    walk(draft7_for_generation(name, close=False), used.update)
    assert used - DRAFT_7_KEYWORDS == set()


@pytest.mark.parametrize("name", NAMES)
def test_generation_schema_is_a_valid_draft_7_schema(name: str) -> None:
    """The schema given to hypothesis-jsonschema passes the draft-7 metaschema."""
    Draft7Validator.check_schema(draft7_for_generation(name, close=True))


def _given(instance: BaseModel, keys: set[str]) -> str:
    """Return the JSON dump of ``instance`` restricted to ``keys``, as comparable text."""
    return json.dumps(instance.model_dump(mode="json", include=keys), sort_keys=True)


def _errors(name: str, document: Any) -> list[str]:
    return [error.message for error in validator(name).iter_errors(document)]


# Generating a document is the expensive part (milliseconds), so each generated document goes
# through the whole schema => model => schema chain in one test instead of one test per step.
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_generated_document_is_accepted_and_dumps_back_schema_valid(
    name: str, data: st.DataObject
) -> None:
    """The model accepts what the schema accepts (both modes) and dumps it back schema-valid."""
    document = data.draw(documents(name))
    schema_valid = validator(name).is_valid(document)
    event(f"valid against the full schema: {schema_valid}")
    # Without cross-field rules, the generator's output is exactly what the source schema says.
    assert schema_valid or _has_cross_field_rules(name), _errors(name, document)
    assert all(math.isfinite(number) for number in _floats(document))
    model = MODELS[name]
    if _names_another_class(name, document):
        # The one rule the schema cannot state: lion_class must name the model's own class.
        with pytest.raises(ValidationError, match=r"Metadata class mismatch\."):
            model.model_validate(document)
        with pytest.raises(ValidationError, match=r"Metadata class mismatch\."):
            model.model_validate_json(json.dumps(document))
        return
    verdicts = (_accepts(name, document, as_json=False), _accepts(name, document, as_json=True))
    assert verdicts == (schema_valid, schema_valid), _errors(name, document)
    if schema_valid:
        from_python = model.model_validate(document)
        from_text = model.model_validate_json(json.dumps(document))
        # Absent id/created_at are fresh in each instance, so only the given keys must agree.
        assert _given(from_python, set(document)) == _given(from_text, set(document))
        assert _errors(name, json.loads(from_python.model_dump_json())) == []


@settings(max_examples=EXAMPLES)
@given(document=documents("element", close=False))
def test_open_element_document_is_accepted_exactly_without_unknown_keys(
    document: dict[str, Any],
) -> None:
    """From the open element.json, the Element model accepts exactly the documents with no extras."""
    has_extra = bool(set(document) - set(MODELS["element"].model_fields))
    try:
        MODELS["element"].model_validate(document)
    except ValidationError:
        accepted = False
    else:
        accepted = True
    assert accepted is not (has_extra or _names_another_class("element", document))
