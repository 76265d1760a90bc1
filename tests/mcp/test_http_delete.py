"""A DELETE ending a session while requests of it run: each is answered, then the session ends.

The server's store holds every write at a gate (``tests.mcp.held_writes``), so the test knows a
write is running when it sends the DELETE, and lets it go when it chooses.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx2

from lionmem import MemoryQuery, SQLiteMemoryStore
from tests.mcp.support import call_request, http_server, initialize_request

ACCEPT = {"Accept": "application/json, text/event-stream"}
ITEM_ID = "5a1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d"
ENDING = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {
        "code": -32600,
        "message": "Session not found: a DELETE is ending it once its requests are answered",
    },
}


def _session(url: str) -> dict[str, str]:
    opened = httpx2.post(url, json=initialize_request(1), headers=ACCEPT, timeout=30)
    session = {
        **ACCEPT,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-06-18",
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert httpx2.post(url, json=initialized, headers=session, timeout=30).status_code == 202
    return session


def _in_thread(send: Callable[[], httpx2.Response]) -> tuple[threading.Thread, list[object]]:
    answers: list[object] = []
    thread = threading.Thread(target=lambda: answers.append(send()))
    thread.start()
    return thread, answers


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


async def _ids(db: Path) -> list[str]:
    async with SQLiteMemoryStore(db) as store:
        return [str(item.id) for item in await store.search(MemoryQuery())]


def test_a_delete_waits_for_the_requests_of_its_session(tmp_path: Path) -> None:
    """The write running at the DELETE is answered with its id and kept; the DELETE is answered
    after it; a request posted meanwhile gets 404 saying why, and the server logs no error."""
    gate = tmp_path / "gate"
    gate.mkdir()
    db = tmp_path / "memory.db"
    with http_server(db, held=gate) as (url, process):
        session = _session(url)
        store = call_request(2, "memory_store", {"id": ITEM_ID, "content": "held at the end"})
        writing, written = _in_thread(lambda: httpx2.post(url, json=store, headers=session))
        _wait_for(gate / "held")
        ending, ended = _in_thread(lambda: httpx2.delete(url, headers=session, timeout=30))
        ending.join(timeout=1)
        assert ended == []  # the write is still held
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        meanwhile = httpx2.post(url, json=ping, headers=session, timeout=30)
        assert (meanwhile.status_code, meanwhile.json()) == (404, ENDING)
        (gate / "released").touch()
        writing.join()
        ending.join()
        (answer,) = written
        assert isinstance(answer, httpx2.Response)
        assert answer.status_code == 200
        assert answer.json()["result"]["structuredContent"] == {"id": ITEM_ID}
        (deleted,) = ended
        assert isinstance(deleted, httpx2.Response)
        assert deleted.status_code == 200
        after = httpx2.post(url, json=ping, headers=session, timeout=30)
        assert after.status_code == 404
        process.terminate()
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        assert process.stderr.read() == ""
    assert asyncio.run(_ids(db)) == [ITEM_ID]


def test_a_delete_of_an_idle_session_ends_it_at_once(tmp_path: Path) -> None:
    """With no request running the DELETE is handed on as it comes; the session is gone."""
    with http_server(tmp_path / "memory.db") as (url, _):
        session = _session(url)
        assert httpx2.delete(url, headers=session, timeout=30).status_code == 200
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        assert httpx2.post(url, json=ping, headers=session, timeout=30).status_code == 404
        other = _session(url)
        assert httpx2.post(url, json=ping, headers=other, timeout=30).status_code == 200
