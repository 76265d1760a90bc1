"""The nesting bound on the wire: every answer holding an item is one the SDK's client parses.

The answers are read as raw lines from ``lionmem mcp`` over stdio and parsed as the SDK's stdio
client parses them (``jsonrpc_message_adapter.validate_json``, pydantic_core's JSON parser).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_types import JSONRPCResponse, jsonrpc_message_adapter

from lionmem import MemoryItem, SQLiteMemoryStore
from tests.mcp.support import RawServer, call_request


def _nested(levels: int) -> Any:
    """``levels`` lists around the number 1."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


def _answer(server: RawServer, request_id: int, name: str, arguments: dict[str, Any]) -> Any:
    """The result of a tool call, parsed from its line as the SDK's client parses it."""
    server.send(json.dumps(call_request(request_id, name, arguments)).encode())
    line = server.stdout.readline()
    parsed = jsonrpc_message_adapter.validate_json(line)
    assert isinstance(parsed, JSONRPCResponse)
    assert parsed.id == request_id
    return parsed.result


def test_the_deepest_item_stored_comes_back_in_answers_the_client_parses(tmp_path: Path) -> None:
    """An item 196 levels deep around a value is stored, found and retrieved; 197 is refused."""
    server = RawServer(tmp_path / "memory.db")
    try:
        deepest = _nested(195)  # 196 levels with the item
        stored = _answer(server, 2, "memory_store", {"content": deepest})
        assert stored["isError"] is False
        refused = _answer(server, 3, "memory_store", {"content": _nested(196)})
        assert refused["isError"] is True
        assert refused["content"][0]["text"] == (
            "the item nests 197 levels deep (arrays and objects, the item itself included); at "
            "most 196 can be sent back in a search result, which MCP clients read at most 200 "
            "levels deep"
        )
        found = _answer(server, 4, "memory_search", {})
        assert found["structuredContent"]["items"][0]["content"] == deepest
        assert found["structuredContent"]["omitted"] == []
        item_id = stored["structuredContent"]["id"]
        retrieved = _answer(server, 5, "memory_retrieve", {"id": item_id})
        assert retrieved["structuredContent"]["item"]["content"] == deepest
        assert server.finish()[0] == 0
    finally:
        server.kill()


async def test_retrieve_sends_an_item_stored_directly_up_to_its_own_bound(tmp_path: Path) -> None:
    """An item of 197 levels, too deep for a search, comes back from retrieve; 198 does not."""
    db = tmp_path / "memory.db"
    store = SQLiteMemoryStore(db)
    at_bound = MemoryItem(content=_nested(196), tags=["deep"])
    past_bound = MemoryItem(content=_nested(197), tags=["deep"])
    await store.store(at_bound)
    await store.store(past_bound)
    await store.close()
    server = RawServer(db)
    try:
        found = _answer(server, 2, "memory_search", {"tags": ["deep"]})
        assert found["structuredContent"]["items"] == []
        omitted = [entry["id"] for entry in found["structuredContent"]["omitted"]]
        assert omitted == [str(at_bound.id), str(past_bound.id)]
        retrieved = _answer(server, 3, "memory_retrieve", {"id": str(at_bound.id)})
        assert retrieved["structuredContent"]["item"]["content"] == _nested(196)
        refused = _answer(server, 4, "memory_retrieve", {"id": str(past_bound.id)})
        assert refused["content"][0]["text"] == (
            f"item {past_bound.id} nests 198 levels deep (arrays and objects, the item itself "
            "included); at most 197 can be sent back in a response, which MCP clients read at "
            "most 200 levels deep"
        )
        assert server.finish()[0] == 0
    finally:
        server.kill()
