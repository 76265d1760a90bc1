"""Element and MemoryItem identity: defaults, constructor shape, ``id``, extra fields, eq/hash/bool."""

from __future__ import annotations

import time
from typing import Any
from uuid import UUID, uuid1, uuid4

import pytest
from pydantic import ValidationError

from lionmem import Element, MemoryItem
from tests.validation_support import only_error

CANONICAL = "12345678-1234-5678-1234-567812345678"
SAMPLE_ID = UUID(CANONICAL)


class Note(MemoryItem):
    """A user subclass, as applications define them."""


# --- defaults (§2.1) -----------------------------------------------------------------------------


def test_memory_item_fields_in_declared_order() -> None:
    """MemoryItem declares id, created_at, metadata, content, tags in that order."""
    assert list(MemoryItem.model_fields) == ["id", "created_at", "metadata", "content", "tags"]


def test_element_fields_in_declared_order() -> None:
    """Element declares id, created_at, metadata in that order."""
    assert list(Element.model_fields) == ["id", "created_at", "metadata"]


def test_memory_item_without_arguments_gets_empty_defaults() -> None:
    """MemoryItem() is valid with content None, tags [] and metadata {}."""
    item = MemoryItem()
    assert (item.content, item.tags, item.metadata) == (None, [], {})


def test_default_id_is_a_uuid4() -> None:
    """The default id is a random version-4 UUID."""
    assert isinstance(MemoryItem().id, UUID)
    assert MemoryItem().id.version == 4


def test_default_ids_differ() -> None:
    """Two items built without an id get different ids."""
    assert MemoryItem().id != MemoryItem().id


def test_default_created_at_is_the_current_time_as_float() -> None:
    """The default created_at is a float holding the current POSIX time."""
    before = time.time()
    created_at = MemoryItem().created_at
    after = time.time()
    assert type(created_at) is float
    assert before <= created_at <= after


def test_default_tags_list_is_fresh_per_instance() -> None:
    """Every instance gets its own tags list."""
    first, second = MemoryItem(), MemoryItem()
    first.tags.append("x")
    assert second.tags == []


def test_default_metadata_dict_is_fresh_per_instance() -> None:
    """Every instance gets its own metadata dict."""
    first, second = MemoryItem(), MemoryItem()
    first.metadata["k"] = 1
    assert second.metadata == {}


def test_positional_argument_raises_type_error() -> None:
    """Arguments are keyword-only: a positional one raises TypeError."""
    build: Any = MemoryItem  # typed loosely: the call shape itself is under test
    with pytest.raises(TypeError):
        build("content")


def test_element_positional_argument_raises_type_error() -> None:
    """Element also rejects positional arguments with TypeError."""
    build: Any = Element  # typed loosely: the call shape itself is under test
    with pytest.raises(TypeError):
        build(SAMPLE_ID)


# --- id (§2.2) -----------------------------------------------------------------------------------


def test_id_accepts_a_uuid_instance() -> None:
    """A UUID instance is stored as that UUID."""
    assert MemoryItem(id=SAMPLE_ID).id == SAMPLE_ID


@pytest.mark.parametrize(
    "text",
    [
        CANONICAL,
        CANONICAL.upper(),
        CANONICAL.replace("-", ""),
        "{" + CANONICAL + "}",
        "urn:uuid:" + CANONICAL,
    ],
    ids=["canonical", "upper", "32-hex", "braces", "urn"],
)
def test_id_accepts_every_string_form_uuid_parses(text: str) -> None:
    """Every string form uuid.UUID() parses gives that UUID."""
    item = MemoryItem(id=text)
    assert item.id == SAMPLE_ID
    assert isinstance(item.id, UUID)


def test_id_keeps_a_non_v4_version() -> None:
    """A uuid1 id is kept as version 1, not rejected or rewritten."""
    given = uuid1()
    item = MemoryItem(id=given)
    assert item.id == given
    assert item.id.version == 1


@pytest.mark.parametrize(
    "value",
    ["not-a-uuid", "", 123, None, b"12345678123456781234567812345678", 1.5],
    ids=["garbage", "empty", "int", "none", "bytes", "float"],
)
def test_invalid_id_error_is_badly_formed_hexadecimal(value: object) -> None:
    """A value whose str() is no UUID raises value_error on ('id',) with uuid's own message."""
    with pytest.raises(ValidationError) as exc:
        MemoryItem(id=value)
    assert only_error(exc) == (
        ("id",),
        "value_error",
        "Value error, badly formed hexadecimal UUID string",
    )


def test_element_invalid_id_has_the_same_error() -> None:
    """Element reports an invalid id exactly as MemoryItem does."""
    with pytest.raises(ValidationError) as exc:
        Element(id="not-a-uuid")
    assert only_error(exc) == (
        ("id",),
        "value_error",
        "Value error, badly formed hexadecimal UUID string",
    )


def test_id_is_frozen_even_for_the_same_value() -> None:
    """Assigning id, even its own value, raises frozen_field on ('id',)."""
    item = MemoryItem(id=SAMPLE_ID)
    with pytest.raises(ValidationError) as exc:
        item.id = SAMPLE_ID
    assert only_error(exc) == (("id",), "frozen_field", "Field is frozen")


def test_id_is_frozen_for_a_new_value() -> None:
    """Assigning a different id raises and keeps the old one."""
    item = MemoryItem(id=SAMPLE_ID)
    with pytest.raises(ValidationError):
        item.id = uuid4()
    assert item.id == SAMPLE_ID


def test_id_is_dumped_as_str_in_python_mode() -> None:
    """model_dump() writes id as its canonical str, not a UUID."""
    assert MemoryItem(id=SAMPLE_ID).model_dump()["id"] == CANONICAL


def test_id_is_dumped_as_str_in_json_mode() -> None:
    """model_dump(mode='json') writes id as its canonical str."""
    assert MemoryItem(id=SAMPLE_ID).model_dump(mode="json")["id"] == CANONICAL


def test_element_id_is_dumped_as_str() -> None:
    """Element.model_dump() writes id as a str too."""
    assert Element(id=SAMPLE_ID).model_dump()["id"] == CANONICAL


# --- extra fields (§2.6) -------------------------------------------------------------------------


def test_memory_item_unknown_kwarg_is_extra_forbidden() -> None:
    """An unknown constructor keyword raises extra_forbidden on its own loc."""
    with pytest.raises(ValidationError) as exc:
        MemoryItem(foo=1)  # type: ignore[call-arg]  # the unknown keyword is under test
    assert only_error(exc) == (("foo",), "extra_forbidden", "Extra inputs are not permitted")


def test_element_unknown_kwarg_is_extra_forbidden() -> None:
    """Element forbids unknown constructor keywords too."""
    with pytest.raises(ValidationError) as exc:
        Element(content="x")  # type: ignore[call-arg]  # the unknown keyword is under test
    assert only_error(exc) == (("content",), "extra_forbidden", "Extra inputs are not permitted")


def test_model_validate_rejects_unknown_keys() -> None:
    """model_validate forbids unknown keys as the constructor does."""
    with pytest.raises(ValidationError) as exc:
        MemoryItem.model_validate({"foo": 1})
    assert only_error(exc) == (("foo",), "extra_forbidden", "Extra inputs are not permitted")


def test_assigning_an_unknown_attribute_raises_value_error() -> None:
    """Setting an undeclared attribute raises a ValueError naming it and sets nothing."""
    item = MemoryItem()
    with pytest.raises(ValueError, match="foo"):
        item.foo = 1  # type: ignore[attr-defined]  # the unknown attribute is under test
    assert not hasattr(item, "foo")


# --- equality, hashing, truthiness (§2.8) --------------------------------------------------------


def test_items_with_the_same_id_are_equal_whatever_their_fields() -> None:
    """Equality compares id only, not content, tags, metadata or created_at."""
    first = MemoryItem(id=SAMPLE_ID, content="a", tags=["x"], metadata={"k": 1}, created_at=1.0)
    second = MemoryItem(id=SAMPLE_ID, content="b", created_at=2.0)
    assert first == second


def test_items_with_different_ids_are_not_equal() -> None:
    """Items with equal fields but different ids are not equal."""
    assert MemoryItem(content="a", created_at=1.0) != MemoryItem(content="a", created_at=1.0)


def test_item_equals_a_plain_element_with_the_same_id() -> None:
    """A MemoryItem and an Element with the same id compare equal both ways."""
    item, element = MemoryItem(id=SAMPLE_ID), Element(id=SAMPLE_ID)
    assert item == element
    assert element == item


def test_item_equals_a_subclass_instance_with_the_same_id() -> None:
    """A MemoryItem and a subclass instance with the same id compare equal."""
    assert MemoryItem(id=SAMPLE_ID) == Note(id=SAMPLE_ID)


def test_eq_against_a_non_element_is_not_implemented() -> None:
    """__eq__ returns NotImplemented for its own UUID and its str."""
    item = MemoryItem(id=SAMPLE_ID)
    assert item.__eq__(SAMPLE_ID) is NotImplemented
    assert item.__eq__(CANONICAL) is NotImplemented


def test_item_is_not_equal_to_its_own_id() -> None:
    """item == item.id and item == str(item.id) are False."""
    item = MemoryItem(id=SAMPLE_ID)
    assert (item == SAMPLE_ID) is False
    assert (item == CANONICAL) is False


def test_hash_is_the_hash_of_the_id() -> None:
    """hash(item) equals hash(item.id)."""
    item = MemoryItem(id=SAMPLE_ID, content={"unhashable": []})
    assert hash(item) == hash(SAMPLE_ID)


def test_set_keeps_one_of_two_items_with_the_same_id() -> None:
    """A set of two items with the same id has one member."""
    assert len({MemoryItem(id=SAMPLE_ID, content=1), MemoryItem(id=SAMPLE_ID, content=2)}) == 1


def test_element_hash_is_the_hash_of_the_id() -> None:
    """hash(Element) equals hash of its id, so Element and MemoryItem share set slots."""
    assert len({Element(id=SAMPLE_ID), MemoryItem(id=SAMPLE_ID)}) == 1


@pytest.mark.parametrize(
    "item",
    [MemoryItem(), MemoryItem(content=0, tags=[], metadata={}), Element()],
    ids=["default", "falsy-fields", "element"],
)
def test_element_is_always_truthy(item: Element) -> None:
    """bool() of any element is True, whatever its fields hold."""
    assert bool(item) is True
