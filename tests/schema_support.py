"""Shared helpers of the schema-side tests: the source schemas, validators and flattening.

``schema/*.json`` in the repository is the source of truth, so these helpers read it there (the
packaging tests check separately that the wheel ships the same bytes). Cross-file ``$ref``s
resolve through a ``referencing`` registry keyed by each schema's ``$id``.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import BaseModel
from referencing import Registry, Resource

from lionmem import Element, MemoryItem, MemoryQuery

__all__ = [
    "MODELS",
    "REPO",
    "SCHEMA_DIR",
    "draft7_for_generation",
    "load_schema",
    "registry",
    "schema_names",
    "validator",
]

REPO = Path(__file__).resolve().parent.parent
SCHEMA_DIR = REPO / "schema"

# Every schema file and the generated model it describes. A new schema file must be added here,
# which puts it under the fidelity, vector and property tests (test_schema_fidelity checks this).
MODELS: dict[str, type[BaseModel]] = {
    "element": Element,
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
        format_checker=Draft202012Validator.FORMAT_CHECKER,
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


def draft7_for_generation(name: str, *, close: bool = False) -> dict[str, Any]:
    """Return ``flatten(name)`` as a draft-7 document that hypothesis-jsonschema can generate from.

    hypothesis-jsonschema 0.23.1 knows drafts 4/6/7 only and cannot follow cross-file ``$ref``s.
    The flattened schemas use no keyword whose meaning differs between 2020-12 and draft 7 (the
    test module checks the keyword set), so only ``$schema`` changes and ``$id`` is dropped.
    ``close=True`` adds ``additionalProperties: false`` to an open schema (Element), to generate
    documents that a model forbidding unknown fields must accept.
    """
    flat = flatten(name)
    flat["$schema"] = "http://json-schema.org/draft-07/schema#"
    flat.pop("$id")
    if close:
        flat.setdefault("additionalProperties", False)
    return flat
