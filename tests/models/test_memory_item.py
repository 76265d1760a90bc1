"""MemoryItem ``content`` and ``tags`` (§2.7), serialization and round trips (§2.9), and L4."""

from __future__ import annotations

import json
from uuid import UUID

import pytest
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from lionmem import Element, MemoryItem
from tests.validation_support import only_error

CANONICAL = "12345678-1234-5678-1234-567812345678"
OTHER = UUID(int=1)
SAMPLE_DUMP = {
    "id": CANONICAL,
    "created_at": 1.5,
    "metadata": {"k": "v"},
    "content": {"a": [1, 2]},
    "tags": ["x"],
}
SAMPLE_JSON = (
    '{"id":"12345678-1234-5678-1234-567812345678","created_at":1.5,'
    '"metadata":{"k":"v"},"content":{"a":[1,2]},"tags":["x"]}'
)


def sample() -> MemoryItem:
    """Build the §2.9 sample item."""
    return MemoryItem(
        id=UUID(CANONICAL),
        created_at=1.5,
        metadata={"k": "v"},
        content={"a": [1, 2]},
        tags=["x"],
    )


# --- content (§2.7) ------------------------------------------------------------------------------


def test_content_is_stored_by_reference() -> None:
    """The content object is stored as is, not copied."""
    content = {"a": [1]}
    assert MemoryItem(content=content).content is content


def test_content_accepts_arbitrary_objects_unvalidated() -> None:
    """Any object, even one with no JSON form, is accepted as content."""
    marker = object()
    assert MemoryItem(content=marker).content is marker


def test_content_default_is_none() -> None:
    """content defaults to None."""
    assert MemoryItem().content is None


# --- tags (§2.7) ---------------------------------------------------------------------------------


def test_tags_do_not_coerce_int_to_str() -> None:
    """tags=[1, 2] raises 'Input should be a valid string' for each element."""
    with pytest.raises(ValidationError) as exc:
        MemoryItem(tags=[1, 2])
    assert [(e["loc"], e["type"], e["msg"]) for e in exc.value.errors()] == [
        (("tags", 0), "string_type", "Input should be a valid string"),
        (("tags", 1), "string_type", "Input should be a valid string"),
    ]


@pytest.mark.parametrize("value", ["abc", None, 5, {"a": "b"}], ids=repr)
def test_tags_non_list_is_rejected(value: object) -> None:
    """A str, None, an int or a dict as tags raises 'Input should be a valid list'."""
    with pytest.raises(ValidationError) as exc:
        MemoryItem(tags=value)
    assert only_error(exc) == (("tags",), "list_type", "Input should be a valid list")


@pytest.mark.parametrize(
    "value",
    [("a",), {"a"}, frozenset(["a"])],
    ids=["tuple", "set", "frozenset"],
)
def test_tags_tuple_and_set_become_a_list(value: object) -> None:
    """A tuple, set or frozenset of strings is stored as a list."""
    assert MemoryItem(tags=value).tags == ["a"]


def test_tags_bytes_elements_become_str() -> None:
    """A bytes element is decoded to str."""
    assert MemoryItem(tags=[b"a", "b"]).tags == ["a", "b"]


def test_tags_keep_duplicates_and_empty_strings_in_order() -> None:
    """Duplicates and '' are kept, in input order."""
    assert MemoryItem(tags=["b", "a", "b", ""]).tags == ["b", "a", "b", ""]


def test_tags_input_list_is_copied() -> None:
    """The stored tags list is a copy of the input list."""
    given = ["a"]
    item = MemoryItem(tags=given)
    given.append("b")
    assert item.tags == ["a"]


# --- serialization (§2.9) ------------------------------------------------------------------------


def test_model_dump_of_the_sample() -> None:
    """model_dump() of the §2.9 sample is exactly the documented dict."""
    assert sample().model_dump() == SAMPLE_DUMP


def test_model_dump_writes_id_as_str_and_created_at_as_float() -> None:
    """In python mode id is a str and created_at a float."""
    dumped = sample().model_dump()
    assert type(dumped["id"]) is str
    assert type(dumped["created_at"]) is float


def test_model_dump_json_mode_of_the_sample() -> None:
    """model_dump(mode='json') of the sample is the same dict."""
    assert sample().model_dump(mode="json") == SAMPLE_DUMP


def test_model_dump_json_of_the_sample() -> None:
    """model_dump_json() of the sample is exactly the documented compact string, fields in order."""
    assert sample().model_dump_json() == SAMPLE_JSON


def test_nested_uuids_stay_uuid_in_python_mode() -> None:
    """UUIDs inside content and metadata stay UUID objects in model_dump()."""
    dumped = MemoryItem(content=[OTHER], metadata={"ref": OTHER}).model_dump()
    assert dumped["content"] == [OTHER]
    assert type(dumped["content"][0]) is UUID
    assert type(dumped["metadata"]["ref"]) is UUID


def test_nested_uuids_become_str_in_json_mode() -> None:
    """UUIDs inside content and metadata become str in model_dump(mode='json')."""
    dumped = MemoryItem(content=[OTHER], metadata={"ref": OTHER}).model_dump(mode="json")
    assert dumped["content"] == [str(OTHER)]
    assert dumped["metadata"] == {"ref": str(OTHER)}


@pytest.mark.parametrize("mode", ["python", "json"])
def test_model_dump_does_not_inject_lion_class(mode: str) -> None:
    """model_dump() adds no lion_class to metadata, in either mode."""
    assert sample().model_dump(mode=mode)["metadata"] == {"k": "v"}


def test_model_dump_json_does_not_inject_lion_class() -> None:
    """model_dump_json() adds no lion_class to metadata."""
    assert json.loads(sample().model_dump_json())["metadata"] == {"k": "v"}


def test_dumping_leaves_the_instance_metadata_unchanged() -> None:
    """Dumping in every mode never changes the instance's metadata dict."""
    item = sample()
    metadata = item.metadata
    item.model_dump()
    item.model_dump(mode="json")
    item.model_dump_json()
    assert item.metadata is metadata
    assert metadata == {"k": "v"}


def test_dump_json_of_unserializable_content_raises() -> None:
    """Content with no JSON form raises PydanticSerializationError at dump time."""
    item = MemoryItem(content=object())
    with pytest.raises(PydanticSerializationError):
        item.model_dump_json()


def test_dump_json_mode_of_non_utf8_bytes_raises() -> None:
    """Non-UTF-8 bytes content raises UnicodeDecodeError in model_dump(mode='json')."""
    item = MemoryItem(content=b"\xff")
    with pytest.raises(UnicodeDecodeError):
        item.model_dump(mode="json")


# --- round trips (§2.9) --------------------------------------------------------------------------


def test_round_trip_through_python_dump() -> None:
    """model_validate(model_dump()) rebuilds an equal item with the same dump."""
    item = sample()
    rebuilt = MemoryItem.model_validate(item.model_dump())
    assert rebuilt == item
    assert rebuilt.model_dump() == item.model_dump()


def test_round_trip_through_json_mode_dump() -> None:
    """model_validate(model_dump(mode='json')) rebuilds an equal item with the same dump."""
    item = sample()
    rebuilt = MemoryItem.model_validate(item.model_dump(mode="json"))
    assert rebuilt == item
    assert rebuilt.model_dump() == item.model_dump()


def test_round_trip_through_json_string() -> None:
    """model_validate_json(model_dump_json()) rebuilds an equal item with the same JSON."""
    item = sample()
    rebuilt = MemoryItem.model_validate_json(item.model_dump_json())
    assert rebuilt == item
    assert rebuilt.model_dump_json() == SAMPLE_JSON


def test_round_trip_keeps_a_matching_lion_class() -> None:
    """A matching lion_class survives a JSON round trip unchanged."""
    item = MemoryItem(metadata={"lion_class": "lionmem.MemoryItem"})
    rebuilt = MemoryItem.model_validate_json(item.model_dump_json())
    assert rebuilt.metadata == {"lion_class": "lionmem.MemoryItem"}


def test_model_validate_applies_the_coercions() -> None:
    """model_validate coerces a hex id, an ISO created_at and a JSON-string metadata."""
    item = MemoryItem.model_validate(
        {"id": CANONICAL.replace("-", ""), "created_at": "2020-01-01", "metadata": '{"a": 1}'}
    )
    assert (item.id, item.created_at, item.metadata) == (UUID(CANONICAL), 1577836800.0, {"a": 1})


def test_model_validate_of_an_instance_returns_it() -> None:
    """model_validate(instance) returns the very same object."""
    item = sample()
    assert MemoryItem.model_validate(item) is item


def test_model_copy_is_shallow() -> None:
    """model_copy() shares the tags list with the original."""
    item = sample()
    assert item.model_copy().tags is item.tags


def test_model_copy_deep_copies_the_tags() -> None:
    """model_copy(deep=True) gives an equal but separate tags list."""
    item = sample()
    copied = item.model_copy(deep=True)
    assert copied.tags == item.tags
    assert copied.tags is not item.tags


# --- L4: assignments are validated, so an instance always satisfies its schema -------------------


def test_l4_bad_tags_assignment_raises_and_changes_nothing() -> None:
    """L4: item.tags = 5 raises list_type and tags keep their old value (the reference accepts it)."""
    item = MemoryItem(tags=["a"])
    with pytest.raises(ValidationError) as exc:
        item.tags = 5  # type: ignore[assignment]  # invalid assignment is under test
    assert only_error(exc) == (("tags",), "list_type", "Input should be a valid list")
    assert item.tags == ["a"]


def test_l4_int_tags_assignment_raises() -> None:
    """L4: item.tags = [1] raises string_type instead of storing an int tag."""
    item = MemoryItem(tags=["a"])
    with pytest.raises(ValidationError) as exc:
        item.tags = [1]  # type: ignore[list-item]  # invalid assignment is under test
    assert only_error(exc) == (("tags", 0), "string_type", "Input should be a valid string")
    assert item.tags == ["a"]


def test_l4_tags_assignment_is_coerced() -> None:
    """L4: a tuple assigned to tags is stored as a list, as at construction."""
    item = MemoryItem()
    item.tags = ("a", "b")  # type: ignore[assignment]  # coercion on assignment is under test
    assert item.tags == ["a", "b"]


def test_l4_bad_metadata_assignment_raises_and_changes_nothing() -> None:
    """L4: item.metadata = 'x' raises on ('metadata',) and metadata keeps its old value."""
    item = MemoryItem(metadata={"k": 1})
    with pytest.raises(ValidationError) as exc:
        item.metadata = "x"  # type: ignore[assignment]  # invalid assignment is under test
    loc, kind, _ = only_error(exc)
    assert (loc, kind) == (("metadata",), "value_error")
    assert item.metadata == {"k": 1}


def test_l4_metadata_assignment_is_coerced() -> None:
    """L4: a JSON-object string assigned to metadata is stored parsed, as at construction."""
    item = MemoryItem()
    item.metadata = '{"a": 1}'  # type: ignore[assignment]  # coercion on assignment is under test
    assert item.metadata == {"a": 1}


def test_l4_metadata_assignment_with_wrong_lion_class_raises() -> None:
    """L4: assigning metadata with a wrong lion_class raises the mismatch and changes nothing."""
    item = MemoryItem(metadata={"k": 1})
    with pytest.raises(ValidationError) as exc:
        item.metadata = {"lion_class": "bogus"}
    assert only_error(exc) == (
        ("metadata",),
        "value_error",
        "Value error, Metadata class mismatch.",
    )
    assert item.metadata == {"k": 1}


def test_l4_metadata_assignment_with_matching_lion_class_is_kept() -> None:
    """L4: assigning metadata whose lion_class names the class is accepted and kept."""
    item = MemoryItem()
    item.metadata = {"lion_class": "lionmem.MemoryItem"}
    assert item.metadata == {"lion_class": "lionmem.MemoryItem"}


def test_l4_metadata_assignment_with_non_string_key_raises() -> None:
    """L4: assigning metadata with a non-string key raises, as at construction."""
    item = MemoryItem()
    with pytest.raises(ValidationError, match="keys must be strings"):
        item.metadata = {1: "a"}  # type: ignore[dict-item]  # invalid assignment is under test
    assert item.metadata == {}


def test_l4_element_metadata_assignment_is_validated() -> None:
    """L4 holds on Element: a bad metadata assignment raises."""
    element = Element()
    with pytest.raises(ValidationError):
        element.metadata = [1]  # type: ignore[assignment]  # invalid assignment is under test
    assert element.metadata == {}


def test_l4_content_assignment_is_stored_by_reference() -> None:
    """L4 leaves content unvalidated: an assigned object is stored as is."""
    item = MemoryItem()
    marker = object()
    item.content = marker
    assert item.content is marker
