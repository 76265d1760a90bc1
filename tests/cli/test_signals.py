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


def test_ctrl_c_ignored_in_the_block_is_handled_again_after_it() -> None:
    """A command that ignores Ctrl-C for a while (``add`` waiting for a begun write) leaves
    Ctrl-C as it found it to an in-process caller."""
    with sigterm_as_ctrl_c():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_ignored_in_the_command_the_process_runs_stays_ignored() -> None:
    """As the whole command of the process (the script), Ctrl-C ignored by the command stays
    ignored, and SIGTERM with it, so that neither can stop the process while it exits."""
    with sigterm_as_ctrl_c(process_exits=True):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        during = signal.getsignal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is during


def test_the_command_the_process_runs_leaves_ctrl_c_and_sigterm_as_it_found_them() -> None:
    with sigterm_as_ctrl_c(process_exits=True):
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
