"""The SQLite store's worker: batch entries queued together, or just after, run as one group."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest

from lionmem.stores import _sqlite_worker
from lionmem.stores._sqlite_worker import Outcome, Worker


class Recorder:
    """A batch runner that records the payloads of each group it is given."""

    def __init__(self) -> None:
        self.groups: list[list[Any]] = []

    def __call__(self, payloads: Sequence[Any]) -> list[Outcome]:
        self.groups.append(list(payloads))
        return [(payload, None) for payload in payloads]


async def _group_of_two(worker: Worker, runner: Recorder) -> None:
    release = threading.Event()
    held = worker.submit(lambda: release.wait(10))
    entries = [worker.submit_batch(runner, name) for name in ("a", "b")]
    release.set()
    await held
    assert await asyncio.gather(*entries) == ["a", "b"]


async def test_a_group_waits_for_the_callers_it_just_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a group of two, one entry waits (within GATHER_SECONDS) for a second to join it."""
    monkeypatch.setattr(_sqlite_worker, "GATHER_SECONDS", 10.0)
    worker, runner = Worker("test"), Recorder()
    await _group_of_two(worker, runner)
    first = worker.submit_batch(runner, "c")
    await asyncio.sleep(0.05)  # the worker holds "c", waiting for one more
    second = worker.submit_batch(runner, "d")
    assert list(await asyncio.wait_for(asyncio.gather(first, second), 5)) == ["c", "d"]
    assert runner.groups == [["a", "b"], ["c", "d"]]
    worker.stop(lambda: None)


async def test_the_wait_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """No second entry comes: the lone one runs once GATHER_SECONDS have passed."""
    monkeypatch.setattr(_sqlite_worker, "GATHER_SECONDS", 0.05)
    worker, runner = Worker("test"), Recorder()
    await _group_of_two(worker, runner)
    assert await asyncio.wait_for(worker.submit_batch(runner, "c"), 5) == "c"
    assert runner.groups == [["a", "b"], ["c"]]
    worker.stop(lambda: None)


async def test_a_lone_writer_never_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """After groups of one, an entry runs at once: one writer pays no gathering delay."""
    monkeypatch.setattr(_sqlite_worker, "GATHER_SECONDS", 10.0)
    worker, runner = Worker("test"), Recorder()
    for name in ("a", "b", "c"):
        assert await asyncio.wait_for(worker.submit_batch(runner, name), 5) == name
    assert runner.groups == [["a"], ["b"], ["c"]]
    worker.stop(lambda: None)


async def test_another_job_ends_the_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job of another kind queued meanwhile is not passed by the group: it ends the wait."""
    monkeypatch.setattr(_sqlite_worker, "GATHER_SECONDS", 10.0)
    worker, runner = Worker("test"), Recorder()
    await _group_of_two(worker, runner)
    entry = worker.submit_batch(runner, "c")
    await asyncio.sleep(0.05)
    other = worker.submit(lambda: "job")
    assert list(await asyncio.wait_for(asyncio.gather(entry, other), 5)) == ["c", "job"]
    assert runner.groups == [["a", "b"], ["c"]]
    worker.stop(lambda: None)


@pytest.mark.parametrize("batch", [False, True])
async def test_a_withdrawn_job_counts_until_the_thread_is_done_with_it(batch: bool) -> None:
    """A job whose caller was cancelled while it runs keeps the worker busy and withdrawn until
    it ends; a job withdrawn before it starts is skipped, and counts until the thread skips it."""
    worker, runner = Worker("test"), Recorder()
    started, release = threading.Event(), threading.Event()

    def hold() -> None:
        started.set()
        release.wait(10)

    held = worker.submit(hold)
    skipped = worker.submit_batch(runner, "skipped") if batch else worker.submit(lambda: "x")
    assert await asyncio.to_thread(started.wait, 10)
    held.cancel()
    skipped.cancel()
    await asyncio.sleep(0)  # the cancellations' callbacks run
    during = (worker.busy, worker.withdrawn)
    release.set()
    assert await asyncio.wait_for(worker.submit(lambda: "after"), 5) == "after"
    after = (worker.busy, worker.withdrawn)
    worker.stop(lambda: None)
    assert (during, after, runner.groups) == ((True, True), (False, False), [])


async def test_a_job_answered_is_no_longer_counted() -> None:
    """When a caller's answer arrives, the worker no longer counts its job as busy."""
    worker, runner = Worker("test"), Recorder()
    idle = worker.busy
    assert await asyncio.wait_for(worker.submit_batch(runner, "a"), 5) == "a"
    answered = worker.busy
    worker.stop(lambda: None)
    assert (idle, answered) == (False, False)
