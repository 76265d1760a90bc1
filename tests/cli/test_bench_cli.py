"""tools/bench_cli.py runs end to end on a small size and reports every row it promises."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.cli.conftest import REPO

pytestmark = pytest.mark.slow


def test_a_small_run_reports_every_measurement() -> None:
    """At 300 and 600 items: both tables, every row, numbers in every cell, RSS of each child."""
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench_cli", "--items", "300", "--large", "600", "--rounds", "1"],
        cwd=REPO, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    rows = [
        line for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line
    ]
    labels = [row.split(" | ")[0].removeprefix("| ") for row in rows]
    assert labels == [
        "operation",
        "`lionmem import` (start-up included)",
        "baseline: parse + `store_many`, one process",
        "`lionmem export --out` (start-up included)",
        "baseline: `items()` + `model_dump_json`, one process",
        "floor: sqlite3 rows written as they are",
        "operation",
        "`lionmem import`",
        "`lionmem export --out`",
    ]
    assert all(
        re.search(r"\| \d+ MiB \|", row) for row in rows if not row.startswith("| operation")
    )
