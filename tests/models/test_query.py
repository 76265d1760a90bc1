"""MemoryQuery (SEMANTICS.md §3), with decisions L3 (unknown fields rejected) and L4 (assignment)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from lionmem import MemoryQuery
from tests.validation_support import only_error


def test_fields_in_declared_order() -> None:
    """MemoryQuery declares text, tags, filters, limit in that order."""
    assert list(MemoryQuery.model_fields) == ["text", "tags", "filters", "limit"]


def test_defaults() -> None:
    """MemoryQuery() has text, tags and filters None and limit 20."""
    query = MemoryQuery()
    assert (query.text, query.tags, query.filters, query.limit) == (None, None, None, 20)


def test_empty_values_are_kept() -> None:
    """'', [], {} and 0 are valid and stored as given, not turned into None or defaults."""
    query = MemoryQuery(text="", tags=[], filters={}, limit=0)
    assert (query.text, query.tags, query.filters, query.limit) == ("", [], {}, 0)


@pytest.mark.parametrize("limit", [-1, -(10**6), 10**30], ids=repr)
def test_limit_has_no_bounds(limit: int) -> None:
    """Negative and huge limits are accepted unchanged."""
    assert MemoryQuery(limit=limit).limit == limit


@pytest.mark.parametrize(
    ("value", "stored"),
    [("5", 5), (" 5 ", 5), ("5.0", 5), (5.0, 5), (True, 1)],
    ids=repr,
)
def test_limit_lax_coercion(value: object, stored: int) -> None:
    """limit coerces numeric strings, integral floats and bools to int."""
    limit = MemoryQuery(limit=value).limit
    assert limit == stored
    assert type(limit) is int


@pytest.mark.parametrize(
    ("value", "kind"),
    [(5.5, "int_from_float"), (None, "int_type"), ("five", "int_parsing"), ([5], "int_type")],
    ids=repr,
)
def test_limit_rejects_non_integers(value: object, kind: str) -> None:
    """A fractional float, None, a word or a list as limit raises on ('limit',)."""
    with pytest.raises(ValidationError) as exc:
        MemoryQuery(limit=value)
    loc, error_type, _ = only_error(exc)
    assert (loc, error_type) == (("limit",), kind)


def test_text_bytes_become_str() -> None:
    """text=b'ab' is stored as 'ab'."""
    assert MemoryQuery(text=b"ab").text == "ab"


def test_text_int_is_rejected() -> None:
    """text=5 raises: there is no int-to-str coercion."""
    with pytest.raises(ValidationError) as exc:
        MemoryQuery(text=5)
    assert only_error(exc) == (("text",), "string_type", "Input should be a valid string")


def test_tags_follow_the_memory_item_rules() -> None:
    """tags reject ints, as MemoryItem.tags does."""
    with pytest.raises(ValidationError) as exc:
        MemoryQuery(tags=[1])
    assert only_error(exc) == (("tags", 0), "string_type", "Input should be a valid string")


def test_tags_str_is_not_a_list() -> None:
    """tags='abc' raises list_type instead of becoming a list of characters."""
    with pytest.raises(ValidationError) as exc:
        MemoryQuery(tags="abc")
    assert only_error(exc) == (("tags",), "list_type", "Input should be a valid list")


def test_tags_tuple_becomes_a_list() -> None:
    """A tuple of tags is stored as a list."""
    assert MemoryQuery(tags=("a", "b")).tags == ["a", "b"]


def test_filters_need_string_keys() -> None:
    """filters={1: 'a'} raises string_type on the key."""
    with pytest.raises(ValidationError) as exc:
        MemoryQuery(filters={1: "a"})
    assert only_error(exc) == (
        ("filters", 1, "[key]"),
        "string_type",
        "Input should be a valid string",
    )


def test_filters_json_string_is_not_parsed() -> None:
    """A JSON-object string as filters raises dict_type: there is no JSON-string coercion."""
    with pytest.raises(ValidationError) as exc:
        MemoryQuery(filters='{"a": 1}')
    assert only_error(exc) == (("filters",), "dict_type", "Input should be a valid dictionary")


def test_filters_dict_is_copied() -> None:
    """The stored filters dict is a copy of the input dict."""
    given: dict[str, Any] = {"k": 1}
    query = MemoryQuery(filters=given)
    given["j"] = 2
    assert query.filters == {"k": 1}


def test_equality_is_by_value() -> None:
    """Two queries with the same fields are equal; a different field makes them unequal."""
    assert MemoryQuery(text="a", limit=3) == MemoryQuery(text="a", limit=3)
    assert MemoryQuery(text="a") != MemoryQuery(text="b")


def test_query_is_unhashable() -> None:
    """hash(MemoryQuery()) raises TypeError."""
    with pytest.raises(TypeError, match="unhashable"):
        hash(MemoryQuery())


def test_model_dump_json_of_the_documented_example() -> None:
    """model_dump_json() of §3's example is exactly the documented compact string."""
    query = MemoryQuery(text="a", tags=["t"], filters={"k": None}, limit=-1)
    assert query.model_dump_json() == '{"text":"a","tags":["t"],"filters":{"k":null},"limit":-1}'


def test_round_trip_through_json() -> None:
    """model_validate_json(model_dump_json()) rebuilds an equal query."""
    query = MemoryQuery(text="a", tags=["t"], filters={"k": None}, limit=-1)
    assert MemoryQuery.model_validate_json(query.model_dump_json()) == query


def test_query_has_no_scope_field() -> None:
    """There is no implicit branch or scope field to set."""
    with pytest.raises(ValidationError):
        MemoryQuery(branch="b")  # type: ignore[call-arg]  # the missing field is under test


# --- L3: unknown fields are rejected (the reference ignores them, so a typo searches everything) --


def test_l3_unknown_field_is_extra_forbidden() -> None:
    """L3: MemoryQuery(tag=['x']) raises extra_forbidden on ('tag',) instead of matching everything."""
    with pytest.raises(ValidationError) as exc:
        MemoryQuery(tag=["x"])  # type: ignore[call-arg]  # the typo is under test
    assert only_error(exc) == (("tag",), "extra_forbidden", "Extra inputs are not permitted")


def test_l3_model_validate_rejects_unknown_keys() -> None:
    """L3: model_validate rejects an unknown key as the constructor does."""
    with pytest.raises(ValidationError) as exc:
        MemoryQuery.model_validate({"text": "a", "foo": 1})
    assert only_error(exc) == (("foo",), "extra_forbidden", "Extra inputs are not permitted")


# --- L4: assignments are validated ---------------------------------------------------------------


def test_l4_bad_limit_assignment_raises_and_changes_nothing() -> None:
    """L4: query.limit = 'x' raises int_parsing and limit keeps its old value."""
    query = MemoryQuery(limit=3)
    with pytest.raises(ValidationError) as exc:
        query.limit = "x"  # type: ignore[assignment]  # invalid assignment is under test
    loc, kind, _ = only_error(exc)
    assert (loc, kind) == (("limit",), "int_parsing")
    assert query.limit == 3


def test_l4_limit_assignment_is_coerced() -> None:
    """L4: query.limit = '5' stores the int 5, as at construction."""
    query = MemoryQuery()
    query.limit = "5"  # type: ignore[assignment]  # coercion on assignment is under test
    assert query.limit == 5


def test_l4_bad_tags_assignment_raises_and_changes_nothing() -> None:
    """L4: query.tags = 'abc' raises and tags keep their old value."""
    query = MemoryQuery(tags=["a"])
    with pytest.raises(ValidationError):
        query.tags = "abc"  # type: ignore[assignment]  # invalid assignment is under test
    assert query.tags == ["a"]


def test_l4_bad_filters_assignment_raises_and_changes_nothing() -> None:
    """L4: query.filters = {1: 'a'} raises and filters keep their old value."""
    query = MemoryQuery(filters={"k": 1})
    with pytest.raises(ValidationError):
        query.filters = {1: "a"}  # type: ignore[dict-item]  # invalid assignment is under test
    assert query.filters == {"k": 1}


def test_l4_bad_text_assignment_raises_and_changes_nothing() -> None:
    """L4: query.text = 5 raises and text keeps its old value."""
    query = MemoryQuery(text="a")
    with pytest.raises(ValidationError):
        query.text = 5  # type: ignore[assignment]  # invalid assignment is under test
    assert query.text == "a"


def test_l4_unknown_attribute_assignment_raises() -> None:
    """L4: assigning an undeclared attribute raises a ValueError naming it and sets nothing."""
    query = MemoryQuery()
    with pytest.raises(ValueError, match="tag"):
        query.tag = ["x"]  # type: ignore[attr-defined]  # the typo is under test
    assert not hasattr(query, "tag")
