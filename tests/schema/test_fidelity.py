"""The schemas are valid, tool-neutral 2020-12 documents, and the generated models say the same.

Each model's ``model_json_schema()`` (validation and serialization mode) is compared with its
source schema after both are normalised to the same small vocabulary: per property the JSON
type(s), the item type(s), ``format``, ``default``, ``description``, closedness and the
validation constraints (``enum``, ``minLength``, ``uniqueItems``, ... of the property and of its
items); per model the title, description, property order, ``required``, closedness and any other
top-level assertion keyword. ``readOnly`` is compared with ``FieldInfo.frozen`` instead (pydantic
does not emit it). Every known divergence is in ``EXCEPTIONS`` with its reason, and an entry fails
when the divergence it records is gone.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from tests.schema_support import MODELS, SCHEMA_DIR, flatten, load_schema, schema_names, walk

Mode = Literal["validation", "serialization"]
MODES: tuple[Mode, ...] = ("validation", "serialization")
ABSENT = "<absent>"
"""Normalised value of an aspect the schema does not state (no default, no format, ...)."""

# Keywords of the JSON Schema 2020-12 vocabularies (core, applicator, unevaluated, validation,
# format-annotation, meta-data, content). Anything else is tool-specific.
STANDARD_KEYWORDS = frozenset(
    {
        "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary",
        "$comment", "$defs",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas",
        "prefixItems", "items", "contains", "properties", "patternProperties",
        "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
        "type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
        "exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems", "minItems",
        "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties",
        "required", "dependentRequired",
        "format",
        "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
        "contentEncoding", "contentMediaType", "contentSchema",
    }
)  # fmt: skip
# (schema, mode, property or "" for the model, aspect) -> (source value, model value, reason).
EXCEPTIONS: dict[tuple[str, Mode, str, str], tuple[Any, Any, str]] = {
    **{
        ("element", mode, "", "closed"): (
            False,
            True,
            "element.json stays open so memory_item.json can extend it through allOf (a closed "
            "base breaks every extension); the Element model forbids unknown fields like "
            "MemoryItem (SEMANTICS.md §9: forbidden extra fields on Element/MemoryItem)",
        )
        for mode in MODES
    },
    **{
        (name, mode, "metadata", "default"): (
            "{}",
            ABSENT,
            "default_factory=dict (a fresh dict per instance) is not shown as a default by "
            "pydantic; test_factory_gives_the_schema_default checks dict() == {}",
        )
        for name in ("element", "memory_item")
        for mode in MODES
    },
    **{
        ("memory_item", mode, "tags", "default"): (
            "[]",
            ABSENT,
            "default_factory=list (a fresh list per instance) is not shown as a default by "
            "pydantic; test_factory_gives_the_schema_default checks list() == []",
        )
        for mode in MODES
    },
    **{
        (name, mode, "created_at", "constraints"): (
            '{"maximum": 1.7976931348623157e+308, "minimum": -1.7976931348623157e+308}',
            "{}",
            "created_at's plain validator (lionmem._base) replaces pydantic's float validation "
            "and its bounds: it refuses what has no finite float value, the same numbers except "
            "an integer past a bound by less than half a unit in the last place, which it rounds "
            "to the bound (docs/clients.md); test_vectors checks both integers past the bounds",
        )
        for name in ("element", "memory_item")
        for mode in MODES
    },
    **{
        ("memory_adapter_manifest", mode, "", "assertions"): (
            ("dependentSchemas",),
            (),
            "the ADR-0093 D1 coherence rules are stated in the schema (dependentSchemas) so that "
            "JSON Schema validators agree, and in Python by the model validator of "
            "lionmem._manifest_base, which pydantic does not describe in JSON schema",
        )
        for mode in MODES
    },
}


# --- normalisation --------------------------------------------------------------------------


def _canonical(value: Any) -> str:
    """Return JSON text that tells ``0``/``false``/``0.0`` apart and ignores key order."""
    return json.dumps(value, sort_keys=True)


def _types(schema: dict[str, Any]) -> tuple[str, ...]:
    """Return the sorted JSON types a (property) schema allows; ``("any",)`` when unconstrained."""
    if "anyOf" in schema:
        return tuple(sorted({t for branch in schema["anyOf"] for t in _types(branch)}))
    declared = schema.get("type")
    if declared is None:
        return ("any",)
    return tuple(sorted([declared] if isinstance(declared, str) else declared))


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the parts of a property schema that carry keywords (its ``anyOf`` branches, or it)."""
    return [schema, *schema.get("anyOf", [])]


def _first(schema: dict[str, Any], keyword: str) -> Any:
    for branch in _branches(schema):
        if keyword in branch:
            return branch[keyword]
    return ABSENT


def _openness(schema: dict[str, Any]) -> Any:
    """Return whether an object schema admits unknown keys (``True``, ``False`` or ``"schema"``)."""
    if "object" not in _types(schema):
        return ABSENT
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        value = _first(schema, keyword)
        if value is False:
            return False
        if isinstance(value, dict):
            return "schema"
    return True


# Validation keywords compared as one "constraints" aspect per property (and per item schema).
_CONSTRAINTS = (
    "enum", "const", "minLength", "maxLength", "pattern", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uniqueItems", "minItems", "maxItems",
    "minProperties", "maxProperties",
)  # fmt: skip
# Model-level keywords the "properties"/"required"/"closed"/title/description aspects cover; any
# other top-level keyword (dependentSchemas, if, allOf...) is listed in the "assertions" aspect.
_MODEL_LEVEL = frozenset(
    {"$schema", "$id", "$defs", "$comment", "title", "description", "type", "properties"}
    | {"required", "additionalProperties", "unevaluatedProperties"}
)


def _deref(schema: Any, defs: dict[str, Any]) -> Any:
    """Inline ``#/$defs/...`` refs of a property schema, its ``anyOf`` branches and its items."""
    if not isinstance(schema, dict):
        return schema
    resolved = dict(schema)
    if "$ref" in resolved:
        target = defs[resolved.pop("$ref").removeprefix("#/$defs/")]
        resolved = {**_deref(target, defs), **resolved}
    if "anyOf" in resolved:
        resolved["anyOf"] = [_deref(branch, defs) for branch in resolved["anyOf"]]
    if "items" in resolved:
        resolved["items"] = _deref(resolved["items"], defs)
    return resolved


def _constraints(schema: Any) -> str:
    if not isinstance(schema, dict):
        return ABSENT
    found = {key: _first(schema, key) for key in _CONSTRAINTS if _first(schema, key) is not ABSENT}
    return _canonical(found)


def normalise_property(schema: dict[str, Any]) -> dict[str, Any]:
    """Reduce a property schema to the aspects compared (titles are pydantic's own and ignored)."""
    items = _first(schema, "items")
    default = schema.get("default", ABSENT)
    return {
        "type": _types(schema),
        "items": ABSENT if items is ABSENT else _types(items),
        "format": _first(schema, "format"),
        "default": default if default is ABSENT else _canonical(default),
        "description": schema.get("description", ABSENT),
        "open": _openness(schema),
        "constraints": _constraints(schema),
        "item_constraints": _constraints(items),
    }


def normalise(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Normalise an object schema with no ``allOf`` left; the key ``""`` holds model-level aspects."""
    defs = schema.get("$defs", {})
    properties = {
        name: normalise_property(_deref(declared, defs))
        for name, declared in schema.get("properties", {}).items()
    }
    model_level = {
        "title": schema.get("title", ABSENT),
        "description": schema.get("description", ABSENT),
        "properties": tuple(properties),
        "required": tuple(sorted(schema.get("required", []))),
        "closed": _openness(schema) is False,
        "assertions": tuple(sorted(set(schema) - _MODEL_LEVEL)),
    }
    return {"": model_level, **properties}


def source_view(name: str) -> dict[str, dict[str, Any]]:
    """Normalise ``schema/<name>.json`` after inlining its ``allOf``/``$ref`` parts."""
    return normalise(flatten(name))


def model_view(name: str, mode: Mode) -> dict[str, dict[str, Any]]:
    """Normalise the generated model's ``model_json_schema(mode=...)``."""
    return normalise(MODELS[name].model_json_schema(mode=mode))


def _points() -> list[tuple[str, Mode, str, str]]:
    points: list[tuple[str, Mode, str, str]] = []
    for name in MODELS:
        for mode in MODES:
            for path, aspects in source_view(name).items():
                points.extend((name, mode, path, aspect) for aspect in aspects)
    return points


POINTS = _points()


def _point_id(point: tuple[str, Mode, str, str]) -> str:
    name, mode, path, aspect = point
    return f"{name}-{mode}-{path or '<model>'}-{aspect}"


# --- schema documents -----------------------------------------------------------------------


def test_every_schema_file_has_a_model() -> None:
    """Every file under schema/ is listed in tests.schema_support.MODELS, and nothing else is."""
    assert schema_names() == sorted(MODELS)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    """The schema declares draft 2020-12 and passes that metaschema's check_schema."""
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_schema_id_is_its_file_name(name: str) -> None:
    """The ``$id`` ends in the file name, so relative ``$ref``s between the files resolve."""
    assert load_schema(name)["$id"] == f"https://lionmem.dev/schema/{name}.json"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_schema_title_is_the_model_class_name(name: str) -> None:
    """The ``title`` names the generated class, which lives in ``lionmem_models.<file stem>``."""
    model = MODELS[name]
    assert (load_schema(name)["title"], model.__module__) == (
        model.__name__,
        f"lionmem_models.{name}",
    )


@pytest.mark.parametrize("name", sorted(MODELS))
def _undescribed(schema: Any, path: str) -> list[str]:
    """Return the declared properties under ``schema`` that have no description.

    Declarations are the ``properties`` of the schema, of nested object properties, of array
    items and of ``$defs``; properties named inside applicators (``dependentSchemas``, ``if``,
    ``allOf``...) only constrain properties declared elsewhere and are not declarations.
    """
    if not isinstance(schema, dict):
        return []
    missing = []
    for prop, subschema in schema.get("properties", {}).items():
        if not str(subschema.get("description", "")).strip():
            missing.append(f"{path}/{prop}")
        missing.extend(_undescribed(subschema, f"{path}/{prop}"))
    missing.extend(_undescribed(schema.get("items"), f"{path}/items"))
    for name, subschema in schema.get("$defs", {}).items():
        missing.extend(_undescribed(subschema, f"{path}/$defs/{name}"))
    return missing


@pytest.mark.parametrize("name", sorted(MODELS))
def test_schema_and_every_property_have_a_description(name: str) -> None:
    """The schema and every declared property (nested ones too) carry a non-empty description."""
    schema = load_schema(name)
    assert (bool(schema["description"].strip()), _undescribed(schema, "")) == (True, [])


def test_description_check_sees_nested_properties() -> None:
    """The description check reaches properties of nested objects and array items (it can fail)."""
    schema = {
        "properties": {
            "a": {"description": "x", "properties": {"b": {}}},
            "c": {"description": "y", "items": {"properties": {"d": {}}}},
        }
    }
    assert _undescribed(schema, "") == ["/a/b", "/c/items/d"]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_schema_uses_only_standard_keywords(name: str) -> None:
    """No generator-specific keyword (``x-*``, ``tsType``, ...) appears anywhere in the schema."""
    unknown: set[str] = set()
    walk(load_schema(name), lambda schema: unknown.update(set(schema) - STANDARD_KEYWORDS))
    assert unknown == set()


def test_keyword_walk_sees_nested_keywords() -> None:
    """The keyword walk reaches subschemas under properties, items and allOf (it can fail)."""
    seen: list[str] = []
    nested = {"allOf": [{"properties": {"a": {"items": {"x-python-type": "int"}}}}]}
    walk(nested, lambda schema: seen.extend(k for k in schema if k not in STANDARD_KEYWORDS))
    assert seen == ["x-python-type"]


def test_schema_directory_holds_only_json_schemas() -> None:
    """schema/ holds nothing but the ``*.json`` schema files (the wheel ships the whole folder)."""
    assert sorted(path.name for path in SCHEMA_DIR.iterdir()) == [
        f"{name}.json" for name in schema_names()
    ]


# --- model against schema -------------------------------------------------------------------


@pytest.mark.parametrize("point", POINTS, ids=_point_id)
def test_model_schema_matches_source(point: tuple[str, Mode, str, str]) -> None:
    """One aspect of the model's JSON schema equals the source, or diverges exactly as recorded."""
    name, mode, path, aspect = point
    source = source_view(name)[path][aspect]
    model = model_view(name, mode).get(path, {}).get(aspect, "<property missing in the model>")
    if point in EXCEPTIONS:
        recorded_source, recorded_model, _reason = EXCEPTIONS[point]
        assert (source, model) == (recorded_source, recorded_model), (
            "stale EXCEPTIONS entry: the recorded divergence is not what the model shows now"
        )
    else:
        assert model == source


def test_every_exception_names_a_compared_point() -> None:
    """No EXCEPTIONS entry refers to a schema, property or aspect that is no longer compared."""
    assert set(EXCEPTIONS) - set(POINTS) == set()


def test_model_has_no_property_the_schema_lacks() -> None:
    """The models declare exactly the schemas' properties (the per-point test reads schema keys)."""
    assert {name: tuple(MODELS[name].model_fields) for name in MODELS} == {
        name: tuple(flatten(name)["properties"]) for name in MODELS
    }


def test_normalisation_tells_nullable_from_plain() -> None:
    """``anyOf [string, null]`` and ``type: [string, null]`` normalise alike, unlike ``string``."""
    any_of = normalise_property({"anyOf": [{"type": "string"}, {"type": "null"}]})
    listed = normalise_property({"type": ["null", "string"]})
    plain = normalise_property({"type": "string"})
    assert (any_of == listed, any_of == plain) == (True, False)


@pytest.mark.parametrize(
    ("name", "field"),
    [(name, field) for name in MODELS for field in MODELS[name].model_fields],
)
def test_frozen_matches_read_only(name: str, field: str) -> None:
    """A field is frozen exactly when the schema marks it ``readOnly`` (pydantic omits readOnly)."""
    read_only = bool(flatten(name)["properties"][field].get("readOnly", False))
    assert bool(MODELS[name].model_fields[field].frozen) is read_only


# Fields whose default comes from a factory. JSON Schema cannot say "a new uuid4" or "now", so
# id and created_at have no schema default; metadata and tags have one that the factory must give.
FACTORY_FIELDS = {
    ("element", "id"),
    ("element", "created_at"),
    ("element", "metadata"),
    ("memory_item", "id"),
    ("memory_item", "created_at"),
    ("memory_item", "metadata"),
    ("memory_item", "tags"),
}


def test_factory_fields_are_the_known_ones() -> None:
    """Exactly the fields of FACTORY_FIELDS take their default from a default_factory."""
    found = {
        (name, field)
        for name, model in MODELS.items()
        for field, info in model.model_fields.items()
        if info.default_factory is not None
    }
    assert found == FACTORY_FIELDS


@pytest.mark.parametrize(("name", "field"), sorted(FACTORY_FIELDS))
def test_factory_gives_the_schema_default(name: str, field: str) -> None:
    """A factory's value equals the schema default, and only id/created_at have no schema default."""
    schema_default = flatten(name)["properties"][field].get("default", ABSENT)
    factory = MODELS[name].model_fields[field].default_factory
    assert factory is not None
    if field in {"id", "created_at"}:
        assert schema_default == ABSENT
    else:
        produced = factory()  # type: ignore[call-arg]  # these factories take no argument
        assert _canonical(produced) == _canonical(schema_default)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_plain_defaults_equal_the_schema_defaults(name: str) -> None:
    """Plain defaults (not factories, not required fields) equal the schema's, JSON type alike."""
    model: type[BaseModel] = MODELS[name]
    plain = {
        field: _canonical(info.default)
        for field, info in model.model_fields.items()
        if info.default_factory is None and not info.is_required()
    }
    properties = flatten(name)["properties"]
    assert plain == {
        field: _canonical(properties[field]["default"])
        for field in plain
        if "default" in properties[field]
    }
