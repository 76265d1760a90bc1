"""Lines over stdio that are no JSON-RPC message: each is answered, and the server serves on.

The SDK drops such a line without a word, so a client whose request it was waits for its
timeout. The server answers Parse error for a line that is not JSON, Invalid Request for one
that is not a message (a batch, params that are no object, a version other than 2.0, an id
the SDK reads as none), with the request's id when the line shows it; a blank line is skipped, and so is a line that
is a client's response (JSON-RPC answers none). A request whose params its method refuses gets
Invalid params naming the parameters at fault and what is wrong with each (the first five, and
how many more).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.mcp.support import RawServer

NOT_A_MESSAGE = "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
ODD_ID = "Invalid Request: an id must be a string or an integer (a notification has none)"
BATCH = "Invalid Request: batches are not supported; send one message a line"


def _ping(request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()


def _error(request_id: int | str | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


LINES: list[tuple[bytes, dict[str, Any]]] = [
    (b"{garbage", _error(None, -32700, "Parse error: key must be a string at line 1 column 2")),
    (
        b'{"jsonrpc":"2.0","id":3,"method":"ping",}',
        _error(3, -32700, "Parse error: trailing comma at line 1 column 41"),
    ),
    (
        b'{ "id" : "three" , "method":"ping" "jsonrpc":"2.0"}',
        _error("three", -32700, "Parse error: expected `,` or `}` at line 1 column 36"),
    ),
    (  # the id of the params, not the message's
        b'{"params":{"id":31},"method":"ping",}',
        _error(None, -32700, "Parse error: trailing comma at line 1 column 37"),
    ),
    (  # no method among the leading keys: maybe a response, whose id gets no answer
        b'{"jsonrpc":"2.0","id":32,"params":{},}',
        _error(None, -32700, "Parse error: trailing comma at line 1 column 38"),
    ),
    (b'[{"jsonrpc":"2.0","id":4,"method":"ping"}]', _error(None, -32600, BATCH)),
    (b"[]", _error(None, -32600, BATCH)),
    (
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[]}',
        _error(5, -32600, NOT_A_MESSAGE),
    ),
    (b'{"jsonrpc":"1.0","id":"six","method":"ping"}', _error("six", -32600, NOT_A_MESSAGE)),
    (b'"just a string"', _error(None, -32600, NOT_A_MESSAGE)),
    (b'{"jsonrpc":"2.0","id":7.5,"method":"ping"}', _error(None, -32600, ODD_ID)),
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', _error(None, -32600, ODD_ID)),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', _error(None, -32600, ODD_ID)),
    (  # a call that would store "caf\ufffd" if the SDK's replacement stood
        b'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"memory_store",'
        b'"arguments":{"content":"caf\xe9"}}}',
        _error(9, -32700, "Parse error: not UTF-8 text (byte 105 cannot be decoded)"),
    ),
    (
        b'{"id":"\xff","method":"ping"}',
        _error(None, -32700, "Parse error: not UTF-8 text (byte 7 cannot be decoded)"),
    ),
    (
        b'{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"arguments":{}}}',
        _error(17, -32602, "Invalid request parameters: params.name: Field required"),
    ),
    (
        b'{"jsonrpc":"2.0","id":18,"method":"tools/list","params":{"cursor":5}}',
        _error(
            18, -32602, "Invalid request parameters: params.cursor: Input should be a valid string"
        ),
    ),
    (
        b'{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":7,"arguments":[]}}',
        _error(
            19,
            -32602,
            "Invalid request parameters: params.arguments: Input should be a valid dictionary; "
            "params.name: Input should be a valid string",
        ),
    ),
    (  # a method of the specification this server does not have: not found, whatever its params
        b'{"jsonrpc":"2.0","id":21,"method":"resources/read","params":{}}',
        {
            "jsonrpc": "2.0",
            "id": 21,
            "error": {"code": -32601, "message": "Method not found", "data": "resources/read"},
        },
    ),
    (  # the list of tools has one page: a cursor is one the server never gave
        b'{"jsonrpc":"2.0","id":22,"method":"tools/list","params":{"cursor":"not-issued"}}',
        _error(
            22,
            -32602,
            "Invalid request parameters: params.cursor: this server lists every tool at once "
            "and gives no cursor, got 'not-issued'",
        ),
    ),
    (  # many problems: the first five are named, the rest counted
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 20,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1", "icons": [1] * 100_000},
                },
            }
        ).encode(),
        _error(
            20,
            -32602,
            "Invalid request parameters: "
            + "; ".join(
                f"params.clientInfo.icons.{n}: Input should be a valid dictionary or instance "
                "of Icon"
                for n in range(5)
            )
            + "; and 99995 more",
        ),
    ),
    (
        b'{"jsonrpc":"2.0","id":8,"method":"no/such/method"}',
        {
            "jsonrpc": "2.0",
            "id": 8,
            "error": {"code": -32601, "message": "Method not found", "data": "no/such/method"},
        },
    ),
]
RESPONSES = [
    b'{"jsonrpc":"2.0","id":11,"result":"not an object"}',
    b'{"jsonrpc":"2.0","id":12,"result":{},}',
    b'{"jsonrpc":"2.0","id":13,"error":{"code":-1}}',
    b'{"jsonrpc":"2.0","error":{"code":-1,"message":"m"},"id":14,}',
    b'{"id":15,"jsonrpc":"1.0","result":{}}',
    b'{"jsonrpc":"2.0","id":16,"result":{"text":"\xff"}}',
]
"""Lines that are a client's response, but no valid one: JSON-RPC answers no response."""


def test_every_line_that_is_no_message_is_answered(tmp_path: Path) -> None:
    """Each bad line gets its answer, before that of the ping sent after it; a bad response
    and a blank line none; then a call is served."""
    server = RawServer(tmp_path / "memory.db")
    try:
        for number, (line, answer) in enumerate(LINES, start=100):
            server.send(line)
            server.send(_ping(number))
            assert server.receive() == answer, line
            assert server.receive() == {"jsonrpc": "2.0", "id": number, "result": {}}
        for number, line in enumerate(RESPONSES, start=200):
            server.send(line)
            server.send(_ping(number))
            assert server.receive() == {"jsonrpc": "2.0", "id": number, "result": {}}, line
        server.send(b"   ")
        server.send(b"")
        server.send(_ping(9))
        assert server.receive() == {"jsonrpc": "2.0", "id": 9, "result": {}}
        result = server.call(10, "memory_count", {})
        assert result["structuredContent"] == {"count": 0}
        status, rest, errors = server.finish()
        assert (status, rest) == (0, b"")
        assert errors.decode().splitlines()[1:] == []
    finally:
        server.kill()


def test_the_id_of_a_long_bad_line_is_read_from_its_end(tmp_path: Path) -> None:
    """A request whose id closes the line after long params (as the TypeScript SDK writes it)
    and whose params are no object is answered with that id."""
    params = json.dumps(["x" * 10_000])
    line = f'{{"jsonrpc":"2.0","method":"tools/call","params":{params},"id":"late"}}'.encode()
    server = RawServer(tmp_path / "memory.db")
    try:
        server.send(line)
        server.send(_ping(1))
        assert server.receive() == _error("late", -32600, NOT_A_MESSAGE)
    finally:
        server.kill()


def test_an_odd_id_closing_a_long_line_is_answered(tmp_path: Path) -> None:
    """A call whose id (null, a fraction, a boolean) closes a line after 5,000 characters of
    content, past the first bytes the server parses, is answered with Invalid Request, as the
    same call with the id first is; nothing is stored."""
    call = b'"method":"tools/call","params":{"name":"memory_store","arguments":{"content":"'
    call += b"x" * 5000 + b'"}}'
    lines = [
        b'{"jsonrpc":"2.0",' + call + b',"id":null}',
        b'{"jsonrpc":"2.0",' + call + b',"id":1.5}',
        b'{"jsonrpc":"2.0",' + call + b', "id" : true }\r',
        b"{" + call + b',"id":null,"jsonrpc":"2.0"}',
    ]
    server = RawServer(tmp_path / "memory.db")
    try:
        for number, line in enumerate(lines, start=1):
            server.send(line)
            server.send(_ping(number))
            assert server.receive() == _error(None, -32600, ODD_ID), line[-30:]
            assert server.receive() == {"jsonrpc": "2.0", "id": number, "result": {}}
        assert server.call(10, "memory_count", {})["structuredContent"] == {"count": 0}
    finally:
        server.kill()


def test_nan_and_infinity_from_the_wire_are_refused(tmp_path: Path) -> None:
    """The SDK reads the literals NaN and Infinity, which are no JSON: memory_store refuses
    them as invalid arguments, and nothing is stored."""
    server = RawServer(tmp_path / "memory.db")
    try:
        server.send(
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store",'
            b'"arguments":{"content":"x","metadata":{"score":-Infinity}}}}'
        )
        answer = server.receive()
        assert answer["result"]["isError"] is True
        assert answer["result"]["content"][0]["text"] == (
            "invalid arguments for memory_store: metadata.score: -inf is not a JSON number "
            "(JSON has no NaN or Infinity)"
        )
        assert server.call(3, "memory_count", {})["structuredContent"] == {"count": 0}
    finally:
        server.kill()


def test_a_limit_past_what_the_parser_reads_is_refused(tmp_path: Path) -> None:
    """A limit too large for a float (1e400, read as infinite) is not an integer; one of
    thousands of digits is a parse error, answered with the request's id."""
    server = RawServer(tmp_path / "memory.db")
    try:
        server.send(
            b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search",'
            b'"arguments":{"limit":1e400}}}'
        )
        infinite = server.receive()
        server.send(
            b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory_search",'
            b'"arguments":{"limit":1' + b"0" * 5000 + b"}}}"
        )
        digits = server.receive()
    finally:
        server.kill()
    assert (infinite["result"]["isError"], infinite["result"]["content"][0]["text"]) == (
        True,
        "invalid arguments for memory_search: limit: inf is not of type 'integer'",
    )
    assert (digits["id"], digits["error"]["code"], digits["error"]["message"]) == (
        3,
        -32700,
        "Parse error: number out of range at line 1 column 4402",
    )
