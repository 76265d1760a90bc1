"""Items a program stored directly that JSON cannot carry unchanged: left out, never sent changed.

``memory_store`` takes JSON only, but a program embedding the tools may have stored an item
directly in an ``InMemoryStore``: a search lists such an item in ``omitted`` (``bytes`` null)
and goes on with the others, and ``memory_retrieve`` of it is an error naming the problem.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from typing import Any
from uuid import UUID

import pytest
from mcp import Client

from lionmem import InMemoryStore, MemoryItem, MemoryQuery
from lionmem.mcp import MemoryTools, create_server
from lionmem.mcp._bounds import result_size
from tests.mcp.support import structured


def _circular() -> list[Any]:
    """A list that holds itself."""
    value: list[Any] = []
    value.append(value)
    return value


def _nested(depth: int) -> list[Any]:
    """Lists ``depth`` deep, past what the serializer writes."""
    value: list[Any] = []
    for _ in range(depth - 1):
        value = [value]
    return value


class Shade(Enum):
    """An enum whose values JSON would carry, but not the enum."""

    DARK = 1


GOOD = MemoryItem(id=UUID(int=1), created_at=1.0, content="good", tags=["t"])

# Each content, and the problem memory_retrieve names for it.
UNSENDABLE: list[tuple[Any, str]] = [
    (
        "lone \ud800",
        "Error serializing to JSON: UnicodeEncodeError: 'utf-8' codec can't encode character "
        "'\\ud800' in position 5: surrogates not allowed",
    ),
    (object(), "Unable to serialize unknown type: <class 'object'>"),
    (b"\xff", "'utf-8' codec can't decode byte 0xff in position 0: invalid utf-8"),
    (
        {"\udc00": 1},
        "'utf-8' codec can't encode character '\\udc00' in position 0: surrogates not allowed",
    ),
    (float("inf"), "content: inf is not a JSON number (JSON has no NaN or Infinity)"),
    (
        {"a b": [1, (2.5, float("nan"))]},
        "content['a b'][1][1]: nan is not a JSON number (JSON has no NaN or Infinity)",
    ),
    ({-float("inf")}, "content[0]: -inf is not a JSON number (JSON has no NaN or Infinity)"),
    (_circular(), "Circular reference detected (id repeated)"),
    (_nested(300), "Maximum serialization depth exceeded"),
    (
        {1: "int key", "1": "str key"},
        "content: the key 1 is not a string (JSON would give it back as one)",
    ),
    (
        {"ok": {None: 0}},
        "content.ok: the key None is not a string (JSON would give it back as one)",
    ),
    (
        {"when": datetime(2020, 1, 1, tzinfo=UTC)},
        "content.when: JSON has no datetime (it would come back as another type)",
    ),
    (Decimal("1.10"), "content: JSON has no Decimal (it would come back as another type)"),
    (UUID(int=7), "content: JSON has no UUID (it would come back as another type)"),
    (b"abc", "content: JSON has no bytes (it would come back as another type)"),
    ([1, Fraction(1, 3)], "content[1]: JSON has no Fraction (it would come back as another type)"),
    (Shade.DARK, "content: JSON has no Shade (it would come back as another type)"),
]


def _bad(index: int, content: Any) -> MemoryItem:
    return MemoryItem(id=UUID(int=index + 2), created_at=2.0, content=content)


async def _store_all() -> InMemoryStore:
    """A store holding GOOD, then every unsendable item, then GOOD's twin, in that order."""
    store = InMemoryStore()
    await store.store(GOOD)
    for index, (content, _) in enumerate(UNSENDABLE):
        await store.store(_bad(index, content))
    await store.store(GOOD.model_copy(update={"id": UUID(int=99)}))
    return store


async def test_a_search_leaves_unsendable_hits_out_and_lists_them() -> None:
    """The good hits come back; each unsendable one is in omitted, in order, with bytes null."""
    tools = MemoryTools(await _store_all())
    result = await tools.call("memory_search", {})
    assert result.is_error is False, result.text
    assert result.structured == {
        "items": [
            GOOD.model_dump(mode="json"),
            {**GOOD.model_dump(mode="json"), "id": str(UUID(int=99))},
        ],
        "limit": 20,
        "omitted": [
            {"id": str(UUID(int=index + 2)), "bytes": None} for index in range(len(UNSENDABLE))
        ],
    }
    assert result_size(result.structured) <= tools.max_bytes


@pytest.mark.parametrize(("index", "problem"), [(i, p) for i, (_, p) in enumerate(UNSENDABLE)])
async def test_retrieve_of_an_unsendable_item_names_the_problem(index: int, problem: str) -> None:
    """memory_retrieve answers an error saying why, never the item changed (NaN as null)."""
    tools = MemoryTools(await _store_all())
    result = await tools.call("memory_retrieve", {"id": str(UUID(int=index + 2))})
    assert (result.is_error, result.text) == (
        True,
        f"item {UUID(int=index + 2)} cannot be sent as JSON unchanged: {problem}",
    )
    assert result.text.encode()  # the error itself can be sent


async def test_an_sdk_client_reads_the_search_and_its_output_schema_holds() -> None:
    """Through the SDK's client, which checks every result against the tool's output schema."""
    store = await _store_all()
    async with Client(create_server(store)) as client:
        found = structured(await client.call_tool("memory_search", {"limit": 3}))
        retrieved = await client.call_tool("memory_retrieve", {"id": str(UUID(int=2))})
    assert [hit["id"] for hit in found["items"]] == [str(UUID(int=1))]
    assert found["omitted"] == [
        {"id": str(UUID(int=2)), "bytes": None},
        {"id": str(UUID(int=3)), "bytes": None},
    ]
    assert retrieved.is_error is True


SURROGATE = (
    "Error serializing to JSON: UnicodeEncodeError: 'utf-8' codec can't encode character "
    "'\\ud800' in position 1: surrogates not allowed"
)


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"content": "a\ud800b"}, SURROGATE),
        ({"content": "x", "tags": ["a\ud800"]}, SURROGATE),
        ({"content": "x", "metadata": {"k": "a\ud800"}}, SURROGATE),
        ({"content": object()}, "Unable to serialize unknown type: <class 'object'>"),
    ],
)
async def test_memory_store_in_process_refuses_what_json_cannot_carry(
    arguments: dict[str, Any], problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A caller in process may pass values no JSON request holds: refused, named, not logged."""
    store = InMemoryStore()
    result = await MemoryTools(store).call("memory_store", arguments)
    assert (result.is_error, result.text) == (
        True,
        f"invalid arguments for memory_store: {problem}",
    )
    assert await store.search(MemoryQuery()) == []
    assert caplog.records == []


async def test_an_item_stored_directly_with_a_tag_json_cannot_carry_is_left_out() -> None:
    store = InMemoryStore()
    await store.store(GOOD)
    bad = MemoryItem(id=UUID(int=2), created_at=2.0, content="bad", tags=["a\ud800"])
    await store.store(bad)
    tools = MemoryTools(store)
    found = await tools.call("memory_search", {})
    assert found.structured == {
        "items": [GOOD.model_dump(mode="json")],
        "limit": 20,
        "omitted": [{"id": str(bad.id), "bytes": None}],
    }
    retrieved = await tools.call("memory_retrieve", {"id": str(bad.id)})
    assert retrieved.text == f"item {bad.id} cannot be sent as JSON unchanged: {SURROGATE}"
