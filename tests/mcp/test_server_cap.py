"""The smallest response cap of a server: its answer to tools/list, every tool listed.

The tools keep every result to the cap; the server's other answers are its own, of a size
known in advance, the largest being the list of tools with their schemas.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from pydantic_core import to_json

from lionmem import InMemoryStore
from lionmem.mcp import MemoryTools, create_server
from lionmem.mcp._bounds import (
    ENVELOPE,
    OMITTED_ENTRY,
    SEARCH_FRAME,
    check_server_limits,
    min_response_bytes,
)
from lionmem.mcp._documents import tool_documents
from tests.mcp.support import REPO, RawServer, http_server, initialize_request

SMALLEST = min_response_bytes()


def _too_small(max_bytes: int) -> str:
    return (
        f"^a response cap of {max_bytes} bytes is too small: it must be at least {SMALLEST}, or "
        r"the server's answer to tools/list \(its tools and their schemas\) does not fit$"
    )


def test_the_smallest_cap_is_the_tool_list_in_its_envelope() -> None:
    """The cap docs/mcp.md gives is the tool documents as JSON, in the envelope."""
    tools = [document.tool for document in tool_documents()]
    assert ENVELOPE + len(to_json({"tools": tools})) == SMALLEST
    assert len(tools) == 5
    page = (REPO / "docs" / "mcp.md").read_text(encoding="utf-8")
    assert f"refuses to start with a cap under {SMALLEST:,} bytes, its answer" in page


@pytest.mark.parametrize("max_bytes", [2824, SMALLEST - 1])
def test_create_server_refuses_a_cap_under_the_tool_list(max_bytes: int) -> None:
    """Even with a limit whose omitted entries would fit, the list of tools must fit."""
    with pytest.raises(ValueError, match=_too_small(max_bytes)):
        create_server(InMemoryStore(), max_limit=10, max_bytes=max_bytes)
    create_server(InMemoryStore(), max_limit=10, max_bytes=SMALLEST)


def test_the_refusal_names_the_larger_need() -> None:
    """Where a full search needs more than the list of tools, that is the need named."""
    max_limit = (SMALLEST - ENVELOPE - SEARCH_FRAME) // OMITTED_ENTRY + 1
    needed = ENVELOPE + SEARCH_FRAME + OMITTED_ENTRY * max_limit
    assert needed > SMALLEST
    with pytest.raises(
        ValueError,
        match=(
            f"^a response cap of 100 bytes is too small for a maximum search limit of "
            f"{max_limit}: at least {needed} bytes are needed"
        ),
    ):
        check_server_limits(max_limit, 100)
    with pytest.raises(ValueError, match=r"^the maximum search limit must be 0 or more, got -1$"):
        check_server_limits(-1, 100)
    check_server_limits(max_limit, needed)


def test_memory_tools_alone_take_a_smaller_cap() -> None:
    """MemoryTools answer tool calls only, and take any cap that lists a full search's hits."""
    tools = MemoryTools(InMemoryStore(), max_limit=10, max_bytes=2824)
    assert tools.max_bytes == 2824


def test_at_the_smallest_cap_the_fixed_answers_fit_on_the_wire(tmp_path: Path) -> None:
    """Over stdio at --max-bytes SMALLEST, initialize and tools/list answer within the cap;
    the bound is tight: the tools/list line is within the envelope of it."""
    server = RawServer(
        tmp_path / "memory.db", "--max-limit", "0", "--max-bytes", str(SMALLEST), initialize=False
    )
    try:
        server.send(json.dumps(initialize_request(1)).encode())
        initialize = server.stdout.readline()
        assert json.loads(initialize)["result"]["serverInfo"]["name"] == "lionmem"
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        server.send(b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}')
        listing = server.stdout.readline()
        assert len(json.loads(listing)["result"]["tools"]) == 5
        assert 400 < len(initialize.rstrip(b"\n")) < 700  # "some 500 bytes", as the page says
        assert SMALLEST - ENVELOPE < len(listing.rstrip(b"\n")) <= SMALLEST
        status, _, _ = server.finish()
        assert status == 0
    finally:
        server.kill()


UNKNOWN_METHOD = "\x01" * 500_000
"""A method no server has, of 500,000 characters, each written in six bytes of JSON."""


def _method_not_found(request_id: int) -> dict[str, Any]:
    """The answer to a request of ``UNKNOWN_METHOD``: the method named cut, as a tool is."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": -32601,
            "message": "Method not found",
            "data": "\x01" * 300 + "… (500000 characters in all)",
        },
    }


def test_an_unknown_method_of_megabytes_is_named_cut_over_stdio(tmp_path: Path) -> None:
    server = RawServer(tmp_path / "memory.db", "--max-limit", "0", "--max-bytes", str(SMALLEST))
    try:
        server.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": UNKNOWN_METHOD}).encode())
        answer = server.stdout.readline()
        assert json.loads(answer) == _method_not_found(2)
        assert len(answer.rstrip(b"\n")) <= SMALLEST
        server.send(b'{"jsonrpc":"2.0","id":3,"method":"ping"}')
        assert server.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        status, _, _ = server.finish()
        assert status == 0
    finally:
        server.kill()


def test_an_unknown_method_of_megabytes_is_named_cut_over_http(tmp_path: Path) -> None:
    arguments = ("--max-limit", "0", "--max-bytes", str(SMALLEST))
    with http_server(tmp_path / "memory.db", *arguments) as (url, _), httpx2.Client() as http:
        accept = {"Accept": "application/json, text/event-stream"}
        opened = http.post(url, json=initialize_request(1), headers=accept, timeout=30)
        session = {**accept, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        request = {"jsonrpc": "2.0", "id": 2, "method": UNKNOWN_METHOD}
        response = http.post(url, json=request, headers=session, timeout=60)
        assert response.json() == _method_not_found(2)
        assert len(response.content) <= SMALLEST
