"""The SQLite benchmark runs end to end and reports both LangGraph stores and the writers runs.

No timing is asserted (the machines are shared and noisy): only the shape of what it writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_bench_reports_both_langgraph_stores_and_the_writers(tmp_path: Path) -> None:
    """Every operation has lionmem, SqliteStore and AsyncSqliteStore figures; three writer rows."""
    out = tmp_path / "sqlite.json"
    command = [sys.executable, "tools/bench_sqlite.py", "--sizes", "200", "--writes", "32"]
    result = subprocess.run(
        [*command, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (run,) = json.loads(out.read_text(encoding="utf-8"))
    assert [row["operation"] for row in run["comparison"]] == [
        "put, each store's default durability",
        "put, both WAL + synchronous=FULL",
        "put, both WAL + synchronous=NORMAL",
        "get by id",
        "metadata-equality search, limit 10",
        "list, limit 10",
    ]
    for row in run["comparison"]:
        assert min(row["lionmem_us"], row["langgraph_us"], row["langgraph_async_us"]) > 0
        assert row["ratio_async"] == pytest.approx(row["langgraph_async_us"] / row["lionmem_us"])
        assert min(row["lionmem_mean_us"], row["langgraph_mean_us"]) > 0
    assert run["round_trip_us"] > 0
    assert run["idle_lateness_ms"] >= 0
    assert [row["store"] for row in run["writers"]] == [
        "lionmem, WAL + FULL",
        "lionmem, WAL + NORMAL",
        "LangGraph AsyncSqliteStore, rollback journal + FULL",
    ]
    for row in run["writers"]:
        assert row["ratio"] == pytest.approx(row["eight_per_s"] / row["one_per_s"])
        assert row["stall_ms"] >= 0
    assert (
        "| operation | lionmem | LangGraph SqliteStore | LangGraph AsyncSqliteStore "
        "| SqliteStore / lionmem | AsyncSqliteStore / lionmem |"
    ) in result.stdout.splitlines()
    assert "| writers of a fresh store (16 writes each way, 4 rounds) |" in result.stdout
    assert "| put, mean per call (work deferred to later calls included) |" in result.stdout
