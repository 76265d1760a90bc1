"""Shared helpers of the schema-side tests: the source schemas, validators and flattening.

``schema/*.json`` in the repository is the source of truth, so these helpers read it there (the
packaging tests check separately that the wheel ships the same bytes). Cross-file ``$ref``s
resolve through a ``referencing`` registry keyed by each schema's ``$id``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import BaseModel
from referencing import Registry, Resource

from lionmem import Element, MemoryItem, MemoryQuery
from lionmem._formats import format_checker
from lionmem_models.memory_adapter_manifest import MemoryAdapterManifest

__all__ = [
    "DRAFT_7_KEYWORDS",
    "MODELS",
    "REPO",
    "SCHEMA_DIR",
    "draft7_for_generation",
    "flatten",
    "load_schema",
    "registry",
    "schema_names",
    "validator",
    "walk",
]

REPO = Path(__file__).resolve().parent.parent
SCHEMA_DIR = REPO / "schema"

# Every schema file and the generated model it describes. A new schema file must be added here,
# which puts it under the fidelity, vector and property tests (test_schema_fidelity checks this).
MODELS: dict[str, type[BaseModel]] = {
    "element": Element,
    "memory_adapter_manifest": MemoryAdapterManifest,
    "memory_item": MemoryItem,
    "memory_query": MemoryQuery,
}


def schema_names() -> list[str]:
    """Return the names (file stems) of every schema under ``schema/``, sorted."""
    return sorted(path.stem for path in SCHEMA_DIR.glob("*.json"))


@cache
def _load(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def load_schema(name: str) -> dict[str, Any]:
    """Return a fresh copy of ``schema/<name>.json``, parsed (callers may change it)."""
    return copy.deepcopy(_load(name))


@cache
def registry() -> Registry[Any]:
    """Return a registry holding every schema under its ``$id``, so relative ``$ref``s resolve."""
    resources = []
    for name in schema_names():
        contents = _load(name)
        resources.append((contents["$id"], Resource.from_contents(contents)))
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    """Return a 2020-12 validator of ``schema/<name>.json`` with format assertion switched on.

    Formats are annotations only in 2020-12 unless a checker is given: without it ``"not-a-uuid"``
    would pass as an ``id``.
    """
    return Draft202012Validator(
        _load(name),
        registry=registry(),
        format_checker=format_checker(),
    )


def _resolve_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    """Merge ``allOf`` parts (following ``$ref`` to sibling files) into one object schema.

    Only the shapes the lionmem schemas use are supported (object parts that add properties and
    ``required``); anything else raises, so a schema that outgrows this helper fails loudly.
    """
    merged = {key: value for key, value in schema.items() if key != "allOf"}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for listed in schema.get("allOf", []):
        part = listed
        if set(listed) == {"$ref"}:
            target = registry().resolver(schema["$id"]).lookup(listed["$ref"]).contents
            part = _resolve_all_of(target)
        unsupported = set(part) - {
            "$schema",
            "$id",
            "title",
            "description",
            "type",
            "properties",
            "required",
        }
        if unsupported or part.get("type", "object") != "object":
            msg = f"cannot flatten allOf part with {sorted(unsupported)} of {schema['$id']}"
            raise NotImplementedError(msg)
        properties.update(part.get("properties", {}))
        required.extend(part.get("required", []))
    properties.update(merged.get("properties", {}))
    required.extend(merged.get("required", []))
    merged["properties"] = properties
    if required:
        merged["required"] = sorted(set(required))
    return merged


def flatten(name: str) -> dict[str, Any]:
    """Return ``schema/<name>.json`` with every ``allOf``/``$ref`` inlined (still draft 2020-12).

    ``unevaluatedProperties: false`` over the merged properties means the same as
    ``additionalProperties: false`` once there is no ``allOf`` left, so it is rewritten to that.
    """
    flat = _resolve_all_of(load_schema(name))
    if flat.pop("unevaluatedProperties", None) is False:
        flat["additionalProperties"] = False
    return flat


# Keywords whose meaning is the same in draft 7 and in 2020-12 (given no ``minContains``/
# ``maxContains`` beside ``contains`` and ``items`` holding one schema, as here).
DRAFT_7_KEYWORDS = frozenset(
    {
        "$schema", "$comment", "title", "description", "default", "readOnly", "writeOnly",
        "examples", "type", "enum", "const", "format",
        "multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
        "minLength", "maxLength", "pattern",
        "items", "minItems", "maxItems", "uniqueItems", "contains",
        "properties", "patternProperties", "additionalProperties", "propertyNames",
        "required", "minProperties", "maxProperties", "dependencies",
        "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
    }
)  # fmt: skip
# Keywords whose value is a subschema, a list of subschemas or a map of subschemas (2020-12, plus
# draft 7's ``dependencies`` so that the walk also covers the rewritten documents).
_SUBSCHEMA = frozenset(
    {"not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames"}
    | {"unevaluatedItems", "unevaluatedProperties", "contentSchema"}
)
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUBSCHEMA_MAPS = frozenset(
    {"$defs", "properties", "patternProperties", "dependentSchemas", "dependencies"}
)
# Annotations a ``$ref``'s siblings may carry; they override the target's when inlined.
_ANNOTATIONS = frozenset({"title", "description", "default", "$comment", "examples"})


def walk(schema: Any, on_schema: Callable[[dict[str, Any]], None]) -> None:
    """Call ``on_schema`` on ``schema`` and on every subschema inside it."""
    if not isinstance(schema, dict):
        return
    on_schema(schema)
    for keyword, value in schema.items():
        if keyword in _SUBSCHEMA:
            walk(value, on_schema)
        elif keyword in _SUBSCHEMA_LISTS:
            for part in value:
                walk(part, on_schema)
        elif keyword in _SUBSCHEMA_MAPS and isinstance(value, dict):
            for part in value.values():
                walk(part, on_schema)


def _to_draft_7(schema: Any, defs: dict[str, Any]) -> Any:
    """Rewrite one (sub)schema: inline ``#/$defs/...`` refs, ``dependentSchemas`` -> ``dependencies``."""
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        siblings = {key: value for key, value in schema.items() if key != "$ref"}
        pointer = schema["$ref"]
        if not pointer.startswith("#/$defs/") or set(siblings) - _ANNOTATIONS:
            msg = f"cannot inline $ref {pointer!r} with siblings {sorted(siblings)}"
            raise NotImplementedError(msg)
        return _to_draft_7({**defs[pointer.removeprefix("#/$defs/")], **siblings}, defs)
    rewritten: dict[str, Any] = {}
    for keyword, value in schema.items():
        target = "dependencies" if keyword == "dependentSchemas" else keyword
        if keyword in _SUBSCHEMA:
            rewritten[target] = _to_draft_7(value, defs)
        elif keyword in _SUBSCHEMA_LISTS:
            rewritten[target] = [_to_draft_7(part, defs) for part in value]
        elif keyword in _SUBSCHEMA_MAPS:
            rewritten[target] = {key: _to_draft_7(part, defs) for key, part in value.items()}
        else:
            rewritten[target] = value
    return rewritten


def draft7_for_generation(name: str, *, close: bool = False) -> dict[str, Any]:
    """Return ``flatten(name)`` as a draft-7 document that hypothesis-jsonschema can generate from.

    hypothesis-jsonschema 0.23.1 knows drafts 4/6/7 only and follows no cross-file ``$ref``. After
    ``flatten``, local ``#/$defs/`` refs are inlined (``$defs`` dropped), ``dependentSchemas``
    becomes draft 7's ``dependencies``, ``$schema`` is set to draft 7 and ``$id`` is dropped. Every
    keyword left must be in DRAFT_7_KEYWORDS (test_schema_properties checks this).
    ``close=True`` adds ``additionalProperties: false`` to an open schema (Element), to generate
    documents that a model forbidding unknown fields must accept.
    """
    flat = flatten(name)
    defs = flat.pop("$defs", {})
    flat.pop("$id")
    converted: dict[str, Any] = _to_draft_7(flat, defs)
    converted["$schema"] = "http://json-schema.org/draft-07/schema#"
    if close:
        converted.setdefault("additionalProperties", False)
    return converted
