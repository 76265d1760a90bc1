"""``metadata`` coercion (SEMANTICS.md §2.4), the ``lion_class`` rule (§2.5) and decisions L1 and L11."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import uuid
from collections import OrderedDict, defaultdict
from enum import StrEnum
from types import MappingProxyType, SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from lionmem import Element, MemoryItem
from tests.validation_support import only_error

MEMORY_ITEM_NAMES = [
    "lionmem_models.memory_item.MemoryItem",
    "lionmem.MemoryItem",
    "lionagi.protocols.memory.MemoryItem",
]
ELEMENT_NAMES = [
    "lionmem_models.element.Element",
    "lionmem.Element",
    "lionagi.protocols.generic.element.Element",
]


def metadata_error(value: object, cls: type[Element] = MemoryItem) -> str:
    """Build ``cls(metadata=value)``, expect one value_error on ('metadata',), return its message."""
    with pytest.raises(ValidationError) as exc:
        cls(metadata=value)
    loc, kind, msg = only_error(exc)
    assert (loc, kind) == (("metadata",), "value_error")
    return msg


class Point(BaseModel):
    """A pydantic model given as metadata."""

    x: int = 1
    y: str = "z"


@dataclasses.dataclass
class Inner:
    """A nested dataclass."""

    b: int = 2


@dataclasses.dataclass
class Record:
    """A dataclass given as metadata."""

    a: int = 1
    inner: Inner = dataclasses.field(default_factory=Inner)


class Note(MemoryItem):
    """A user subclass, which must carry its own name in lion_class."""


NOTE_NAME = f"{Note.__module__}.{Note.__qualname__}"


# --- §2.4 matched: dicts, falsy values, JSON strings, mappings, models, dataclasses --------------


def test_dict_is_copied_into_a_new_dict() -> None:
    """A dict input is stored as a new dict with the same items."""
    given = {"a": 1}
    item = MemoryItem(metadata=given)
    assert item.metadata == {"a": 1}
    assert item.metadata is not given


def test_dict_copy_is_shallow() -> None:
    """Nested values of a dict input are shared, not copied."""
    nested = {"b": [1]}
    item = MemoryItem(metadata={"a": nested})
    assert item.metadata["a"] is nested


def test_later_changes_to_the_input_dict_do_not_reach_the_item() -> None:
    """Adding a key to the input dict after construction does not change the item."""
    given: dict[str, Any] = {"a": 1}
    item = MemoryItem(metadata=given)
    given["b"] = 2
    assert item.metadata == {"a": 1}


@pytest.mark.parametrize(
    "given",
    [OrderedDict(a=1), defaultdict(int, a=1)],
    ids=["OrderedDict", "defaultdict"],
)
def test_dict_subclass_becomes_a_plain_dict(given: dict[str, int]) -> None:
    """OrderedDict and defaultdict are stored as a plain dict."""
    metadata = MemoryItem(metadata=given).metadata
    assert type(metadata) is dict
    assert metadata == {"a": 1}


@pytest.mark.parametrize(
    "value",
    [None, {}, "", [], (), 0, 0.0, False, b"", set(), range(0)],
    ids=repr,
)
def test_falsy_value_becomes_empty_dict(value: object) -> None:
    """A falsy metadata value is stored as {}."""
    assert MemoryItem(metadata=value).metadata == {}


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ('{"a": 1}', {"a": 1}),
        (' \n{"a": 1}\t', {"a": 1}),
        ('{"a": 123456789012345678901234567890}', {"a": 123456789012345678901234567890}),
        ('{"a": 1, "a": 2}', {"a": 2}),
        ('{"a": "1", "b": "{\\"c\\": 2}"}', {"a": "1", "b": '{"c": 2}'}),
        ('{"a": {"b": [1, null, true]}}', {"a": {"b": [1, None, True]}}),
        ("{}", {}),
    ],
    ids=[
        "object",
        "whitespace",
        "big-int",
        "last-duplicate-wins",
        "nested-strings-kept",
        "nested",
        "empty",
    ],
)
def test_json_object_string_is_parsed(text: str, stored: dict[str, Any]) -> None:
    """A JSON-object string is parsed with the stdlib rules; nested JSON strings stay strings."""
    assert MemoryItem(metadata=text).metadata == stored


def test_json_string_nan_is_parsed() -> None:
    """The stdlib parser's NaN literal is accepted inside a metadata JSON string."""
    assert math.isnan(MemoryItem(metadata='{"a": NaN}').metadata["a"])


def test_non_dict_mapping_is_copied_into_a_dict() -> None:
    """A read-only Mapping (MappingProxyType) is stored as a plain dict of its items."""
    metadata = MemoryItem(metadata=MappingProxyType({"a": 1})).metadata
    assert type(metadata) is dict
    assert metadata == {"a": 1}


def test_pydantic_model_is_dumped() -> None:
    """A pydantic model is stored as its model_dump()."""
    assert MemoryItem(metadata=Point()).metadata == {"x": 1, "y": "z"}


def test_dataclass_goes_through_asdict() -> None:
    """A dataclass is stored as dataclasses.asdict(), nested dataclasses included."""
    assert MemoryItem(metadata=Record()).metadata == {"a": 1, "inner": {"b": 2}}


def test_object_with_to_dict_uses_it() -> None:
    """An object with to_dict() is stored as what to_dict() returns."""

    class Exportable:
        def to_dict(self) -> dict[str, int]:
            return {"a": 1}

    assert MemoryItem(metadata=Exportable()).metadata == {"a": 1}


def test_object_with_to_json_string_is_parsed() -> None:
    """An object whose to_json() returns a JSON-object string is stored as the parsed object."""

    class Exportable:
        def to_json(self) -> str:
            return '{"a": 1}'

    assert MemoryItem(metadata=Exportable()).metadata == {"a": 1}


def test_model_dump_wins_over_to_dict() -> None:
    """model_dump() is preferred to to_dict(), as the reference prefers it."""

    class Both:
        def model_dump(self) -> dict[str, str]:
            return {"via": "model_dump"}

        def to_dict(self) -> dict[str, str]:
            return {"via": "to_dict"}

    assert MemoryItem(metadata=Both()).metadata == {"via": "model_dump"}


def test_plain_object_attributes_are_used() -> None:
    """An object without export methods is stored as its __dict__ (SimpleNamespace(a=1) -> {'a': 1})."""
    assert MemoryItem(metadata=SimpleNamespace(a=1)).metadata == {"a": 1}


def test_model_validate_applies_the_coercion() -> None:
    """model_validate parses a JSON-string metadata as the constructor does."""
    assert MemoryItem.model_validate({"metadata": '{"a": 1}'}).metadata == {"a": 1}


# --- L1: what the reference drops, enumerates or leaks is a ValidationError naming the problem ---


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("hello", "not valid JSON"),
        ("   ", "not valid JSON"),
        ("{'a': 1}", "not valid JSON"),
        ('{"a": 1,}', "not valid JSON"),
        (5, "got int"),
        (1.5, "got float"),
        (True, "got bool"),
        (uuid.UUID(int=1), "got UUID"),
        (b"x", "got bytes"),
        (bytearray(b"x"), "got bytearray"),
        (object(), "got object"),
        (ValueError("kept in args"), "got ValueError"),
        (len, "got builtin_function_or_method"),
        (os, "got module"),
        ((x for x in "ab"), "got generator"),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, str) or len(v) > 20 else repr(v),
)
def test_l1_input_the_reference_drops_silently_is_rejected(value: object, named: str) -> None:
    """L1: an input the reference turns into {} silently raises on ('metadata',) naming the problem."""
    assert named in metadata_error(value)


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ([1, 2], "got list"),
        ([("a", 1)], "got list"),
        ((1,), "got tuple"),
        ({1, 2}, "got set"),
        (frozenset([1]), "got frozenset"),
        (range(2), "got range"),
        ({"a": 1}.keys(), "got dict_keys"),
        ({"a": 1}.values(), "got dict_values"),
        ({"a": 1}.items(), "got dict_items"),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, str) else v,
)
def test_l1_sequence_or_set_is_not_enumerated(value: object, named: str) -> None:
    """L1: a sequence, set or dict view raises instead of becoming an index-keyed dict."""
    assert named in metadata_error(value)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("null", "null"),
        ("5", "number"),
        ("true", "boolean"),
        ("1.5", "number"),
        ('"lion_class"', "string"),
    ],
    ids=repr,
)
def test_l1_json_scalar_string_is_a_validation_error(text: str, kind: str) -> None:
    """L1: a JSON scalar string raises a ValidationError naming its JSON type, not a raw TypeError."""
    assert f"holds a JSON {kind}, not an object" in metadata_error(text)


@pytest.mark.parametrize(
    "text",
    ["[1, 2]", '[{"a": 1}]', '"abc"', json.dumps(json.dumps({"a": 1}))],
    ids=["list", "list-of-objects", "string", "double-encoded"],
)
def test_json_non_object_string_is_invalid_metadata(text: str) -> None:
    """A JSON string holding no object raises 'Invalid metadata' naming what it holds."""
    message = metadata_error(text)
    assert message.startswith("Value error, Invalid metadata: the string holds a JSON ")
    assert message.endswith(", not an object")


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ({1: "a"}, "the int key 1"),
        ({"a": 1, None: 2}, "the NoneType key None"),
        (MappingProxyType({(1, 2): "a"}), "the tuple key (1, 2)"),
    ],
    ids=["int", "none", "tuple-in-mapping"],
)
def test_l1_non_string_key_is_rejected(value: object, named: str) -> None:
    """L1: metadata keys must be strings, as in every JSON object; the offending key is named."""
    message = metadata_error(value)
    assert "keys must be strings" in message
    assert named in message


def test_l1_object_whose_export_returns_a_list_is_rejected() -> None:
    """L1: a to_dict() returning a list raises instead of being enumerated."""

    class Exportable:
        def to_dict(self) -> list[int]:
            return [1, 2]

    assert "got list from Exportable.to_dict()" in metadata_error(Exportable())


def test_l1_object_whose_export_raises_is_rejected() -> None:
    """L1: a to_dict() that raises is reported, not swallowed into {}."""

    class Exportable:
        def to_dict(self) -> dict[str, int]:
            raise RuntimeError("boom")

    assert "Exportable.to_dict() raised RuntimeError('boom')" in metadata_error(Exportable())


def test_l1_class_is_rejected() -> None:
    """L1: a class (here a pydantic model class) is not a record and is rejected by name."""
    assert "got the class Point" in metadata_error(Point)


def test_l1_element_applies_the_same_rules() -> None:
    """L1 holds on Element as on MemoryItem."""
    assert "got list" in metadata_error([1], Element)


# --- §2.5 and L11: lion_class names the concrete class ------------------------------------------


@pytest.mark.parametrize("name", MEMORY_ITEM_NAMES)
def test_l11_memory_item_accepts_its_names_and_keeps_the_key(name: str) -> None:
    """L11: MemoryItem accepts its defining, public and lionagi names, and keeps lion_class."""
    assert MemoryItem(metadata={"lion_class": name, "k": 1}).metadata == {
        "lion_class": name,
        "k": 1,
    }


@pytest.mark.parametrize("name", ELEMENT_NAMES)
def test_l11_element_accepts_its_names(name: str) -> None:
    """L11: Element accepts its defining, public and lionagi names."""
    assert Element(metadata={"lion_class": name}).metadata == {"lion_class": name}


@pytest.mark.parametrize(
    "name",
    [*ELEMENT_NAMES, "MemoryItem", "lionmem_models.memory_item", None, "", 5],
    ids=repr,
)
def test_l11_memory_item_rejects_other_names(name: object) -> None:
    """L11: the parent's names, the short name, None, '' and non-strings are a class mismatch."""
    assert metadata_error({"lion_class": name}) == "Value error, Metadata class mismatch."


@pytest.mark.parametrize("name", [*MEMORY_ITEM_NAMES, "Element"], ids=repr)
def test_l11_element_rejects_the_child_names(name: str) -> None:
    """L11: Element rejects MemoryItem's names and its own short name."""
    assert metadata_error({"lion_class": name}, Element) == "Value error, Metadata class mismatch."


def test_l11_json_string_with_a_wrong_name_is_rejected() -> None:
    """The lion_class check also applies to metadata parsed from a JSON string."""
    text = '{"lion_class": "lionagi.protocols.generic.element.Element"}'
    assert metadata_error(text) == "Value error, Metadata class mismatch."


def test_l11_pydantic_model_with_a_wrong_name_is_rejected() -> None:
    """The lion_class check also applies to a dumped pydantic model's lion_class field."""

    class Tagged(BaseModel):
        lion_class: str = "MemoryItem"

    assert metadata_error(Tagged()) == "Value error, Metadata class mismatch."


def test_l11_subclass_accepts_its_own_name() -> None:
    """A user subclass accepts its own defining dotted name."""
    assert Note(metadata={"lion_class": NOTE_NAME}).metadata == {"lion_class": NOTE_NAME}


@pytest.mark.parametrize("name", [*MEMORY_ITEM_NAMES, "Note"], ids=repr)
def test_l11_subclass_rejects_its_parent_names(name: str) -> None:
    """A user subclass rejects every name of its parent, and its own short name."""
    assert metadata_error({"lion_class": name}, Note) == "Value error, Metadata class mismatch."


def test_l11_parent_rejects_the_subclass_name() -> None:
    """MemoryItem rejects a subclass's name: lion_class names the concrete class."""
    assert metadata_error({"lion_class": NOTE_NAME}) == "Value error, Metadata class mismatch."


def test_a_string_enum_key_becomes_a_plain_string() -> None:
    """A key that is a str enum member is kept as the plain string (keys are strings, L1)."""

    class Key(StrEnum):
        A = "a"

    (key,) = MemoryItem(metadata={Key.A: 1}).metadata
    assert (type(key), key) == (str, "a")
