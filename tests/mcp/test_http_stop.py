"""A stop signal over HTTP: a request running at the signal is finished and answered within the
grace, and one still running after it is cancelled unanswered, its write not done.

The server runs as a subprocess whose store holds every write at a gate (``tests.mcp.held_writes``),
so the test knows the write is running when the signal is sent, and lets it go when it chooses.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from lionmem import MemoryQuery, SQLiteMemoryStore
from tests.mcp.support import call_request, http_server, initialize_request, port_of

ACCEPT = {"Accept": "application/json, text/event-stream"}
MODERN = "2026-07-28"
ITEM_ID = "0b9f3a52-6c1e-4c8a-9d55-2f1e7a3b4c5d"
STORE = call_request(2, "memory_store", {"id": ITEM_ID, "content": "held at the stop"})


def _legacy(url: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The store request and the headers of a session of the 2025-11-25 protocol."""
    opened = httpx2.post(url, json=initialize_request(1), headers=ACCEPT, timeout=30)
    session = {**ACCEPT, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(url, json=initialized, headers=session, timeout=30).status_code == 202
    return STORE, {**session, "MCP-Protocol-Version": "2025-11-25"}


def _modern(_url: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The store request and the headers of the 2026-07-28 protocol, which has no session."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    request = {**STORE, "params": {**STORE["params"], "_meta": envelope}}
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
    return request, {**ACCEPT, **headers, "Mcp-Name": "memory_store"}


PROTOCOLS: dict[str, Callable[[str], tuple[dict[str, Any], dict[str, str]]]] = {
    "legacy": _legacy,
    "modern": _modern,
}


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "the server did not get there in 30 s"
        time.sleep(0.01)


def _listening(url: str) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port_of(url)), timeout=5).close()
    except ConnectionRefusedError:
        return False
    return True


def _held_write(
    url: str, gate: Path, protocol: str, timeout: float = 60
) -> tuple[threading.Thread, list[httpx2.Response | Exception]]:
    """Send a write from a thread (its client gives up after ``timeout`` seconds) and wait
    until the store holds it; return the thread and where the answer (or the failure) goes."""
    request, headers = PROTOCOLS[protocol](url)
    answers: list[httpx2.Response | Exception] = []

    def send() -> None:
        try:
            answers.append(httpx2.post(url, json=request, headers=headers, timeout=timeout))
        except httpx2.HTTPError as exc:
            answers.append(exc)

    waiting = threading.Thread(target=send)
    waiting.start()
    _wait_for((gate / "held").exists)
    return waiting, answers


def _stop_during_a_write(
    url: str, process: subprocess.Popen[str], gate: Path, protocol: str
) -> tuple[threading.Thread, list[httpx2.Response | Exception]]:
    """Send a write, SIGTERM once it is held, wait until the server stops listening; return
    the thread waiting for the answer and where the answer (or the failure) goes."""
    waiting, answers = _held_write(url, gate, protocol)
    process.send_signal(signal.SIGTERM)
    _wait_for(lambda: not _listening(url))
    return waiting, answers


async def _ids(db: Path) -> list[str]:
    async with SQLiteMemoryStore(db) as store:
        return [str(item.id) for item in await store.search(MemoryQuery())]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_write_running_at_sigterm_is_finished_and_acknowledged(
    protocol: str, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    db = tmp_path / "memory.db"
    with http_server(db, held=gate) as (url, process):
        waiting, answers = _stop_during_a_write(url, process, gate, protocol)
        waiting.join(timeout=2)
        assert answers == []  # not answered while the write is held, stop or not
        (gate / "released").touch()
        waiting.join()
        (answer,) = answers
        assert isinstance(answer, httpx2.Response)
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        answered = answer.json()
        assert answered["id"] == 2
        assert answered["result"]["structuredContent"] == {"id": ITEM_ID}
        assert answered["result"]["isError"] is False
        assert process.wait(timeout=30) == 0
    assert asyncio.run(_ids(db)) == [ITEM_ID]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_write_still_running_after_the_grace_is_cancelled_unanswered_and_not_done(
    protocol: str, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    db = tmp_path / "memory.db"
    with http_server(db, limits={"STOP_GRACE": 1}, held=gate) as (url, process):
        waiting, answers = _stop_during_a_write(url, process, gate, protocol)
        waiting.join()
        assert process.wait(timeout=30) == 0
        (answer,) = answers  # HTTP's, no JSON-RPC answer
        assert isinstance(answer, httpx2.Response)
        assert (answer.status_code, answer.text) == (500, "Internal Server Error")
        assert process.stderr is not None
        told = process.stderr.read().splitlines()
    assert asyncio.run(_ids(db)) == []
    # One line says it; no traceback of the cancelled request follows.
    assert told[:1] == ["ERROR:    Cancel 1 running task(s), timeout graceful shutdown exceeded"]
    assert not [line for line in told if "Traceback" in line or "CancelledError" in line]


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_write_whose_client_left_runs_to_its_end(protocol: str, tmp_path: Path) -> None:
    """A request that has arrived whole runs to its end when its client goes away: the write is
    done, unanswered (a client that gave up looks for the item before storing it again)."""
    gate = tmp_path / "gate"
    gate.mkdir()
    db = tmp_path / "memory.db"
    with http_server(db, held=gate) as (url, process):
        sent, outcomes = _held_write(url, gate, protocol, timeout=1)
        sent.join()  # the client gave up, and closed its connection
        (gave_up,) = outcomes
        assert isinstance(gave_up, httpx2.TimeoutException)
        (gate / "released").touch()
        _wait_for(lambda: asyncio.run(_ids(db)) == [ITEM_ID])
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_a_request_reusing_the_id_of_one_running_in_its_session_is_refused(
    tmp_path: Path,
) -> None:
    """While a request runs, another of its session with the same id (or the same id as text:
    the SDK answers by it) gets 400 and an Invalid Request naming the id, at once; the running
    one is answered as ever, and its id may be used again once it is."""
    gate = tmp_path / "gate"
    gate.mkdir()
    db = tmp_path / "memory.db"
    with http_server(db, held=gate) as (url, _process):
        request, headers = _legacy(url)
        answers: list[httpx2.Response] = []
        waiting = threading.Thread(
            target=lambda: answers.append(
                httpx2.post(url, json=request, headers=headers, timeout=60)
            )
        )
        waiting.start()
        _wait_for((gate / "held").exists)
        count = call_request(request["id"], "memory_count", {})
        again = httpx2.post(url, json=count, headers=headers, timeout=30)
        as_text = httpx2.post(
            url, json={**count, "id": str(count["id"])}, headers=headers, timeout=30
        )
        (gate / "released").touch()
        waiting.join()
        reused = httpx2.post(url, json=count, headers=headers, timeout=30)
    for refused, shown in ((again, "2"), (as_text, '"2"')):
        assert (refused.status_code, refused.json()) == (
            400,
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": -32600,
                    "message": f"Invalid Request: id {shown} is, as text, that of a request of "
                    "this session still running; give each request an id of its own",
                },
            },
        )
    (answer,) = answers
    assert (answer.status_code, answer.json()["id"]) == (200, 2)
    assert (reused.status_code, reused.json()["result"]["structuredContent"]) == (
        200,
        {"count": 1},
    )
