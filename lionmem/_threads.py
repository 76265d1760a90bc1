"""Threads lionmem starts leave the process's signals to the main thread.

Python runs signal handlers only in the main thread. A signal the kernel hands to another thread
(it may pick any thread that does not block it) waits there until the main thread next runs
Python code, so an event loop asleep until a worker answers would not see Ctrl-C or SIGTERM
until then. ``start_thread`` starts a thread that blocks them, except the faults a thread raises
itself (``faulthandler`` still reports those) and job control, which acts on the whole process.
"""

from __future__ import annotations

import signal
import threading

__all__ = ["start_thread"]

# Faults, then job control: a background job reading the terminal must stop (SIGTTIN), not
# fail with EIO. Windows has neither SIGBUS nor the job control signals.
_NAMES = "SIGSEGV SIGBUS SIGFPE SIGILL SIGABRT SIGTTIN SIGTTOU SIGTSTP SIGCONT"
_UNBLOCKED = {getattr(signal, name, None) for name in _NAMES.split()}
_BLOCKED = signal.valid_signals() - _UNBLOCKED


def start_thread(thread: threading.Thread) -> None:
    """Start ``thread`` with those signals blocked from its first instruction (a thread inherits
    its creator's mask); where threads have no signal mask (Windows), just start it."""
    if not hasattr(signal, "pthread_sigmask"):
        thread.start()
        return
    earlier = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
    try:
        thread.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, earlier)
