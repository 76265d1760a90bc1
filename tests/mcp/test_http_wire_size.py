"""The size cap measured on the wire over HTTP, in both protocols the server speaks.

The 2025-11-25 protocol writes responses as UTF-8; the 2026-07-28 protocol writes them with the
``json`` module, which escapes every character outside ASCII (6 bytes, 12 for one outside the
Basic Multilingual Plane) and writes floats as Python does. A response is never larger than
``--max-bytes`` in either.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2

from lionmem.mcp._bounds import min_response_bytes
from tests.mcp.support import call_request, http_server, initialize_request

ACCEPT = {"Accept": "application/json, text/event-stream"}
MODERN = "2026-07-28"
MAX_BYTES = min_response_bytes()


class _Modern:
    """Calls of the 2026-07-28 protocol, which has no session: each request says who it is."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.next_id = 1

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Call tool ``name``; return the bytes of the response body and its result."""
        request = call_request(self.next_id, name, arguments)
        self.next_id += 1
        envelope = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "raw-http-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        request["params"]["_meta"] = envelope
        headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
        response = httpx2.post(
            self.url, json=request, headers={**headers, "Mcp-Name": name}, timeout=30
        )
        assert response.status_code == 200, response.text
        return len(response.content), response.json()["result"]


class _Legacy:
    """Calls of the 2025-11-25 protocol, in one session."""

    def __init__(self, url: str) -> None:
        self.url = url
        opened = httpx2.post(url, json=initialize_request(1), headers=ACCEPT, timeout=30)
        self.headers = {
            **ACCEPT,
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        httpx2.post(url, json=initialized, headers=self.headers, timeout=30)
        self.next_id = 2

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        request = call_request(self.next_id, name, arguments)
        self.next_id += 1
        response = httpx2.post(self.url, json=request, headers=self.headers, timeout=30)
        assert response.status_code == 200, response.text
        body = response.content
        if response.headers["content-type"].startswith("text/event-stream"):
            (data,) = [line for line in body.split(b"\r\n") if line.startswith(b"data: ")]
            body = data.removeprefix(b"data: ")
        return len(body), json.loads(body)["result"]


def test_no_response_is_over_the_cap_in_either_protocol(tmp_path: Path) -> None:
    """Items of emoji, accented text and floats Python writes longer are stored up to the
    cap, or refused; every retrieve, search and error result of them fits the cap on the wire
    in both protocols, and one of each that fits is answered whole."""
    room = MAX_BYTES // 24  # emoji of 24 bytes each (both copies escaped) fill the cap
    values: list[Any] = [
        *("\U0001f981" * (room * share // 8) for share in (2, 5, 7, 12, 24)),
        *("é" * (room * share // 4) for share in (3, 7, 12)),
        [1e16] * (MAX_BYTES // 14),
    ]
    with http_server(tmp_path / "memory.db", "--max-bytes", str(MAX_BYTES), "--max-limit", "5") as (
        url,
        _process,
    ):
        clients: dict[str, _Modern | _Legacy] = {"modern": _Modern(url), "legacy": _Legacy(url)}
        stored = []
        for value in values:
            _, result = clients["modern"].call("memory_store", {"content": value})
            if not result["isError"]:
                stored.append(result["structuredContent"]["id"])
            else:
                assert "over this server's cap" in result["content"][0]["text"], result
        assert len(stored) >= 4
        for name, client in clients.items():
            for item_id in stored:
                size, result = client.call("memory_retrieve", {"id": item_id})
                assert (result["isError"], size <= MAX_BYTES) == (False, True), (name, size)
            size, result = client.call("memory_search", {"limit": 5})
            assert size <= MAX_BYTES, (name, size)
            assert len(result["structuredContent"]["items"]) >= 1, name
            wrong = "\U0001f981" * 2000
            size, result = client.call("memory_store", {"id": wrong, wrong: wrong})
            assert (result["isError"], size <= MAX_BYTES) == (True, True), (name, size)


def test_an_invalid_params_error_fits_the_cap_in_the_modern_protocol(tmp_path: Path) -> None:
    """Params refused with problems that quote emoji (12 bytes each, escaped) get an error
    within the cap: the message is cut as a tool's error is."""
    emoji = "\U0001f981" * 400
    request = call_request(1, "memory_count", {})
    request["params"]["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-http-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {
            "experimental": {f"{emoji}{n}": 1 for n in range(6)}
        },
    }
    headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
    with http_server(tmp_path / "memory.db", "--max-bytes", str(MAX_BYTES), "--max-limit", "5") as (
        url,
        _process,
    ):
        response = httpx2.post(
            url, json=request, headers={**headers, "Mcp-Name": "memory_count"}, timeout=30
        )
    error = response.json()["error"]
    assert (error["code"], len(response.content) <= MAX_BYTES) == (-32602, True), len(
        response.content
    )
    assert error["message"].startswith("Invalid request parameters: params._meta.")
