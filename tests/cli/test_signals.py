"""``sigterm_as_ctrl_c``: which handlers it installs while a command runs, and what it leaves.

In process, on the main thread, with the handlers of SIGINT and SIGTERM set by each test and
restored after it.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from lionmem.cli._signals import sigterm_as_ctrl_c


@pytest.fixture(autouse=True)
def _handlers() -> Iterator[None]:
    """Ctrl-C as Python sets it and SIGTERM at its default, as in a command started from a
    shell; the test's own handlers are undone after it."""
    ctrl_c = signal.signal(signal.SIGINT, signal.default_int_handler)
    term = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, ctrl_c)
        signal.signal(signal.SIGTERM, term)


def test_sigterm_is_handled_while_the_block_runs_then_back_at_its_default() -> None:
    with sigterm_as_ctrl_c() as stop:
        during = signal.getsignal(signal.SIGTERM)
    assert during not in (signal.SIG_DFL, signal.SIG_IGN)
    assert (stop.word, stop.status) == ("interrupted", 130)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_sigterm_ignored_from_the_start_stays_ignored() -> None:
    """A parent that ignores SIGTERM for its child keeps it ignored there."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with sigterm_as_ctrl_c():
        during = signal.getsignal(signal.SIGTERM)
    assert (during, signal.getsignal(signal.SIGTERM)) == (signal.SIG_IGN, signal.SIG_IGN)


def test_ctrl_c_ignored_in_the_block_leaves_sigterm_ignored_with_it() -> None:
    """A command that ignores Ctrl-C to its exit (``add`` waiting for a begun write) leaves
    SIGTERM ignored too, so that neither can stop the process while it exits."""
    with sigterm_as_ctrl_c():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN


def test_sigterm_is_left_alone_while_ctrl_c_is_ignored_from_the_start() -> None:
    """A job a script starts in the background has Ctrl-C ignored: SIGTERM keeps its default."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with sigterm_as_ctrl_c():
        during = signal.getsignal(signal.SIGTERM)
    assert (during, signal.getsignal(signal.SIGTERM)) == (signal.SIG_DFL, signal.SIG_DFL)
