"""Smoke test of tools/bench_postgres.py: a tiny run completes and reports what the docs show.

Nothing here asserts a timing; only that both stores were measured on every compared operation
and that the keyset sweep returned every earlier item exactly once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        find_spec("langgraph") is None or find_spec("psycopg") is None,
        reason="the benchmark stack is not installed here (make install adds its group, bench)",
    ),
]


def test_bench_compares_with_langgraph(tmp_path: Path) -> None:
    """`tools/bench_postgres.py --size 300` writes JSON with both contenders' figures."""
    out = tmp_path / "postgres.json"
    result = subprocess.run(
        [sys.executable, "tools/bench_postgres.py", "--size", "300", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [row["operation"] for row in data["comparison"]] == [
        "put (autocommit)",
        "get by id",
        "metadata equality, limit 10",
        "list, limit 10",
    ]
    assert all(row["lionmem_ms"] > 0 and row["langgraph_ms"] > 0 for row in data["comparison"])
    for key in ("sweep, no writer", "sweep while writing"):
        sweep = data[key]["lionmem"]
        assert sweep["rows"] == sweep["distinct"]
        assert sweep["missed"] == 0
    # The 300 loaded and the 400 timed puts, on one page: nothing for offset paging to miss.
    assert data["sweep, no writer"]["langgraph"] == {
        "s": data["sweep, no writer"]["langgraph"]["s"],
        "rows": 700,
        "distinct": 700,
        "missed": 0,
    }
    assert set(data["lionmem searches, ms"]["300"]) >= {"tags any-of (2 tags)"}
    for label in ("WAL bytes per item, bulk load", "WAL bytes per put, 8 writers"):
        assert data[label]["lionmem"] > 0
        assert data[label]["langgraph"] > 0
        assert f"| {label} | {data[label]['lionmem']:,} |" in result.stdout
    assert "| operation | lionmem | LangGraph | ratio |" in result.stdout
