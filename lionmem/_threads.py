"""Threads lionmem starts leave the process's signals to the main thread.

Python runs signal handlers only in the main thread. A signal the kernel hands to another thread
(it may pick any thread that does not block it) waits there until the main thread next runs
Python code, so an event loop asleep until a worker answers would not see Ctrl-C or SIGTERM
until then. ``start_thread`` starts a thread that blocks every signal but the faults a thread raises
itself (those still reach it, and ``faulthandler`` still reports them).
"""

from __future__ import annotations

import signal
import threading

__all__ = ["start_thread"]

_FAULTS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT}
_BLOCKED = signal.valid_signals() - _FAULTS


def start_thread(thread: threading.Thread) -> None:
    """Start ``thread`` with the signals not its own blocked (it inherits the mask in place as it
    is created, so no signal reaches it first)."""
    earlier = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
    try:
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, earlier)
