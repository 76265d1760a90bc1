"""``lionmem mcp`` over stdio, driven by the ``mcp`` SDK's own Python client.

Each test starts ``python -m lionmem mcp --db FILE`` as a subprocess. The client runs in both
of its connection modes: ``auto`` (the 2026-07-28 protocol, per-request envelopes) and
``legacy`` (the initialize handshake most clients still use).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from lionmem import SQLiteMemoryStore, __version__
from lionmem.mcp import DEFAULT_MAX_BYTES, DEFAULT_MAX_LIMIT, DEFAULT_MAX_REQUEST_BYTES
from tests.mcp.support import documents, error_text, stdio_parameters, structured

ITEM: dict[str, Any] = {
    "id": "6f1c2a9e-3b7d-4e21-8a4f-0c5d9e8b7a61",
    "created_at": 1712345678.5,
    "metadata": {"source": "meeting", "priority": 2, "done": False},
    "content": "Ship the schema docs before the Friday review; ünïcode ☃",
    "tags": ["docs", "review"],
}


@pytest.fixture(params=["auto", "legacy"])
def mode(request: pytest.FixtureRequest) -> str:
    """The client's connection mode (a fixture, so that each test runs in both)."""
    value: str = request.param
    return value


def connect(tmp_path: Path, mode: str) -> Client:
    """A client of a fresh server on ``tmp_path/memory.db`` (enter it with ``async with``)."""
    return Client(stdio_parameters(tmp_path / "memory.db"), mode=mode)


async def test_lists_the_generated_tools(mode: str, tmp_path: Path) -> None:
    """The server lists the five tools with the generated documents as their definitions."""
    async with connect(tmp_path, mode) as client:
        listing = await client.list_tools()
        expected = documents()
        assert [tool.name for tool in listing.tools] == list(expected)
        for tool in listing.tools:
            wire = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
            assert wire == expected[tool.name].tool


async def test_server_identifies_itself(mode: str, tmp_path: Path) -> None:
    """The server speaks the era the client chose and reports its name, version and instructions."""
    async with connect(tmp_path, mode) as client:
        assert client.protocol_version == {"auto": "2026-07-28", "legacy": "2025-11-25"}[mode]
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.version) == ("lionmem", __version__)
        assert client.instructions is not None
        assert "memory_search" in client.instructions


async def test_round_trip_every_field_exact(mode: str, tmp_path: Path) -> None:
    """What memory_store takes, memory_retrieve and memory_search give back, and the file holds."""
    async with connect(tmp_path, mode) as client:
        await client.list_tools()  # the client validates structured results against listed schemas
        assert structured(await client.call_tool("memory_store", ITEM)) == {"id": ITEM["id"]}
        assert structured(await client.call_tool("memory_retrieve", {"id": ITEM["id"]})) == {
            "item": ITEM
        }
        for query in (
            {"text": "FRIDAY review"},
            {"tags": ["review"]},
            {"filters": {"priority": 2}},
        ):
            assert structured(await client.call_tool("memory_search", query)) == {
                "items": [ITEM],
                "limit": 20,
                "omitted": [],
            }
        assert (
            structured(await client.call_tool("memory_search", {"text": "absent"}))["items"] == []
        )
        async with SQLiteMemoryStore(tmp_path / "memory.db") as store:
            stored = await store.retrieve(ITEM["id"])
        assert stored is not None
        assert stored.model_dump(mode="json") == ITEM


async def test_errors_are_tool_errors_and_the_server_lives_on(mode: str, tmp_path: Path) -> None:
    """Bad arguments come back with isError and a message; the next call still works."""
    async with connect(tmp_path, mode) as client:
        text = error_text(await client.call_tool("memory_store", {"content": 1, "tags": "one"}))
        assert text == "invalid arguments for memory_store: tags: 'one' is not of type 'array'"
        text = error_text(await client.call_tool("memory_search", {"limit": -5}))
        assert text == "limit must be 0 or more, got -5 (this server does not count from the end)"
        text = error_text(await client.call_tool("memory_delete", {"id": "x"}))
        assert text == "invalid arguments for memory_delete: id: 'x' is not a 'uuid'"
        assert structured(await client.call_tool("memory_count", {})) == {"count": 0}


async def test_an_unknown_tool_is_a_protocol_error(mode: str, tmp_path: Path) -> None:
    """Calling a tool the server does not list is JSON-RPC error -32602 naming the tools."""
    async with connect(tmp_path, mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("memory_forget", {})
        assert raised.value.code == types.INVALID_PARAMS
        assert raised.value.message.startswith("unknown tool 'memory_forget'; this server has")


async def test_concurrent_calls_on_one_connection(mode: str, tmp_path: Path) -> None:
    """Fifty stores in flight at once on one session are all acknowledged and all present."""
    async with connect(tmp_path, mode) as client:
        ids: list[str] = []

        async def store(index: int) -> None:
            result = await client.call_tool("memory_store", {"content": index, "tags": ["batch"]})
            ids.append(structured(result)["id"])

        async with anyio.create_task_group() as group:
            for index in range(50):
                group.start_soon(store, index)
        assert len(set(ids)) == 50
        assert structured(await client.call_tool("memory_count", {})) == {"count": 50}
        result = structured(
            await client.call_tool("memory_search", {"tags": ["batch"], "limit": 100})
        )
        assert sorted(hit["content"] for hit in result["items"]) == list(range(50))


async def test_a_killed_server_fails_the_next_call(mode: str, tmp_path: Path) -> None:
    """After the server process dies, a call raises "Connection closed" instead of hanging."""
    failures: list[MCPError] = []

    async def kill_then_call() -> None:
        async with connect(tmp_path, mode) as client:
            assert structured(await client.call_tool("memory_count", {})) == {"count": 0}
            os.kill(_server_pid(tmp_path / "memory.db"), signal.SIGKILL)
            try:
                await client.call_tool("memory_store", {"content": "lost"})
            except MCPError as exc:
                failures.append(exc)

    try:
        await kill_then_call()
    except* MCPError:
        pass  # leaving the client may re-raise the closed connection from its task group
    assert [(failure.code, failure.message) for failure in failures] == [
        (-32000, "Connection closed")
    ]
    async with SQLiteMemoryStore(tmp_path / "memory.db") as store:
        assert await store.count() == 0


def _server_pid(db: Path) -> int:
    """The pid of the ``lionmem mcp`` process serving ``db`` (found through /proc)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mcp" in arguments and str(db).encode() in arguments:
            return int(entry.name)
    pytest.fail(f"no server process for {db}")


def test_help_lists_the_options() -> None:
    """lionmem mcp --help names every option, with the defaults of the limits."""
    result = subprocess.run(
        [sys.executable, "-m", "lionmem", "mcp", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    options = ("--db", "--http", "--token", "--allow-origin", "--max-limit", "--max-bytes")
    for option in (*options, "--max-request-bytes"):
        assert option in result.stdout
    assert f"(default {DEFAULT_MAX_LIMIT})" in result.stdout
    assert f"(default {DEFAULT_MAX_BYTES})" in result.stdout
    assert f"(default {DEFAULT_MAX_REQUEST_BYTES})" in result.stdout
