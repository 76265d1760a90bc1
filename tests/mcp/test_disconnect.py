"""A client that disconnects mid-request over HTTP: nothing logged, the server serving on.

The server reads each request's body whole before the SDK sees it (``_WholeBody``), so a client
gone before its body arrived ends its request quietly; the SDK would log a traceback. The
middleware is tested in process with hand-made ASGI messages, the server as a subprocess over
raw sockets: ``Expect: 100-continue`` makes the server say when it is reading the body.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.types import Message, Receive, Scope, Send

from lionmem.mcp._http import _WholeBody
from tests.mcp.support import call_request, http_server, initialize_request, port_of, post_head

ACCEPT = {"Accept": "application/json, text/event-stream"}
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
MODERN_CALL = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
SCOPE: Scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": []}


class _App:
    """An ASGI app noting the messages it received, answering 200 or raising ``error``."""

    def __init__(self, reads: int = 1, error: Exception | None = None) -> None:
        self.reads = reads
        self.error = error
        self.received: list[Message] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        for _ in range(self.reads):
            self.received.append(await receive())
        if self.error is not None:
            raise self.error
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def _run(app: _App, messages: list[Message], max_bytes: int = 1024) -> list[Message]:
    """Run ``_WholeBody(app)`` on ``messages`` as they come from the server; what it sent."""
    incoming: Iterator[Message] = iter(messages)
    sent: list[Message] = []

    async def receive() -> Message:
        return next(incoming)

    async def send(message: Message) -> None:
        sent.append(message)

    await _WholeBody(app, max_bytes)(SCOPE, receive, send)
    return sent


def _chunk(body: bytes, more: bool) -> Message:
    return {"type": "http.request", "body": body, "more_body": more}


async def test_the_body_is_handed_on_whole_then_the_stream_goes_on() -> None:
    """Three chunks arrive as one; the app's next read is the server's next message."""
    app = _App(reads=2)
    disconnect: Message = {"type": "http.disconnect"}
    sent = await _run(
        app, [_chunk(b"ab", True), _chunk(b"", True), _chunk(b"cd", False), disconnect]
    )
    assert app.received == [_chunk(b"abcd", False), disconnect]
    assert [message["type"] for message in sent] == ["http.response.start", "http.response.body"]


async def test_a_disconnect_before_the_body_is_whole_ends_the_request_unanswered() -> None:
    """The app never sees a request its client left half sent, and nothing is sent."""
    app = _App()
    sent = await _run(app, [_chunk(b'{"jsonrpc"', True), {"type": "http.disconnect"}])
    assert (app.received, sent) == ([], [])


async def test_reading_stops_past_the_cap_and_the_app_gets_what_was_read() -> None:
    """A body over the cap is read no further: the app gets it as unfinished (and refuses it)."""
    app = _App()
    chunks = [_chunk(b"x" * 600, True), _chunk(b"y" * 600, True), _chunk(b"z", False)]
    await _run(app, chunks, max_bytes=1000)
    assert app.received == [_chunk(b"x" * 600 + b"y" * 600, True)]


async def test_a_declared_length_over_the_cap_is_handed_on_unread() -> None:
    """A Content-Length over the cap: nothing is read here, the app refuses it before reading."""
    app = _App(reads=0)
    scope: Scope = {**SCOPE, "headers": [(b"content-length", b"10000000000")]}
    received: list[Message] = []

    async def receive() -> Message:
        received.append(_chunk(b"x", True))
        return received[-1]

    async def send(message: Message) -> None:
        pass

    await _WholeBody(app, 1024)(scope, receive, send)
    assert received == []


def test_a_declared_length_over_the_cap_is_refused_before_the_body_is_asked_for(
    tmp_path: Path,
) -> None:
    """Content-Length: 10 GB with Expect: 100-continue gets 413 at once, never 100 Continue."""
    with (
        http_server(tmp_path / "memory.db") as (url, _),
        socket.create_connection(("127.0.0.1", port_of(url)), timeout=30) as connection,
    ):
        connection.sendall(_head(10_000_000_000, {}))
        assert connection.recv(100).startswith(b"HTTP/1.1 413 ")


async def test_an_error_of_the_app_is_not_hidden() -> None:
    """Only a disconnect during the body is quiet: anything the app raises goes on up."""
    app = _App(error=RuntimeError("boom"))
    with pytest.raises(RuntimeError, match="boom"):
        await _run(app, [_chunk(b"{}", False)])


def _head(length: int, headers: dict[str, str]) -> bytes:
    """The head of a POST to /mcp declaring ``length`` bytes of body, asking 100-continue."""
    return post_head(length, {"Expect": "100-continue", **headers})


def _abandon(port: int, body: bytes, headers: dict[str, str]) -> None:
    """POST ``body`` and disconnect once the server reads it, half of it sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(_head(len(body), headers))
        assert connection.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n")
        connection.sendall(body[: len(body) // 2])


def _modern(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` with the envelope the 2026-07-28 protocol asks of every request."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {**request, "params": {**request["params"], "_meta": envelope}}


def _count(url: str, headers: dict[str, str]) -> Any:
    request = call_request(9, "memory_count", {})
    if headers.get("MCP-Protocol-Version") == MODERN:
        request = _modern(request)
    response = httpx2.post(url, json=request, headers={**ACCEPT, **headers}, timeout=30)
    assert response.status_code == 200, response.text
    text = response.text
    if text.startswith("event:"):  # an SSE stream of one message
        text = next(line for line in text.splitlines() if line.startswith("data: "))[6:]
    return json.loads(text)["result"]["structuredContent"]


def test_a_client_leaving_mid_request_is_not_logged_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    """A client leaves half way through an initialize, a call in its session, and a call of the
    modern protocol; the session and the server answer on, and stderr stays empty."""
    with http_server(tmp_path / "memory.db") as (url, process):
        port = port_of(url)
        initialize = json.dumps(initialize_request(1)).encode()
        _abandon(port, initialize, {})
        opened = httpx2.post(url, json=initialize_request(1), headers=ACCEPT, timeout=30)
        session = {
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "MCP-Protocol-Version": LEGACY,
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx2.post(url, json=initialized, headers={**ACCEPT, **session}).status_code == 202
        call = json.dumps(call_request(2, "memory_store", {"content": "half"})).encode()
        _abandon(port, call, session)
        modern = json.dumps(_modern(call_request(3, "memory_store", {"content": "half"})))
        _abandon(port, modern.encode(), {**MODERN_CALL, "Mcp-Name": "memory_store"})
        assert _count(url, session) == {"count": 0}
        assert _count(url, {**MODERN_CALL, "Mcp-Name": "memory_count"}) == {"count": 0}
        process.terminate()
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        assert process.stderr.read() == ""


def test_a_chunked_body_over_the_cap_is_refused(tmp_path: Path) -> None:
    """A body without Content-Length is read up to the cap only, then refused with 413."""
    with http_server(tmp_path / "memory.db", "--max-request-bytes", "2048") as (url, _):

        def chunks() -> Iterator[bytes]:
            yield b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'
            yield b"x" * 4096
            yield b'"}}'

        response = httpx2.post(
            url,
            content=chunks(),
            headers={**ACCEPT, "Content-Type": "application/json"},
            timeout=30,
        )
        assert (response.status_code, response.text) == (413, "Request body too large")
