"""Unknown properties in tool arguments: named as unexpected, and only they.

jsonschema counts a property that a failed part of the schema names as "unevaluated": a
``created_at`` of the wrong type fails the ``allOf`` naming ``id``, ``created_at`` and
``metadata``. Such a property has a problem of its own, or none; it is not unexpected.
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from lionmem import SQLiteMemoryStore
from lionmem.mcp import MemoryTools
from lionmem.mcp._tools import _schema_problems

PREFIX = "invalid arguments for memory_store: "


@pytest.mark.parametrize(
    ("arguments", "problems"),
    [
        (
            {
                "content": "x",
                "created_at": "2024-01-01T00:00:00Z",
                "metadata": {"project": "apollo"},
            },
            "created_at: '2024-01-01T00:00:00Z' is not of type 'number'",
        ),
        (
            {"id": "0b9f3a52-6c1e-4c8a-9d55-2f1e7a3b4c5d", "created_at": None, "tags": ["a"]},
            "created_at: None is not of type 'number'",
        ),
        (
            {"content": 1, "metadata": ["project"], "created_at": 5.0},
            "metadata: ['project'] is not of type 'object'",
        ),
        (
            {"content": "x", "created_at": "soon", "bogus": 1},
            "created_at: 'soon' is not of type 'number'; arguments: Unevaluated properties are "
            "not allowed ('bogus' was unexpected)",
        ),
        (
            {"id": "nope", "metadata": {}, "more": 2, "extra": 1},
            "id: 'nope' is not a 'uuid'; arguments: Unevaluated properties are not allowed "
            "('extra', 'more' were unexpected)",
        ),
        (
            {"tags": [1], "metadata": 5, "Content": "x"},
            "tags[0]: 1 is not of type 'string'; metadata: 5 is not of type 'object'; "
            "arguments: Unevaluated properties are not allowed ('Content' was unexpected)",
        ),
        (
            {"content": "x", "metadata": {"k": 1}, "tag": ["a"]},
            "arguments: Unevaluated properties are not allowed ('tag' was unexpected)",
        ),
    ],
)
async def test_only_properties_the_schema_does_not_name_are_unexpected(
    arguments: dict[str, Any], problems: str
) -> None:
    """A property of the item schema is never called unexpected, whatever else fails; an
    unknown one always is, and nothing is stored."""
    store = SQLiteMemoryStore(":memory:")
    try:
        result = await MemoryTools(store).call("memory_store", arguments)
        assert (result.is_error, result.text) == (True, PREFIX + problems)
        assert await store.count() == 0
    finally:
        await store.close()


BRANCHY: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "base": {"properties": {"ref_one": {"type": "integer"}}},
        "open": {"additionalProperties": {"type": "integer"}},
    },
    "properties": {"kind": True, "any_two": True},
    "allOf": [
        {"$ref": "#/$defs/base"},
        {"allOf": [{"properties": {"all_one": {"type": "integer"}}}]},
        {"patternProperties": {"^x-": {"type": "integer"}}},
    ],
    "anyOf": [{"properties": {"any_one": {"type": "integer"}}}, {"required": ["any_two"]}],
    "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
    "then": {"properties": {"then_one": {"type": "integer"}}},
    "unevaluatedProperties": False,
}
OPEN: dict[str, Any] = {**BRANCHY, "allOf": [{"$ref": "#/$defs/open"}]}


def _unexpected(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """The problems of ``arguments`` against ``schema``, and those reported as unexpected."""
    problems = _schema_problems(Draft202012Validator(schema), arguments)
    assert problems is not None, "the arguments are invalid: a problem must be reported"
    return [problem for problem in problems.split("; ") if "Unevaluated" in problem]


@pytest.mark.parametrize(
    ("schema", "arguments", "unexpected"),
    [
        (BRANCHY, {"ref_one": "a", "all_one": 1}, []),
        (BRANCHY, {"all_one": "a", "ref_one": 1}, []),
        (BRANCHY, {"x-one": "a", "kind": "a"}, []),
        (OPEN, {"anything": "a", "kind": "b"}, []),
        (BRANCHY, {"ref_one": "a", "stray": 1}, ["'stray' was unexpected"]),
        (BRANCHY, {"zz": 1, "aa": 2, "x-ok": 3}, ["'aa', 'zz' were unexpected"]),
        # Named only in a branch that need not hold: with that branch unused, the property is
        # unexpected, and no other problem would say that the arguments are refused.
        (BRANCHY, {"any_one": "a", "any_two": 1}, ["'any_one' was unexpected"]),
        (BRANCHY, {"kind": "b", "then_one": 1}, ["'then_one' was unexpected"]),
    ],
)
def test_properties_named_by_parts_that_must_hold_are_not_unexpected(
    schema: dict[str, Any], arguments: dict[str, Any], unexpected: list[str]
) -> None:
    """A property named through a reference, an allOf part or a pattern is not unexpected when
    that part fails (its failure is reported); a property named nowhere, or only in a branch
    that need not hold, is, and the arguments are always refused."""
    assert _unexpected(schema, arguments) == [
        f"arguments: Unevaluated properties are not allowed ({text})" for text in unexpected
    ]
