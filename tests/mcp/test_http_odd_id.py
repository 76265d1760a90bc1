"""A POST body whose ``id`` is none the SDK reads as an id: 400 and Invalid Request, not run.

The SDK takes a message whose id is null, a fraction, a boolean, an array or an object for a
notification, answers 202 and drops it; the server refuses such a body before the SDK sees it,
in the session protocol and in the sessionless one alike, and serves the next request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from lionmem.mcp._http import _OddId, _request_id
from tests.mcp.support import call_request, http_server, initialize_request

ACCEPT = {"Accept": "application/json, text/event-stream"}
ODD_ID = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {
        "code": -32600,
        "message": (
            "Invalid Request: an id must be a string or an integer (a notification has none)"
        ),
    },
}
ODD_IDS: list[Any] = [None, 1.5, 2.0, True, False, [1], {"n": 1}]


def _result(response: httpx2.Response) -> Any:
    text = response.text
    if text.startswith("event:"):  # an SSE stream of one message
        text = next(line for line in text.splitlines() if line.startswith("data: "))[6:]
    return json.loads(text)["result"]


def _opened_session(http: httpx2.Client, url: str) -> dict[str, str]:
    """Open a session of protocol 2025-06-18 at ``url``; return the headers its requests carry."""
    opened = http.post(url, json=initialize_request(1), headers=ACCEPT)
    session = {
        **ACCEPT,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-06-18",
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert http.post(url, json=initialized, headers=session).status_code == 202
    return session


def test_a_call_with_an_odd_id_in_a_session_gets_400_and_is_not_run(tmp_path: Path) -> None:
    """Each odd id, first or last in the body (after 5,000 characters of content), gets 400
    with the JSON-RPC error; nothing is stored, and the session serves a count after."""
    with http_server(tmp_path / "memory.db") as (url, _), httpx2.Client(timeout=30) as http:
        session = _opened_session(http, url)
        for odd in ODD_IDS:
            call = call_request(0, "memory_store", {"content": "x" * 5000})
            first = {**call, "id": odd}
            del call["id"]
            last = {**call, "id": odd}
            for body in (first, last):
                response = http.post(url, json=body, headers=session)
                assert (response.status_code, response.json()) == (400, ODD_ID), body["id"]
                assert response.headers["content-type"] == "application/json"
        counted = http.post(url, json=call_request(2, "memory_count", {}), headers=session)
        assert _result(counted)["structuredContent"] == {"count": 0}


def test_the_sessionless_protocol_gets_the_same_answer(tmp_path: Path) -> None:
    """A call of the 2026-07-28 protocol with id null gets the same 400 and error."""
    headers = {
        **ACCEPT,
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "memory_store",
    }
    with http_server(tmp_path / "memory.db") as (url, _):
        body = {**call_request(0, "memory_store", {"content": "x"}), "id": None}
        response = httpx2.post(url, json=body, headers=headers, timeout=30)
        assert (response.status_code, response.json()) == (400, ODD_ID)


def test_an_ordinary_notification_and_string_and_integer_ids_pass(tmp_path: Path) -> None:
    """A body without an id is a notification (202); ids ``"a"`` and ``-0`` are requests."""
    with http_server(tmp_path / "memory.db") as (url, _), httpx2.Client(timeout=30) as http:
        session = _opened_session(http, url)
        session["Content-Type"] = "application/json"
        ping = b'{"jsonrpc":"2.0","method":"ping","id":"a"}'
        assert _result(http.post(url, content=ping, headers=session)) == {}
        ping = b'{"jsonrpc":"2.0","method":"ping","id":-0}'
        assert _result(http.post(url, content=ping, headers=session)) == {}


@pytest.mark.parametrize(
    ("body", "odd"),
    [
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', True),
        (b'{"jsonrpc":"2.0","method":"ping","id":1e3}', True),
        (b'{"\\u0069d":false,"method":"ping"}', True),  # the key as the SDK decodes it
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"}', False),
        (b'{"jsonrpc":"2.0","id":"7","method":"ping"}', False),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', False),
        (b'{"method":"ping","params":{"id":null}}', False),  # the params' id, not the message's
        # A client's error response whose request id could not be read: valid, never answered.
        (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}', False),
        (b'{"jsonrpc":"2.0","id":null,"result":{}}', False),
        (b'[{"jsonrpc":"2.0","id":null,"method":"ping"}]', False),  # no object: the SDK's
        (b'{"id":null', False),  # no JSON: the SDK's Parse error
        (b"\xff", False),
    ],
)
def test_which_bodies_have_an_id_the_sdk_cannot_read(body: bytes, odd: bool) -> None:
    assert isinstance(_request_id(body), _OddId) is odd


@pytest.mark.parametrize(
    ("body", "request_id"),
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"ping"}', 7),
        (b'{"jsonrpc":"2.0","id":"7","method":"ping"}', "7"),
        (b'{"jsonrpc":"2.0","method":"notifications/initialized"}', None),
        (b'{"jsonrpc":"2.0","id":7,"result":{}}', None),  # a client's response: no request
        (b"\xff", None),
    ],
)
def test_the_id_of_a_request_is_read_from_its_body(body: bytes, request_id: object) -> None:
    """The id a running request is known by (7 and "7" are two ids); none for what is not a
    request."""
    assert _request_id(body) == request_id
