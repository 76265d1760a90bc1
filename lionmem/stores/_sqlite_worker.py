"""One worker thread that runs jobs in submission order and answers on the caller's event loop.

A job is a callable, or one entry of a batch: consecutive batch entries with the same runner are
handed to it together (the store commits them in one transaction), and each caller's future is
settled only after the runner returns, each event loop woken once for all of its callers. A group
smaller than the previous one waits up to a millisecond for the callers just answered to queue
their next entries. Any thread may queue follow-up work that nobody awaits (``later``). A job
whose caller was cancelled before the job started is skipped; one that had started runs to its end.
The worker keeps the callers' jobs it has not finished (``busy``), and tells whether the caller of
one of them was cancelled (``withdrawn``, from the moment of the cancellation). A job cannot wait
for the worker's own thread: ``submit`` there raises ``WorkerReentered``. Each job carries its own
event loop, so one worker
serves any number of tasks, threads and event loops. The thread holds no reference to the worker's
owner between jobs, so an owner that is dropped without ``stop`` can be collected and stop its
worker from a finalizer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from queue import Empty, SimpleQueue
from typing import Any, TypeVar

from lionmem._threads import start_thread

__all__ = ["Outcome", "Worker", "WorkerReentered", "WorkerStopped"]

_T = TypeVar("_T")
Outcome = tuple[Any, BaseException | None]
"""What a batch runner gives back for each entry: the result, or the error to raise."""
BatchRunner = Callable[[Sequence[Any]], Sequence[Outcome]]


GATHER_SECONDS = 0.001
"""How long a group smaller than the previous one waits for the rest of its callers."""


class WorkerStopped(RuntimeError):
    """The worker was stopped; it takes no more jobs."""


class WorkerReentered(RuntimeError):
    """A job was submitted from the worker's own thread, where waiting for it never ends."""


@dataclass(slots=True, eq=False)
class _Job:
    loop: asyncio.AbstractEventLoop | None
    future: asyncio.Future[Any] | None
    job: Callable[[], Any] | None
    batch: BatchRunner | None = None
    payload: Any = None
    final: bool = False
    # Under the worker's lock: whether the thread has run or skipped it.
    finished: bool = False

    def abandoned(self) -> bool:
        """Whether the caller was cancelled before the job started (the final job always runs)."""
        return not self.final and self.future is not None and self.future.cancelled()


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if isinstance(error, StopIteration):
        # A future refuses it (it would end the awaiting coroutine as a return): raised as a
        # coroutine raising it is, a RuntimeError caused by it.
        wrapped = RuntimeError(f"{type(error).__name__} raised in the store's worker thread")
        wrapped.__cause__ = error
        error = wrapped
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _settle_all(answers: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    for future, result, error in answers:
        _settle(future, result, error)


def _answer(entry: _Job, result: Any, error: BaseException | None) -> None:
    if entry.loop is None or entry.future is None:
        return
    # RuntimeError: the caller's loop is closed, so nobody is waiting for this outcome.
    with contextlib.suppress(RuntimeError):
        entry.loop.call_soon_threadsafe(_settle, entry.future, result, error)


def _answer_group(members: list[_Job], outcomes: Sequence[Outcome]) -> None:
    """Answer every member, waking each event loop once for all of its members."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any, Any]]] = {}
    for member, (result, error) in zip(members, outcomes, strict=True):
        if member.loop is not None and member.future is not None:
            by_loop.setdefault(member.loop, []).append((member.future, result, error))
    for loop, answers in by_loop.items():
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for these
            loop.call_soon_threadsafe(_settle_all, answers)


class Worker:
    """Runs callables one at a time on a thread of its own, started on the first job."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._queue: SimpleQueue[_Job | None] = SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._pid: int | None = None
        # Under _lock: whether the thread has run its last job, and who waits for that (``ended``).
        self._ended = False
        # Under _lock: the callers' jobs not finished yet.
        self._unfinished: set[_Job] = set()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    @property
    def stopped(self) -> bool:
        """Whether ``stop`` was called (or ``submit`` with ``last=True``)."""
        return self._stopped

    @property
    def busy(self) -> bool:
        """Whether a job some caller submitted is queued or running (even if it was withdrawn)."""
        return bool(self._unfinished)

    @property
    def withdrawn(self) -> bool:
        """Whether a job whose caller was cancelled is queued or running: it may still change
        the database. True from the cancellation on (the future's callbacks come later)."""
        if not self._unfinished:
            return False
        with self._lock:
            return any(
                job.future is not None and job.future.cancelled() for job in self._unfinished
            )

    @property
    def here(self) -> bool:
        """Whether the caller runs in the worker's own thread (in a job)."""
        return self._thread is not None and threading.current_thread() is self._thread

    @property
    def pid(self) -> int | None:
        """The process that started the thread, or ``None`` while no job was submitted."""
        return self._pid

    def submit(self, job: Callable[[], _T], *, last: bool = False) -> asyncio.Future[_T]:
        """Queue ``job`` and return a future of the running loop that gets its outcome.

        With ``last=True`` the worker takes no job after this one and its thread ends after it.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[_T] = loop.create_future()
        self._put(_Job(loop, future, job, final=last), last=last)
        return future

    def submit_batch(self, runner: BatchRunner, payload: Any) -> asyncio.Future[Any]:
        """Queue one entry for ``runner``, run together with the entries queued next to it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._put(_Job(loop, future, None, runner, payload), last=False)
        return future

    def later(self, job: Callable[[], object]) -> bool:
        """Queue ``job`` with nobody to answer; return whether it was queued (not once stopped).

        For work that need not delay anyone's answer; from any thread, once a job was submitted.
        """
        with self._lock:
            if self._stopped:
                return False
            self._queue.put(_Job(None, None, job))
            return True

    def stop(self, job: Callable[[], object]) -> None:
        """Run ``job`` after the queued jobs, then end the thread; from any thread, no loop needed.

        Does nothing if the worker is stopped already or was never started.
        """
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            if self._thread is not None:
                self._queue.put(_Job(None, None, job, final=True))
                self._queue.put(None)

    def ended(self) -> asyncio.Future[None]:
        """Return a future of the running loop, done once the thread has run its last job (at
        once if it has, or if it never started)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._thread is None or self._ended:
                future.set_result(None)
            else:
                self._waiters.append((loop, future))
        return future

    def _finished(self) -> None:
        """Called by the thread after its last job: answer every ``ended`` future."""
        with self._lock:
            self._ended = True
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for this
                loop.call_soon_threadsafe(_settle, future, None, None)

    def abandon(self) -> None:
        """Take no more jobs, without touching the thread (in a child process after ``fork``)."""
        self._stopped = True

    def _done_with(self, entries: list[_Job]) -> None:
        """Called by the thread once it has run or skipped ``entries``."""
        with self._lock:
            for entry in entries:
                if entry.future is None or entry.finished:
                    continue
                entry.finished = True
                self._unfinished.discard(entry)

    def _put(self, entry: _Job, *, last: bool) -> None:
        with self._lock:
            if self.here:
                raise WorkerReentered(self._name)
            if self._stopped:
                raise WorkerStopped(self._name)
            if self._thread is None:
                # A daemon thread: a store nobody closed must not keep the interpreter alive.
                # Every acknowledged write was committed already; an unfinished one rolls back.
                self._thread = threading.Thread(
                    target=_main,
                    args=(self._queue, self._finished, self._done_with),
                    name=self._name,
                    daemon=True,
                )
                self._pid = os.getpid()
                start_thread(self._thread)
            self._queue.put(entry)
            if entry.future is not None:
                self._unfinished.add(entry)
            if last:
                self._stopped = True
                self._queue.put(None)


def _main(
    queue: SimpleQueue[_Job | None],
    finished: Callable[[], None],
    finish: Callable[[list[_Job]], None],
) -> None:
    held: list[_Job | None] = []
    writers = 1  # how many entries the last group held: the writers that may come back
    while True:
        entry = held.pop() if held else queue.get()
        if entry is None:
            finished()
            return
        # Helpers, so that no job (nor its owner) stays referenced by a local between jobs.
        if entry.batch is None:
            _run_one(entry, finish)
        else:
            writers = _run_group(entry, queue, held, writers, finish)
        del entry


def _run_one(entry: _Job, finish: Callable[[list[_Job]], None]) -> None:
    if entry.abandoned():
        finish([entry])
        return
    result: Any = None
    error: BaseException | None = None
    try:
        assert entry.job is not None
        result = entry.job()
    except BaseException as exc:
        error = exc
    finish([entry])  # before the answer: the caller's next call finds the job finished
    _answer(entry, result, error)


def _run_group(
    first: _Job,
    queue: SimpleQueue[_Job | None],
    held: list[_Job | None],
    expected: int,
    finish: Callable[[list[_Job]], None],
) -> int:
    """Run ``first`` with the batch entries for the same runner queued right after it.

    While the group is smaller than the previous one (``expected``), it waits up to
    ``GATHER_SECONDS`` for more: the callers the previous group answered are about to send their
    next entries, which then share this run instead of waiting for the next. Returns its size.
    """
    assert first.batch is not None
    group = [first]
    deadline = time.monotonic() + GATHER_SECONDS
    while True:
        try:
            if len(group) >= expected:
                if queue.empty():  # the worker is the only consumer: get_nowait would succeed
                    break
                following = queue.get_nowait()
            else:
                following = queue.get(timeout=max(0.0, deadline - time.monotonic()))
        except Empty:
            break
        if following is None or following.batch != first.batch:
            held.append(following)
            break
        group.append(following)
    live = [member for member in group if not member.abandoned()]
    outcomes: Sequence[Outcome] = ()
    if live:
        try:
            outcomes = first.batch([member.payload for member in live])
        except BaseException as exc:
            outcomes = [(None, exc)] * len(live)
    finish(group)  # before the answers: the callers' next calls find the jobs finished
    if live:
        _answer_group(live, outcomes)
    return len(group)
