"""What JSON cannot carry: a lone surrogate in a string, and content that is not a JSON value.

docs/SEMANTICS.md (§10.3) documents these; the models hold such values, the JSON methods refuse
them with pydantic's own errors.
"""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from lionmem import MemoryItem
from tests.schema_support import validator

LONE = "a\ud800b"


def test_a_lone_surrogate_is_held_and_dumped_to_python() -> None:
    item = MemoryItem(content=LONE, tags=[LONE])
    assert item.content == LONE
    assert item.model_dump()["tags"] == [LONE]
    assert item.model_dump(mode="json")["content"] == LONE


def test_a_lone_surrogate_cannot_be_dumped_to_json() -> None:
    with pytest.raises(PydanticSerializationError, match="surrogates not allowed"):
        MemoryItem(content=LONE).model_dump_json()


def test_a_lone_surrogate_escape_is_invalid_json_for_model_validate_json() -> None:
    text = json.dumps({"content": LONE})
    assert text == '{"content": "a\\ud800b"}'
    with pytest.raises(ValidationError) as exc:
        MemoryItem.model_validate_json(text)
    (error,) = exc.value.errors()
    assert (error["type"], error["loc"]) == ("json_invalid", ())


def test_a_lone_surrogate_is_read_through_json_loads() -> None:
    assert MemoryItem.model_validate(json.loads(json.dumps({"content": LONE}))).content == LONE


def test_content_that_is_not_a_json_value_cannot_be_dumped_to_json() -> None:
    item = MemoryItem(content=object())
    with pytest.raises(PydanticSerializationError, match="Unable to serialize unknown type"):
        item.model_dump_json()


def test_the_schema_accepts_a_lone_surrogate_as_the_model_does() -> None:
    document = {"content": LONE, "tags": [LONE], "metadata": {LONE: LONE}}
    assert list(validator("memory_item").iter_errors(document)) == []
    assert MemoryItem.model_validate(document).metadata == {LONE: LONE}
