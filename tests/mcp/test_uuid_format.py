"""Ids in tool arguments: the canonical form only, the one docs/clients.md gives ajv.

Python's ``UUID()`` reads what ``int(..., 16)`` reads, digits of other scripts and underscores
included, so an id in another form would be taken for another item than the one written.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any
from uuid import UUID

import pytest

from lionmem import MemoryItem, MemoryQuery, SQLiteMemoryStore
from lionmem.mcp import MemoryTools
from tests.mcp.support import REPO, documents

ID = "0b9f3a52-6c1e-4c8a-9d55-2f1e7a3b4c5d"

NOT_CANONICAL = [
    "\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668-1234-1234-1234-123456789abc",
    "123_4567-1234-1234-1234-123456789abc",
    "\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18-1234-1234-1234-123456789abc",
    f"{ID}\n",
    f"{{{ID}}}",
    f"urn:uuid:{ID}",
    ID.replace("-", ""),
    " " + ID[1:],
    "+" + ID[1:],
    "0b9f3a526-c1e-4c8a-9d55-2f1e7a3b4c5d",
]

CANONICAL = [
    ID,
    ID.upper(),
    "00000000-0000-0000-0000-000000000000",
    "ABCDEF01-abcd-EF01-a2B3-c4d5e6f7a8b9",
]


def _uuid_arguments() -> list[tuple[str, str]]:
    """Each tool and argument whose input schema says ``format: uuid``."""
    found = []
    for name, document in documents().items():
        schema = document.input_schema
        fields = dict(schema.get("properties", {}))
        for part in schema.get("allOf", []):
            target = part["$ref"].removeprefix("#/$defs/")
            fields.update(schema["$defs"][target]["properties"])
        found += [(name, field) for field, value in fields.items() if value.get("format") == "uuid"]
    return found


UUID_ARGUMENTS = _uuid_arguments()


def test_the_uuid_arguments_are_the_ids_of_store_retrieve_and_delete() -> None:
    assert UUID_ARGUMENTS == [
        ("memory_store", "id"),
        ("memory_retrieve", "id"),
        ("memory_delete", "id"),
    ]


def _read_as(text: str) -> UUID | None:
    """The id Python's ``UUID()`` reads ``text`` as, if any."""
    try:
        return UUID(text)
    except ValueError:
        return None


@pytest.fixture
async def stored() -> AsyncIterator[tuple[MemoryTools, SQLiteMemoryStore]]:
    """Tools over a store holding an item under every id that a text of NOT_CANONICAL reads as."""
    store = SQLiteMemoryStore(":memory:")
    for item_id in {_read_as(text) for text in NOT_CANONICAL} - {None}:
        await store.store(MemoryItem(id=item_id, content="another item"))
    yield MemoryTools(store), store
    await store.close()


@pytest.mark.parametrize("text", NOT_CANONICAL)
@pytest.mark.parametrize(("tool", "field"), UUID_ARGUMENTS)
async def test_an_id_not_in_canonical_form_is_refused(
    stored: tuple[MemoryTools, SQLiteMemoryStore], tool: str, field: str, text: str
) -> None:
    """Every uuid argument refuses an id in another form; no item is read, written or deleted."""
    tools, store = stored
    before = await store.count()
    arguments: dict[str, Any] = {
        field: text,
        **({"content": "x"} if tool == "memory_store" else {}),
    }
    result = await tools.call(tool, arguments)
    assert (result.is_error, result.text) == (
        True,
        f"invalid arguments for {tool}: {field}: {text!r} is not a 'uuid'",
    )
    assert await store.count() == before
    assert {item.content for item in await store.search(MemoryQuery())} == {"another item"}


@pytest.mark.parametrize("text", CANONICAL)
async def test_ids_in_canonical_form_pass_in_either_case(text: str) -> None:
    """Lower and upper case hex digits both pass, and name the same item."""
    store = SQLiteMemoryStore(":memory:")
    try:
        tools = MemoryTools(store)
        stored = await tools.call("memory_store", {"id": text, "content": "x"})
        assert (stored.is_error, stored.structured) == (False, {"id": text.lower()})
        retrieved = await tools.call("memory_retrieve", {"id": text})
        assert retrieved.structured is not None
        assert retrieved.structured["item"]["id"] == text.lower()
        deleted = await tools.call("memory_delete", {"id": text.upper()})
        assert deleted.structured == {"deleted": True}
    finally:
        await store.close()


def test_the_form_checked_is_the_one_clients_md_gives_ajv() -> None:
    """docs/clients.md's pattern for ajv accepts exactly the ids the server accepts here."""
    page = (REPO / "docs" / "clients.md").read_text(encoding="utf-8")
    [pattern] = re.findall(r'ajv\.addFormat\("uuid", /\^(.*)\$/i\);', page)
    assert pattern == "[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}"
    for text in CANONICAL:
        assert re.fullmatch(pattern, text, flags=re.IGNORECASE | re.ASCII)
    for text in NOT_CANONICAL:
        assert not re.fullmatch(pattern, text, flags=re.IGNORECASE | re.ASCII)
