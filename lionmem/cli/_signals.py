"""SIGTERM handled as Ctrl-C, and every signal waking a command's event loop.

``sigterm_as_ctrl_c()`` installs, while a command runs, a SIGTERM handler that notes the signal
and raises SIGINT in this process, so whatever handles Ctrl-C at that moment handles SIGTERM
too: Python's ``KeyboardInterrupt``, ``asyncio.run`` (which cancels its main task), or a
command's window that ignores Ctrl-C. The HTTP server installs its own handlers while it serves.
``run`` is ``asyncio.run`` with the loop woken by each signal: Python runs a handler only once
the main thread runs Python code, which a loop waiting for a thread's answer does not.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from collections.abc import Awaitable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import Any, TypeVar

__all__ = ["STOP", "Stop", "run", "sigterm_as_ctrl_c", "stopped_waiting"]

_T = TypeVar("_T")


class Stop:
    """How the running command was stopped: by Ctrl-C (SIGINT) or by SIGTERM."""

    def __init__(self) -> None:
        self.terminated = False

    @property
    def word(self) -> str:
        """``terminated`` once SIGTERM arrived, else ``interrupted``."""
        return "terminated" if self.terminated else "interrupted"

    @property
    def status(self) -> int:
        """The exit status of a command stopped by the signal: 128 plus its number."""
        return 128 + (signal.SIGTERM if self.terminated else signal.SIGINT)


STOP = Stop()
"""The stop of the command running now (``sigterm_as_ctrl_c`` resets it)."""


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    STOP.terminated = True
    signal.raise_signal(signal.SIGINT)


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[Stop]:
    """Handle SIGTERM as SIGINT until the block ends, then put SIGTERM's earlier handler back.

    A command that ignores Ctrl-C from some point on (``add`` and ``delete`` waiting for a begun
    write, to their exit) leaves SIGTERM ignored with it, so that neither can turn the outcome
    reported into a stop while the process exits. Nothing changes off the main thread (only it
    can set handlers). SIGTERM keeps its handler when Ctrl-C is ignored from the start, as for a
    job a script starts in the background (SIGINT would be ignored there, so SIGTERM keeps
    ending the process as the signal does), and when SIGTERM is not at its default, as when a
    parent ignores it for its children.
    """
    STOP.terminated = False
    if threading.current_thread() is not threading.main_thread():
        yield STOP
        return
    replace = (
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
        and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    )
    earlier = signal.signal(signal.SIGTERM, _on_sigterm) if replace else None
    try:
        yield STOP
    finally:
        if earlier is not None:
            ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            signal.signal(signal.SIGTERM, signal.SIG_IGN if ignored else earlier)


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """Run ``main`` as ``asyncio.run`` does, the loop woken by each signal that arrives."""
    return asyncio.run(_woken(main))


async def _woken(main: Coroutine[Any, Any, _T]) -> _T:
    if threading.current_thread() is not threading.main_thread():  # no handlers run here
        return await main
    try:
        reader, writer = socket.socketpair()
    except OSError:  # no descriptor left: the loop wakes as asyncio.run's does
        return await main
    loop = asyncio.get_running_loop()
    # The C-level handler writes each signal's number to ``writer``, which wakes the loop. Code
    # that calls loop.add_signal_handler meanwhile replaces this wakeup with asyncio's own.
    with reader, writer:
        reader.setblocking(False)
        writer.setblocking(False)
        loop.add_reader(reader, _drain, reader)
        try:
            earlier = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
            try:
                return await main
            finally:
                signal.set_wakeup_fd(earlier)
        finally:
            loop.remove_reader(reader)


def _drain(reader: socket.socket) -> None:
    with suppress(BlockingIOError):
        while reader.recv(4096):
            pass


async def stopped_waiting(work: Awaitable[_T]) -> tuple[asyncio.Future[_T], bool]:
    """Start ``work`` and wait for it, shielded from a stop (Ctrl-C or SIGTERM, which cancel the
    command's task): return its future, and whether a stop ended the wait, leaving ``work``
    running. The outcome of ``work`` is raised, a cancellation of it by anyone else included."""
    handed = asyncio.ensure_future(work)
    try:
        await asyncio.shield(handed)
    except asyncio.CancelledError:
        if handed.cancelled():  # cancelled by someone else than the stop
            raise
        return handed, True
    return handed, False
