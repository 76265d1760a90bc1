"""Acknowledged writes survive kill -9, and several processes share one file without losing any."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from uuid import UUID

import pytest

from lionmem.stores.sqlite import SQLiteMemoryStore
from tests.stores.sqlite.support import child, dump, raw
from tests.stores.sqlite.support.crash_writer import expected_item

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.name != "posix", reason="uses POSIX signals and processes"),
]

WAIT = 60  # seconds a child may take before the test fails instead of hanging


def _acknowledged_then_kill(
    path: Path, wanted: int, script: str = "crash_writer.py"
) -> list[tuple[int, UUID]]:
    """Run the crash writer, SIGKILL it once ``wanted`` writes are acknowledged, return them all."""
    writer = child(script, str(path))
    assert writer.stdout is not None
    assert writer.stderr is not None
    # A writer that hangs without printing would block the loop below: kill it after WAIT.
    watchdog = threading.Timer(WAIT, writer.kill)
    watchdog.start()
    lines: list[str] = []
    try:
        for line in writer.stdout:
            lines.append(line)
            if len(lines) == wanted:
                writer.send_signal(signal.SIGKILL)
                break
        else:
            _, errors = writer.communicate(timeout=WAIT)
            pytest.fail(f"the writer stopped by itself: {errors}")
        # Through the text stream: its buffer may hold lines already read from the pipe, which
        # communicate() (reading the pipe itself) would lose.
        rest = writer.stdout.read()
        writer.wait(timeout=WAIT)
    finally:
        watchdog.cancel()
        writer.kill()
        writer.stdout.close()
        writer.stderr.close()
    lines.extend(rest.splitlines())
    assert writer.returncode == -signal.SIGKILL
    acknowledged = []
    for line in lines:
        n, item_id = line.split()
        acknowledged.append((int(n), UUID(item_id)))
    return acknowledged


def test_every_line_printed_before_the_kill_is_read(tmp_path: Path) -> None:
    """The lines of a burst buffered with the first one are read too, not only what the pipe
    still held: each is an acknowledged write the tests below check."""
    acknowledged = _acknowledged_then_kill(tmp_path / "unused.db", 1, "burst_writer.py")
    assert acknowledged == [(n, UUID(int=n + 1)) for n in range(1_000)]


async def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    """Every id the writer printed before being killed is stored with every field intact."""
    path = tmp_path / "crash.db"
    acknowledged = _acknowledged_then_kill(path, wanted=60)
    async with SQLiteMemoryStore(path) as store:
        found = [dump(await store.retrieve(item_id)) for _, item_id in acknowledged]
    assert found == [dump(expected_item(n, item_id)) for n, item_id in acknowledged]


async def test_file_is_consistent_after_sigkill(tmp_path: Path) -> None:
    """After the kill, the file passes SQLite's integrity check and reopens cleanly."""
    path = tmp_path / "crash.db"
    acknowledged = _acknowledged_then_kill(path, wanted=30)
    async with SQLiteMemoryStore(path) as store:
        count = await store.count()
    assert raw(path, "PRAGMA integrity_check") == [("ok",)]
    # The write in flight at the kill may or may not have committed; nothing else may differ.
    assert count in (len(acknowledged), len(acknowledged) + 1)


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
def test_two_writers_and_a_reader_share_one_file(tmp_path: Path, synchronous: str) -> None:
    """Two writer processes and a reader run at once: no error escapes and no write is lost
    (at NORMAL, the single writes are inserted in the caller's thread unless the file is busy)."""
    path = tmp_path / "shared.db"
    per_writer = 60
    processes = {
        "a": child("mp_writer.py", str(path), "a", str(per_writer), "1", synchronous),
        "b": child("mp_writer.py", str(path), "b", str(per_writer), "5", synchronous),
        "reader": child("mp_reader.py", str(path), str(2 * per_writer), str(WAIT)),
    }
    try:
        outcomes = {name: process.communicate(timeout=WAIT) for name, process in processes.items()}
    finally:
        for process in processes.values():
            process.kill()  # only if one timed out: the others have exited already
    codes = {name: process.returncode for name, process in processes.items()}
    assert codes == {"a": 0, "b": 0, "reader": 0}, {
        name: err for name, (_, err) in outcomes.items()
    }
    written = {UUID(line) for name in ("a", "b") for line in outcomes[name][0].split()}
    stored = {UUID(row[0]) for row in raw(path, "SELECT id FROM items")}
    assert (len(written), stored) == (2 * per_writer, written)
