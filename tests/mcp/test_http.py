"""``lionmem mcp --http``: the SDK's Python client over streamable HTTP, and what the guard refuses.

Each test starts the server as a subprocess on 127.0.0.1 with a free port (``:0``); the port
comes from the line the server writes to stderr. Refusals are checked twice: the SDK client
fails to connect, and a plain HTTP request gets the status and message that say why.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from lionmem import SQLiteMemoryStore
from lionmem.mcp._http import STOP_GRACE, _HeadDeadline
from tests.mcp.support import http_server, port_of, server_command, structured

TOKEN = "correct-horse-battery-staple"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-http-test", "version": "1"},
    },
}
PROTOCOL = {"auto": "2026-07-28", "legacy": "2025-11-25"}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@asynccontextmanager
async def _client(
    url: str, headers: dict[str, str] | None = None, mode: str = "auto"
) -> AsyncIterator[Client]:
    """A connected SDK client; the HTTP client it is given is the test's to close, so it is."""
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


def _post(url: str, **headers: str) -> httpx2.Response:
    return httpx2.post(url, json=INITIALIZE, headers={**ACCEPT, **headers}, timeout=30)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_round_trip_with_the_token(mode: str, tmp_path: Path) -> None:
    """With the bearer token the client stores, retrieves, searches and counts over HTTP."""
    with http_server(tmp_path / "memory.db", "--token", TOKEN) as (url, _):
        async with _client(url, {"Authorization": f"Bearer {TOKEN}"}, mode) as client:
            assert client.protocol_version == PROTOCOL[mode]
            await client.list_tools()
            item = {
                "id": "1d8f0c3e-5a2b-4c6d-9e7f-8a1b2c3d4e5f",
                "created_at": 1.5,
                "metadata": {"k": [1, 2]},
                "content": ["a", {"b": None}],
                "tags": ["http"],
            }
            assert structured(await client.call_tool("memory_store", item)) == {"id": item["id"]}
            assert structured(await client.call_tool("memory_retrieve", {"id": item["id"]})) == {
                "item": item
            }
            found = structured(await client.call_tool("memory_search", {"tags": ["http"]}))
            assert found == {"items": [item], "limit": 20, "omitted": []}
            assert structured(await client.call_tool("memory_count", {})) == {"count": 1}


async def test_a_request_without_the_token_is_refused(tmp_path: Path) -> None:
    """No token or a wrong one: 401 with a Bearer challenge, and the client cannot connect."""
    with http_server(tmp_path / "memory.db", "--token", TOKEN) as (url, _):
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            response = _post(url, **headers)
            assert response.status_code == 401, headers
            assert response.text == "Missing or wrong bearer token"
            assert response.headers["www-authenticate"] == 'Bearer realm="lionmem"'
        with pytest.raises(Exception):  # noqa: B017, PT011 -- the SDK wraps HTTP errors differently by era
            async with _client(url) as client:
                await client.list_tools()
        assert _post(url, Authorization=f"bearer {TOKEN}").status_code == 200


async def test_a_foreign_origin_is_refused(tmp_path: Path) -> None:
    """A browser page from another origin gets 403, even with the token; loopback pages pass."""
    with http_server(tmp_path / "memory.db", "--token", TOKEN) as (url, _):
        auth = {"Authorization": f"Bearer {TOKEN}"}
        response = _post(url, Origin="https://evil.example", **auth)
        assert (response.status_code, response.text) == (
            403,
            "Origin not allowed: https://evil.example",
        )
        assert _post(url, Origin="null", **auth).status_code == 403
        assert _post(url, Origin="http://localhost:5173", **auth).status_code == 200
        assert _post(url, Origin="http://127.0.0.1:3000", **auth).status_code == 200
        with pytest.raises(Exception):  # noqa: B017, PT011 -- the SDK wraps HTTP errors differently by era
            async with _client(url, {**auth, "Origin": "https://evil.example"}) as client:
                await client.list_tools()


async def test_allow_origin_admits_exactly_that_origin(tmp_path: Path) -> None:
    """--allow-origin adds one origin; another port or scheme of the same host is still refused."""
    with http_server(tmp_path / "memory.db", "--allow-origin", "https://app.example:8443") as (
        url,
        _,
    ):
        assert _post(url, Origin="https://app.example:8443").status_code == 200
        assert _post(url, Origin="https://APP.example:8443").status_code == 200
        assert _post(url, Origin="https://app.example").status_code == 403
        assert _post(url, Origin="http://app.example:8443").status_code == 403


async def test_an_allowed_origin_with_its_default_port_admits_the_browser_s_origin(
    tmp_path: Path,
) -> None:
    """Browsers leave a scheme's default port out of Origin, so :443 and :80 match without it."""
    allow = ("--allow-origin", "https://app.example:443", "--allow-origin", "http://app.example:80")
    with http_server(tmp_path / "memory.db", *allow) as (url, _):
        assert _post(url, Origin="https://app.example").status_code == 200
        assert _post(url, Origin="http://app.example").status_code == 200
        assert _post(url, Origin="https://app.example:443").status_code == 200
        assert _post(url, Origin="https://app.example:80").status_code == 403
        assert _post(url, Origin="https://app.example:8443").status_code == 403


async def test_a_foreign_host_header_is_refused_on_loopback(tmp_path: Path) -> None:
    """On a loopback address a Host that is not loopback (DNS rebinding) gets 421."""
    with http_server(tmp_path / "memory.db") as (url, _):
        response = _post(url, Host="attacker.example:8000")
        assert (response.status_code, response.text) == (
            421,
            "Host not allowed: this server answers loopback hosts only",
        )
        assert _post(url, Host="localhost:1234").status_code == 200
        assert _post(url, Host="[::1]:1234").status_code == 200
        for host in ("attacker.example@127.0.0.1", "127.0.0.1/x", "localhost.attacker.example"):
            assert _post(url, Host=host).status_code == 421, host


async def test_loopback_without_a_token_serves(tmp_path: Path) -> None:
    """On loopback the token is optional: without one the client connects."""
    with http_server(tmp_path / "memory.db") as (url, _):
        async with _client(url) as client:
            assert structured(await client.call_tool("memory_count", {})) == {"count": 0}


def test_a_non_loopback_address_without_a_token_is_refused(tmp_path: Path) -> None:
    """--http 0.0.0.0:PORT without a token exits 2 before opening the store, saying why."""
    db = tmp_path / "memory.db"
    result = subprocess.run(
        server_command("--db", str(db), "--http", "0.0.0.0:0"),
        capture_output=True,
        text=True,
        check=False,
        env=_without_token(),
    )
    assert result.returncode == 2
    assert result.stderr == (
        "lionmem mcp: refusing to serve on 0.0.0.0, which is not a loopback address, without a "
        "bearer token: anyone who can reach it could read and change the memory; pass --token "
        "or set LIONMEM_MCP_TOKEN\n"
    )
    assert not db.exists()


async def test_a_non_loopback_address_serves_with_the_token_from_the_environment(
    tmp_path: Path,
) -> None:
    """LIONMEM_MCP_TOKEN stands in for --token; then any Host is accepted and the token checked."""
    import os

    env = {**os.environ, "LIONMEM_MCP_TOKEN": TOKEN}
    process = subprocess.Popen(
        server_command("--db", str(tmp_path / "memory.db"), "--http", "0.0.0.0:0"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        url = f"http://127.0.0.1:{port_of(line)}/mcp"
        assert _post(url).status_code == 401
        assert _post(url, Authorization=f"Bearer {TOKEN}", Host="memory.lan").status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


def test_sigterm_stops_the_server_cleanly(tmp_path: Path) -> None:
    """SIGTERM ends the server with status 0 after it closed the store (no WAL file is left)."""
    with http_server(tmp_path / "memory.db") as (url, process):
        assert _post(url).status_code == 200
        assert (tmp_path / "memory.db-wal").exists()
        process.terminate()
        assert process.wait(timeout=30) == 0
    assert not (tmp_path / "memory.db-wal").exists()
    with pytest.raises(httpx2.ConnectError):
        _post(url)
    import asyncio

    async def count() -> int:
        async with SQLiteMemoryStore(tmp_path / "memory.db") as store:
            return await store.count()

    assert asyncio.run(count()) == 0


@pytest.mark.slow
def test_sigterm_stops_the_server_while_a_client_holds_a_request_open(tmp_path: Path) -> None:
    """A client that never finishes its request body delays the stop by the grace period only."""
    with http_server(tmp_path / "memory.db") as (url, process):
        assert _post(url).status_code == 200
        with socket.create_connection(("127.0.0.1", port_of(url)), timeout=30) as held:
            held.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
                b'{"jsonrpc": "2.0"'
            )
            time.sleep(0.5)  # the server is reading the body
            process.terminate()
            assert process.wait(timeout=STOP_GRACE + 20) == 0
    assert not (tmp_path / "memory.db-wal").exists()  # the store was closed


def _without_token() -> dict[str, Any]:
    import os

    return {key: value for key, value in os.environ.items() if key != "LIONMEM_MCP_TOKEN"}


def test_a_request_body_over_4_mib_is_refused(tmp_path: Path) -> None:
    """The SDK's body limit holds behind the guard: 413 for a request over 4 MiB."""
    with http_server(tmp_path / "memory.db") as (url, _):
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "memory_store", "arguments": {"content": "x" * (4 * 2**20)}},
        }
        response = httpx2.post(url, json=call, headers=ACCEPT, timeout=60)
        assert response.status_code == 413


def _initialize_of(size: int) -> bytes:
    """The initialize request as JSON of exactly ``size`` bytes, its client name padded."""
    request = json.loads(json.dumps(INITIALIZE))
    request["params"]["clientInfo"]["name"] = ""
    empty = len(json.dumps(request))
    request["params"]["clientInfo"]["name"] = "x" * (size - empty)
    body = json.dumps(request).encode()
    assert len(body) == size
    return body


def test_max_request_bytes_sets_the_http_body_limit(tmp_path: Path) -> None:
    """--max-request-bytes 2048: a body of 2048 bytes is served, one of 2049 gets 413."""
    with http_server(tmp_path / "memory.db", "--max-request-bytes", "2048") as (url, _):
        headers = {**ACCEPT, "Content-Type": "application/json"}
        fits = httpx2.post(url, content=_initialize_of(2048), headers=headers, timeout=30)
        assert fits.status_code == 200
        over = httpx2.post(url, content=_initialize_of(2049), headers=headers, timeout=30)
        assert over.status_code == 413
        assert over.text == "Request body too large"


def _preflight(url: str, origin: str) -> httpx2.Response:
    headers = {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type,mcp-session-id",
    }
    return httpx2.options(url, headers=headers, timeout=30)


def test_a_browser_page_of_an_allowed_origin_passes_the_cors_preflight(tmp_path: Path) -> None:
    """The preflight a browser sends before a JSON POST is answered for an origin given with
    --allow-origin, without the token (a preflight carries none); a loopback origin not given
    gets no answer to it (the token is asked for), a foreign origin's is refused."""
    allow = ("--allow-origin", "https://app.example:8443", "--token", TOKEN)
    with http_server(tmp_path / "memory.db", *allow) as (url, _):
        origin = "https://app.example:8443"
        response = _preflight(url, origin)
        assert response.status_code == 204
        assert {key: value for key, value in response.headers.items() if key != "date"} == {
            "server": "uvicorn",
            "access-control-allow-origin": origin,
            "access-control-allow-methods": "GET, POST, DELETE",
            "access-control-allow-headers": "authorization,content-type,mcp-session-id",
            "access-control-max-age": "600",
            "vary": "Origin, Access-Control-Request-Headers",
        }
        loopback = _preflight(url, "http://localhost:5173")
        assert loopback.status_code == 401
        assert "access-control-allow-origin" not in loopback.headers
        assert loopback.headers["vary"] == "Origin"
        refused = _preflight(url, "https://evil.example")
        assert (refused.status_code, refused.text) == (
            403,
            "Origin not allowed: https://evil.example",
        )
        assert "access-control-allow-origin" not in refused.headers
        assert refused.headers["vary"] == "Origin"
        no_origin = httpx2.options(url, headers={"Access-Control-Request-Method": "POST"})
        assert no_origin.status_code == 401  # not a browser's preflight: the token is needed


def test_responses_to_an_allowed_origin_carry_the_cors_headers(tmp_path: Path) -> None:
    """A page may read the answer and its session id; a refusal for want of the token too."""
    allow = ("--allow-origin", "https://app.example:8443", "--token", TOKEN)
    with http_server(tmp_path / "memory.db", *allow) as (url, _):
        origin = "https://app.example:8443"
        answered = _post(url, Origin=origin, Authorization=f"Bearer {TOKEN}")
        refused = _post(url, Origin=origin)
        for response, status in ((answered, 200), (refused, 401)):
            assert response.status_code == status
            assert response.headers["access-control-allow-origin"] == origin
            assert response.headers["access-control-expose-headers"] == (
                "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"
            )
            assert response.headers["vary"] == "Origin"
        assert answered.headers["mcp-session-id"]
        plain = _post(url, Authorization=f"Bearer {TOKEN}")
        assert plain.status_code == 200
        assert "access-control-allow-origin" not in plain.headers
        assert plain.headers["vary"] == "Origin"  # a cache must not hand it to the page


def test_the_default_server_speaks_no_cors_to_a_loopback_page(tmp_path: Path) -> None:
    """Without --allow-origin a page of a local server (any port of localhost) passes the
    Origin check, as a program sending that header does, but its browser gets no preflight
    answer and no Access-Control-Allow-Origin, so the page can neither send a JSON POST nor
    read an answer."""
    with http_server(tmp_path / "memory.db") as (url, _):
        for origin in ("http://localhost:5173", "http://127.0.0.1:8000", "http://[::1]:3000"):
            preflight = _preflight(url, origin)
            assert preflight.status_code != 204, origin
            assert not any(key.startswith("access-control-") for key in preflight.headers)
            answered = _post(url, Origin=origin)
            assert answered.status_code == 200, origin
            assert answered.headers["mcp-session-id"]
            assert not any(key.startswith("access-control-") for key in answered.headers)
            assert "vary" not in answered.headers


async def test_answers_do_not_wait_for_the_client_s_acknowledgement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every connection the HTTP server accepts has Nagle's algorithm off (TCP_NODELAY), so an
    answer's body, written after its head, does not wait for the client's delayed
    acknowledgement of the head (about 40 ms a request on a kept-alive connection)."""
    seen: list[int] = []
    made = _HeadDeadline.connection_made

    def noting(self: _HeadDeadline, transport: asyncio.BaseTransport) -> None:
        made(self, transport)
        sock = transport.get_extra_info("socket")
        seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    monkeypatch.setattr(_HeadDeadline, "connection_made", noting)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    listening = socket.create_server(("127.0.0.1", 0))
    config = uvicorn.Config(app, http=_HeadDeadline, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        while not server.started:
            await asyncio.sleep(0.01)
        reader, writer = await asyncio.open_connection(*listening.getsockname()[:2])
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        writer.close()
        await writer.wait_closed()
    finally:
        server.should_exit = True
        await serving
    assert (head.split(b"\r\n")[0], seen) == (b"HTTP/1.1 204 No Content", [1])
