"""Smoke tests of the benchmark tools: they run end to end and write what the performance page promises.

Nothing here asserts a timing (the machines are shared and noisy); only that a tiny run
completes, every contender agreed on the ids (the harness checks that before timing), and the
outputs have the shape the performance page relies on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    find_spec("langgraph") is None or find_spec("matplotlib") is None,
    reason="the benchmark stack is not installed here (make install adds its group, bench)",
)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )


def test_memory_bench_writes_json_markdown_and_chart(tmp_path: Path) -> None:
    """`python -m tools.bench --quick` writes results.json, results.md and chart.png with every target."""
    result = run("-m", "tools.bench", "--quick", "--sizes", "300", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert {p.name for p in tmp_path.iterdir()} == {"results.json", "results.md", "chart.png"}
    data = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    ops = data["sizes"]["300"]["ops"]
    assert {"store", "retrieve hit", "retrieve miss"} <= set(ops)
    assert set(ops["store"]["contenders"]) == {"lionmem", "floor", "lionagi", "langgraph"}
    targets = {t["target"]: t for t in data["targets"]}
    assert {"store <= 1.5x floor", "search tags <= 1.3x floor"} <= set(targets)
    assert {"store >= 100x faster than lionagi", "retrieve hit >= 25x faster than lionagi"} <= set(
        targets
    )
    assert "MemoryItem(every field) <= 1.5x plain Pydantic" in targets
    for row in targets.values():
        assert row["met"] == (
            row["value"] >= row["limit"]
            if row["kind"] == "speedup"
            else row["value"] <= row["limit"]
        )
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| operation |" in (tmp_path / "results.md").read_text(encoding="utf-8")


def test_sqlite_bench_compares_with_langgraph(tmp_path: Path) -> None:
    """`tools/bench_sqlite.py` compares put, get, filter and list with LangGraph and writes JSON."""
    out = tmp_path / "sqlite.json"
    result = run("tools/bench_sqlite.py", "--sizes", "300", "--json", str(out))
    assert result.returncode == 0, result.stderr
    (run_300,) = json.loads(out.read_text(encoding="utf-8"))
    assert run_300["size"] == 300
    operations = [row["operation"] for row in run_300["comparison"]]
    assert "get by id" in operations
    assert all(row["lionmem_us"] > 0 and row["langgraph_us"] > 0 for row in run_300["comparison"])
