"""tools/bench_mcp.py runs end to end on a small store and prints one row per query."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.support import REPO


@pytest.mark.slow
def test_bench_mcp_prints_a_row_per_query(tmp_path: Path) -> None:
    """A tiny run (300 items, 3 rounds) gives the table with both medians and their ratio."""
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "bench_mcp.py"),
            "--items",
            "300",
            "--rounds",
            "3",
            "--db",
            str(tmp_path / "bench.db"),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    rows = [line for line in result.stdout.splitlines() if re.match(r"^\| [a-z]", line)]
    assert [row.split(" | ")[0] for row in rows[1:]] == [
        "| no predicate (limit 20)",
        "| text, common (2% of items)",
        "| text, one item",
        "| tags, any of two",
        "| metadata filter",
    ]
    for row in rows[1:]:
        assert re.fullmatch(r"\| .+ \| \d+\.\d\d \| \d+\.\d\d \| \d+\.\dx \| -?\d+\.\d\d \|", row)
