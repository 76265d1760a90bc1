"""Requests holding many values: checked against the schema without holding up other calls.

A request at the size cap can hold a million tags, which jsonschema takes seconds to check (far
longer when each is a problem). The check runs in a worker thread then, so the server answers
other calls meanwhile; the problems stream by, so memory does not grow with their number, and
the answer is the one a full sort of every problem gives.
"""

from __future__ import annotations

import queue
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from jsonschema import Draft202012Validator
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from lionmem import InMemoryStore
from lionmem.mcp import MemoryTools, create_server
from lionmem.mcp import _tools as tools_module
from tests.mcp.support import error_text, http_server, structured

BIG = 100_000
ITEM_ID = "3c9a4f8e-2b7d-4e1a-9f6c-5d8b0a1e2f3c"
HOLD = 10.0
"""Seconds the held check waits to be released; only a server whose loop it blocks waits it out."""


def _reference(validator: Draft202012Validator, arguments: dict[str, Any]) -> str | None:
    """The problems as a full sort of every problem reports them, each cut as the server cuts
    one."""
    errors = sorted(validator.iter_errors(arguments), key=tools_module._specific_first)
    if not errors:
        return None
    cut, most = tools_module._cut, tools_module._PROBLEM_CHARS
    shown = [cut(f"{tools_module._where(e.json_path)}: {e.message}", most) for e in errors]
    more = len(shown) - 5
    return "; ".join(shown[:5]) + (f"; and {more} more" if more > 0 else "")


async def test_a_big_request_being_checked_does_not_hold_up_another_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While a call of 100,000 tags is being checked, another call is answered; then it is too.

    The check of the big call waits, once it has started, until the other call has its answer:
    a check on the event loop would keep that answer from coming, and wait out HOLD instead.
    """
    started, release = threading.Event(), threading.Event()
    released: list[bool] = []
    check = tools_module._schema_problems

    def held(validator: Draft202012Validator, arguments: dict[str, Any]) -> str | None:
        if len(arguments.get("tags", ())) == BIG:
            started.set()
            released.append(release.wait(HOLD))
        return check(validator, arguments)

    monkeypatch.setattr(tools_module, "_schema_problems", held)
    answers: list[str] = []
    big_tags: list[Any] = ["t"] * (BIG - 1) + [7]
    async with Client(create_server(InMemoryStore())) as client:

        async def big() -> None:
            result = await client.call_tool("memory_store", {"content": "x", "tags": big_tags})
            assert error_text(result) == (
                f"invalid arguments for memory_store: tags[{BIG - 1}]: 7 is not of type 'string'"
            )
            answers.append("big")

        async def small() -> None:
            await anyio.to_thread.run_sync(started.wait, HOLD)
            found = structured(await client.call_tool("memory_search", {"text": "x"}))
            assert found == {"items": [], "limit": 20, "omitted": []}
            answers.append("small")
            release.set()

        async with anyio.create_task_group() as group:
            group.start_soon(big)
            group.start_soon(small)
    assert (answers, released) == (["small", "big"], [True])


async def test_at_most_check_slots_checks_run_and_a_cancelled_one_holds_its_slot_to_its_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four big calls at once: _CHECK_SLOTS of them are checked, the others wait; a call
    cancelled while its check runs ends at once, but the check keeps its slot until it ends,
    and only then does the next check start."""
    slots = tools_module._CHECK_SLOTS
    calls = slots + 2
    release = [threading.Event() for _ in range(calls)]
    entered: queue.Queue[int] = queue.Queue()
    log: list[tuple[str, int]] = []
    lock = threading.Lock()

    def held(validator: Draft202012Validator, arguments: dict[str, Any]) -> str | None:
        number = int(arguments["content"])
        with lock:
            log.append(("enter", number))
        entered.put(number)
        release[number].wait(HOLD)  # a safeguard only: every check is released
        with lock:
            log.append(("leave", number))
        return None

    monkeypatch.setattr(tools_module, "_schema_problems", held)
    tools = MemoryTools(InMemoryStore())
    scopes = [anyio.CancelScope() for _ in range(calls)]
    ended: list[int] = []

    async def call(number: int) -> None:
        with scopes[number]:
            arguments = {"content": str(number), "tags": ["t"] * tools_module._INLINE_VALUES}
            await tools.call("memory_store", arguments)
        ended.append(number)

    async with anyio.create_task_group() as group:
        for number in range(calls):
            group.start_soon(call, number)
        running = [await anyio.to_thread.run_sync(entered.get) for _ in range(slots)]
        cancelled = running[0]
        scopes[cancelled].cancel()
        for _ in range(20):
            await anyio.sleep(0)
        assert ended == [cancelled]  # the cancelled call does not wait for its check
        assert entered.empty()  # whose slot no other check has taken
        release[cancelled].set()
        following = await anyio.to_thread.run_sync(entered.get)
        assert log.index(("leave", cancelled)) < log.index(("enter", following))
        for event in release:
            event.set()
    assert ended[0] == cancelled
    assert sorted(ended) == list(range(calls))
    depth = peak = 0
    for step, _ in log:
        depth += 1 if step == "enter" else -1
        peak = max(peak, depth)
    assert (peak, len(log)) == (slots, 2 * calls)


async def test_a_small_request_is_checked_on_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arguments of at most _INLINE_VALUES values (the entries of the arguments object included)
    are checked at once on the loop; one more goes to a worker thread."""
    threads: list[threading.Thread] = []
    check = tools_module._schema_problems

    def noted(validator: Draft202012Validator, arguments: dict[str, Any]) -> str | None:
        threads.append(threading.current_thread())
        return check(validator, arguments)

    monkeypatch.setattr(tools_module, "_schema_problems", noted)
    tools = MemoryTools(InMemoryStore())
    small = {"tags": ["t"] * (tools_module._INLINE_VALUES - 1)}
    large = {"tags": ["t"] * tools_module._INLINE_VALUES}
    assert not (await tools.call("memory_store", small)).is_error
    assert not (await tools.call("memory_store", large)).is_error
    assert threads[0] is threading.current_thread()
    assert threads[1] is not threading.current_thread()


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("memory_store", {"content": "x", "tags": [1] * BIG}),
        ("memory_store", {"content": "x", "tags": ["a"] * BIG + [None, 2]}),
        ("memory_store", {"tags": [[], "a", {}] * 1000, "id": "not-a-uuid", "extra": 1}),
        ("memory_store", {f"key{index}": index for index in range(2000)}),
        ("memory_search", {"tags": [1, "a"] * 5000, "limit": "many", "filters": []}),
        ("memory_search", {"tags": ["a"] * BIG}),
    ],
)
def test_the_problems_reported_are_those_of_a_full_sort(
    name: str, arguments: dict[str, Any]
) -> None:
    """The first five problems in order and the count of the rest, as a full sort gives them."""
    validator = MemoryTools(InMemoryStore())._validators[name]
    assert tools_module._schema_problems(validator, arguments) == _reference(validator, arguments)


def test_the_memory_of_a_check_does_not_grow_with_the_problems() -> None:
    """100,000 problems are counted, not kept: the check holds a few of them at a time."""
    validator = MemoryTools(InMemoryStore())._validators["memory_store"]
    arguments = {"content": "x", "tags": [1] * BIG}
    tracemalloc.start()
    try:
        problems = tools_module._schema_problems(validator, arguments)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert problems is not None
    assert problems.endswith(f"tags[4]: 1 is not of type 'string'; and {BIG - 5} more")
    assert peak < 2**20  # every problem kept would be some 300 MiB


@pytest.mark.slow
async def test_a_million_tags_over_http_are_refused_as_over_the_response_cap(
    tmp_path: Path,
) -> None:
    """A million tags over HTTP (some 4 MB): the answer says the item is over the response cap,
    and the server keeps serving."""
    with http_server(tmp_path / "memory.db") as (url, _):
        async with (
            httpx2.AsyncClient(timeout=120) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            item = {"id": ITEM_ID, "created_at": 1.5, "content": "x", "tags": ["a"] * 10**6}
            result = await client.call_tool("memory_store", item)
            assert error_text(result) == (
                "the item is 10001258 bytes as a response, over this server's cap of 262144 "
                "bytes; it is not sent cut short"
            )
            assert structured(await client.call_tool("memory_count", {})) == {"count": 0}
