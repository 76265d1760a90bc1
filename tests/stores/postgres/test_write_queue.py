"""The write queue of PostgresMemoryStore, with a recording writer in place of the database."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from lionmem import MemoryItem
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

    async def write(self, rows: list[Row]) -> None:
        if self.hold is not None:
            await self.hold.wait()
        self.batches.append([r.content for r in rows])
        self.after.pop(rows[0].content, lambda: None)()


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
