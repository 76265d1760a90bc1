"""The cap on one request over stdio: the bounded line reader, the answer, the running server.

A line over ``--max-request-bytes`` (its newline not counted) is answered with an Invalid
Request error carrying the request's id when the line shows it, dropped without being held
whole, and the next line is served. The reader is tested on in-memory streams, the server as a
``lionmem mcp`` subprocess over pipes (raw JSON lines) and through the SDK's Python client.
"""

from __future__ import annotations

import io
import json
import re
import sys
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from lionmem import SQLiteMemoryStore
from lionmem.mcp import DEFAULT_MAX_REQUEST_BYTES
from lionmem.mcp._bounds import check_request_cap
from lionmem.mcp._stdio import (
    DISCARD_CHUNK,
    HEAD_BYTES,
    TAIL_BYTES,
    BoundedLines,
    request_too_large,
)
from tests.mcp.support import (
    RawServer,
    call_request,
    initialize_request,
    stdio_parameters,
    structured,
)

CAP = 1024


def too_large(cap: int, request_id: int | str | None) -> dict[str, Any]:
    """The answer the server gives to a line over ``cap``."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": -32600,
            "message": (
                f"Request too large: a request may be at most {cap} bytes; this one was longer "
                "and was discarded"
            ),
            "data": {"maxRequestBytes": cap},
        },
    }


class Lines:
    """The lines a reader returns and the (prefix, tail) pairs it reported as too long."""

    def __init__(self, data: bytes | IO[bytes], cap: int) -> None:
        self.refused: list[tuple[bytes, bytes]] = []
        source = io.BytesIO(data) if isinstance(data, bytes) else data
        self.reader = BoundedLines(source, cap, lambda *pair: self.refused.append(pair))

    def all(self) -> list[str]:
        lines = []
        while line := self.reader.readline():
            lines.append(line)
        return lines


# The bounded reader


def test_lines_within_the_cap_come_back_whole() -> None:
    """Lines of up to the cap, empty ones and a last one without a newline are all returned."""
    lines = Lines(b"a" * 8 + b"\n" + b"\n" + b"b" * 7 + b"\n" + b"c" * 8, 8)
    assert lines.all() == ["a" * 8 + "\n", "\n", "b" * 7 + "\n", "c" * 8]
    assert lines.refused == []
    assert lines.reader.readline() == ""


def test_a_line_one_byte_over_is_dropped_and_the_next_served() -> None:
    """A line of cap + 1 bytes is reported with its first bytes and its tail, then skipped."""
    lines = Lines(b"a" * 9 + b"\n" + b"ok\n", 8)
    assert lines.all() == ["ok\n"]
    assert lines.refused == [(b"a" * 9 + b"\n", b"a" * 9 + b"\n")]


def test_a_crlf_newline_is_not_counted() -> None:
    """CRLF ends a line as LF does, neither counted; a CR elsewhere is one more byte of the line."""
    lines = Lines(b"a" * 8 + b"\r\n" + b"b" * 9 + b"\r\n" + b"c" * 7 + b"\rc\n" + b"ok\r\n", 8)
    assert lines.all() == ["a" * 8 + "\r\n", "ok\r\n"]
    assert [prefix for prefix, _ in lines.refused] == [b"b" * 9 + b"\r", b"c" * 7 + b"\rc\n"]


def test_a_last_line_over_the_cap_without_a_newline_is_dropped() -> None:
    """At the end of input, a line over the cap is reported and nothing more is returned."""
    lines = Lines(b"ok\n" + b"z" * 20, 8)
    assert lines.all() == ["ok\n"]
    assert lines.refused == [(b"z" * 10, b"z" * 20)]


def test_the_cap_counts_bytes_and_bad_bytes_are_replaced() -> None:
    """Four 2-byte characters fit a cap of 8; one more byte does not; invalid UTF-8 is U+FFFD."""
    fits = "é" * 4
    lines = Lines(f"{fits}\n{fits}x\n".encode() + b"\xff\n", 8)
    assert lines.all() == [f"{fits}\n", "\ufffd\n"]
    assert [prefix for prefix, _ in lines.refused] == [f"{fits}x\n".encode()]


def test_the_tail_is_the_last_bytes_of_the_line() -> None:
    """The tail holds the last TAIL_BYTES of a line far longer than a chunk, newline included."""
    line = b"0123456789" * (DISCARD_CHUNK // 4) + b"END\n"
    lines = Lines(line + b"next\n", CAP)
    assert lines.all() == ["next\n"]
    [(prefix, tail)] = lines.refused
    assert prefix == line[: CAP + 2]
    assert tail == line[-TAIL_BYTES:]


class _EndlessLine(io.RawIOBase):
    """``size`` bytes of ``x`` without a newline, made as they are read, then ``after``."""

    def __init__(self, size: int, after: bytes) -> None:
        self._left = size
        self._after = after

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._left > 0:
            count = min(self._left, len(view))
            view[:count] = b"x" * count
            self._left -= count
            return count
        count = min(len(self._after), len(view))
        view[:count] = self._after[:count]
        self._after = self._after[count:]
        return count


def test_a_huge_line_is_never_held() -> None:
    """A 64 MiB line is read through with at most the cap plus a chunk or two in memory."""
    source = io.BufferedReader(_EndlessLine(64 * 2**20, b"\nnext\n"), buffer_size=DISCARD_CHUNK)
    lines = Lines(source, CAP)
    tracemalloc.start()
    try:
        assert lines.reader.readline() == "next\n"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * DISCARD_CHUNK
    assert lines.refused == [(b"x" * (CAP + 2), b"x" * (TAIL_BYTES - 1) + b"\n")]


def test_a_negative_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="the largest line must be 0 bytes or more, got -1"):
        BoundedLines(io.BytesIO(), -1, lambda prefix, tail: None)


# The answer and its id


def _answer(prefix: bytes, tail: bytes = b"") -> dict[str, Any]:
    return request_too_large(CAP, prefix, tail).model_dump(
        by_alias=True, exclude_unset=True, mode="json"
    )


@pytest.mark.parametrize(
    ("prefix", "tail", "request_id"),
    [
        # The Python SDK writes jsonrpc, id, method, params: the id is in the prefix.
        (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"a":"xx', b'xx"}}\n', 5),
        (b'{"jsonrpc":"2.0","id":"r-1","method":"tools/call","params":{"a":"x', b"", "r-1"),
        # The TypeScript SDK writes method, params, jsonrpc, id: the id is in the tail.
        (b'{"method":"tools/call","params":{"a":"xx', b'xx"}},"jsonrpc":"2.0","id":7}\n', 7),
        (b'{"method":"tools/call","params":{"a":"xx', b'x"},"id":"r-2","jsonrpc":"2.0"}', "r-2"),
        (b'{"method":"tools/call","params":{"a":"xx', b'x"}, "id" : -3 }\r\n', -3),
        # An id at the end of the prefix may be cut short: it is not trusted.
        (b'{"jsonrpc":"2.0","method":"tools/call","id":12', b"", None),
        # An "id" nested in the params is not the request's.
        (b'{"method":"tools/call","params":{"a":"xx', b'x","id":9}},"jsonrpc":"2.0"}\n', None),
        (b'{"method":"tools/call","params":{"a":"xx', b'x","id":9}}\n', None),
        # A client's response (no method) gets no answer naming its id.
        (b'{"jsonrpc":"2.0","id":4,"result":{"a":"xx', b'xx"}}\n', None),
        (b'{"result":{"a":"xx', b'xx"},"jsonrpc":"2.0","id":4}\n', None),
        # Not an id JSON-RPC allows, or not JSON at all.
        (b'{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"a":"x', b"", None),
        (b'{"method":"tools/call","params":{"a":"xx', b'x"},"id":"\\u12"}\n', None),
        (b'{"method":"tools/call","params":{"a":"xx', b'x"},"id":1.5}\n', None),
        (b"x" * 100, b"x" * 100, None),
        (b"[1, 2, 3", b"", None),
        (b"[" * 5000, b"]" * 5000 + b"\n", None),
        # Only the head is parsed: a method past it is not seen, whatever the tail says.
        (
            b'{"params":{"a":"' + b"x" * HEAD_BYTES,
            b'x"},"method":"m","jsonrpc":"2.0","id":3}',
            None,
        ),
    ],
)
def test_the_answer_carries_the_request_id_when_the_line_shows_it(
    prefix: bytes, tail: bytes, request_id: int | str | None
) -> None:
    assert _answer(prefix, tail) == too_large(CAP, request_id)


def test_finding_the_id_parses_the_head_only() -> None:
    """A 4 MiB prefix of a million strings makes no million objects to find the id."""
    prefix = b'{"jsonrpc":"2.0","id":5,"method":"m","params":[' + b'"a",' * 2**20
    tracemalloc.start()
    try:
        assert _answer(prefix, b'"a"]}\n')["id"] == 5
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * HEAD_BYTES


def test_the_request_cap_is_at_least_1024_bytes() -> None:
    check_request_cap(1024)
    message = (
        "a request cap of 1023 bytes is too small: it must be at least 1024, or a client's "
        "ordinary requests (a few hundred bytes) are refused"
    )
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        check_request_cap(1023)
    assert str(raised.value) == message
    assert DEFAULT_MAX_REQUEST_BYTES == 4 * 2**20


# The server over pipes, raw JSON lines


def store_line(request_id: int, size: int) -> bytes:
    """A memory_store request of exactly ``size`` bytes, its content padded with ``x``."""
    empty = json.dumps(call_request(request_id, "memory_store", {"content": ""})).encode()
    line = json.dumps(
        call_request(request_id, "memory_store", {"content": "x" * (size - len(empty))})
    )
    assert len(line.encode()) == size
    return line.encode()


StartServer = Callable[..., RawServer]


@pytest.fixture
def raw(tmp_path: Path) -> Iterator[StartServer]:
    """Start ``lionmem mcp`` on ``tmp_path/memory.db`` with the given arguments, initialized."""
    servers: list[RawServer] = []

    def start(*arguments: str) -> RawServer:
        servers.append(RawServer(tmp_path / "memory.db", *arguments))
        return servers[-1]

    yield start
    for server in servers:
        server.kill()


def _count(db: Path) -> int:
    async def count() -> int:
        async with SQLiteMemoryStore(db) as store:
            return await store.count()

    return anyio.run(count)


def test_a_line_over_the_cap_is_answered_and_the_next_served(
    raw: StartServer, tmp_path: Path
) -> None:
    """cap + 1 bytes: an error naming the cap and the id; the line at the cap is served."""
    server = raw("--max-request-bytes", str(CAP))
    server.send(store_line(2, CAP + 1))
    assert server.receive() == too_large(CAP, 2)
    server.send(store_line(3, CAP))
    assert server.receive()["result"]["structuredContent"].keys() == {"id"}
    server.send(store_line(4, CAP) + b"\r")  # a line at the cap ending with \r\n
    assert server.receive()["result"]["structuredContent"].keys() == {"id"}
    server.send(b"not json " * 200)
    assert server.receive() == too_large(CAP, None)
    assert server.call(5, "memory_count", {})["structuredContent"] == {"count": 2}
    assert server.finish()[:2] == (0, b"")
    assert _count(tmp_path / "memory.db") == 2


def test_a_last_line_without_a_newline_is_served(tmp_path: Path) -> None:
    """A request the client ends with end of input instead of a newline is still answered.

    It is the initialize request, which the SDK answers before it reads on: a request handled
    concurrently is cancelled at the end of input ("Connection closed"), with or without newline.
    """
    server = RawServer(tmp_path / "memory.db", initialize=False)
    try:
        server.send(json.dumps(initialize_request(1)).encode(), newline=False)
        status, rest, _ = server.finish()
    finally:
        server.kill()
    assert status == 0
    answer = json.loads(rest)
    assert answer["id"] == 1
    assert answer["result"]["serverInfo"]["name"] == "lionmem"
    assert rest.count(b"\n") == 1


def test_a_last_line_over_the_cap_without_a_newline_is_answered(
    raw: StartServer, tmp_path: Path
) -> None:
    """Cut off by the end of input, an oversized request is still answered before the exit."""
    server = raw("--max-request-bytes", str(CAP))
    server.send(store_line(2, 5 * CAP), newline=False)
    status, rest, errors = server.finish()
    assert status == 0
    assert [json.loads(line) for line in rest.splitlines()] == [too_large(CAP, 2)]
    assert errors.decode() == f"lionmem mcp: serving {tmp_path / 'memory.db'} over stdio\n"
    assert _count(tmp_path / "memory.db") == 0


def _peak_rss(pid: int) -> int:
    """The peak resident memory of process ``pid`` in bytes (Linux's VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    pytest.fail("no VmHWM in /proc status")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status")
def test_the_server_never_holds_a_huge_line(raw: StartServer) -> None:
    """A 256 MiB request at the default cap leaves the server's peak memory within 64 MiB."""
    server = raw()
    assert server.call(2, "memory_count", {})["structuredContent"] == {"count": 0}
    before = _peak_rss(server.process.pid)
    size = 256 * 2**20
    head = b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_store",'
    head += b'"arguments":{"content":"'

    def write() -> None:
        server.stdin.write(head)
        block = b"x" * 2**20
        for _ in range(size // len(block)):
            server.stdin.write(block)
        server.stdin.write(b'"}}}\n')
        server.stdin.flush()

    writer = threading.Thread(target=write)
    writer.start()
    assert server.receive() == too_large(DEFAULT_MAX_REQUEST_BYTES, 3)
    writer.join(timeout=120)
    assert server.call(4, "memory_count", {})["structuredContent"] == {"count": 0}
    assert _peak_rss(server.process.pid) - before < 64 * 2**20
    assert server.finish()[0] == 0


# The SDK's Python client


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_gets_the_error_and_goes_on(mode: str, tmp_path: Path) -> None:
    """An oversized call fails at once with -32600 (not at the client's timeout); the next works."""
    parameters = stdio_parameters(tmp_path / "memory.db", "--max-request-bytes", str(CAP))
    async with Client(parameters, mode=mode) as client:
        with anyio.fail_after(20), pytest.raises(MCPError) as raised:
            await client.call_tool("memory_store", {"content": "x" * CAP})
        assert raised.value.error.code == -32600
        assert raised.value.error.message == too_large(CAP, None)["error"]["message"]
        stored = structured(await client.call_tool("memory_store", {"content": "fits"}))
        found = structured(await client.call_tool("memory_retrieve", stored))
        assert found["item"]["content"] == "fits"
        assert structured(await client.call_tool("memory_count", {})) == {"count": 1}
