"""Several processes opening the same new file at the same moment all open it as lionmem's."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.stores.sqlite.support import child, raw

PROCESSES = 6
ROUNDS = 20


@pytest.mark.slow
def test_processes_racing_to_open_new_files_all_succeed(tmp_path: Path) -> None:
    """Six processes open twenty new files together; none sees a half-made schema as foreign."""
    start = time.time() + 3  # after every interpreter has started
    processes = [
        child("mp_opener.py", str(tmp_path), f"p{n}", str(ROUNDS), repr(start))
        for n in range(PROCESSES)
    ]
    try:
        outcomes = [process.communicate(timeout=120) for process in processes]
    finally:
        for process in processes:
            process.kill()  # only if one timed out: the others have exited already
    assert [process.returncode for process in processes] == [0] * PROCESSES, [
        err for _, err in outcomes
    ]
    counts = [
        raw(tmp_path / f"fresh-{n}.db", "SELECT count(*) FROM items")[0][0] for n in range(ROUNDS)
    ]
    assert counts == [PROCESSES] * ROUNDS
