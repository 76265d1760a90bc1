"""Clients that stall or leave sessions open over HTTP: the server answers 408 or closes, ends
idle sessions, caps how many are open, and serves everyone else.

The server runs as a subprocess with its limits lowered (``tests.mcp.short_deadlines``);
clients are raw sockets, so each can stop at any byte.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import httpx2

import lionmem
from tests.mcp.support import http_server, initialize_request, port_of, post_head

HEAD = 0.5
BODY = 3.0
ACCEPT = {"Accept": "application/json, text/event-stream"}
INITIALIZE = json.dumps(initialize_request(1)).encode()
TOKEN = "s3cret-token"
LIMITS = {"HEAD_SECONDS": HEAD, "BODY_SECONDS": BODY}


def _connect(url: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port_of(url)), timeout=30)


def _head(length: int) -> bytes:
    return post_head(length, {})


def _until_closed(connection: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout fails the test)."""
    received = b""
    while chunk := connection.recv(65536):
        received += chunk
    return received


def _answer(connection: socket.socket) -> tuple[bytes, bytes]:
    """The status line and the body of one answer, read off the socket: a body with a
    Content-Length, or a chunked one (an event stream) until its last chunk, unchunked."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += connection.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    lines = [line.lower() for line in head.split(b"\r\n")]
    if b"transfer-encoding: chunked" in lines:
        while not body.endswith(b"\r\n0\r\n\r\n"):
            body += connection.recv(65536)
        whole = b""
        while True:
            size, _, body = body.partition(b"\r\n")
            if int(size, 16) == 0:
                return head.split(b"\r\n", 1)[0], whole
            whole, body = whole + body[: int(size, 16)], body[int(size, 16) + 2 :]
    length = next(
        int(line.split(b":", 1)[1]) for line in lines if line.startswith(b"content-length:")
    )
    while len(body) < length:
        body += connection.recv(65536)
    return head.split(b"\r\n", 1)[0], body


def _result(body: bytes) -> dict[str, object]:
    """The result of the JSON-RPC answer a response body is."""
    result: dict[str, object] = json.loads(body)["result"]
    return result


def _serves(url: str) -> None:
    response = httpx2.post(url, json=initialize_request(1), headers=ACCEPT, timeout=30)
    assert response.status_code == 200, response.text


def test_a_connection_that_sends_nothing_is_closed_unanswered(tmp_path: Path) -> None:
    with http_server(tmp_path / "memory.db", limits=LIMITS) as (url, process):
        with _connect(url) as silent:
            assert _until_closed(silent) == b""
        _serves(url)
        process.terminate()
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        assert process.stderr.read() == ""


def test_a_half_sent_head_gets_408_then_the_connection_closes(tmp_path: Path) -> None:
    with http_server(tmp_path / "memory.db", limits=LIMITS) as (url, _):
        with _connect(url) as stalled:
            stalled.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            answer = _until_closed(stalled)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.split(b"\r\n")[0] == b"HTTP/1.1 408 Request Timeout"
        assert body == b"Request head not received within 0.5 s"
        _serves(url)


def test_a_body_not_sent_whole_in_time_gets_408_then_the_connection_closes(
    tmp_path: Path,
) -> None:
    with http_server(tmp_path / "memory.db", limits=LIMITS) as (url, _):
        with _connect(url) as stalled:
            stalled.sendall(_head(len(INITIALIZE)) + INITIALIZE[:10])
            answer = _until_closed(stalled)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.split(b"\r\n")[0] == b"HTTP/1.1 408 Request Timeout"
        assert b"\r\nconnection: close" in head.lower()
        assert body == b"Request body not received whole within 3 s"
        _serves(url)


def test_a_body_sent_slowly_but_within_its_deadline_is_served(tmp_path: Path) -> None:
    """The body arrives over about twice the head's deadline, well within its own."""
    with http_server(tmp_path / "memory.db", limits=LIMITS) as (url, _):
        with _connect(url) as slow:
            slow.sendall(_head(len(INITIALIZE)))
            step = len(INITIALIZE) // 5 + 1
            for start in range(0, len(INITIALIZE), step):
                time.sleep(HEAD / 2.5)
                slow.sendall(INITIALIZE[start : start + step])
            status, body = _answer(slow)
        assert status == b"HTTP/1.1 200 OK"
        assert _result(body)["serverInfo"] == {"name": "lionmem", "version": lionmem.__version__}


def test_a_kept_alive_connection_serves_its_next_request_and_times_the_one_after(
    tmp_path: Path,
) -> None:
    # A longer deadline for the heads: the client's own turn between answers must fit in it.
    limits = {**LIMITS, "HEAD_SECONDS": 4 * HEAD}
    with http_server(tmp_path / "memory.db", limits=limits) as (url, _), _connect(url) as kept:
        for _ in range(2):
            kept.sendall(_head(len(INITIALIZE)) + INITIALIZE)
            status, body = _answer(kept)
            assert status == b"HTTP/1.1 200 OK"
            assert _result(body)["protocolVersion"] == "2025-11-25"
            time.sleep(HEAD / 25)
        kept.sendall(b"P")  # one byte of a third head, which never comes whole
        assert _until_closed(kept).startswith(b"HTTP/1.1 408 Request Timeout\r\n")


def test_a_request_refused_before_its_body_is_read_does_not_keep_the_connection(
    tmp_path: Path,
) -> None:
    """A request without the token is answered 401 at once; its body never comes, and the
    connection is closed at the head's deadline for the next request."""
    arguments = ("--token", TOKEN)
    with (
        http_server(tmp_path / "memory.db", *arguments, limits=LIMITS) as (url, _),
        _connect(url) as refused,
    ):
        refused.sendall(_head(1000) + b"{")
        status, body = _answer(refused)
        assert (status, body) == (
            b"HTTP/1.1 401 Unauthorized",
            b"Missing or wrong bearer token",
        )
        refused.sendall(b"more of a body nobody reads")
        assert _until_closed(refused) == b""


def _open_session(url: str) -> httpx2.Response:
    return httpx2.post(url, json=initialize_request(1), headers=ACCEPT, timeout=30)


def _ping(url: str, session: str) -> httpx2.Response:
    headers = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    return httpx2.post(url, json=ping, headers=headers, timeout=30)


def test_a_session_left_idle_ends_and_its_id_answers_404(tmp_path: Path) -> None:
    limits = {"SESSION_IDLE_SECONDS": 2.0}
    with http_server(tmp_path / "memory.db", limits=limits) as (url, _):
        kept, left = (_open_session(url).headers["mcp-session-id"] for _ in range(2))
        for _ in range(10):
            time.sleep(0.3)
            assert _ping(url, kept).status_code == 200
        assert _ping(url, left).status_code == 404
        assert _ping(url, kept).status_code == 200


def test_no_more_sessions_open_than_the_cap(tmp_path: Path) -> None:
    with http_server(tmp_path / "memory.db", limits={"MAX_SESSIONS": 2}) as (url, _):
        first, second = (_open_session(url) for _ in range(2))
        assert (first.status_code, second.status_code) == (200, 200)
        refused = _open_session(url)
        assert refused.status_code == 503
        assert _ping(url, first.headers["mcp-session-id"]).status_code == 200
        closed = httpx2.delete(
            url,
            headers={"Mcp-Session-Id": first.headers["mcp-session-id"], **ACCEPT},
            timeout=30,
        )
        assert closed.status_code == 200
        assert _open_session(url).status_code == 200
