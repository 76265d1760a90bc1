"""The end of stdin: every request read before it is answered, then ``lionmem mcp`` exits.

The SDK cancels the requests still running when its input ends; the server holds the end back
until each one was answered, or cancelled by the client (which then gets no answer). The server
runs as a subprocess over pipes, written to all at once, as a piped script would.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest

from lionmem import SQLiteMemoryStore
from lionmem.mcp import _stdio
from tests.mcp.support import RawServer, call_request, initialize_request

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


class Blocked:
    """A server whose store's writes wait for a lock this test holds for a second more."""

    def __init__(self, db: Path) -> None:
        self.server = RawServer(db)
        self.db = db
        self._lock = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
        self.server.call(2, "memory_count", {})
        self._lock.execute("BEGIN EXCLUSIVE")

    def send(self, message: dict[str, Any]) -> None:
        self.server.send(json.dumps(message).encode())

    def finish(self) -> tuple[list[dict[str, Any]], int]:
        """Release the lock a second later and close stdin; the answers and the items stored."""
        release = threading.Timer(1.0, self._lock.execute, ["ROLLBACK"])
        release.start()
        try:
            status, rest, errors = self.server.finish()
        finally:
            release.join()
            self._lock.close()
            self.server.kill()
        assert status == 0, errors
        with closing(sqlite3.connect(self.db)) as db:
            (stored,) = db.execute("SELECT count(*) FROM items").fetchone()
        return [json.loads(line) for line in rest.splitlines()], stored


def _cancel(request_id: object) -> dict[str, Any]:
    params = {"requestId": request_id, "reason": "the user gave up"}
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}


@pytest.mark.parametrize(
    ("request_id", "cancelled"),
    [(3, 3), (3, "3"), ("3", 3), (3, "03")],
    ids=["same", "string for number", "number for string", "leading zero"],
)
def test_a_request_the_client_cancelled_gets_no_answer_and_does_not_hold_the_end(
    tmp_path: Path, request_id: int | str, cancelled: int | str
) -> None:
    """The SDK takes ``"3"`` and ``"03"`` for request 3 when matching a cancel."""
    blocked = Blocked(tmp_path / "memory.db")
    blocked.send(call_request(request_id, "memory_store", {"content": "late"}))
    blocked.send(_cancel(cancelled))
    answers, _ = blocked.finish()
    assert answers == []


@pytest.mark.parametrize(
    ("request_id", "cancelled"),
    [(3, 3.0), (1, True), (3, [3]), (3, 4)],
    ids=["float", "bool", "list", "another id"],
)
def test_a_cancel_the_sdk_does_not_match_leaves_the_request_to_be_answered(
    tmp_path: Path, request_id: int, cancelled: object
) -> None:
    """A ``requestId`` that is not an id (a float, a bool, a list) or names no running request
    cancels nothing: the write commits and is answered, and the server does not fail."""
    blocked = Blocked(tmp_path / "memory.db")
    blocked.send(call_request(request_id, "memory_store", {"content": "late"}))
    blocked.send(_cancel(cancelled))
    answers, stored = blocked.finish()
    assert [(answer["id"], answer["result"]["isError"]) for answer in answers] == [
        (request_id, False)
    ]
    assert stored == 1


def test_two_requests_with_one_id_are_both_answered(tmp_path: Path) -> None:
    blocked = Blocked(tmp_path / "memory.db")
    blocked.send(call_request(7, "memory_store", {"content": "late"}))
    blocked.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    answers, stored = blocked.finish()
    assert answers[0] == {"jsonrpc": "2.0", "id": 7, "result": {}}
    assert [(answer["id"], answer["result"]["isError"]) for answer in answers[1:]] == [(7, False)]
    assert stored == 1


async def test_the_end_waits_until_each_request_of_an_id_settled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_stdio, "END_WAIT", 3600.0)
    requests = _stdio._Open()
    for request_id in (5, 5, "5"):
        requests.add(request_id)
    for settled in (5, "5", None, 6):  # None and 6 were never read: they change nothing
        requests.settle(settled)
    with anyio.move_on_after(0.05) as still_open:  # the second request 5 is open
        await requests.wait_none()
    assert still_open.cancelled_caught
    requests.settle(5)
    with anyio.fail_after(30):  # returns at once, not after END_WAIT
        await requests.wait_none()


async def test_the_end_waits_at_most_end_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """After ``END_WAIT`` seconds the end goes through (the SDK then cancels what still runs)."""
    monkeypatch.setattr(_stdio, "END_WAIT", 0.05)
    requests = _stdio._Open()
    requests.add(5)
    with anyio.fail_after(30):
        await requests.wait_none()


def test_requests_still_being_checked_at_the_end_wait_are_answered(tmp_path: Path) -> None:
    """Big calls whose argument checks still run (or wait for a check's turn) ``END_WAIT`` after
    stdin ended are each answered ``Connection closed``, and the server exits without waiting
    for the checks: a check a thread runs cannot be stopped, but its call can end."""
    calls = 3  # two checks run (their turns), one waits for a turn
    command = [sys.executable, "-m", "tests.mcp.short_deadlines", "END_WAIT=0.5", "--"]
    command += ["--db", str(tmp_path / "memory.db")]
    lines = [initialize_request(1), {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    tags = ["t"] * 900_000  # seconds of checking, under the 4 MiB request cap
    lines += [call_request(10 + n, "memory_search", {"tags": tags}) for n in range(calls)]
    stdin = b"".join(json.dumps(line, separators=(",", ":")).encode() + b"\n" for line in lines)
    done = subprocess.run(command, input=stdin, capture_output=True, timeout=120, check=False)
    answers = _answers(done.stdout)
    assert (done.returncode, set(answers)) == (0, {1, *(10 + n for n in range(calls))})
    assert [answers[10 + n].get("error") for n in range(calls)] == [
        {"code": -32000, "message": "Connection closed"}
    ] * calls
