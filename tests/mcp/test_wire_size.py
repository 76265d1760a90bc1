"""The size cap measured on the wire: raw JSON-RPC lines to and from ``lionmem mcp`` over stdio.

No SDK client here: the test writes the messages itself and measures each response line in
bytes, so it checks what a client actually receives, envelope included.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lionmem.mcp._bounds import min_response_bytes
from tests.mcp.support import server_command

MAX_LIMIT = 10
MAX_BYTES = min_response_bytes()
"""The smallest cap a server takes: room for its list of tools, and a few hits of a search."""


class RawSession:
    """A JSON-RPC conversation over a server's stdin and stdout, one message per line."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.next_id = 1

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Send a request; return the byte length of the response line and the response."""
        request_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        response = json.loads(line)
        assert response["id"] == request_id, response
        return len(line.rstrip(b"\n")), response


@pytest.fixture
def session(tmp_path: Path) -> Iterator[RawSession]:
    process = subprocess.Popen(
        server_command(
            "--db",
            str(tmp_path / "memory.db"),
            "--max-limit",
            str(MAX_LIMIT),
            "--max-bytes",
            str(MAX_BYTES),
        ),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    raw = RawSession(process)
    _, answer = raw.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw-stdio-test", "version": "1"},
        },
    )
    assert answer["result"]["serverInfo"]["name"] == "lionmem"
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    yield raw
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(timeout=30) == 0
    if process.stdout is not None:
        process.stdout.close()


def call(session: RawSession, name: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    size, response = session.request("tools/call", {"name": name, "arguments": arguments})
    return size, response["result"]


def test_every_response_fits_the_cap_and_large_hits_are_reported(session: RawSession) -> None:
    """Search responses stay under --max-bytes on the wire; the hits that did not fit are listed."""
    # Quotes and backslashes double when the JSON text is escaped again for the text block.
    contents = [
        "plain " * 300,
        '"quoted" \\ ' * 200,
        "\u00e9\u2603 " * 400,
        "\x01" * 200,
        "small",
    ] * 2
    for index, content in enumerate(contents):
        size, result = call(session, "memory_store", {"content": content, "tags": [str(index)]})
        assert result["isError"] is False, result
        assert size <= MAX_BYTES
    size, result = call(session, "memory_search", {"limit": 50})
    assert size <= MAX_BYTES
    found = result["structuredContent"]
    assert found["limit"] == MAX_LIMIT
    assert found["omitted"], "the contents were chosen to overflow the cap"
    assert found["items"], "and some of them to fit"
    listed = [hit["tags"][0] for hit in found["items"]]
    left_out = {entry["id"] for entry in found["omitted"]}
    assert len(listed) + len(left_out) == len(contents)
    for hit in found["items"]:
        assert hit["content"] == contents[int(hit["tags"][0])]  # whole, never shortened
    assert json.loads(result["content"][0]["text"]) == found


def test_an_item_larger_than_the_cap_is_refused_on_store(session: RawSession) -> None:
    """memory_store refuses content that could never come back, and says so in one message."""
    size, result = call(session, "memory_store", {"content": "z" * MAX_BYTES})
    assert result["isError"] is True
    assert result["content"][0]["text"].endswith(
        f"over this server's cap of {MAX_BYTES} bytes; it is not sent cut short"
    )
    assert size < 1000
    _, count = call(session, "memory_count", {})
    assert count["structuredContent"] == {"count": 0}


def test_a_malformed_line_does_not_stop_the_server(session: RawSession) -> None:
    """A line that is not JSON is answered with Parse error, before the request sent after it.

    Both lines go out at once, so a server that drops the bad line fails the test (its first
    answer is the tools/list one) instead of leaving it waiting for an answer.
    """
    assert session.process.stdin is not None
    assert session.process.stdout is not None
    request_id = session.next_id
    tools_list = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {}}
    session.process.stdin.write(b"{not json\n" + json.dumps(tools_list).encode() + b"\n")
    session.process.stdin.flush()
    # Checked before the second answer is read: without the bad line's, none would come.
    first = json.loads(session.process.stdout.readline())
    assert first == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "message": "Parse error: key must be a string at line 1 column 2",
        },
    }
    second = json.loads(session.process.stdout.readline())
    assert second["id"] == request_id
    assert [tool["name"] for tool in second["result"]["tools"]] == [
        "memory_store",
        "memory_retrieve",
        "memory_search",
        "memory_delete",
        "memory_count",
    ]


def test_an_error_quoting_a_huge_value_fits_the_cap(session: RawSession) -> None:
    """A problem quotes the value at fault: a limit of a million characters is shown cut, and
    the error fits the cap."""
    size, result = call(session, "memory_search", {"limit": "x" * 10**6})
    problem = f"limit: {'x' * 10**6!r} is not of type 'integer'"
    assert result["isError"] is True
    assert result["content"][0]["text"] == (
        f"invalid arguments for memory_search: {problem[:300]}… ({len(problem)} characters in all)"
    )
    assert size <= MAX_BYTES
