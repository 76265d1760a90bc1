"""Samples and medians: the contenders of one operation are interleaved round by round.

A sample awaits the same call ``k`` times in a row inside one coroutine and divides the elapsed
time by ``k``; ``k`` is calibrated per contender so that a sample lasts about ``target_ns``. The
same ``k`` calls first run once, untimed, so that each sample finds the CPU caches warmed by its
own contender rather than by the one before it (lionmem and the floor share their item objects).
Each round takes one sample of every contender, in a seeded random order, so that a noisy moment
on the shared machine hits all of them alike. The clock is the benchmark thread's CPU time
(``time.thread_time_ns``) by default: it leaves out the moments when the operating system runs
other processes, which wall time would charge to whichever contender was running (every
contender runs in this one thread, event loop included); ``set_clock("wall")`` switches to
``perf_counter_ns``. The cyclic garbage collector is paused while an operation is measured (as
``timeit`` does) and run between operations. A slow contender takes part in fewer rounds (at
least ``min_rounds``) so that the whole run fits its time budget.
"""

from __future__ import annotations

import asyncio
import gc
import random
import statistics
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from time import perf_counter_ns, thread_time_ns
from typing import Any

__all__ = ["Job", "Plan", "Stats", "clock", "measure", "set_clock"]

_CLOCKS: dict[str, Callable[[], int]] = {"cpu": thread_time_ns, "wall": perf_counter_ns}
_clock: list[Callable[[], int]] = [thread_time_ns]


def set_clock(name: str) -> None:
    """Time samples with the thread's CPU time (``"cpu"``) or the wall clock (``"wall"``)."""
    _clock[0] = _CLOCKS[name]


def clock() -> int:
    """The current reading of the chosen clock, in nanoseconds."""
    return _clock[0]()


@dataclass(frozen=True, slots=True)
class Job:
    """One contender's part of an operation: the async function and ``k`` arguments per sample."""

    fn: Callable[[Any], Awaitable[Any]]
    args: Callable[[int], Sequence[Any]]  # untimed: the arguments of the next k calls
    calls: int | None = None  # calls per sample, fixed (else calibrated)
    warm: bool = True  # run the same calls once, untimed, right before each timed sample


@dataclass(frozen=True, slots=True)
class Plan:
    """How long to sample."""

    rounds: int
    target_ns: int = 3_000_000
    budget_ns: int = 2_000_000_000  # per contender and operation
    min_rounds: int = 5
    max_calls: int = 20_000


@dataclass(slots=True)
class Stats:
    """Per-call nanoseconds of every sample, and the calls per sample."""

    calls: int
    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        """The median per-call time in nanoseconds."""
        return statistics.median(self.samples)


async def _batch(fn: Callable[[Any], Awaitable[Any]], args: Sequence[Any]) -> int:
    now = _clock[0]
    start = now()
    for arg in args:
        await fn(arg)
    return now() - start


def _sample(loop: asyncio.AbstractEventLoop, job: Job, calls: int) -> float:
    args = job.args(calls)
    if job.warm:
        loop.run_until_complete(_batch(job.fn, args))
    return loop.run_until_complete(_batch(job.fn, args)) / calls


def measure(loop: asyncio.AbstractEventLoop, jobs: dict[str, Job], plan: Plan) -> dict[str, Stats]:
    """Time every job on the same operation, interleaved, and return their samples."""
    gc.collect()
    gc.disable()
    try:
        calls: dict[str, int] = {}
        rounds: dict[str, int] = {}
        for name, job in jobs.items():
            # Two warm-up calls (they also fill lazy caches), then calibrate on the faster one.
            once = min(_sample(loop, job, 1) for _ in range(2))
            k = job.calls or max(1, min(plan.max_calls, int(plan.target_ns // max(once, 1.0))))
            calls[name] = k
            per_sample = k * once
            rounds[name] = max(plan.min_rounds, min(plan.rounds, int(plan.budget_ns // per_sample)))
        stats = {name: Stats(calls=calls[name]) for name in jobs}
        names = list(jobs)
        order = random.Random(0)
        for r in range(plan.rounds):
            turn = order.sample(names, len(names))
            for name in turn:
                if r < rounds[name]:
                    stats[name].samples.append(_sample(loop, jobs[name], calls[name]))
        return stats
    finally:
        gc.enable()
        gc.collect()
