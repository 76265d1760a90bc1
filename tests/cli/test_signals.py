"""``sigterm_as_ctrl_c``: which handlers it installs while a command runs, and what it leaves;
``run``: a signal wakes the event loop; the threads of a command leave signals to the main one.

In process, on the main thread, with the handlers of SIGINT and SIGTERM set by each test and
restored after it; the threads of a running command are read from ``/proc``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from types import SimpleNamespace

import pytest

from lionmem.cli import _signals
from lionmem.cli._signals import run, sigterm_as_ctrl_c
from tests.cli.support import LIONMEM, clean_env


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


def test_a_signal_another_thread_takes_stops_the_loop_while_it_waits() -> None:
    """SIGTERM taken by a non-main thread stops the command at once, before that thread answers."""
    ended = threading.Event()
    waited_out: list[bool] = []

    async def wait_for_the_thread() -> None:
        loop = asyncio.get_running_loop()
        answer = loop.create_future()

        def thread() -> None:
            _until_waiting_in_the_loop(main)
            signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
            waited_out.append(not ended.wait(10))
            with suppress(RuntimeError):  # the loop is closed: nobody waits for the answer
                loop.call_soon_threadsafe(_answer, answer)

        waiter = threading.Thread(target=thread)
        waiter.start()
        try:
            await answer
        finally:
            threads.append(waiter)

    threads: list[threading.Thread] = []
    main = threading.get_native_id()
    with sigterm_as_ctrl_c() as stop, pytest.raises(KeyboardInterrupt):
        run(wait_for_the_thread())
    ended.set()
    threads[0].join()
    assert (stop.word, waited_out) == ("terminated", [False])
    earlier = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(earlier)
    assert earlier == -1  # run() put the earlier wakeup (none) back


def _answer(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _until_waiting_in_the_loop(task: int) -> None:
    """Return once thread ``task`` of this process sleeps in the event loop's wait."""
    deadline = time.monotonic() + 30
    wait = Path(f"/proc/self/task/{task}/wchan")
    while wait.read_text("ascii") not in {"do_epoll_wait", "ep_poll"}:
        assert time.monotonic() < deadline, "the loop never waited"
        time.sleep(0.001)


def _blocked(pid: int, task: str) -> set[int]:
    """The signals thread ``task`` of process ``pid`` blocks, from its ``SigBlk`` mask."""
    status = Path(f"/proc/{pid}/task/{task}/status").read_text("ascii")
    mask = int(status.split("SigBlk:")[1].split()[0], 16)
    return {number for number in range(1, 65) if mask >> (number - 1) & 1}


def _masks_once_started(process: subprocess.Popen[bytes], count: int) -> list[set[int]]:
    """The blocked signals of the threads of ``process`` but its main one, once ``count`` run
    and the main thread blocks none of those signals itself."""
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the threads did not start"
        tasks = [
            task for task in os.listdir(f"/proc/{process.pid}/task") if task != str(process.pid)
        ]
        with suppress(FileNotFoundError):  # a thread that ended meanwhile
            masks = [_blocked(process.pid, task) for task in tasks]
            # A thread starting has every signal blocked until its own mask is set, and its
            # creator blocks the signals the thread should block while it creates it.
            starting = signal.SIGINT in _blocked(process.pid, str(process.pid))
            if len(masks) >= count and not starting and all(signal.SIGSEGV not in m for m in masks):
                return masks
        time.sleep(0.01)


@pytest.mark.parametrize(
    ("command", "threads"),
    [
        (["import", "-", "--db", "m.db"], 2),  # reads the pipe aside; the store's worker
        (["mcp", "--db", "m.db"], 3),  # reads stdin, writes stdout; the store's worker
    ],
    ids=["import", "mcp"],
)
def test_the_threads_of_a_command_leave_signals_to_the_main_thread(
    tmp_path: Path, command: list[str], threads: int
) -> None:
    """Every thread a command starts blocks Ctrl-C, SIGTERM and the like, but not job control."""
    process = subprocess.Popen(
        [str(LIONMEM), *command],
        cwd=tmp_path,
        env=clean_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        if command[0] == "import":
            assert process.stdin is not None
            process.stdin.write(b'{"content": "one"}\n')  # the store opens with the first line
            process.stdin.flush()
        masks = _masks_once_started(process, threads)
        expected = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1}
        assert [expected <= mask and signal.SIGTTIN not in mask for mask in masks] == [True] * len(
            masks
        ), masks
    finally:
        process.kill()
        process.communicate()


async def _answered() -> str:
    return "done"


def test_run_off_the_main_thread_runs_the_coroutine_and_sets_no_wakeup() -> None:
    """Off the main thread, where no handler runs and no wakeup can be set, ``run`` is
    ``asyncio.run``."""
    results: list[object] = []
    thread = threading.Thread(target=lambda: results.append(run(_answered())))
    thread.start()
    thread.join()
    assert results == ["done"]


def test_run_without_a_descriptor_left_still_runs_the_coroutine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When no socket pair can be made (no descriptor left), the command still runs."""

    def no_descriptor() -> None:
        raise OSError(24, "Too many open files")

    # Only the module's own socket: the event loop makes its self-pipe with socket.socketpair.
    monkeypatch.setattr(_signals, "socket", SimpleNamespace(socketpair=no_descriptor))
    assert run(_answered()) == "done"
    earlier = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(earlier)
    assert earlier == -1


def test_a_signal_after_the_command_returned_leaves_its_status() -> None:
    """Once the command has returned (its work done and reported), SIGINT and SIGTERM while the
    process exits leave the command's status, instead of ending it by the signal."""
    program = (
        "import os, signal, sys\n"
        "from lionmem import cli\n"
        "cli.main = lambda argv=None: 0  # a command that did its work\n"
        "status = cli.script()\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "os.kill(os.getpid(), signal.SIGTERM)\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run(
        [str(LIONMEM.parent / "python"), "-c", program],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
