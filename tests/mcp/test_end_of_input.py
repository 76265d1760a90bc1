"""The end of stdin: every request read before it is answered, then ``lionmem mcp`` exits.

The SDK cancels the requests still running when its input ends; the server holds the end back
until each one was answered, or cancelled by the client (which then gets no answer). The server
runs as a subprocess over pipes, written to all at once, as a piped script would.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from lionmem import SQLiteMemoryStore
from tests.mcp.support import RawServer, call_request

STORES = 20


def _answers(output: bytes) -> dict[object, dict[str, Any]]:
    return {message["id"]: message for message in map(json.loads, output.splitlines())}


async def test_requests_running_when_stdin_ends_are_answered(tmp_path: Path) -> None:
    server = RawServer(tmp_path / "memory.db")
    try:
        for n in range(STORES):
            server.send(json.dumps(call_request(10 + n, "memory_store", {"content": n})).encode())
        status, rest, errors = server.finish()
    finally:
        server.kill()
    answers = _answers(rest)
    assert status == 0, errors
    assert len(rest.splitlines()) == STORES  # one answer each
    assert set(answers) == {10 + n for n in range(STORES)}
    assert [answer.get("error") for answer in answers.values()] == [None] * STORES
    assert all(answer["result"]["isError"] is False for answer in answers.values()), answers
    async with SQLiteMemoryStore(tmp_path / "memory.db") as store:
        stored = sorted([item.content async for item in store.items()])
    assert stored == list(range(STORES))


def test_a_request_the_client_cancelled_does_not_hold_the_end(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    server = RawServer(db)
    blocker = sqlite3.connect(db, isolation_level=None)
    try:
        assert server.call(2, "memory_count", {}) == {
            "content": [{"type": "text", "text": '{"count":0}'}],
            "structuredContent": {"count": 0},
            "isError": False,
        }
        blocker.execute("BEGIN EXCLUSIVE")  # the store's write now waits for the lock
        server.send(json.dumps(call_request(3, "memory_store", {"content": "late"})).encode())
        cancel = {"requestId": 3, "reason": "the user gave up"}
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}
        server.send(json.dumps(note).encode())
        status, rest, errors = server.finish()
    finally:
        blocker.close()
        server.kill()
    assert status == 0, errors
    assert _answers(rest) == {}
