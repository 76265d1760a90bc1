"""The write queue of PostgresMemoryStore, with a recording writer in place of the database."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from lionmem import MemoryAdapterError, MemoryAdapterUnavailable, MemoryItem
from lionmem.stores._postgres_codec import Row
from lionmem.stores.postgres import _row, _WriteQueue


def row(content: str) -> Row:
    return _row(MemoryItem(content=content))


class Recorder:
    """Writes nothing: records each batch's contents, once ``hold`` is set if one is given."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.hold: asyncio.Event | None = None
        # Run just after the batch whose first row holds the key as its content is recorded.
        self.after: dict[str, Callable[[], object]] = {}
        # Raised, once recorded, by a batch holding a row with the key as its content.
        self.fail: dict[str, Exception] = {}

    async def write(self, rows: list[Row]) -> None:
        if self.hold is not None:
            await self.hold.wait()
        self.batches.append([r.content for r in rows])
        self.after.pop(rows[0].content, lambda: None)()
        for r in rows:
            if r.content in self.fail:
                raise self.fail[r.content]


async def test_turns_and_batches_follow_call_order() -> None:
    """store() calls made during a write form one batch up to the next other write, which runs
    in its own turn after them; writes called during a turn wait for it."""
    recorder = Recorder()
    queue = _WriteQueue(recorder.write)
    recorder.hold = asyncio.Event()
    events: list[str] = []

    async def other(name: str) -> None:
        async with queue.turn():
            events.append(f"{name} starts")
            await asyncio.sleep(0.01)  # writes called meanwhile wait
            events.append(f"{name} ends")

    async def store(content: str) -> None:
        await queue.submit(row(content))
        events.append(f"{content} committed")

    first = asyncio.ensure_future(store("a"))
    await asyncio.sleep(0)  # a's write is under way, held
    later = [
        asyncio.ensure_future(call)
        for call in (store("b"), store("c"), other("x"), store("d"), other("y"), store("e"))
    ]
    await asyncio.sleep(0)
    recorder.hold.set()
    await asyncio.wait_for(asyncio.gather(first, *later), 10)
    assert recorder.batches == [['"a"'], ['"b"', '"c"'], ['"d"'], ['"e"']]
    assert events == [
        "a committed",
        "b committed",
        "c committed",
        "x starts",
        "x ends",
        "d committed",
        "y starts",
        "y ends",
        "e committed",
    ]


async def test_a_turn_cancelled_just_after_it_came_is_given_back() -> None:
    """A caller cancelled after its turn came but before it ran raises CancelledError without
    running its write, and the writes called after it still run."""
    recorder = Recorder()
    queue = _WriteQueue(recorder.write)
    recorder.hold = asyncio.Event()
    ran: list[str] = []

    async def other() -> None:
        async with queue.turn():
            ran.append("cancelled write")

    first = asyncio.ensure_future(queue.submit(row("a")))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(queue.submit(row("b")))
    turn = asyncio.ensure_future(other())
    last = asyncio.ensure_future(queue.submit(row("c")))
    await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    # Run after b's batch: cancel the turn's caller in the loop iteration in which its turn
    # comes, once the queue gave it (b's batch, a yield, then the turn) and before it resumes.
    recorder.after['"b"'] = lambda: loop.call_soon(lambda: loop.call_soon(turn.cancel))
    recorder.hold.set()
    outcomes = await asyncio.wait_for(
        asyncio.gather(first, second, turn, last, return_exceptions=True), 10
    )
    assert [type(o).__name__ for o in outcomes] == [
        "NoneType",
        "NoneType",
        "CancelledError",
        "NoneType",
    ]
    assert ran == []
    assert recorder.batches == [['"a"'], ['"b"'], ['"c"']]


async def test_a_write_found_nothing_under_way_runs_without_a_task() -> None:
    """A lone store() or turn writes in its caller's task at once; the queue is idle after."""
    recorder = Recorder()
    caller = asyncio.current_task()
    tasks: list[object] = []

    async def write(rows: list[Row]) -> None:
        tasks.append(asyncio.current_task())
        await recorder.write(rows)

    queue = _WriteQueue(write)
    await queue.submit(row("a"))
    async with queue.turn():
        tasks.append(asyncio.current_task())
    assert tasks == [caller, caller]
    assert recorder.batches == [['"a"']]
    assert not queue._busy()


DOWN = MemoryAdapterUnavailable("PostgreSQL at the configured DSN is unavailable: down")
REFUSED = MemoryAdapterError("PostgreSQL at the configured DSN failed: refused")
CALLS = [("turn", "a"), ("store", "b"), ("store", "c"), ("turn", "x"), ("store", "d")]


@pytest.mark.parametrize(
    ("first", "fail", "batches", "outcomes"),
    [
        ("store", {"a": DOWN}, [["a"]], ["down"] * 5),
        ("turn", {"a": DOWN}, [["a"]], ["down"] * 5),
        ("store", {"c": DOWN}, [["a"], ["b", "c"]], ["ok", "down", "down", "down", "down"]),
        ("store", {"x": DOWN}, [["a"], ["b", "c"], ["x"]], ["ok", "ok", "ok", "down", "down"]),
        (
            "store",
            {"b": REFUSED, "c": DOWN},
            [["a"], ["b", "c"], ["b"], ["c"]],
            ["ok", "refused", "down", "down", "down"],
        ),
        (
            "store",
            {"c": REFUSED},
            [["a"], ["b", "c"], ["b"], ["c"], ["x"], ["d"]],
            ["ok", "ok", "refused", "ok", "ok"],
        ),
    ],
)
async def test_an_outage_fails_the_writes_waiting_behind_it_at_once(
    first: str, fail: dict[str, Exception], batches: list[list[str]], outcomes: list[str]
) -> None:
    """A write failing with MemoryAdapterUnavailable (a lone store() or turn, a batch, a turn
    given by the queue, a row retried on its own) fails every write waiting behind it with the
    same error, without running them, instead of each waiting out its own timeout; a refused
    write fails only itself. Writes called afterwards run as usual."""
    recorder = Recorder()
    queue = _WriteQueue(recorder.write)
    recorder.fail = {f'"{content}"': exc for content, exc in fail.items()}

    async def call(kind: str, content: str) -> None:
        if kind == "store":
            await queue.submit(row(content))
        else:
            async with queue.turn():
                await recorder.write([row(content)])

    async def gathered(calls: list[tuple[str, str]]) -> list[object]:
        """Run ``calls``, each called while the first one's write is held."""
        hold = recorder.hold = asyncio.Event()
        tasks = [asyncio.ensure_future(call(*calls[0]))]
        await asyncio.sleep(0)  # the first write is under way, held
        tasks += [asyncio.ensure_future(call(kind, content)) for kind, content in calls[1:]]
        await asyncio.sleep(0)
        hold.set()
        return await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 10)

    calls = [(first, "a"), *CALLS[1:]]
    names: dict[object, str] = {None: "ok", DOWN: "down", REFUSED: "refused"}
    results = await gathered(calls)
    assert [names[result] for result in results] == outcomes  # the very error, or ok
    assert recorder.batches == [[f'"{content}"' for content in batch] for batch in batches]
    assert not queue._busy()
    recorder.fail.clear()
    recorder.batches.clear()
    assert await gathered(calls) == [None] * 5
    assert recorder.batches == [['"a"'], ['"b"', '"c"'], ['"x"'], ['"d"']]


async def test_an_outage_does_not_wait_for_each_timeout() -> None:
    """Writes stalled by an outage fail about one timeout after the first, not one each: a
    store(), five turns (as delete() takes) and a store() gathered against a writer that
    stalls 0.2 s and then raises all fail together."""
    loop = asyncio.get_running_loop()

    async def stall(_rows: list[Row]) -> None:
        await asyncio.sleep(0.2)
        raise DOWN

    queue = _WriteQueue(stall)

    async def delete() -> None:
        async with queue.turn():
            await stall([])

    async def timed(write: Awaitable[None]) -> float:
        with pytest.raises(MemoryAdapterUnavailable):
            await write
        return loop.time() - start

    start = loop.time()
    writes = [queue.submit(row("a")), *(delete() for _ in range(5)), queue.submit(row("b"))]
    failed_after = await asyncio.wait_for(asyncio.gather(*map(timed, writes)), 10)
    # One by one, the second would fail 0.4 s in.
    assert all(0.19 < seconds < 0.4 for seconds in failed_after), failed_after
